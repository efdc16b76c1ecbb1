/* SPDX-License-Identifier: Apache-2.0 */
/* One pod's state under its lock, and the group decisions that the hook's
 * stages and gc share. Lock order: the pod lock first, then (briefly, around
 * each resctrl change) the resctrl root lock; never the other way round. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abmc.h"
#include "cgroup.h"
#include "config.h"
#include "oci.h"
#include "members.h"
#include "statedir.h"

/* The node-wide handles of one run. */
struct pod_env {
        const struct config *config;
        int proc_fd;                   /* borrowed */
        int root_fd;                   /* the resctrl root */
        int state_fd;                  /* stateDir */
        uint64_t pid_ns;               /* our pid namespace (proc_pid_ns); 0 when unknown */
        char boot_id[BOOT_ID_LEN + 1]; /* this boot's (proc_boot_id); "" when unknown */
        int64_t deadline; /* now_usec() by which every wait gives up; 0: lockTimeoutMs each */
};

#define POD_ENV_INIT                                                                               \
        {                                                                                          \
                .proc_fd = -EBADF, .root_fd = -EBADF, .state_fd = -EBADF                           \
        }

/* Opens resctrl and stateDir; logs what failed. */
int pod_env_open(const struct config *c, int proc_fd, struct pod_env *e);
/* How long the next wait (a lock) may take: what is left until the deadline,
 * or lockTimeoutMs when the run has none (gc). */
unsigned pod_env_wait_ms(const struct pod_env *e);
/* rdt_lock within pod_env_wait_ms; logs a failure. */
int pod_env_lock_resctrl(const struct pod_env *e);
void pod_env_close(struct pod_env *e);

struct pod_session {
        const struct pod_env *env;
        char uid[POD_UID_LEN + 1];
        char lock_name[STATEDIR_NAME_SIZE];
        int lock_fd;
        struct pod_state st;
        bool loaded;  /* st holds what is on disk (or nothing was there) */
        bool dirty;   /* st differs from what is on disk */
        bool dry_run; /* gc --dry-run: decide, but change neither resctrl nor state */
};

/* Takes the pod lock within timeout_ms. -ETIMEDOUT when busy; not logged. */
int pod_session_lock(const struct pod_env *e, const char *uid, unsigned timeout_ms,
                     struct pod_session *s);

/* Loads the member file: 1 when there was one, 0 when not (an empty state),
 * -EBADMSG with *reterr; not logged. State written in an earlier boot names
 * processes and groups that are gone (pod_state_of_other_boot): it is
 * emptied (logged), so that the files go, or start afresh. What is saved
 * records this boot, and a file that has no boot yet is saved for it. */
int pod_session_load(struct pod_session *s, char **reterr);

/* Saves st if it changed, or removes the member file and the lock file when
 * nothing is left to remember, then releases the pod lock. State that could
 * not be loaded is never touched. 1 when the state was removed, 0, -errno. */
int pod_session_close(struct pod_session *s);

/* 1 when the member's init still runs: same start time (its pid was not
 * reused) and not a zombie. 0 when not, *ret_why saying how; -errno when
 * /proc cannot tell. */
int pod_member_is_live(const struct pod_env *e, const struct member *m, const char **ret_why);

/* Writes member m's init into its group again (the join of its container,
 * pod_member_join_cgroup, brings its other threads), the init pinned
 * (proc_pin) from before its start time is checked until after the write,
 * so that a reused pid never moves another process for good. 1 when
 * written; 0 when the init is in another monitor's group, where it stays,
 * or exited meanwhile; -ESRCH when it is gone. Caller holds the resctrl
 * lock. Logs a failure. */
int pod_member_rejoin(struct pod_session *s, const struct member *m);

/* Could member m's init be written into its group: it runs (the recorded
 * process, pinned), in the control group's default monitoring group, not in
 * another control group or another monitor's group? 1 or 0; -ESRCH when it
 * is gone; -errno. Reads only. */
int pod_member_can_join(struct pod_session *s, const struct member *m);

