/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "counters.h"
#include "finished.h"
#include "kubepods.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "pod_ownership.h"
#include "proc.h"
#include "rdt.h"
#include "statedir.h"

/* Saves st now: what follows depends on the record being on disk. */
static int session_save(struct pod_session *s)
{
        int r = pod_state_save(s->env->state_fd, s->uid, &s->st);

        if (r < 0)
                return log_error_errno(r, "cannot save state of pod %s in stateDir '%s'", s->uid,
                                       s->env->config->state_dir);
        s->dirty = false;
        return 0;
}

/* A failure of a step other than mkdir, logged already: never one of the
 * errnos that say "unmonitored, and why" (a full stateDir is ENOSPC too). */
static int not_mkdir(int r)
{
        return r == -ENOSPC || r == -EBUSY || r == -ENOENT ? -EIO : r;
}

/* Is a counter that reads so now to get its baseline later, from its first
 * value? Unavailable (AET: no data on that package for this RMID yet),
 * Error, a text that does not parse. Not Unassigned: with ABMC a counter
 * counts from zero once assigned, and gc, which assigns it, says so. */
static bool baseline_later(enum counter_state state)
{
        return state == COUNTER_UNAVAILABLE || state == COUNTER_ERROR || state == COUNTER_UNPARSED;
}

/* A counter that is not readable yet gets no baseline now; its key waits
 * for its first value (pod_ownership_claim takes it). Reads only this group's
 * mon_data. */
void pod_ownership_record_baseline(struct pod_session *s, const char *ctrl)
{
        _cleanup_free_ struct counter_reading *rd = NULL;
        _cleanup_close_ int group_fd = -EBADF;
        struct group *g = pod_state_find_group(&s->st, ctrl);
        size_t n = 0;
        int r;

        pod_state_group_clear_baseline(g);
        s->dirty = true;
        r = rdt_mon_group_open(s->env->root_fd, ctrl, s->uid, &group_fd);
        if (r >= 0)
                r = counters_read(group_fd, true, &rd, &n);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char key[2 * NAME_MAX + 2];

                (void) snprintf(key, sizeof(key), "%s/%s", rd[i].domain, rd[i].name);
                if (rd[i].state == COUNTER_OK)
                        r = pod_state_group_set_baseline(g, key, &rd[i].value);
                else if (baseline_later(rd[i].state))
                        r = pod_state_group_add_pending(g, key);
        }
        if (r < 0)
                log_warning_errno(r, "cannot read the counters of pod %s's group in %s, ignoring",
                                  s->uid, ctrl_display(ctrl));
}

/* The baselines of g's counters that were not readable when the hook took
 * the group: each one's first readable value, read now (under the pod lock
 * and the resctrl lock, as the first ones were), is its baseline; what its
 * delta counts starts then. Counters still unreadable stay pending. */
static void take_late_baselines(struct pod_session *s, struct group *g)
{
        _cleanup_close_ int group_fd = -EBADF;
        int r = rdt_mon_group_open(s->env->root_fd, g->ctrl, s->uid, &group_fd);

        for (size_t i = g->n_pending; r >= 0 && i-- > 0;) {
                _cleanup_free_ char *key = strdup(g->pending[i]);
                struct counter_reading rd;

                if (!key)
                        r = -ENOMEM;
                else if (counter_read_key(group_fd, key, &rd) >= 0 && rd.state == COUNTER_OK) {
                        r = pod_state_group_set_baseline(g, key, &rd.value);
                        s->dirty = true;
                        log_debug("baseline of %s of pod %s's group in %s taken at its first "
                                  "value",
                                  key, s->uid, ctrl_display(g->ctrl));
                }
        }
        if (r < 0 && r != -ENOENT)
                log_warning_errno(r, "cannot read the counters of pod %s's group in %s, ignoring",
                                  s->uid, ctrl_display(g->ctrl));
}

