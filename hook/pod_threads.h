/* SPDX-License-Identifier: Apache-2.0 */
/* Bringing a container's threads into its pod's group, each pinned so that a
 * reused pid or thread id never moves another process, and the pod's
 * coverage. */
#pragma once

#include <sys/types.h>

#include "cgroup.h"
#include "pod.h"

/* Writes member m's init into its group (again, or for the first time for
 * adopt; the join of its container, pod_member_join_cgroup, brings its
 * other threads), the init pinned (proc_pin) from before its start time is
 * checked until after the write, so that a reused pid never moves another
 * process for good, and taken only from its control group's default
 * monitoring group. 1 when written, or in the group already; 0 when the
 * init is in another monitoring or control group, where it stays; -ESRCH
 * when it is gone, or exited meanwhile. Caller holds the resctrl lock.
 * Logs a failure. */
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
 * group's tasks (pod_threads_group_tasks), read once for every member of (pod,
 * ctrl). Only threads in the control group's default monitoring group are
 * moved: those in another monitoring group (another monitor's) or control
 * group are counted in *ret_elsewhere and left there. A thread whose id was
 * reused by one outside the container between the read and the write is put
 * back; threads that exit meanwhile are skipped; a thread already in the
 * group costs no write (in may be read without the lock: one that joined
 * since is found in the group then). gc --dry-run: counts what it would
 * join. The caller does not hold the resctrl lock: the walk of the
 * container's threads needs none, and the join takes it for its writes
 * only, in turns of the hold budget (pod_env_take_turn), checking each time
 * that the group is still there. Past the session's deadline (pod_env's,
 * where it has one) it stops, saying so: the rest is the next pass's. 0
 * with *ret_joined; -ENOLCK when the lock was not had in time; or -errno;
 * each said. */
int pod_member_join_cgroup(struct pod_session *s, const struct cgroup_mounts *mounts,
                           const struct member *m, const pid_t *in, size_t n_in,
                           unsigned *ret_joined, unsigned *ret_elsewhere);

/* The tasks of the group of (pod uid, ctrl), sorted: what
 * pod_member_join_cgroup compares a container's threads with (in, n_in).
 * None when the group is gone. 0 or -errno. */
int pod_threads_group_tasks(int root_fd, const char *ctrl, const char *uid, pid_t **ret,
                            size_t *ret_n);

struct pod_coverage {
        unsigned threads;   /* in its live monitored containers (pod_member_join_cgroup's) */
        unsigned in;        /* of those, in the pod's groups */
        unsigned elsewhere; /* in another monitoring or control group: never joined */
};

/* The pod's coverage: of its members that live[i] says are live
 * (pod_member_is_live: an exited init, a zombie's too, counts for nothing,
 * as gc drops it). A container that cannot be read counts for nothing.
 * Read-only; no lock needed for a snapshot. */
void pod_coverage(int proc_fd, int root_fd, const struct cgroup_mounts *mounts, const char *uid,
                  const struct pod_state *st, const bool *live, struct pod_coverage *ret);
