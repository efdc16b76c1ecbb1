/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsutil.h"
#include "gc.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "metrics_http.h"
#include "pod.h"
#include "pod_state.h"
#include "pod_threads.h"
#include "proc.h"
#include "proc_events.h"
#include "rdt.h"
#include "rmid_wait.h"
#include "statedir.h"
#include "watch.h"
#include "watch_state.h"

/* How long the kernel may take to answer the subscription. */
#define WATCH_ANSWER_MS 1000u
/* How long a join waits for the pod's lock and then resctrl's, at most
 * (lockTimeoutMs, if shorter): a pod busy for longer is left to the next
 * pass. */
#define WATCH_JOIN_WAIT_MS 500u
/* A pass brought forward (events lost, a socket opened again) comes at
 * least this long after the one before: a node whose execs overflow the
 * socket gets passes, not one endless pass. */
#define WATCH_PASS_GAP_USEC (5 * 1000000LL)
/* Datagrams read in one wakeup, at most: a stream of execs never keeps
 * stateDir's changes, passes and watch.state waiting. */
#define WATCH_READS_PER_WAKEUP 256
/* After reading events, the socket is left alone this long: execs that come
 * meanwhile are read together. A wakeup costs more than an event (a context
 * switch each); so a node where thousands of unrelated processes exec a
 * second wakes watch at most 100 times a second, and a lone exec is read at
 * once. */
#define WATCH_BATCH_USEC 10000
/* A pod whose container waits for the locks (an intake record, a member
 * waiting, busy) is tried again this often while they are busy, each try
 * waiting for them this long at most (more than a hold's budget, rdt.h, and
 * the polls around it): it joins within milliseconds of the lock coming
 * free, and a pod busy for long (a gc pass's join of thousands of threads)
 * delays the exec events by one such wait a try. */
#define WATCH_BUSY_RETRY_USEC 10000
#define WATCH_BUSY_WAIT_MS 50u
/* A connector socket that failed is opened again after this long. */
#define WATCH_REOPEN_SEC 5
/* watch.state is written at most this often while joins come in. */
#define WATCH_STATE_EVERY_USEC 1000000
/* Each kind of trouble is logged at most once in this long. */
#define WATCH_LOG_EVERY_USEC (60 * 1000000LL)

/* A monitored container's recorded cgroup (pod_state.h), and whose it is. */
struct watch_entry {
        enum cgroup_kind kind;
        char controller[16];
        char *path;
        char uid[POD_UID_LEN + 1];
        char *member; /* the container's id */
        char *ctrl;   /* the control group it runs in */
};

/* The kinds of trouble that are logged, each at most once a minute. */
enum watch_trouble {
        TROUBLE_CGROUP,    /* an exec'd process's cgroup cannot be read */
        TROUBLE_JOIN,      /* a join failed */
        TROUBLE_RESCTRL,   /* resctrl cannot be opened at an exec */
        TROUBLE_MALFORMED, /* a message of a size or kind not expected */
        TROUBLE_LOST,      /* the kernel dropped events */
        TROUBLE_SOCKET,    /* the socket failed */
        TROUBLE_STATE,     /* a member file or watch.state cannot be read or written */
        TROUBLE_POLL,      /* poll failed */
        _TROUBLE_MAX,
};

struct watch {
        const struct config *config;
        unsigned interval;
        int proc_fd;
        struct pod_env env; /* stateDir, as the last pass that ran opened it; resctrl
                             * only while an exec uses it (exec_resctrl) */
        struct cgroup_mounts mounts;
        int events_fd;               /* the connector; -EBADF while closed */
        bool events_usable;          /* false: the kernel will not send us events; passes only */
        int64_t reopen_at;           /* now_usec() when a failed socket is opened again */
        bool kernel_says;            /* /proc/<pid>/cpu_resctrl_groups exists */
        int64_t next_pass;           /* now_usec() of the next pass */
        int64_t events_after;        /* now_usec() before which the socket is not read */
        int64_t last_pass;           /* now_usec() when the last pass began */
        int inotify_fd;              /* on stateDir; -EBADF while it is not open */
        int lock_fd;                 /* STATEDIR_WATCH_LOCK, held; -EBADF until stateDir opens */
        struct watch_entry *entries; /* sorted by (kind, controller, path) */
        size_t n_entries;
        char (*due)[POD_UID_LEN + 1]; /* pods with a container waiting for the locks */
        size_t n_due;
        int64_t due_at;             /* now_usec() when they are tried (again) */
        struct rmid_wait rmid_wait; /* pods waiting for an RMID, tried after a removal */
        struct watch_state state;
        bool state_dirty;
        int64_t state_written_at;
        int64_t logged_at[_TROUBLE_MAX];
        struct metrics_http *http; /* --metrics-listen's server; NULL without */
};