/* Joins every thread of member m's container that is not in the pod's
 * group: what a runtime exec'd into the container, what a re-made group
 * lost. The container's threads are those of the cgroup its runtime made
 * for it (recorded at createRuntime) and of the cgroups below it; for a
 * member recorded before such records, those of its init's cgroup now, or
 * its init's own where it has none (cgroup_container_threads). in holds the
 * group's tasks (pod_group_tasks), read once for every member of (pod,
 * ctrl). Only threads in the control group's default monitoring group are
 * moved: those in another monitoring group (another monitor's) or control
 * group are counted in *ret_elsewhere and left there. A thread whose id was
 * reused by one outside the container between the read and the write is put
 * back; threads that exit meanwhile are skipped; a thread already in the
 * group costs no write. gc --dry-run: counts what it would join. Caller
 * holds the resctrl lock. 0 with *ret_joined, or -errno (logged). */
int pod_member_join_cgroup(struct pod_session *s, const struct cgroup_mounts *mounts,
                           const struct member *m, const pid_t *in, size_t n_in,
                           unsigned *ret_joined, unsigned *ret_elsewhere);

/* The tasks of the group of (pod uid, ctrl), sorted: what
 * pod_member_join_cgroup compares a container's threads with (in, n_in).
 * None when the group is gone. 0 or -errno. */
int pod_group_tasks(int root_fd, const char *ctrl, const char *uid, pid_t **ret, size_t *ret_n);

struct pod_coverage {
        unsigned threads;   /* in its live monitored containers (pod_member_join_cgroup's) */
        unsigned in;        /* of those, in the pod's groups */
        unsigned elsewhere; /* in another monitoring or control group: never joined */
};

/* The pod's coverage. A container that cannot be read counts for nothing.
 * Read-only; no lock needed for a snapshot. */
void pod_coverage(int proc_fd, int root_fd, const struct cgroup_mounts *mounts, const char *uid,
                  const struct pod_state *st, struct pod_coverage *ret);

/* Why a container is unmonitored. Its member records it as text, which
 * begins with the kind's (unmonitored_text) and may go on with what the
 * kernel said; status and Prometheus name the kind by its code. */
enum unmonitored {
        UNMONITORED_ENOSPC,         /* "out of RMIDs (ENOSPC)" */
        UNMONITORED_EBUSY,          /* "out of RMIDs, some in limbo (EBUSY)" */
        UNMONITORED_CLASS_MISMATCH, /* its task is in another control group */
        UNMONITORED_CTRL_MISSING,   /* its control group is gone */
        UNMONITORED_PENDING,        /* pod_member_is_pending */
        UNMONITORED_OTHER,          /* a reason of another version */
        _UNMONITORED_MAX,
};

/* The text a member's reason of that kind begins with; "" for OTHER. */
const char *unmonitored_text(enum unmonitored u);
/* The kind's code for status and Prometheus ("enospc", "interrupted"). */
const char *unmonitored_code(enum unmonitored u);
/* The kind of a member's reason (NULL: monitored), by the text it begins with. */
enum unmonitored unmonitored_of(const char *reason);

/* Sets *ret to a member's reason: the kind's text, then ": status" unless
 * status is NULL. 0 or -ENOMEM. */
int pod_unmonitored_reason(enum unmonitored u, const char *status, char **ret);

/* A member whose createRuntime recorded its intent and never finished (it
 * was killed): recorded as not monitored, with the reason
 * "createRuntime did not finish", so that a binary that does not know the
 * mark still reads a true record. Its init may or may not be in the group. */
bool pod_member_is_pending(const struct member *m);

/* A member left unmonitored because mkdir found no RMID (ENOSPC, or EBUSY
 * while freed ones were in limbo): it waits for one, and gc brings it in
 * once one is free. */
bool pod_member_is_waiting(const struct member *m);
/* How long a waiting member has waited, in seconds: since its init started,
 * which is when its createRuntime ran. */
uint64_t pod_member_waited_sec(const struct member *m);

/* Does a member of (pod, ctrl) have, or may it have, its init in the group:
 * monitored or pending? Then the group must stay. */
bool pod_group_is_held(const struct pod_state *st, const char *ctrl);

/* Is a member of (pod, ctrl) other than except_id (NULL: none) pending: a
 * createRuntime that did not finish? Then a group missing is its doing. */
