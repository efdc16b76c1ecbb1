/* SPDX-License-Identifier: Apache-2.0 */
/* Whose a pod's group is (claim), and its end (release): the ownership state
 * machine that the stages and gc share, and docs/design.md's table. */
#pragma once

#include "cgroup.h"
#include "pod.h"

/* Records the group's cumulative counters as they read before any task of
 * the pod is in it, as its baseline (pod_state.h): a reused RMID can carry counts
 * of its previous group, and a group found already there has counts of its
 * own. Call before the first task goes in. A failure loses the baseline,
 * nothing else (logged). Caller holds the pod lock. */
void pod_ownership_record_baseline(struct pod_session *s, const char *ctrl);

/* Who owns the group of a (pod, control group) record, decided in this one
 * place, from what resctrl shows under its lock, and saved before anything
 * depends on it:
 *
 *   no record  --group missing-->  owned: true, saved, then mkdir   (made)
 *   no record  --group exists--->  owned: false, saved              (adopted)
 *   owned: false --group missing-->  owned: true, saved, then mkdir (re-made: the hook's now)
 *   owned: true  --group missing-->  saved, then mkdir again        (re-made)
 *   either     --group exists--->  unchanged
 *   last member gone: pod_ownership_release rmdirs an owned group, forgets an adopted one
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
int pod_ownership_claim(struct pod_session *s, const char *ctrl, char **reterr_status);

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
int pod_ownership_release(struct pod_session *s, const struct cgroup_mounts *mounts,
                          const char *ctrl);