/* Whether a trouble of that kind may be logged now: once a minute. */
static bool trouble_due(struct watch *w, enum watch_trouble kind)
{
        int64_t now = now_usec();

        if (w->logged_at[kind] != 0 && now - w->logged_at[kind] < WATCH_LOG_EVERY_USEC)
                return false;
        w->logged_at[kind] = now;
        return true;
}

static int entry_compare(const void *a, const void *b)
{
        const struct watch_entry *x = a, *y = b;
        int c;

        if (x->kind != y->kind)
                return x->kind < y->kind ? -1 : 1;
        c = strcmp(x->controller, y->controller);
        return c != 0 ? c : strcmp(x->path, y->path);
}

static void entry_done(struct watch_entry *e)
{
        free(e->path);
        free(e->member);
        free(e->ctrl);
}

/* Forgets the entries of pod uid. */
static void forget_pod(struct watch *w, const char *uid)
{
        size_t kept = 0;

        for (size_t i = 0; i < w->n_entries; i++) {
                if (strcmp(w->entries[i].uid, uid) == 0) {
                        entry_done(&w->entries[i]);
                        continue;
                }
                w->entries[kept++] = w->entries[i];
        }
        w->n_entries = kept;
}

static void forget_all(struct watch *w)
{
        rmid_wait_forget_all(&w->rmid_wait);
        for (size_t i = 0; i < w->n_entries; i++)
                entry_done(&w->entries[i]);
        free(TAKE_PTR(w->entries));
        w->n_entries = 0;
}

/* Adds an entry for each monitored member of st with a recorded cgroup;
 * members recorded by older versions, without one, are gc's. */
static int add_members(struct watch *w, const char *uid, const struct pod_state *st)
{
        struct watch_entry *more;

        more = reallocarray(w->entries, w->n_entries + st->n_members + 1, sizeof(*more));
        if (!more)
                return -ENOMEM;
        w->entries = more;
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];
                struct watch_entry *e = &w->entries[w->n_entries];

                if (!m->monitored || !m->has_cgroup)
                        continue;
                *e = (struct watch_entry){.kind = m->cgroup.kind};
                (void) snprintf(e->controller, sizeof(e->controller), "%s", m->cgroup.controller);
                (void) snprintf(e->uid, sizeof(e->uid), "%s", uid);
                e->path = strdup(m->cgroup.path);
                e->member = strdup(m->id);
                e->ctrl = strdup(m->ctrl);
                if (!e->path || !e->member || !e->ctrl) {
                        entry_done(e);
                        return -ENOMEM;
                }
                w->n_entries++;
        }
        return 0;
}

/* Pod uid has a container waiting for the locks: it is tried now. */
static void mark_due(struct watch *w, const char *uid)
{
        char(*more)[POD_UID_LEN + 1];

        w->due_at = now_usec();
        for (size_t i = 0; i < w->n_due; i++)
                if (strcmp(w->due[i], uid) == 0)
                        return;
        more = reallocarray(w->due, w->n_due + 1, sizeof(*more));
        if (!more) {
                log_error("out of memory");
                return;
        }
        w->due = more;
        (void) snprintf(w->due[w->n_due++], sizeof(*more), "%s", uid);
}

/* Does a member of st wait for the locks (createRuntime busy)? */
static bool waits_for_locks(const struct pod_state *st)
{
        for (size_t i = 0; i < st->n_members; i++)
                if (!st->members[i].monitored &&
                    unmonitored_of(st->members[i].reason) == UNMONITORED_BUSY)
                        return true;
        return false;
}

/* The due pods' part of a pass (gc_pod_now), each within WATCH_BUSY_WAIT_MS:
 * a pod still busy is tried again WATCH_BUSY_RETRY_USEC later, the others
 * are done (what failed otherwise is the next pass's). */
static void take_in_due(struct watch *w)
{
        size_t kept = 0;

        for (size_t i = 0; i < w->n_due; i++) {
                unsigned joined = 0;
                int r = gc_pod_now(w->config, w->proc_fd, w->due[i],
                                   deadline_after_ms(WATCH_BUSY_WAIT_MS), &joined);

                w->state.joins_gc += joined;
                w->state_dirty |= joined > 0;
                if (r == -EBUSY)
                        memcpy(w->due[kept++], w->due[i], sizeof(w->due[i]));
        }
        w->n_due = kept;
        w->due_at = now_usec() + WATCH_BUSY_RETRY_USEC;
}

