/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "pod_threads.h"
#include "proc.h"
#include "rdt.h"

int pod_threads_group_tasks(int root_fd, const char *ctrl, const char *uid, pid_t **ret,
                            size_t *ret_n)
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

/* What a thread, once pinned, must still be to be member m's container's
 * (its id may name another thread by then: the list is read before the
 * lock is waited for): below the cgroup the list was read from, or, for an
 * init without a cgroup of its own, a thread of that init, which stays
 * pinned for it. */
struct member_scope {
        bool has_cgroup;
        struct cgroup_ref cgroup;
        int init_pin; /* without a cgroup: the init, pinned; else -EBADF */
};

#define MEMBER_SCOPE_INIT                                                                          \
        {                                                                                          \
                .init_pin = -EBADF                                                                 \
        }

static void member_scope_done(struct member_scope *scope)
{
        closep(&scope->init_pin);
}

/* The threads of member m's container: those of the cgroup its runtime made
 * for it and of the cgroups below it. A member recorded before such records
 * has the cgroup its init is in now (cgroup_container_threads), read while
 * the init is pinned, so that a reused pid cannot lend it another's. What a
 * thread must be to count as one of them goes to *ret_scope. 0; -ESRCH or
 * -ENOENT when there is nothing to read (gone, or not seen from here);
 * -errno. */
static int member_threads(int proc_fd, const struct cgroup_mounts *mounts, const struct member *m,
                          pid_t **ret, size_t *ret_n, bool *ret_cut, struct member_scope *ret_scope)
{
        _cleanup_close_ int pin = -EBADF;
        bool own;
        int r;

        *ret_cut = false;
        if (m->has_cgroup) {
                ret_scope->has_cgroup = true;
                ret_scope->cgroup = m->cgroup;
                return cgroup_subtree_threads(mounts, &m->cgroup, ret, ret_n, ret_cut);
        }
        r = pin_member(proc_fd, m, &pin);
        if (r <= 0)
                return r == 0 ? -ESRCH : r;
        r = cgroup_container_threads(proc_fd, mounts, m->pid, ret, ret_n, &own, &ret_scope->cgroup);
        if (r >= 0 && proc_pin_holds(pin) != 1) {
                free(TAKE_PTR(*ret));
                return -ESRCH;
        }
        ret_scope->has_cgroup = own;
        if (r >= 0 && !own)
                ret_scope->init_pin = TAKE_FD(pin);
        return r;
}