int pod_ownership_claim(struct pod_session *s, const char *ctrl, char **reterr_status)
{
        struct group *g = pod_state_find_group(&s->st, ctrl);
        bool recorded = g != NULL;
        int r, exists;

        assert(rdt_lock_is_held());
        exists = rdt_mon_group_exists(s->env->root_fd, ctrl, s->uid);
        if (exists < 0)
                return not_mkdir(log_error_errno(exists, "cannot look up the group of pod %s in %s",
                                                 s->uid, ctrl_display(ctrl)));
        if (!g) {
                r = pod_state_add_group(&s->st, ctrl, !exists);
                if (r < 0)
                        return log_error_errno(r, "out of memory");
                g = &s->st.groups[s->st.n_groups - 1];
                g->created_ms = now_unix_ms();
                s->dirty = true;
        } else if (!exists) {
                g->owned = true;
                g->created_ms = now_unix_ms(); /* a new RMID: its counts start anew */
                s->dirty = true;
        }
        if (s->dry_run)
                return !exists;
        if (recorded && exists && g->n_pending > 0)
                take_late_baselines(s, g);
        /* A recorded group that is there changes nothing (but late
         * baselines): a gc pass over running pods writes no state. */
        r = s->dirty ? session_save(s) : 0;
        if (r < 0 || exists)
                return not_mkdir(r);

        r = rdt_mon_group_create(s->env->root_fd, ctrl, s->uid, reterr_status);
        if (r < 0 && r != -ENOSPC && r != -EBUSY && r != -ENOENT)
                log_error_errno(r, "cannot create group for pod %s in %s (%s)", s->uid,
                                ctrl_display(ctrl), *reterr_status ? *reterr_status : "?");
        if (r == 0) {
                /* Made by someone else since the look: theirs. */
                pod_state_find_group(&s->st, ctrl)->owned = false;
                return not_mkdir(session_save(s));
        }
        if (r < 0 && !recorded) {
                pod_state_drop_group(&s->st, ctrl);
                s->dirty = true;
        }
        return r;
}

/* 1 when the group lists no running task of the pod, 0 when it does,
 * -errno. Where the pod's cgroup is recorded, a task outside it is not the
 * pod's (what a reused pid named, another tool's doing): rmdir returns it to
 * the control group, where it belongs, and *ret_strangers counts it. A task
 * whose cgroup cannot be read counts as the pod's. Without the record, every
 * running task counts. */
static int group_is_empty_of_pod(const struct pod_session *s, const struct cgroup_mounts *mounts,
                                 const char *ctrl, unsigned *ret_strangers)
{
        const struct pod_env *e = s->env;
        _cleanup_free_ pid_t *tasks = NULL;
        size_t n = 0;
        int r;

        *ret_strangers = 0;
        if (!s->st.has_pod_cgroup)
                return rdt_mon_group_is_empty(e->root_fd, e->proc_fd, ctrl, s->uid);
        r = rdt_mon_group_tasks(e->root_fd, ctrl, s->uid, &tasks, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                int under = cgroup_task_is_under(e->proc_fd, mounts, tasks[i], &s->st.pod_cgroup);

                if (under == 0)
                        (*ret_strangers)++;
                else if (under != -ESRCH && proc_is_running(e->proc_fd, tasks[i]) != 0)
                        return 0;
        }
        return 1;
}

/* The group's cumulative counters as they read now, with the pod's
 * identity, for the record of its end: read right before the rmdir, which
 * takes them away. False (logged) when there is nothing to record: the
 * group goes all the same. */
static bool read_final_counters(const struct pod_session *s, const struct group *g,
                                struct finished_pod *f)
{
        _cleanup_close_ int group_fd = -EBADF;
        int r;

        if (s->env->config->final_counters_sec == 0)
                return false;
        r = finished_pod_init(f, s->uid, &s->st, g);
        if (r >= 0)
                r = rdt_mon_group_open(s->env->root_fd, g->ctrl, s->uid, &group_fd);
        /* Cumulative only: a gauge of a group without tasks says nothing,
         * and MPAM's llc_occupancy may block while no monitor is free. */
        if (r >= 0)
                r = counters_read(group_fd, true, &f->rd, &f->n_rd);
        if (r == -ENOENT) /* gone already: nothing to remove, nothing to keep */
                return false;
        if (r < 0)
                log_warning_errno(r, "cannot read the final counters of pod %s's group in %s",
                                  s->uid, ctrl_display(g->ctrl));
        return r >= 0;
}