/* The pods waiting for an RMID whose try is due (rmid_wait.h). */
static void take_in_rmid_waiters(struct watch *w)
{
        unsigned joined = rmid_wait_try(&w->rmid_wait, w->config, w->proc_fd, w->env.state_fd);

        w->state.joins_gc += joined;
        w->state_dirty |= joined > 0;
}

/* Reads pod uid's member file again (without the pod lock: a save replaces
 * it by rename, so it is read whole). Pods of another pid namespace are
 * left out: their pids mean nothing here. Not sorted yet. */
static void load_pod(struct watch *w, const char *uid)
{
        struct pod_state st = {0};
        _cleanup_free_ char *why = NULL;
        int r;

        forget_pod(w, uid);
        r = pod_state_load(w->env.state_fd, uid, &st, &why);
        rmid_wait_note(&w->rmid_wait, uid,
                       r >= 0 && pod_state_pids_are_ours(&st, w->env.pid_ns) ? &st : NULL);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                if (trouble_due(w, TROUBLE_STATE))
                        log_warning("cannot read the state of pod %s (%s); its containers join at "
                                    "gc's passes",
                                    uid, why ? why : strerror(-r));
                return;
        }
        if (pod_state_pids_are_ours(&st, w->env.pid_ns) && add_members(w, uid, &st) < 0)
                log_error("out of memory");
        if (pod_state_pids_are_ours(&st, w->env.pid_ns) && waits_for_locks(&st))
                mark_due(w, uid);
        pod_state_done(&st);
}

static void sort_entries(struct watch *w)
{
        if (w->n_entries > 1)
                qsort(w->entries, w->n_entries, sizeof(*w->entries), entry_compare);
}

/* Every member file of stateDir, read afresh. */
static void load_all(struct watch *w)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        size_t n = 0;

        forget_all(w);
        if (w->env.state_fd < 0 || statedir_scan(w->env.state_fd, &pods, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                if (pods[i].members)
                        load_pod(w, pods[i].uid);
                if (pods[i].intake)
                        mark_due(w, pods[i].uid);
        }
        sort_entries(w);
}

/* The entry whose cgroup is ref's or the nearest above it; NULL when none. */
static const struct watch_entry *entry_above(const struct watch *w, const struct cgroup_ref *ref)
{
        struct watch_entry key = {.kind = ref->kind};
        char path[CGROUP_PATH_MAX];
        char *slash;

        (void) snprintf(key.controller, sizeof(key.controller), "%s", ref->controller);
        (void) snprintf(path, sizeof(path), "%s", ref->path);
        key.path = path;
        for (;;) {
                const struct watch_entry *e = w->n_entries == 0
                                                  ? NULL
                                                  : bsearch(&key, w->entries, w->n_entries,
                                                            sizeof(*w->entries), entry_compare);

                if (e)
                        return e;
                slash = strrchr(path, '/');
                if (!slash || slash == path) /* no container's cgroup is the root */
                        return NULL;
                *slash = '\0';
        }
}

/* The entry of the container that process pid runs in: 1 with *ret, 0 when
 * it is in none that is monitored, -errno when its cgroup cannot be read. */
static int entry_of_process(struct watch *w, pid_t pid, const struct watch_entry **ret)
{
        for (size_t i = 0; i < w->n_entries; i++) {
                const struct watch_entry *e = &w->entries[i];
                struct cgroup_ref ref;
                int r;

                /* One look per hierarchy: the entries are sorted by it. */
                if (i > 0 && e->kind == w->entries[i - 1].kind &&
                    strcmp(e->controller, w->entries[i - 1].controller) == 0)
                        continue;
                r = cgroup_of_pid_in(w->proc_fd, &w->mounts, pid, e->kind, e->controller, &ref);
                if (r == -ENOENT || r == -EXDEV) /* not in that hierarchy, or not in our view */
                        continue;
                if (r < 0)
                        return r;
                *ret = entry_above(w, &ref);
                if (*ret)
                        return 1;
        }
        return 0;
}

/* Opens resctrl for the exec in hand, unless it is open; on_exec closes it
 * once the exec is handled. So watch holds no file of resctrl while it
 * waits (pod_env_open_resctrl says why that matters), and an exec after a
 * remount opens the new mount. 0 or -errno (logged once a minute). */
