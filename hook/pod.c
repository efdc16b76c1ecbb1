/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "counters.h"
#include "kubepods.h"
#include "fsutil.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "pod.h"
#include "proc.h"
#include "rdt.h"

int pod_env_open(const struct config *c, int proc_fd, struct pod_env *e)
{
        int r;

        *e = (struct pod_env) POD_ENV_INIT;
        e->config = c;
        e->proc_fd = proc_fd;

        r = rdt_open(c->resctrl_path, c->require_resctrl_fs, &e->root_fd);
        if (r == -ENOMEDIUM)
                return log_error_errno(r, "'%s' is not a resctrl mount", c->resctrl_path);
        if (r == -EOPNOTSUPP)
                return log_error_errno(r, "resctrl at '%s' has no monitoring (no mon_groups)",
                                       c->resctrl_path);
        if (r < 0)
                return log_error_errno(r, "cannot open resctrl at '%s'", c->resctrl_path);

        r = statedir_open(c->state_dir, true, &e->state_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open state directory '%s'", c->state_dir);

        if (proc_pid_ns(proc_fd, &e->pid_ns) < 0)
                e->pid_ns = 0;
        if (proc_boot_id(proc_fd, e->boot_id) < 0)
                e->boot_id[0] = '\0';
        return 0;
}

unsigned pod_env_wait_ms(const struct pod_env *e)
{
        int64_t left;

        if (e->deadline == 0)
                return e->config->lock_timeout_ms;
        left = (e->deadline - now_usec()) / 1000;
        return left > 0 ? (unsigned) left : 0;
}

int pod_env_lock_resctrl(const struct pod_env *e)
{
        int r = rdt_lock(e->root_fd, pod_env_wait_ms(e));

        if (r < 0)
                return log_error_errno(r, "cannot take the resctrl lock (lockTimeoutMs %u ms)",
                                       e->config->lock_timeout_ms);
        return 0;
}

void pod_env_close(struct pod_env *e)
{
        closep(&e->root_fd);
        closep(&e->state_fd);
        e->root_fd = e->state_fd = -EBADF;
}

int pod_session_lock(const struct pod_env *e, const char *uid, unsigned timeout_ms,
                     struct pod_session *s)
{
        *s = (struct pod_session){.env = e, .lock_fd = -EBADF};
        if (strlen(uid) != POD_UID_LEN)
                return -EINVAL;
        memcpy(s->uid, uid, POD_UID_LEN + 1);
        (void) statedir_name(uid, STATEDIR_LOCK, s->lock_name);
        return lock_file_acquire(e->state_fd, s->lock_name, timeout_ms, &s->lock_fd);
}

int pod_session_load(struct pod_session *s, char **reterr)
{
        int r = pod_state_load(s->env->state_fd, s->uid, &s->st, reterr);

        if (r < 0 && r != -ENOENT)
                return r;
        s->loaded = true;
        if (r == 0 && pod_state_of_other_boot(&s->st, s->env->boot_id, s->env->pid_ns)) {
                log_warning("state of pod %s was written in an earlier boot (boot_id %s): its "
                            "containers and groups are gone (stateDir belongs on tmpfs)",
                            s->uid, s->st.boot_id);
                pod_state_done(&s->st);
                s->st = (struct pod_state){0};
                s->dirty = true;
        }
        /* A file of an older version gets this boot once: else, never
         * rewritten while its pods run, it would be trusted after a reboot.
         * Never the boot a reader of another pid namespace sees. */
        if (s->st.pid_ns != 0 && s->env->pid_ns != 0 && s->st.pid_ns != s->env->pid_ns)
                return r == 0;
        if (r == 0 && !s->st.boot_id[0] && s->env->boot_id[0])
                s->dirty = true;
        memcpy(s->st.boot_id, s->env->boot_id, sizeof(s->st.boot_id));
        return r == 0;
}

int pod_session_close(struct pod_session *s)
{
        int r = 0;

        if (s->loaded && !s->dry_run) {
                if (s->st.n_members == 0 && s->st.n_groups == 0) {
                        r = pod_state_remove(s->env->state_fd, s->uid);
                        if (r < 0)
                                log_warning_errno(r,
                                                  "cannot remove state of pod %s in stateDir '%s'",
                                                  s->uid, s->env->config->state_dir);
                        else
                                r = 1;
                        lock_file_release_and_unlink(s->env->state_fd, s->lock_name,
                                                     TAKE_FD(s->lock_fd));
                } else if (s->dirty) {
                        r = pod_state_save(s->env->state_fd, s->uid, &s->st);
                        if (r < 0)
                                log_error_errno(r, "cannot save state of pod %s in stateDir '%s'",
                                                s->uid, s->env->config->state_dir);
                }
        }
        pod_state_done(&s->st);
        closep(&s->lock_fd);
        s->lock_fd = -EBADF;
        return r;
}

int pod_member_is_live(const struct pod_env *e, const struct member *m, const char **ret_why)
{
        uint64_t start_time;
        bool running;
        int r;

        if (m->pid <= 0) {
                *ret_why = "no pid";
                return 0;
        }
        r = proc_start_time_running(e->proc_fd, m->pid, &start_time, &running);
        if (r == -ESRCH) {
                *ret_why = "gone";
                return 0;
        }
        if (r < 0)
                return r;
        if (start_time != m->start_time) {
                *ret_why = "pid reused";
                return 0;
        }
        if (!running)
                *ret_why = "exited";
        return running;
}

int pod_group_tasks(int root_fd, const char *ctrl, const char *uid, pid_t **ret, size_t *ret_n)
{
        int r = rdt_mon_group_tasks(root_fd, ctrl, uid, ret, ret_n);

        if (r == -ENOENT) {
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        return r;
}

/* Pins member m's init (proc_pin) while it is the member's: same start time,
 * running. 1 with *ret_fd; 0 when it is not (gone, pid reused, a zombie);
 * -errno. */
static int pin_member(int proc_fd, const struct member *m, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        uint64_t start;
        bool running;
        int r;

        if (m->pid <= 0)
                return 0;
        r = proc_pin(proc_fd, m->pid, &fd);
        if (r >= 0)
                r = proc_pinned_start_time(fd, &start, &running);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        if (start != m->start_time || !running)
                return 0;
        *ret_fd = TAKE_FD(fd);
        return 1;
}

/* The threads of member m's container: those of the cgroup its runtime made
 * for it and of the cgroups below it. A member recorded before such records
 * has the cgroup its init is in now (cgroup_container_threads), read while
 * the init is pinned, so that a reused pid cannot lend it another's. 0;
 * -ESRCH or -ENOENT when there is nothing to read (gone, or not seen from
 * here); -errno. */
static int member_threads(int proc_fd, const struct cgroup_mounts *mounts, const struct member *m,
                          pid_t **ret, size_t *ret_n, bool *ret_cut)
{
        _cleanup_close_ int pin = -EBADF;
        bool own;
        int r;

        *ret_cut = false;
        if (m->has_cgroup)
                return cgroup_subtree_threads(mounts, &m->cgroup, ret, ret_n, ret_cut);
        r = pin_member(proc_fd, m, &pin);
        if (r <= 0)
                return r == 0 ? -ESRCH : r;
        r = cgroup_container_threads(proc_fd, mounts, m->pid, ret, ret_n, &own);
        if (r >= 0 && proc_pin_holds(pin) != 1) {
                free(TAKE_PTR(*ret));
                return -ESRCH;
        }
        return r;
}

/* Threads going into the group of (pod, ctrl): its tasks file, opened at
 * the first write, and what the other monitoring groups of ctrl hold, read
 * when a thread first needs it. */
struct join {
        int proc_fd, root_fd;
        const char *ctrl, *uid;
        int tasks_fd;
        pid_t *others; /* NULL until read */
        size_t n_others;
        bool others_read;
        int kernel_says; /* /proc shows cpu_resctrl_groups: 1, 0, or -1 until looked */
};

#define JOIN_INIT(proc, root, c, u)                                                                \
        {                                                                                          \
                .proc_fd = (proc), .root_fd = (root), .ctrl = (c), .uid = (u), .tasks_fd = -EBADF, \
                .kernel_says = -1                                                                  \
        }

static void join_done(struct join *j)
{
        closep(&j->tasks_fd);
        free(j->others);
}

/* Is thread tid in the default monitoring group of j->ctrl, from which only
 * the hook's joins take it? A thread in another monitoring group (another
 * monitor's: pqos, an NRI plugin, the application) or control group is
 * never taken. The kernel says where it is in /proc/<tid>/cpu_resctrl_groups;
 * without that file, it is where no other monitoring group of ctrl lists
 * it. 1, 0, -ESRCH when it is gone, -errno. */
static int in_default_group(struct join *j, pid_t tid)
{
        _cleanup_free_ char *ctrl = NULL, *mon = NULL;
        int r = rdt_task_mon_group(j->proc_fd, tid, &ctrl, &mon);

        if (r >= 0)
                return !mon && strcmp(ctrl, j->ctrl) == 0;
        if (r != -ENOENT)
                return r;
        if (j->kernel_says < 0)
                j->kernel_says = faccessat(j->proc_fd, "self/cpu_resctrl_groups", F_OK, 0) == 0;
        if (j->kernel_says) /* the kernel has the file: the thread is gone */
                return -ESRCH;
        if (!j->others_read) {
                r = rdt_ctrl_mon_tasks(j->root_fd, j->ctrl, j->uid, &j->others, &j->n_others);
                if (r < 0)
                        return r;
                j->others_read = true;
        }
        return !pid_list_has(j->others, j->n_others, tid);
}

/* Writes tid, pinned as pin_fd (and checked since the pin), into the group.
 * A thread that exited before the write ended may have left its id to
 * another: if the group lists that id, it goes back to the control group's
 * default monitoring group (the same control group: never another class).
 * 1 when written; 0 when not (it exited, or the kernel keeps it in another
 * control group: *ret_elsewhere counts it); -errno. */
static int write_pinned(struct join *j, pid_t tid, int pin_fd, unsigned *ret_elsewhere)
{
        int r;

        if (j->tasks_fd < 0 &&
            (r = rdt_mon_group_open_tasks(j->root_fd, j->ctrl, j->uid, &j->tasks_fd)) < 0)
                return r;
        r = rdt_tasks_write(j->tasks_fd, tid);
        if (r == -EINVAL)
                (*ret_elsewhere)++;
        if (r == -ESRCH || r == -EINVAL)
                return 0;
        if (r < 0)
                return r;
        r = proc_pin_holds(pin_fd);
        if (r == 1)
                return 1;
        if (rdt_mon_group_has_task(j->root_fd, j->ctrl, j->uid, tid) == 1)
                (void) rdt_ctrl_add_task(j->root_fd, j->ctrl, tid);
        return r < 0 ? r : 0;
}

int pod_member_rejoin(struct pod_session *s, const struct member *m)
{
        const struct pod_env *e = s->env;
        _cleanup_(join_done) struct join j = JOIN_INIT(e->proc_fd, e->root_fd, m->ctrl, s->uid);
        _cleanup_close_ int pin = -EBADF;
        unsigned elsewhere = 0;
        int r;

        r = pin_member(e->proc_fd, m, &pin);
        if (r == 0) /* exited meanwhile: its poststop or the next gc drops it */
                return -ESRCH;
        if (r > 0)
                r = in_default_group(&j, m->pid);
        if (r > 0 && !s->dry_run)
                r = write_pinned(&j, m->pid, pin, &elsewhere);
        if (r < 0 && r != -ESRCH)
                return log_warning_errno(r, "cannot put container %s (pid %d) back into the group",
                                         m->id, m->pid);
        return r;
}

int pod_member_can_join(struct pod_session *s, const struct member *m)
{
        const struct pod_env *e = s->env;
        _cleanup_(join_done) struct join j = JOIN_INIT(e->proc_fd, e->root_fd, m->ctrl, s->uid);
        _cleanup_close_ int pin = -EBADF;
        int r = pin_member(e->proc_fd, m, &pin);

        if (r == 0)
                return -ESRCH;
        return r < 0 ? r : in_default_group(&j, m->pid);
}

/* Joins thread tid of member m's container, pinned from before the checks
 * until after the write: still in the container's cgroup, and in the
 * control group's default monitoring group (in_default_group; else
 * *ret_elsewhere counts it). 1 when joined (counted only, for --dry-run), 0
 * when not, -errno. */
static int join_thread(struct pod_session *s, const struct cgroup_mounts *mounts,
                       const struct member *m, struct join *j, pid_t tid, unsigned *ret_elsewhere)
{
        _cleanup_close_ int pin = -EBADF;
        int r;

        r = proc_pin(j->proc_fd, tid, &pin);
        if (r >= 0 && m->has_cgroup) {
                r = cgroup_task_is_under(j->proc_fd, mounts, tid, &m->cgroup);
                if (r == 0) /* its id taken by a thread elsewhere since the list was read */
                        return 0;
        }
        if (r >= 0)
                r = in_default_group(j, tid);
        if (r == 0)
                (*ret_elsewhere)++;
        if (r == -ESRCH)
                return 0;
        if (r <= 0)
                return r;
        return s->dry_run ? 1 : write_pinned(j, tid, pin, ret_elsewhere);
}

int pod_member_join_cgroup(struct pod_session *s, const struct cgroup_mounts *mounts,
                           const struct member *m, const pid_t *in, size_t n_in,
                           unsigned *ret_joined, unsigned *ret_elsewhere)
{
        const struct pod_env *e = s->env;
        _cleanup_(join_done) struct join j = JOIN_INIT(e->proc_fd, e->root_fd, m->ctrl, s->uid);
        _cleanup_free_ pid_t *threads = NULL;
        size_t n_threads = 0;
        bool cut;
        int r;

        *ret_joined = *ret_elsewhere = 0;
        r = member_threads(e->proc_fd, mounts, m, &threads, &n_threads, &cut);
        if (r == -ESRCH || r == -ENOENT) /* gone, or its cgroup is */
                return 0;
        if (r < 0)
                return log_warning_errno(r,
                                         "cannot compare the threads of container %s (pid %d) "
                                         "with the group of pod %s",
                                         m->id, m->pid, s->uid);
        if (cut)
                log_warning("container %s of pod %s has over %d levels of cgroups or %d threads; "
                            "the rest is not joined",
                            m->id, s->uid, CGROUP_SUBTREE_DEPTH, CGROUP_SUBTREE_THREADS);
        for (size_t i = 0; r >= 0 && i < n_threads; i++) {
                if (pid_list_has(in, n_in, threads[i]))
                        continue;
                r = join_thread(s, mounts, m, &j, threads[i], ret_elsewhere);
                if (r > 0)
                        (*ret_joined)++;
        }
        if (r == -EXDEV)
                return log_warning_errno(r,
                                         "cannot tell which threads are container %s's: this "
                                         "process's cgroup namespace is not found in the "
                                         "cgroup mount (check: node-cgroups); none joined",
                                         m->id);
        if (r < 0)
                return log_warning_errno(r,
                                         "cannot put the threads of container %s into the "
                                         "group of pod %s",
                                         m->id, s->uid);
        return 0;
}

void pod_coverage(int proc_fd, int root_fd, const struct cgroup_mounts *mounts, const char *uid,
                  const struct pod_state *st, struct pod_coverage *ret)
{
        _cleanup_free_ pid_t *in = NULL;
        const char *in_ctrl = NULL; /* whose group's tasks are in in */
        size_t n_in = 0;

        *ret = (struct pod_coverage){0};
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];
                _cleanup_(join_done) struct join j = JOIN_INIT(proc_fd, root_fd, m->ctrl, uid);
                _cleanup_free_ pid_t *threads = NULL;
                size_t n = 0;
                bool cut;

                if (!m->monitored || member_threads(proc_fd, mounts, m, &threads, &n, &cut) < 0)
                        continue;
                if (!in_ctrl || strcmp(in_ctrl, m->ctrl) != 0) {
                        free(TAKE_PTR(in));
                        in_ctrl = NULL;
                        if (pod_group_tasks(root_fd, m->ctrl, uid, &in, &n_in) < 0)
                                continue;
                        in_ctrl = m->ctrl;
                }
                ret->threads += (unsigned) n;
                for (size_t k = 0; k < n; k++) {
                        if (pid_list_has(in, n_in, threads[k]))
                                ret->in++;
                        else if (in_default_group(&j, threads[k]) == 0)
                                ret->elsewhere++;
                }
        }
}