/* Is thread tid, pinned, still one of scope's? 1, 0, -errno. */
static int member_scope_holds(int proc_fd, const struct cgroup_mounts *mounts,
                              const struct member_scope *scope, pid_t tid)
{
        char path[32];

        if (scope->has_cgroup)
                return cgroup_task_is_under(proc_fd, mounts, tid, &scope->cgroup);
        (void) snprintf(path, sizeof(path), "task/%d", (int) tid);
        if (faccessat(scope->init_pin, path, F_OK, 0) == 0)
                return 1;
        return errno == ENOENT || errno == ESRCH ? 0 : -errno;
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

/* What was read under the resctrl lock, forgotten once it was let go: the
 * other groups' tasks, and the group's tasks file (another manager may
 * have removed the group meanwhile). */
static void join_forget(struct join *j)
{
        join_done(j);
        j->tasks_fd = -EBADF;
        j->others = NULL;
        j->n_others = 0;
        j->others_read = false;
}

/* Where the join finds a thread (in_default_group). */
enum {
        THREAD_ELSEWHERE = 0, /* another monitoring or control group: never taken */
        THREAD_DEFAULT = 1,   /* the control group's default monitoring group */
        THREAD_OURS = 2,      /* the pod's group already */
};

/* Is thread tid in the default monitoring group of j->ctrl, from which only
 * the hook's joins take it? A thread in another monitoring group (another
 * monitor's: pqos, an NRI plugin, the application) or control group is
 * never taken. The kernel says where it is in /proc/<tid>/cpu_resctrl_groups;
 * without that file, it is where no other monitoring group of ctrl lists
 * it (and one already in the pod's group is taken for the default's: its
 * write changes nothing). A THREAD_* value, -ESRCH when it is gone,
 * -errno. */
static int in_default_group(struct join *j, pid_t tid)
{
        _cleanup_free_ char *ctrl = NULL, *mon = NULL;
        int r = rdt_task_mon_group(j->proc_fd, tid, &ctrl, &mon);

        if (r >= 0 && strcmp(ctrl, j->ctrl) != 0)
                return THREAD_ELSEWHERE;
        if (r >= 0)
                return !mon                       ? THREAD_DEFAULT
                       : strcmp(mon, j->uid) == 0 ? THREAD_OURS
                                                  : THREAD_ELSEWHERE;
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

        assert(rdt_lock_is_held());
        r = pin_member(e->proc_fd, m, &pin);
        if (r == 0) /* exited meanwhile: its poststop or the next gc drops it */
                return -ESRCH;
        if (r > 0)
                r = in_default_group(&j, m->pid);
        if (r == THREAD_OURS)
                return 1;
        if (r == THREAD_DEFAULT && !s->dry_run) {
                r = write_pinned(&j, m->pid, pin, &elsewhere);
                if (r == 0 && elsewhere == 0) /* it exited before the write, or during it */
                        r = -ESRCH;
        }
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
        if (r > 0)
                r = in_default_group(&j, m->pid);
        return r < 0 ? r : r != THREAD_ELSEWHERE;
}

/* Has the resctrl lock for the join's next write: taken at the first, and
 * in turns of its budget after that (pod_env_take_turn). Each time it is
 * taken, what was read under an earlier hold is forgotten and the group is
 * looked for again. 1 with the lock held and the group there; 0 when the
 * group is gone; -ENOLCK when the lock was not had in time, *held false;
 * each said. */
static int hold_for_join(struct pod_session *s, const struct member *m, struct join *j, bool *held)
{
        const struct pod_env *e = s->env;
        int r;

        if (*held) {
                r = pod_env_take_turn(e);
                *held = r != -ENOLCK;
                if (r <= 0)
                        return r == 0 ? 1 : r;
        } else {
                r = rdt_lock(e->root_fd, pod_env_wait_ms(e));
                if (r < 0)
                        return log_warning_errno(-ENOLCK,
                                                 "cannot take the resctrl lock to join the "
                                                 "threads of container %s of pod %s; the next "
                                                 "pass joins them",
                                                 m->id, s->uid);
                *held = true;
        }
        join_forget(j);
        if (rdt_mon_group_exists(e->root_fd, m->ctrl, s->uid) != 0)
                return 1;
        log_warning("group of pod %s in %s was removed by someone else while the threads of "
                    "container %s joined; the next pass makes it again",
                    s->uid, ctrl_display(m->ctrl), m->id);
        return 0;
}

/* Joins thread tid of member m's container, pinned from before the checks
 * until after the write: still the container's (member_scope_holds), and in
 * the control group's default monitoring group (in_default_group; else
 * *ret_elsewhere counts it). 1 when joined (counted only, for --dry-run), 0
 * when not, -errno. */
static int join_thread(struct pod_session *s, const struct cgroup_mounts *mounts,
                       const struct member_scope *scope, struct join *j, pid_t tid,
                       unsigned *ret_elsewhere)
{
        _cleanup_close_ int pin = -EBADF;
        int r;

        r = proc_pin(j->proc_fd, tid, &pin);
        if (r >= 0) {
                r = member_scope_holds(j->proc_fd, mounts, scope, tid);
                if (r == 0) /* its id taken by a thread elsewhere since the list was read */
                        return 0;
        }
        if (r >= 0)
                r = in_default_group(j, tid);
        if (r == THREAD_ELSEWHERE)
                (*ret_elsewhere)++;
        if (r == -ESRCH || r == THREAD_OURS) /* gone, or in since the group's tasks were read */
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
        _cleanup_(member_scope_done) struct member_scope scope = MEMBER_SCOPE_INIT;
        _cleanup_free_ pid_t *threads = NULL;
        size_t n_threads = 0;
        bool cut, held = false;
        int r;

        *ret_joined = *ret_elsewhere = 0;
        r = member_threads(e->proc_fd, mounts, m, &threads, &n_threads, &cut, &scope);
        if (r == -ESRCH || r == -ENOENT) /* gone, or its cgroup is */
                return 0;
        if (r < 0)
                return log_warning_errno(r,
                                         "cannot compare the threads of container %s (pid %d) "
                                         "with the group of pod %s",
                                         m->id, m->pid, s->uid);
        if (cut)
                log_warning("container %s of pod %s has over %d levels of cgroups, %d cgroups or "
                            "%d threads; the rest is not joined",
                            m->id, s->uid, CGROUP_SUBTREE_DEPTH, CGROUP_SUBTREE_CGROUPS,
                            CGROUP_SUBTREE_THREADS);
        for (size_t i = 0; r >= 0 && i < n_threads; i++) {
                if (pid_list_has(in, n_in, threads[i]))
                        continue;
                /* For createRuntime, below the runtime's timeout: what is
                 * left past the run's deadline waits for the next gc or
                 * watch pass. */
                if (e->deadline != 0 && now_usec() >= e->deadline) {
                        log_warning("out of time (lockTimeoutMs) joining the threads of "
                                    "container %s of pod %s; the rest waits for the next pass",
                                    m->id, s->uid);
                        break;
                }
                r = hold_for_join(s, m, &j, &held);
                if (r <= 0)
                        break;
                r = join_thread(s, mounts, &scope, &j, threads[i], ret_elsewhere);
                if (r > 0)
                        (*ret_joined)++;
        }
        if (held)
                rdt_unlock(e->root_fd);
        if (r == 0 || r == -ENOLCK) /* the group gone, or the lock not had: said */
                return r;
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
                  const struct pod_state *st, const bool *live, struct pod_coverage *ret)
{
        _cleanup_free_ pid_t *in = NULL;
        const char *in_ctrl = NULL; /* whose group's tasks are in in */
        size_t n_in = 0;

        *ret = (struct pod_coverage){0};
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];
                _cleanup_(join_done) struct join j = JOIN_INIT(proc_fd, root_fd, m->ctrl, uid);
                _cleanup_(member_scope_done) struct member_scope scope = MEMBER_SCOPE_INIT;
                _cleanup_free_ pid_t *threads = NULL;
                size_t n = 0;
                bool cut;

                if (!m->monitored || !live[i] ||
                    member_threads(proc_fd, mounts, m, &threads, &n, &cut, &scope) < 0)
                        continue;
                if (!in_ctrl || strcmp(in_ctrl, m->ctrl) != 0) {
                        free(TAKE_PTR(in));
                        in_ctrl = NULL;
                        if (pod_threads_group_tasks(root_fd, m->ctrl, uid, &in, &n_in) < 0)
                                continue;
                        in_ctrl = m->ctrl;
                }
                ret->threads += (unsigned) n;
                for (size_t k = 0; k < n; k++) {
                        if (pid_list_has(in, n_in, threads[k]))
                                ret->in++;
                        else if (in_default_group(&j, threads[k]) == THREAD_ELSEWHERE)
                                ret->elsewhere++;
                }
        }
}