/* Keeps the final counters in stateDir (finished.h) before the rmdir, so
 * that a kill between the two loses nothing. A failure costs the record,
 * never the removal. *ret_dir_fd for finished_remove, should the rmdir fail. */
static void keep_final_counters(const struct pod_session *s, const struct finished_pod *f,
                                int *ret_dir_fd)
{
        const struct pod_env *e = s->env;
        int r;

        r = statedir_open_finished(e->state_fd, true, ret_dir_fd);
        if (r >= 0)
                r = finished_save(*ret_dir_fd, f, &FINISHED_LIMITS(e->config->final_counters_sec),
                                  deadline_after_ms(pod_env_wait_ms(e)));
        if (r < 0)
                log_warning_errno(r,
                                  "cannot keep the final counters of pod %s's group in %s in "
                                  "stateDir '%s'",
                                  s->uid, ctrl_display(f->group.ctrl), e->config->state_dir);
}

/* rmdir of the group unless it holds a running task of the pod, with the
 * record of its final counters, all under the resctrl lock. 1 when removed
 * (or already gone), 0 when it has tasks. */
static int remove_if_empty(struct pod_session *s, const struct cgroup_mounts *mounts,
                           const struct group *g)
{
        _cleanup_(finished_pod_done) struct finished_pod final = {0};
        _cleanup_close_ int final_fd = -EBADF;
        const struct pod_env *e = s->env;
        const char *ctrl = g->ctrl;
        unsigned strangers;
        int r, q, empty;

        r = pod_env_lock_resctrl(e);
        if (r < 0)
                return r;
        empty = group_is_empty_of_pod(s, mounts, ctrl, &strangers);
        if (empty == 1 && !s->dry_run) {
                if (read_final_counters(s, g, &final))
                        keep_final_counters(s, &final, &final_fd);
                r = rdt_mon_group_remove(e->root_fd, ctrl, s->uid);
                if (r < 0 && final_fd >= 0)
                        (void) finished_remove(final_fd, &final);
                /* Its RMID went to limbo: containers waiting in ctrl may
                 * have it soon (statedir.h). A failure costs only that. */
                if (r >= 0 && (q = statedir_mark_freed(e->state_fd, ctrl)) < 0)
                        (void) log_errno_at(LOG_DEBUG, q, "cannot mark the removal in %s",
                                            ctrl_display(ctrl));
        }
        rdt_unlock(e->root_fd);
        if (empty == 1 && strangers > 0 && r >= 0)
                log_warning("group of pod %s in %s held %u tasks from outside the pod's cgroup; "
                            "removing it returned them to %s",
                            s->uid, ctrl_display(ctrl), strangers, ctrl_display(ctrl));

        if (empty == -ENOENT)
                return 1;
        if (empty < 0)
                return log_error_errno(empty, "cannot read the tasks of pod %s's group in %s",
                                       s->uid, ctrl_display(ctrl));
        if (r < 0)
                return log_error_errno(r, "cannot remove the group of pod %s in %s", s->uid,
                                       ctrl_display(ctrl));
        return empty;
}

/* Removal only after the delay has fully passed: whole seconds on both
 * sides, so "more than delay" errs late, never early. */
static bool linger_over(const struct group *g, unsigned delay)
{
        int64_t now = now_boottime_sec();

        return delay == 0 || now < (int64_t) g->emptied_at ||
               now - (int64_t) g->emptied_at > (int64_t) delay;
}

/* What kubelet's cgroup of the pod says now: the one createRuntime recorded,
 * or without a record (a pod recorded by 0.2, or not a kubelet pod), the one
 * kubelet's layouts name (a pod cgroup found there that cannot be trusted
 * counts as gone, as it always did, said in one line). A recorded one that
 * cannot be read is UNSEEN: "cannot see" never means "gone". */