static const struct {
        const char *text; /* on disk: never changes */
        const char *code;
} unmonitored_table[_UNMONITORED_MAX] = {
    [UNMONITORED_ENOSPC] = {"out of RMIDs (ENOSPC)", "enospc"},
    [UNMONITORED_EBUSY] = {"out of RMIDs, some in limbo (EBUSY)", "ebusy"},
    [UNMONITORED_CLASS_MISMATCH] = {"class mismatch", "class_mismatch"},
    [UNMONITORED_CTRL_MISSING] = {"control group missing", "ctrl_group_missing"},
    [UNMONITORED_PENDING] = {"createRuntime did not finish", "interrupted"},
    [UNMONITORED_OTHER] = {"", "other"},
};

const char *unmonitored_text(enum unmonitored u)
{
        return unmonitored_table[u].text;
}

const char *unmonitored_code(enum unmonitored u)
{
        return unmonitored_table[u].code;
}

enum unmonitored unmonitored_of(const char *reason)
{
        for (int u = 0; reason && u < UNMONITORED_OTHER; u++) {
                const char *text = unmonitored_table[u].text;

                /* Pending is the whole reason: it never says more. */
                if (u == UNMONITORED_PENDING ? strcmp(reason, text) == 0 : startswith(reason, text))
                        return (enum unmonitored) u;
        }
        return UNMONITORED_OTHER;
}