static int exec_resctrl(struct watch *w)
{
        int r = pod_env_open_resctrl(&w->env);

        if (r < 0 && trouble_due(w, TROUBLE_RESCTRL))
                (void) pod_env_resctrl_failed(&w->env, LOG_WARNING, r);
        return r;
}

/* Should process pid, exec'd in a container of pod uid in control group
 * ctrl, be joined? Only from ctrl's default monitoring group: not when it
 * is in the pod's group already (as everything a container's processes
 * fork is), in another monitor's group or another control group (never
 * moved), or gone. The kernel says where it is in
 * /proc/<pid>/cpu_resctrl_groups where it has that file; without it, a
 * running process the pod's group does not list is joined (the join leaves
 * what other monitors placed). 1, 0, -errno. */
static int needs_join(struct watch *w, const char *uid, const char *ctrl, pid_t pid)
{
        _cleanup_free_ char *task_ctrl = NULL, *task_mon = NULL;
        _cleanup_free_ pid_t *in = NULL;
        size_t n_in = 0;
        int r = rdt_task_mon_group(w->proc_fd, pid, &task_ctrl, &task_mon);

        if (r == 0)
                return !task_mon && strcmp(task_ctrl, ctrl) == 0;
        if (r != -ENOENT || w->kernel_says) /* the kernel has the file: it is gone */
                return r == -ENOENT ? 0 : r;
        r = proc_is_running(w->proc_fd, pid);
        if (r <= 0)
                return r;
        r = exec_resctrl(w);
        if (r < 0)
                return r;
        r = rdt_mon_group_tasks(w->env.root_fd, ctrl, uid, &in, &n_in);
        if (r < 0)
                return r == -ENOENT ? 0 : r; /* the group is gone: gc makes it again */
        return !pid_list_has(in, n_in, pid);
}

/* The member of entry e, loaded under the pod lock, if a join is for it:
 * still recorded and monitored, and live. A member whose init is gone is
 * gc's to drop: the threads left in its cgroup are no live container's.
 * NULL when none; what failed is logged once a minute. */
static const struct member *member_to_join(struct watch *w, struct pod_session *s,
                                           const struct watch_entry *e)
{
        _cleanup_free_ char *why = NULL;
        const struct member *m;
        const char *dead = NULL;
        int r = pod_session_load(s, &why);

        if (r < 0) {
                if (trouble_due(w, TROUBLE_STATE))
                        log_warning("cannot read the state of pod %s (%s)", e->uid,
                                    why ? why : strerror(-r));
                return NULL;
        }
        m = pod_state_pids_are_ours(&s->st, w->env.pid_ns)
                ? pod_state_find_member(&s->st, e->member)
                : NULL;
        if (!m || !m->monitored)
                return NULL;
        r = pod_member_is_live(w->env.proc_fd, m, &dead);
        if (r < 0 && trouble_due(w, TROUBLE_JOIN))
                log_warning_errno(r, "cannot tell whether container %s of pod %s runs", e->member,
                                  e->uid);
        if (r == 0)
                log_debug("container %s of pod %s is %s: left to gc's pass", e->member, e->uid,
                          dead);
        return r == 1 ? m : NULL;
}

/* Joins member m's container (pod_member_join_cgroup): every thread of its
 * recorded cgroup not in the pod's group. 0 with *ret_joined, -errno. */
static int join_member(struct watch *w, struct pod_session *s, const struct member *m,
                       unsigned *ret_joined)
{
        _cleanup_free_ pid_t *in = NULL;
        size_t n_in = 0;
        unsigned elsewhere = 0;
        int r = exec_resctrl(w);

        if (r < 0)
                return r;
        r = rdt_mon_group_tasks(w->env.root_fd, m->ctrl, s->uid, &in, &n_in);
        if (r < 0)
                return r;
        return pod_member_join_cgroup(s, &w->mounts, m, in, n_in, ret_joined, &elsewhere);
}

/* Joins the container of entry e, as gc's pass would, under the pod lock,
 * the join taking the resctrl lock, both within WATCH_JOIN_WAIT_MS: every thread
 * of its recorded cgroup that is not in the pod's group, the exec'd one and
 * what it forked meanwhile (pod_member_join_cgroup, with its pid safety).
 * The member must still be recorded, monitored and live. A pod or resctrl
 * busy past the deadline, or a group that is gone, is left to the next
 * pass. 0 with *ret_joined, -errno; what failed is logged (the join's own
 * failures by the join). */