static enum pod_cgroup pod_cgroup_state(const struct pod_session *s,
                                        const struct cgroup_mounts *mounts)
{
        enum pod_cgroup state;
        struct cgroup_ref ref;
        int r;

        if (s->st.has_pod_cgroup) {
                r = kubepods_recorded_cgroup(mounts, &s->st.pod_cgroup, &state);
                if (r < 0)
                        log_warning_errno(r, "cannot read cgroup %s:%s of pod %s",
                                          cgroup_hierarchy_name(&s->st.pod_cgroup),
                                          s->st.pod_cgroup.path, s->uid);
                return r < 0 ? POD_CGROUP_UNSEEN : state;
        }
        r = kubepods_pod_cgroup(mounts, s->uid, &state, &ref);
        if (r < 0) {
                log_warning_errno(r,
                                  "cannot tell from cgroup %s whether pod %s lives; its group "
                                  "goes as if it were gone",
                                  ref.path, s->uid);
                return POD_CGROUP_GONE;
        }
        return state;
}

/* Does the pod live on, g emptied? While a process runs in its cgroup
 * (containerd's sandbox, which no hook sees), or for emptyPodLingerSeconds
 * after the group emptied while none does (a container between its
 * restarts, CRI-O's dropped infra container). True when the group is kept,
 * *ret_fate saying why (GROUP_POD_LIVES, or GROUP_POD_UNSEEN, logged). */
static bool pod_keeps_group(const struct pod_session *s, const struct cgroup_mounts *mounts,
                            const struct group *g, enum group_fate *ret_fate)
{
        switch (pod_cgroup_state(s, mounts)) {
        case POD_CGROUP_UNSEEN:
                if (s->st.has_pod_cgroup)
                        log_warning("cannot see cgroup %s:%s of pod %s from here; its group is "
                                    "kept",
                                    cgroup_hierarchy_name(&s->st.pod_cgroup), s->st.pod_cgroup.path,
                                    s->uid);
                else
                        log_warning("cannot see a whole cgroup hierarchy from here to tell "
                                    "whether pod %s lives; its group is kept",
                                    s->uid);
                *ret_fate = GROUP_POD_UNSEEN;
                return true;
        case POD_CGROUP_EMPTY:
                if (linger_over(g, s->env->config->empty_pod_linger_sec))
                        return false;
                /* fall through */
        case POD_CGROUP_POPULATED:
                *ret_fate = GROUP_POD_LIVES;
                return true;
        case POD_CGROUP_GONE:
                break;
        }
        return false;
}

int pod_ownership_release(struct pod_session *s, const struct cgroup_mounts *mounts,
                          const char *ctrl)
{
        unsigned delay = s->env->config->remove_delay_sec;
        struct group *g = pod_state_find_group(&s->st, ctrl);
        enum group_fate kept;
        bool emptied_now;
        int r;

        if (!g || !g->owned) {
                pod_state_drop_group(&s->st, ctrl);
                s->dirty = true;
                return GROUP_FORGOTTEN;
        }
        emptied_now = !g->emptied;
        if (emptied_now) {
                g->emptied = true;
                g->emptied_at = (uint64_t) now_boottime_sec();
        }
        if (!linger_over(g, delay)) {
                s->dirty |= emptied_now;
                return GROUP_LINGERS;
        }
        if (pod_keeps_group(s, mounts, g, &kept)) {
                s->dirty |= emptied_now;
                return kept;
        }
        if (emptied_now) /* removed now, or kept only for its tasks */
                g->emptied = false;

        r = remove_if_empty(s, mounts, g);
        if (r < 0)
                return r;
        if (r == 0) {
                log_warning("group of pod %s in %s still has tasks; kept", s->uid,
                            ctrl_display(ctrl));
                return GROUP_BUSY;
        }
        pod_state_drop_group(&s->st, ctrl);
        s->dirty = true;
        return GROUP_REMOVED;
}