bool pod_group_has_pending(const struct pod_state *st, const char *ctrl, const char *except_id);

/* Records the group's cumulative counters as they read before any task of
 * the pod is in it, as its baseline (members.h): a reused RMID can carry counts
 * of its previous group, and a group found already there has counts of its
 * own. Call before the first task goes in. A failure loses the baseline,
 * nothing else (logged). Caller holds the pod lock. */
void pod_group_record_baseline(struct pod_session *s, const char *ctrl);

/* Who owns the group of a (pod, control group) record, decided in this one
 * place, from what resctrl shows under its lock, and saved before anything
 * depends on it:
 *
 *   no record  --group missing-->  owned: true, saved, then mkdir   (made)
 *   no record  --group exists--->  owned: false, saved              (adopted)
 *   owned: false --group missing-->  owned: true, saved, then mkdir (re-made: the hook's now)
 *   owned: true  --group missing-->  saved, then mkdir again        (re-made)
 *   either     --group exists--->  unchanged
 *   last member gone: pod_group_release rmdirs an owned group, forgets an adopted one
 *
 * Whoever makes the group between the look and the mkdir (a manager that
 * ignores the resctrl lock) turns the record to adopted. So a SIGKILL at any
 * instruction leaves a record that never calls a foreign group the hook's,
 * and names every group the hook may have made.
 *
 * Caller holds the pod lock and the resctrl lock, and has put into s->st the
 * member it claims for, if any: the one save before mkdir records both
 * (there is none when nothing in s->st changed). 1
 * when the group was made, 0 when it was there, -errno otherwise, logged
 * but for what only leaves a container unmonitored: -ENOSPC and -EBUSY (out
 * of RMIDs, *reterr_status saying which) and -ENOENT (no such control
 * group), which only mkdir returns: another step failing so (a full
 * stateDir) returns -EIO. The record of a group that is not there is dropped
 * again if this call added it. gc --dry-run: decides, changes nothing. */
int pod_group_claim(struct pod_session *s, const char *ctrl, char **reterr_status);

enum group_fate {
        GROUP_REMOVED,    /* rmdir'ed (or already gone) and dropped from the state */
        GROUP_BUSY,       /* still has running tasks: kept, and kept in the state */
        GROUP_LINGERS,    /* emptied less than removeDelaySeconds ago */
        GROUP_POD_LIVES,  /* emptied, but kubelet's cgroup of the pod says it lives */
        GROUP_POD_UNSEEN, /* emptied; the pod's recorded cgroup cannot be seen: kept */
        GROUP_FORGOTTEN,  /* not the hook's own: dropped from the state, left in resctrl */
};

/* No monitored member of (pod, ctrl) is left: decide the group's fate, and
 * carry it out. The first call marks the group emptied; it lingers for
 * removeDelaySeconds, and while kubelet's cgroup of the pod (kubepods.h, in
 * mounts) has a process in it, has had none for less than
 * emptyPodLingerSeconds, or cannot be seen. A later call past all that
 * removes it. Removal checks under the resctrl lock that tasks lists no
 * running task of the pod, because rmdir would silently move live tasks out
 * of monitoring. Returns the fate
 * or -errno (logged); a group not in the state is GROUP_FORGOTTEN. */
int pod_group_release(struct pod_session *s, const struct cgroup_mounts *mounts, const char *ctrl);

/* With ABMC (abmc.h): gives up the group's counters for the events mbmEvents
 * leaves out, and says what it counts in *ret. 1 then; 0 without ABMC
 * (every event counts); -errno (logged) when its assignments cannot be read
 * or make no sense: nothing is written then. Caller holds the resctrl lock.
 * gc --dry-run: changes nothing. */
int pod_group_fit_bandwidth(struct pod_session *s, const char *ctrl, struct abmc_assignments *ret);

/* The wanted events (mbmEvents) the group has no counter for, as
 * "mbm_local_bytes in domain 1, ..." into buf. */
void pod_bandwidth_missing(const struct pod_session *s, const struct abmc_assignments *a, char *buf,
                           size_t size);

const char *ctrl_display(const char *ctrl);