int pod_unmonitored_reason(enum unmonitored u, const char *status, char **ret)
{
        if (asprintf(ret, "%s%s%s", unmonitored_text(u), status ? ": " : "", status ? status : "") <
            0)
                return -ENOMEM;
        return 0;
}

bool pod_member_is_pending(const struct member *m)
{
        return !m->monitored && unmonitored_of(m->reason) == UNMONITORED_PENDING;
}

bool pod_member_is_waiting(const struct member *m)
{
        enum unmonitored u = m->monitored ? UNMONITORED_OTHER : unmonitored_of(m->reason);

        return u == UNMONITORED_ENOSPC || u == UNMONITORED_EBUSY;
}

uint64_t pod_member_waited_sec(const struct member *m)
{
        long ticks = sysconf(_SC_CLK_TCK);
        int64_t started = (int64_t) (m->start_time / (uint64_t) (ticks > 0 ? ticks : 100));
        int64_t now = now_boottime_sec();

        return now > started ? (uint64_t) (now - started) : 0;
}

bool pod_group_is_held(const struct pod_state *st, const char *ctrl)
{
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];

                if ((m->monitored || pod_member_is_pending(m)) && strcmp(m->ctrl, ctrl) == 0)
                        return true;
        }
        return false;
}

bool pod_group_has_pending(const struct pod_state *st, const char *ctrl, const char *except_id)
{
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];

                if (pod_member_is_pending(m) && strcmp(m->ctrl, ctrl) == 0 &&
                    (!except_id || strcmp(m->id, except_id) != 0))
                        return true;
        }
        return false;
}

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