static int join_container(struct watch *w, const struct watch_entry *e, unsigned *ret_joined)
{
        struct pod_session s;
        const struct member *m;
        int r;

        *ret_joined = 0;
        w->env.deadline = deadline_after_ms(w->config->lock_timeout_ms < WATCH_JOIN_WAIT_MS
                                                ? w->config->lock_timeout_ms
                                                : WATCH_JOIN_WAIT_MS);
        r = pod_session_lock(&w->env, e->uid, pod_env_wait_ms(&w->env), &s);
        if (r < 0) {
                if (r != -ETIMEDOUT && trouble_due(w, TROUBLE_JOIN))
                        log_warning_errno(r, "cannot take the lock of pod %s", e->uid);
                goto out;
        }
        m = member_to_join(w, &s, e);
        if (m)
                r = join_member(w, &s, m, ret_joined);
        (void) pod_session_close(&s);
out:
        w->env.deadline = 0;
        return r;
}

/* A process exec'd: if it runs in a monitored container and is not in its
 * pod's group, its container joins. */
static void handle_exec(struct watch *w, pid_t pid)
{
        const struct watch_entry *e;
        unsigned joined;
        int r = entry_of_process(w, pid, &e);

        if (r == -ESRCH || r == 0) /* gone already, or none of ours */
                return;
        if (r < 0) {
                if (trouble_due(w, TROUBLE_CGROUP))
                        log_warning_errno(r,
                                          "cannot read the cgroup of exec'd process %d; "
                                          "such processes join at gc's passes",
                                          pid);
                return;
        }
        r = needs_join(w, e->uid, e->ctrl, pid);
        if (r < 0 && r != -ESRCH && trouble_due(w, TROUBLE_JOIN))
                log_warning_errno(r, "cannot tell where exec'd process %d is", pid);
        if (r <= 0)
                return;
        /* What fails in the join says so itself; a busy pod is the pass's. */
        (void) join_container(w, e, &joined);
        if (joined == 0)
                return;
        log_debug("joined %u threads of container %s to the group of pod %s at an exec", joined,
                  e->member, e->uid);
        w->state.joins_watch += joined;
        w->state_dirty = true;
}

/* handle_exec, then resctrl closed if it opened it (exec_resctrl). */
static void on_exec(struct watch *w, pid_t pid)
{
        handle_exec(w, pid);
        pod_env_close_resctrl(&w->env);
}

/* The next pass comes now, or WATCH_PASS_GAP_USEC after the last began. */
static void bring_pass_forward(struct watch *w)
{
        int64_t soonest = w->last_pass + WATCH_PASS_GAP_USEC;

        if (soonest < w->next_pass)
                w->next_pass = soonest;
}

/* Closes the connector socket, to be opened again WATCH_REOPEN_SEC later;
 * until then the passes join what exec'd. */
static void close_events(struct watch *w)
{
        proc_events_close(w->events_fd);
        w->events_fd = -EBADF;
        w->reopen_at = now_usec() + WATCH_REOPEN_SEC * 1000000LL;
        w->state.events = false;
        w->state_dirty = true;
}

/* Reads what the connector has queued, up to WATCH_READS_PER_WAKEUP
 * datagrams: each exec handled. Lost events bring the next pass forward; a
 * socket that failed is closed, to be opened again. */
static void read_events(struct watch *w)
{
        struct proc_events_batch b;
        int r = 0;

        for (int i = 0; i < WATCH_READS_PER_WAKEUP && (r = proc_events_read(w->events_fd, &b)) > 0;
             i++) {
                for (size_t j = 0; j < b.n_exec; j++)
                        on_exec(w, b.exec[j]);
                if (b.malformed > 0 && trouble_due(w, TROUBLE_MALFORMED))
                        log_warning("skipped %u process event messages of a size or kind not "
                                    "expected",
                                    b.malformed);
        }
        if (r == -ENOBUFS) {
                /* Some execs went unseen: a pass joins what they brought. */
                w->state.lost_events++;
                w->state_dirty = true;
                bring_pass_forward(w);
                if (trouble_due(w, TROUBLE_LOST))
                        log_warning("the kernel dropped process events (ENOBUFS); a gc pass "
                                    "joins what they missed");
        } else if (r < 0) {
                if (trouble_due(w, TROUBLE_SOCKET))
                        log_warning_errno(r,
                                          "process events socket failed; opening it again in "
                                          "%d s, gc's passes meanwhile",
                                          WATCH_REOPEN_SEC);
                close_events(w);
        }
}

