/* SPDX-License-Identifier: Apache-2.0 */
/* One pod's state under its lock, the node-wide handles of a run, and what a
 * member's record says (live, pending, waiting, why unmonitored): what the
 * hook's stages and gc share. What they do with a pod is in pod_threads.h
 * (joining), pod_ownership.h (claim and release) and pod_bandwidth.h. Lock
 * order: the pod lock first, then (briefly, around each resctrl change) the
 * resctrl root lock; never the other way round. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "oci.h"
#include "pod_state.h"
#include "statedir.h"

/* The node-wide handles of one run. */
struct pod_env {
        const struct config *config;
        int proc_fd;                   /* borrowed */
        int root_fd;                   /* the resctrl root; -EBADF while closed */
        int state_fd;                  /* stateDir */
        uint64_t pid_ns;               /* our pid namespace (proc_pid_ns); 0 when unknown */
        char boot_id[BOOT_ID_LEN + 1]; /* this boot's (proc_boot_id); "" when unknown */
        int64_t deadline; /* now_usec() by which every wait gives up; 0: lockTimeoutMs each */
};

#define POD_ENV_INIT                                                                               \
        {                                                                                          \
                .proc_fd = -EBADF, .root_fd = -EBADF, .state_fd = -EBADF                           \
        }

/* Opens resctrl, then stateDir; logs what failed. */
int pod_env_open(const struct config *c, int proc_fd, struct pod_env *e);
/* Opens stateDir only; logs what failed. For a process that outlives its
 * uses of resctrl (watch), which opens resctrl for each use. */
int pod_env_open_state_dir(const struct config *c, int proc_fd, struct pod_env *e);
/* Opens the resctrl root into e->root_fd, unless it is open: 0, or -errno,
 * not logged (pod_env_resctrl_failed says why). A process that waits between
 * its uses (watch, gc --interval) closes it after each
 * (pod_env_close_resctrl): while a file of resctrl is open, umount fails
 * with EBUSY, and after umount -l the kernel refuses a new resctrl mount. */
int pod_env_open_resctrl(struct pod_env *e);
/* Logs at level why pod_env_open_resctrl failed with r; returns r. */
int pod_env_resctrl_failed(const struct pod_env *e, int level, int r);
void pod_env_close_resctrl(struct pod_env *e);
/* How long the next wait (a lock) may take: what is left until the deadline,
 * or lockTimeoutMs when the run has none (gc). */
unsigned pod_env_wait_ms(const struct pod_env *e);
/* rdt_lock within pod_env_wait_ms: the root fd, locked (for
 * _cleanup_(rdt_unlockp)), or -errno (logged). */
int pod_env_lock_resctrl(const struct pod_env *e);
/* Once the hold of the resctrl lock has used its budget (rdt.h), lets
 * whoever waits for it in and takes it again within pod_env_wait_ms: 1 when
 * it did (what was read under the lock may have changed: read it again), 0
 * when the budget is not spent, -ENOLCK (logged) when it could not be taken
 * again: the caller then holds nothing and stops, leaving the rest to the
 * next pass. Caller holds the lock, exclusive. */
int pod_env_take_turn(const struct pod_env *e);
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

/* The one rule of whether a member lives, for the stages, gc and the
 * readers alike: 1 when its init still runs, seen in proc_fd's /proc: same
 * start time (its pid was not reused) and not a zombie (gc drops a zombie
 * as exited). 0 when not, *ret_why saying how; -errno when /proc cannot
 * tell. */
int pod_member_is_live(int proc_fd, const struct member *m, const char **ret_why);

/* Why a container is unmonitored. Its member records it as text, which
 * begins with the kind's (unmonitored_text) and may go on with what the
 * kernel said; status and Prometheus name the kind by its code. */
enum unmonitored {
        UNMONITORED_ENOSPC,         /* "out of RMIDs (ENOSPC)" */
        UNMONITORED_EBUSY,          /* "out of RMIDs, some in limbo (EBUSY)" */
        UNMONITORED_CLASS_MISMATCH, /* its task is in another control group */
        UNMONITORED_CTRL_MISSING,   /* its control group is gone */
        UNMONITORED_PENDING,        /* pod_member_is_pending */
        UNMONITORED_BUSY,           /* the locks not had within the run's deadline */
        UNMONITORED_ELSEWHERE,      /* adopt: its init is in another monitor's group */
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
 * while freed ones were in limbo), or because its createRuntime could not
 * have the locks in time (busy): it waits, and gc or watch brings it in
 * once an RMID, or the lock, is free. */
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

/* "the root control group" for "/", else the ctrl group's name: for logs. */
const char *ctrl_display(const char *ctrl);