/* A counter that says Unavailable has counted nothing yet and gets no
 * baseline. Reads only this group's mon_data. */
void pod_group_record_baseline(struct pod_session *s, const char *ctrl)
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

                if (rd[i].state != COUNTER_OK)
                        continue;
                (void) snprintf(key, sizeof(key), "%s/%s", rd[i].domain, rd[i].name);
                r = pod_state_group_set_baseline(g, key, &rd[i].value);
        }
        if (r < 0)
                log_warning_errno(r, "cannot read the counters of pod %s's group in %s, ignoring",
                                  s->uid, ctrl_display(ctrl));
}

int pod_group_claim(struct pod_session *s, const char *ctrl, char **reterr_status)
{
        struct group *g = pod_state_find_group(&s->st, ctrl);
        bool recorded = g != NULL;
        int r, exists;

        exists = rdt_mon_group_exists(s->env->root_fd, ctrl, s->uid);
        if (exists < 0)
                return not_mkdir(log_error_errno(exists, "cannot look up the group of pod %s in %s",
                                                 s->uid, ctrl_display(ctrl)));
        if (!g) {
                r = pod_state_add_group(&s->st, ctrl, !exists);
                if (r < 0)
                        return log_error_errno(r, "out of memory");
                g = &s->st.groups[s->st.n_groups - 1];
                s->dirty = true;
        } else if (!exists) {
                g->owned = true;
                s->dirty = true;
        }
        if (s->dry_run)
                return !exists;
        /* A recorded group that is there changes nothing: a gc pass over
         * running pods writes no state. */
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

int pod_group_fit_bandwidth(struct pod_session *s, const char *ctrl, struct abmc_assignments *ret)
{
        unsigned want = s->env->config->mbm_events;
        int r;

        r = abmc_group_assignments(s->env->root_fd, ctrl, s->uid, ret);
        if (r == -ENOENT || r == -EINVAL) /* no ABMC, or its mode is "default" */
                return 0;
        if (r < 0)
                return log_warning_errno(r,
                                         "cannot understand the counters of the group of pod %s in "
                                         "%s (mbm_L3_assignments); left as they are",
                                         s->uid, ctrl_display(ctrl));
        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                bool held = false;

                for (size_t i = 0; i < ret->n; i++)
                        held |= ret->assigned[ev][i];
                if ((want & (1U << ev)) || !held || s->dry_run)
                        continue;
                r = abmc_group_drop(s->env->root_fd, ctrl, s->uid, ev);
                if (r < 0) {
                        log_warning_errno(r,
                                          "cannot give up the %s counters of the group of pod %s",
                                          abmc_event_name(ev), s->uid);
                        continue;
                }
                for (size_t i = 0; i < ret->n; i++)
                        ret->assigned[ev][i] = false;
        }
        return 1;
}