/* Opens the connector. Where the kernel will never send events here (no
 * connector in this network namespace, no CAP_NET_ADMIN before Linux 6.6,
 * no answer to a subscriber in another pid or user namespace), watch says
 * so once and is gc --interval from then on; another failure is tried
 * again WATCH_REOPEN_SEC later. Opened again, a pass comes soon: it joins
 * what exec'd while the socket was closed. */
static void open_events(struct watch *w, bool first)
{
        int r = proc_events_open(WATCH_ANSWER_MS, &w->events_fd);

        w->state_dirty = true;
        w->state.events = r >= 0;
        if (r >= 0) {
                if (!first) {
                        log_info("process events socket open again");
                        bring_pass_forward(w);
                }
                return;
        }
        if (r == -EPROTONOSUPPORT || r == -EPERM || (first && r == -ETIMEDOUT)) {
                w->events_usable = false;
                log_warning_errno(r,
                                  "cannot receive the kernel's process events (%s); exec'd "
                                  "processes join at gc's passes, every %u s",
                                  r == -EPROTONOSUPPORT
                                      ? "no proc connector here: not the host's network "
                                        "namespace, or no CONFIG_PROC_EVENTS"
                                  : r == -EPERM ? "this kernel wants CAP_NET_ADMIN of a subscriber"
                                                : "the kernel did not answer: not the host's "
                                                  "pid or user namespace",
                                  w->interval);
                return;
        }
        if (trouble_due(w, TROUBLE_SOCKET))
                log_warning_errno(r, "cannot open the process events socket; trying again in %d s",
                                  WATCH_REOPEN_SEC);
        w->events_fd = -EBADF;
        w->reopen_at = now_usec() + WATCH_REOPEN_SEC * 1000000LL;
}

/* Reads what inotify says about stateDir: a member file replaced or
 * removed is read again; an intake record makes its pod due; an overflow
 * reads them all. */
static void read_state_changes(struct watch *w)
{
        char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
        bool changed = false;
        ssize_t n;

        while ((n = read(w->inotify_fd, buf, sizeof(buf))) > 0) {
                for (char *p = buf; p < buf + n;) {
                        const struct inotify_event *ev = (const struct inotify_event *) p;
                        char uid[POD_UID_LEN + 1];
                        enum statedir_file kind;

                        p += sizeof(*ev) + ev->len;
                        if (ev->mask & IN_Q_OVERFLOW) {
                                load_all(w);
                                return;
                        }
                        if (ev->len > 0 && rmid_wait_freed(&w->rmid_wait, ev->name))
                                continue; /* a group was removed: its RMID frees soon */
                        if (ev->len > 0 && (ev->mask & IN_CREATE) &&
                            statedir_parse_intake_name(ev->name, uid)) {
                                mark_due(w, uid);
                                continue;
                        }
                        if (ev->len == 0 || !statedir_parse_name(ev->name, uid, &kind) ||
                            kind != STATEDIR_MEMBERS)
                                continue;
                        load_pod(w, uid);
                        changed = true;
                }
        }
        if (changed)
                sort_entries(w);
}

/* stateDir, as the pass opened it: watched for member files that change. */
static void watch_state_dir(struct watch *w)
{
        char path[64];

        w->inotify_fd = safe_close(w->inotify_fd);
        if (w->env.state_fd < 0)
                return;
        w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        (void) snprintf(path, sizeof(path), "/proc/self/fd/%d", w->env.state_fd);
        if (w->inotify_fd < 0 || inotify_add_watch(w->inotify_fd, path,
                                                   IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE |
                                                       IN_DELETE | IN_CREATE | IN_ONLYDIR) < 0) {
                log_warning("cannot watch state directory '%s' (%m): its changes are read at "
                            "gc's passes",
                            w->config->state_dir);
                w->inotify_fd = safe_close(w->inotify_fd);
        }
}

/* One watch a stateDir: its counters are what status reports, and two
 * would only do each other's work. A second one says which runs and exits. */