void pod_bandwidth_missing(const struct pod_session *s, const struct abmc_assignments *a, char *buf,
                           size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                if (!(s->env->config->mbm_events & (1U << ev)) || !a->listed[ev])
                        continue;
                for (size_t i = 0; i < a->n && len < size; i++)
                        if (!a->assigned[ev][i])
                                len += (size_t) snprintf(buf + len, size - len, "%s%s in domain %u",
                                                         len ? ", " : "", abmc_event_name(ev),
                                                         a->ids[i]);
        }
}

const char *ctrl_display(const char *ctrl)
{
        return strcmp(ctrl, "/") == 0 ? "the root control group" : ctrl;
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

/* rmdir of the group unless it holds a running task of the pod, both under
 * the resctrl lock. 1 when removed (or already gone), 0 when it has tasks. */
static int remove_if_empty(struct pod_session *s, const struct cgroup_mounts *mounts,
                           const char *ctrl)
{
        const struct pod_env *e = s->env;
        unsigned strangers;
        int r, empty;

        r = pod_env_lock_resctrl(e);
        if (r < 0)
                return r;
        empty = group_is_empty_of_pod(s, mounts, ctrl, &strangers);
        if (empty == 1 && !s->dry_run)
                r = rdt_mon_group_remove(e->root_fd, ctrl, s->uid);
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

int pod_group_release(struct pod_session *s, const struct cgroup_mounts *mounts, const char *ctrl)
{
        unsigned delay = s->env->config->remove_delay_sec;
        struct group *g = pod_state_find_group(&s->st, ctrl);
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
        /* Does the pod live on (g emptied)? While a process runs in its
         * cgroup (containerd's sandbox, which no hook sees), or for
         * emptyPodLingerSeconds after the group emptied while none does (a
         * container between its restarts, CRI-O's dropped infra container). */
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
                s->dirty |= emptied_now;
                return GROUP_POD_UNSEEN;
        case POD_CGROUP_EMPTY:
                if (linger_over(g, s->env->config->empty_pod_linger_sec))
                        break;
                /* fall through */
        case POD_CGROUP_POPULATED:
                s->dirty |= emptied_now;
                return GROUP_POD_LIVES;
        case POD_CGROUP_GONE:
                break;
        }
        if (emptied_now) /* removed now, or kept only for its tasks */
                g->emptied = false;

        r = remove_if_empty(s, mounts, ctrl);
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