static void claim_state_dir(struct watch *w)
{
        struct watch_state other;
        int r;

        if (w->lock_fd >= 0)
                return;
        r = lock_file_acquire(w->env.state_fd, STATEDIR_WATCH_LOCK, 0, &w->lock_fd);
        if (r == -ETIMEDOUT) {
                if (watch_state_load(w->env.state_fd, &other) < 0)
                        other.pid = 0;
                log_error("another watch runs on state directory '%s' (pid %d); this one exits",
                          w->config->state_dir, (int) other.pid);
                metrics_http_stop(w->http);
                exit(COMMAND_FAILED);
        }
        if (r < 0 && trouble_due(w, TROUBLE_STATE))
                log_warning_errno(r, "cannot take %s in '%s'", STATEDIR_WATCH_LOCK,
                                  w->config->state_dir);
}

/* A gc pass, which opens and closes what it uses; then stateDir is opened
 * afresh, and its member files read again. watch keeps stateDir open until
 * the next pass, never resctrl (exec_resctrl). A pass that failed said why
 * (resctrl not mounted yet): watch waits for the next with nothing open. */
static void pass(struct watch *w)
{
        unsigned joined = 0;
        int r;

        w->last_pass = now_usec();
        r = gc_pass_once(w->config, w->proc_fd, &joined);
        w->next_pass = now_usec() + (int64_t) w->interval * 1000000;
        /* A pass that could not run ended too: /healthz is about this loop. */
        metrics_http_pass_ended(w->http);
        if (r >= 0) {
                w->state.passes++;
                w->state.joins_gc += joined;
                w->state_dirty = true;
        }
        pod_env_close(&w->env);
        cgroup_mounts_close(&w->mounts);
        if (r >= 0 && pod_env_open_state_dir(w->config, w->proc_fd, &w->env) >= 0) /* logged */
                claim_state_dir(w);
        if (r >= 0 && cgroup_mounts_open(w->proc_fd, &w->mounts) < 0 &&
            trouble_due(w, TROUBLE_CGROUP))
                log_warning("cannot read the cgroup mounts: exec'd processes join at gc's "
                            "passes");
        watch_state_dir(w);
        load_all(w);
}

/* watch.state, when it changed and at most once a second; it waits while
 * stateDir is not open. */
static void save_state(struct watch *w)
{
        int r;

        if (!w->state_dirty || w->env.state_fd < 0 ||
            now_usec() - w->state_written_at < WATCH_STATE_EVERY_USEC)
                return;
        r = watch_state_save(w->env.state_fd, &w->state);
        if (r < 0 && trouble_due(w, TROUBLE_STATE))
                log_warning_errno(r, "cannot write %s in '%s'", STATEDIR_WATCH_STATE,
                                  w->config->state_dir);
        w->state_dirty = false;
        w->state_written_at = now_usec();
}

/* Milliseconds until the first of: the next pass, a socket's reopening,
 * the end of a batch's wait, a pending write of watch.state (only while
 * stateDir is open to take it), the next try of the due pods. */
static int poll_timeout(const struct watch *w)
{
        int64_t now = now_usec(), until = w->next_pass;

        if (w->events_usable && w->events_fd < 0 && w->reopen_at < until)
                until = w->reopen_at;
        if (w->events_fd >= 0 && w->events_after > now && w->events_after < until)
                until = w->events_after;
        if (w->state_dirty && w->env.state_fd >= 0 &&
            w->state_written_at + WATCH_STATE_EVERY_USEC < until)
                until = w->state_written_at + WATCH_STATE_EVERY_USEC;
        if (w->n_due > 0 && w->due_at < until)
                until = w->due_at;
        if (w->rmid_wait.next_try < until)
                until = w->rmid_wait.next_try;
        return until <= now ? 0 : (int) ((until - now + 999) / 1000);
}

__attribute__((noreturn)) static void run(struct watch *w)
{
        open_events(w, true);
        for (;;) {
                struct pollfd fds[] = {
                    {.fd = w->inotify_fd, .events = POLLIN},
                    {.fd = now_usec() >= w->events_after ? w->events_fd : -1, .events = POLLIN}};

                if (now_usec() >= w->next_pass) {
                        pass(w);
                        save_state(w);
                }
                if (poll(fds, ELEMENTSOF(fds), poll_timeout(w)) < 0 && errno != EINTR &&
                    trouble_due(w, TROUBLE_POLL))
                        log_warning("poll: %m");
                /* Member files first: a container recorded before its exec is known then. */
                if (fds[0].revents)
                        read_state_changes(w);
                if (w->n_due > 0 && now_usec() >= w->due_at)
                        take_in_due(w);
                if (now_usec() >= w->rmid_wait.next_try)
                        take_in_rmid_waiters(w);
                if (fds[1].revents) {
                        read_events(w);
                        w->events_after = now_usec() + WATCH_BATCH_USEC;
                }
                if (w->events_usable && w->events_fd < 0 && now_usec() >= w->reopen_at)
                        open_events(w, false);
                save_state(w);
        }
}

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] watch [OPTIONS]\n"
               "\n"
               "Runs a gc pass every interval and, between passes, joins each process a\n"
               "runtime execs into a monitored container (kubectl exec, exec probes) to its\n"
               "pod's group within milliseconds, from the kernel's process events. Runs in\n"
               "the foreground until killed.\n"
               "\n"
               "Options:\n"
               "  -i, --interval SECONDS    seconds between gc passes (default 60)\n"
               "  -m, --metrics-listen ADDR:PORT\n"
               "                            serve /metrics (status --prometheus), /healthz\n"
               "                            and an index over HTTP on IPv4:PORT, [IPv6]:PORT\n"
               "                            or :PORT (every address); the port of the\n"
               "                            package and the DaemonSet is %d\n"
               "  -w, --web-config FILE     TLS and basic auth for it, from Prometheus' web\n"
               "                            configuration file (tls_server_config,\n"
               "                            basic_auth_users)\n"
               "  -h, --help                show this help\n",
               METRICS_DEFAULT_PORT);
}

struct watch_args {
        unsigned interval;
        const char *listen;     /* NULL: nothing served */
        const char *web_config; /* NULL: plain HTTP, no authentication */
};

static int set_watch_option(int c, const char *arg, void *userdata)
{
        struct watch_args *a = userdata;

        switch (c) {
        case 'i':
                return gc_parse_interval(arg, &a->interval);
        case 'm':
                a->listen = arg;
                return 0;
        case 'w':
                a->web_config = arg;
                return 0;
        default:
                return -EINVAL;
        }
}

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_watch_args(int argc, char **argv, struct watch_args *ret)
{
        static const struct option options[] = {
            {"interval", required_argument, NULL, 'i'},
            {"metrics-listen", required_argument, NULL, 'm'},
            {"web-config", required_argument, NULL, 'w'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        static const struct command_options watch_options = {
            .shortopts = "+i:m:w:h", .longopts = options, .help = help, .set = set_watch_option};
        int r;

        *ret = (struct watch_args){.interval = 60};
        r = command_parse_options(&watch_options, argc, argv, ret);
        if (r > 0 && ret->web_config && !ret->listen) {
                log_error("--web-config is for --metrics-listen, which is not given (see %s "
                          "--help)",
                          argv[0]);
                return -EINVAL;
        }
        return r;
}

/* --metrics-listen's server, started before the first pass: a bad web
 * config or a port in use stops watch at once, and /healthz answers
 * during the first pass. An exit status, or -1 once it serves. */
static int start_http(const struct command_ctx *ctx, const struct watch_args *a, struct watch *w)
{
        const struct metrics_http_options o = {
            .listen = a->listen,
            .web_config = a->web_config,
            .config_path = ctx->config_explicit ? ctx->config_path : NULL,
            .interval = a->interval,
        };
        int r;

        if (!a->listen)
                return -1;
        r = metrics_http_start(&o, &w->http);
        if (r < 0)
                return r == -EINVAL ? COMMAND_USAGE : COMMAND_FAILED;
        return -1;
}

int watch_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_close_ int proc_fd = -EBADF;
        struct watch w = {
            .config = &config,
            .env = POD_ENV_INIT,
            .mounts = CGROUP_MOUNTS_INIT,
            .events_fd = -EBADF,
            .events_usable = true,
            .inotify_fd = -EBADF,
            .lock_fd = -EBADF,
        };
        struct watch_args args;
        int r = parse_watch_args(argc, argv, &args);

        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        w.interval = args.interval;
        if (command_setup(ctx, &config, &proc_fd) < 0)
                return COMMAND_FAILED;
        w.proc_fd = proc_fd;
        rmid_wait_init(&w.rmid_wait, &config);
        w.kernel_says = faccessat(proc_fd, "self/cpu_resctrl_groups", F_OK, 0) == 0;
        w.state.pid = getpid();
        if (proc_boot_id(proc_fd, w.state.boot_id) < 0)
                w.state.boot_id[0] = '\0';
        r = proc_start_time(proc_fd, w.state.pid, &w.state.start_time);
        if (r < 0) {
                log_error_errno(r, "cannot read this process's start time");
                return COMMAND_FAILED;
        }
        r = start_http(ctx, &args, &w);
        if (r >= 0)
                return r;
        run(&w);
}
