/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "model.h"

/* The emulated cache: a 12-bit CBM of 1 MiB ways (info/L3/cbm_mask "fff"). */
#define L3_CACHE_BYTES (12ULL << 20)
/* Made-up but fixed rates, per live task on an RMID. */
#define LLC_BYTES_PER_TASK (1ULL << 20)
#define MBM_TOTAL_BYTES_PER_USEC 1000ULL /* about 1 GB/s */
#define MBM_LOCAL_BYTES_PER_USEC 750ULL
#define USEC_PER_SEC 1000000ULL

enum rmid_state {
        RMID_FREE,
        RMID_USED,
        RMID_LIMBO,
};

struct rmid {
        enum rmid_state state;
        uint64_t free_seq;   /* position in the kernel's free LRU list */
        int64_t limbo_until; /* now_usec() at which a limbo RMID is clean */
};

/* A thread that was written to some tasks file. Untracked threads are in the
 * root group and no MON group, like every thread the kernel has not moved. */
struct task {
        pid_t tid;
        pid_t tgid;          /* its process; 0 when /proc did not say */
        uint64_t start_time; /* /proc/<tid>/stat field 22: tells a reused id */
        uint64_t joined_at;  /* in the same clock ticks: when it got its group */
        struct group *ctrl;
        struct group *mon;
        struct task *same_bucket; /* the next in its m->tids bucket */
        struct task *prev, *next; /* in its RMID's group's tasks, in joining order */
};

/* Indexes, so that an access costs the same at 10 or 10,000 groups and tasks
 * (kernfs keeps a directory's children in an rbtree; the task list is the
 * kernel's). Powers of two. */
#define TID_BUCKETS 65536
#define GROUP_BUCKETS 4096

struct model {
        struct model_config cfg;
        struct group *groups; /* the root first, then in creation order */
        struct group *last_group;
        struct group *names[GROUP_BUCKETS]; /* by (parent, name), the root not */
        struct group *ids[GROUP_BUCKETS];
        uint64_t next_group_id;
        struct rmid *rmids;
        uint64_t next_free_seq;
        bool *closid_used;
        struct task *tids[TID_BUCKETS];
        char status[MODEL_STATUS_MAX];
        size_t status_len;
        unsigned max_threshold;
        int proc_fd;
        bool exits_reported;     /* no need to look for every exited task in /proc */
        bool events_lost;        /* since the last full look */
        unsigned *mbm_available; /* ABMC: free counters per L3 domain */
        bool *pkg_data;          /* perf_pkg_by_cpu: [rmid * perf_pkg_domains + pkg], data there */
        bool mbm_on_mkdir;
        pid_t *exited; /* reported exited; listed until reaped, as zombies are */
        size_t n_exited, cap_exited;
};

static struct group **id_bucket(struct model *m, uint64_t id)
{
        return &m->ids[id & (GROUP_BUCKETS - 1)];
}

static struct group *group_new(struct model *m, enum group_type type, const char *name, mode_t mode)
{
        struct group *g = calloc(1, sizeof(*g));

        if (!g)
                return NULL;
        g->name = strdup(name);
        if (!g->name) {
                free(g);
                return NULL;
        }
        g->id = ++m->next_group_id;
        g->type = type;
        g->mode = mode;
        g->last_usec = now_usec();
        if (m->cfg.mbm_counters > 0) {
                g->assigned = calloc(MBM_EVENTS * m->cfg.l3_domains, sizeof(*g->assigned));
                g->assigned_at = calloc(MBM_EVENTS * m->cfg.l3_domains, sizeof(*g->assigned_at));
                if (!g->assigned || !g->assigned_at) {
                        free(g->assigned);
                        free(g->assigned_at);
                        free(g->name);
                        free(g);
                        return NULL;
                }
        }
        return g;
}

static void group_free(struct group *g)
{
        if (g) {
                free(g->assigned);
                free(g->assigned_at);
                free(g->name);
                free(g);
        }
}

/* ABMC's part of mkdir and rmdir (below, with the counters they assign). */
static void mbm_assign_all(struct model *m, struct group *g);
static void mbm_free_all(struct model *m, struct group *g);

int model_new(const struct model_config *cfg, struct model **ret)
{
        struct model *m;

        if (cfg->num_rmids < 1 || cfg->num_closids < 1 || cfg->l3_domains < 1)
                return -EINVAL;
        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->cfg = *cfg;
        m->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        m->rmids = calloc(cfg->num_rmids, sizeof(*m->rmids));
        m->closid_used = calloc(cfg->num_closids, sizeof(*m->closid_used));
        m->groups = m->last_group = group_new(m, GROUP_CTRL, "", 0555);
        m->mbm_on_mkdir = true;
        if (cfg->mbm_counters > 0) {
                m->mbm_available = calloc(cfg->l3_domains, sizeof(*m->mbm_available));
                for (unsigned d = 0; m->mbm_available && d < cfg->l3_domains; d++)
                        m->mbm_available[d] = cfg->mbm_counters;
        }
        if (cfg->perf_pkg_by_cpu)
                m->pkg_data =
                    calloc((size_t) cfg->num_rmids * cfg->perf_pkg_domains, sizeof(*m->pkg_data));
        if (m->proc_fd < 0 || !m->rmids || !m->closid_used || !m->groups ||
            (cfg->mbm_counters > 0 && !m->mbm_available) ||
            (cfg->perf_pkg_by_cpu && cfg->perf_pkg_domains > 0 && !m->pkg_data)) {
                model_free(m);
                return -ENOMEM;
        }
        *id_bucket(m, m->groups->id) = m->groups;
        /* The free list starts in index order; RMID 0 and CLOSID 0 are the root's. */
        for (unsigned i = 0; i < cfg->num_rmids; i++)
                m->rmids[i].free_seq = m->next_free_seq++;
        m->rmids[0].state = RMID_USED;
        m->closid_used[0] = true;
        m->max_threshold = (unsigned) (L3_CACHE_BYTES / cfg->num_rmids) & ~63U;
        mbm_assign_all(m, m->groups); /* the default group holds its own */
        model_status_clear(m);
        *ret = m;
        return 0;
}

void model_free(struct model *m)
{
        if (!m)
                return;
        for (size_t i = 0; i < TID_BUCKETS; i++)
                while (m->tids[i]) {
                        struct task *t = m->tids[i];

                        m->tids[i] = t->same_bucket;
                        free(t);
                }
        while (m->groups) {
                struct group *g = m->groups;

                m->groups = g->next;
                group_free(g);
        }
        if (m->proc_fd >= 0)
                (void) close(m->proc_fd);
        free(m->rmids);
        free(m->closid_used);
        free(m->mbm_available);
        free(m->pkg_data);
        free(m->exited);
        free(m);
}

const struct model_config *model_config(const struct model *m)
{
        return &m->cfg;
}

struct group *model_root(struct model *m)
{
        return m->groups;
}

struct group *model_groups(struct model *m)
{
        return m->groups;
}

struct group *model_group_by_id(struct model *m, uint64_t id)
{
        for (struct group *g = *id_bucket(m, id); g; g = g->same_id)
                if (g->id == id)
                        return g;
        return NULL;
}

/* FNV-1a of the parent's id and the name. */
static size_t name_bucket(const struct group *parent, const char *name)
{
        uint64_t h = 14695981039346656037ULL ^ (parent ? parent->id : 0);

        for (const char *c = name; *c; c++)
                h = (h ^ (unsigned char) *c) * 1099511628211ULL;
        return (size_t) (h & (GROUP_BUCKETS - 1));
}

static struct group *find_named(struct model *m, const struct group *parent, const char *name)
{
        for (struct group *g = m->names[name_bucket(parent, name)]; g; g = g->same_name)
                if (g->parent == parent && strcmp(g->name, name) == 0)
                        return g;
        return NULL;
}

struct group *model_find_ctrl(struct model *m, const char *name)
{
        return find_named(m, NULL, name);
}

struct group *model_find_mon(struct model *m, const struct group *ctrl, const char *name)
{
        return find_named(m, ctrl, name);
}

/* ---- last_cmd_status ---- */

const char *model_status(const struct model *m)
{
        return m->status_len ? m->status : "ok\n";
}

void model_status_clear(struct model *m)
{
        m->status_len = 0;
        m->status[0] = '\0';
}

/* Appends, like rdt_last_cmd_printf() on its seq_buf; truncates when full. */
void model_status_printf(struct model *m, const char *fmt, ...)
{
        size_t room = sizeof(m->status) - m->status_len;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(m->status + m->status_len, room, fmt, ap);
        va_end(ap);
        if (n > 0)
                m->status_len += (size_t) n < room ? (size_t) n : room - 1;
}

/* ---- threads ---- */

/* -ESRCH when the thread is gone. /proc/<tid> resolves any thread id, not only
 * the thread-group leaders that readdir(/proc) shows; its task/<tid>/stat is
 * the thread's own, where <tid>/stat sums the whole process, at a cost that
 * grows with its threads (do_task_stat): per thread of a process of
 * thousands, that is seconds. */
static int thread_start_time(int proc_fd, pid_t tid, uint64_t *ret)
{
        _cleanup_free_ char *buf = NULL;
        char path[48];
        const char *p;
        int r;

        (void) snprintf(path, sizeof(path), "%d/task/%d/stat", (int) tid, (int) tid);
        r = read_small_file_at(proc_fd, path, 4096, &buf);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        /* comm may hold spaces and ')': the fields start after the last ')'. */
        p = strrchr(buf, ')');
        for (int field = 3; p && field <= 22; field++)
                p = strchr(p + 1, ' ');
        if (!p)
                return -EBADMSG;
        *ret = strtoull(p + 1, NULL, 10);
        return 0;
}

/* The CPU thread tid last ran on (/proc/<tid>/task/<tid>/stat field 39); -1
 * when /proc cannot tell. */
static int thread_cpu(int proc_fd, pid_t tid)
{
        _cleanup_free_ char *buf = NULL;
        char path[48];
        const char *p;

        (void) snprintf(path, sizeof(path), "%d/task/%d/stat", (int) tid, (int) tid);
        if (read_small_file_at(proc_fd, path, 4096, &buf) < 0)
                return -1;
        p = strrchr(buf, ')');
        for (int field = 3; p && field <= 39; field++)
                p = strchr(p + 1, ' ');
        return p ? (int) strtol(p + 1, NULL, 10) : -1;
}

/* The process of thread tid, from /proc/<tid>/status; 0 when it cannot tell. */
static pid_t thread_tgid(int proc_fd, pid_t tid)
{
        _cleanup_free_ char *buf = NULL;
        char path[32];
        const char *p;

        (void) snprintf(path, sizeof(path), "%d/status", (int) tid);
        if (read_small_file_at(proc_fd, path, 16384, &buf) < 0)
                return 0;
        p = strstr(buf, "\nTgid:");
        return p ? (pid_t) strtol(p + 6, NULL, 10) : 0;
}

/* Now, in the clock ticks of /proc/<pid>/stat's start time (USER_HZ since boot). */
static uint64_t now_ticks(void)
{
        long hz = sysconf(_SC_CLK_TCK);
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (uint64_t) ts.tv_sec * (uint64_t) hz +
               (uint64_t) ts.tv_nsec / (1000000000ULL / (uint64_t) hz);
}

/* A thread that is not its process's leader, with its process known: one
 * tgkill(2) of signal 0 (an id that another process took fails it), where
 * a read of its start time costs three system calls, and a tasks file of
 * thousands of threads reads it for each. A leader's pid is what the tests
 * reuse on purpose: its start time tells. */
static bool task_is_live(const struct model *m, const struct task *t)
{
        uint64_t start;

        if (t->tgid > 0 && t->tgid != t->tid)
                return syscall(SYS_tgkill, t->tgid, t->tid, 0) == 0 || errno == EPERM;
        return thread_start_time(m->proc_fd, t->tid, &start) == 0 && start == t->start_time;
}

static struct task **tid_bucket(struct model *m, pid_t tid)
{
        return &m->tids[(unsigned) tid & (TID_BUCKETS - 1)];
}

static struct task *task_find(struct model *m, pid_t tid)
{
        for (struct task *t = *tid_bucket(m, tid); t; t = t->same_bucket)
                if (t->tid == tid)
                        return t;
        return NULL;
}

static struct group *task_rmid_group(const struct task *t)
{
        return t->mon ? t->mon : t->ctrl;
}

/* Adds the tasks g had on its RMID since it was last advanced to its counters. */
static void group_advance(struct group *g, int64_t now)
{
        if (now > g->last_usec)
                g->task_usec += (uint64_t) g->live_tasks * (uint64_t) (now - g->last_usec);
        g->last_usec = now;
}

static void task_link(struct task *t)
{
        struct group *g = task_rmid_group(t);

        group_advance(g, now_usec());
        g->live_tasks++;
        t->next = NULL;
        t->prev = g->last_task;
        if (g->last_task)
                g->last_task->next = t;
        else
                g->tasks = t;
        g->last_task = t;
}

static void task_unlink(struct task *t)
{
        struct group *g = task_rmid_group(t);

        group_advance(g, now_usec());
        g->live_tasks--;
        if (t->prev)
                t->prev->next = t->next;
        else
                g->tasks = t->next;
        if (t->next)
                t->next->prev = t->prev;
        else
                g->last_task = t->prev;
}

/* Moves t to ctrl and mon (NULL: none). */
static void task_place(struct task *t, struct group *ctrl, struct group *mon)
{
        if (t->ctrl == ctrl && t->mon == mon)
                return;
        task_unlink(t);
        t->ctrl = ctrl;
        t->mon = mon;
        task_link(t);
}

/* A newly tracked thread, in the root group. */
static struct task *task_add(struct model *m, pid_t tid, uint64_t start_time)
{
        struct task **bucket = tid_bucket(m, tid);
        struct task *t = calloc(1, sizeof(*t));

        if (!t)
                return NULL;
        t->tid = tid;
        t->start_time = start_time;
        t->ctrl = m->groups;
        t->same_bucket = *bucket;
        *bucket = t;
        task_link(t);
        return t;
}

static void task_remove(struct model *m, struct task *t)
{
        task_unlink(t);
        for (struct task **p = tid_bucket(m, t->tid); *p; p = &(*p)->same_bucket)
                if (*p == t) {
                        *p = t->same_bucket;
                        break;
                }
        free(t);
}

/* A live tracked thread of process tgid other than tid: the leader first.
 * Looked for among the tracked tasks, not in /proc/<tgid>/task: a process
 * of thousands of untracked threads would have that read, thousands of
 * entries long, at every thread it creates. */
static struct task *process_task(struct model *m, pid_t tgid, pid_t tid)
{
        struct task *t = task_find(m, tgid);

        if (t && t->tid != tid && t->tgid == tgid && task_is_live(m, t))
                return t;
        for (struct group *g = m->groups; g; g = g->next)
                for (t = g->tasks; t; t = t->next)
                        if (t->tgid == tgid && t->tid != tid && task_is_live(m, t))
                                return t;
        return NULL;
}

/* After h, the next group whose own tasks g's tasks file lists: a CTRL_MON
 * group lists its MON groups' after its own, starting from h == g. */
static struct group *next_listed_group(struct model *m, const struct group *g,
                                       const struct group *h)
{
        if (g->type != GROUP_CTRL)
                return NULL;
        for (struct group *c = h == g ? m->groups : h->next; c; c = c->next)
                if (c->parent == g)
                        return c;
        return NULL;
}

/* Drops the tracked tasks of g whose thread is gone (of every group when g
 * is NULL): one look in /proc per task. */
static void drop_exited(struct model *m, struct group *g)
{
        if (!g) {
                for (struct group *h = m->groups; h; h = h->next)
                        drop_exited(m, h);
                return;
        }
        for (struct task *t = g->tasks, *next; t; t = next) {
                next = t->next;
                if (!task_is_live(m, t))
                        task_remove(m, t);
        }
}

void model_exits_reported(struct model *m, bool reported)
{
        m->exits_reported = reported;
}

void model_task_events_lost(struct model *m)
{
        m->events_lost = true;
}

void model_task_exited(struct model *m, pid_t tid)
{
        struct task *t = task_find(m, tid);

        if (!t)
                return;
        if (m->n_exited == m->cap_exited) {
                size_t cap = m->cap_exited ? m->cap_exited * 2 : 64;
                pid_t *p = reallocarray(m->exited, cap, sizeof(*p));

                if (!p) { /* no room to wait for the reaping */
                        task_remove(m, t);
                        return;
                }
                m->exited = p;
                m->cap_exited = cap;
        }
        m->exited[m->n_exited++] = tid;
}

/* Drops the reported exits whose thread is reaped now. */
static void drop_reaped(struct model *m)
{
        size_t kept = 0;

        for (size_t i = 0; i < m->n_exited; i++) {
                struct task *t = task_find(m, m->exited[i]);

                if (t && task_is_live(m, t))
                        m->exited[kept++] = m->exited[i];
                else if (t)
                        task_remove(m, t);
        }
        m->n_exited = kept;
}

void model_refresh(struct model *m)
{
        if (!m->exits_reported || m->events_lost) {
                m->events_lost = false;
                drop_exited(m, NULL);
        }
        drop_reaped(m);
}

/* ---- CLOSIDs and RMIDs ---- */

static int closid_alloc(struct model *m, unsigned *ret)
{
        for (unsigned i = 1; i < m->cfg.num_closids; i++)
                if (!m->closid_used[i]) {
                        m->closid_used[i] = true;
                        *ret = i;
                        return 0;
                }
        return -ENOSPC;
}

/* Stands in for the kernel's limbo worker (__check_limbo): a limbo RMID is
 * clean limbo_ms after it was freed, then joins the tail of the free list. */
static void limbo_reclaim(struct model *m)
{
        int64_t now = now_usec();

        for (unsigned i = 0; i < m->cfg.num_rmids; i++)
                if (m->rmids[i].state == RMID_LIMBO && m->rmids[i].limbo_until <= now) {
                        m->rmids[i].state = RMID_FREE;
                        m->rmids[i].free_seq = m->next_free_seq++;
                }
}

/* Arm MPAM: an RMID index is a PARTID's PMG (resctrl_arch_rmid_idx_encode()
 * of drivers/resctrl/mpam_resctrl.c), each CLOSID's mon_groups_per_ctrl + 1
 * of them side by side; elsewhere an RMID serves any CLOSID. */
static bool rmid_serves(const struct model *m, unsigned rmid, unsigned closid)
{
        return m->cfg.mon_groups_per_ctrl == 0 || rmid / (m->cfg.mon_groups_per_ctrl + 1) == closid;
}

/* resctrl_find_free_rmid(closid): EBUSY when the free list is empty while
 * some RMID is still in limbo, ENOSPC when none is; else the first free
 * RMID that serves closid, and ENOSPC when none does, even while one of
 * closid's own is in limbo (on MPAM, where an RMID is a PARTID's PMG). */
static int rmid_alloc(struct model *m, unsigned closid, unsigned *ret)
{
        struct rmid *best = NULL;
        bool limbo = false, any_free = false;

        limbo_reclaim(m);
        for (unsigned i = 0; i < m->cfg.num_rmids; i++) {
                struct rmid *r = &m->rmids[i];

                limbo = limbo || r->state == RMID_LIMBO;
                any_free = any_free || r->state == RMID_FREE;
                if (r->state == RMID_FREE && rmid_serves(m, i, closid) &&
                    (!best || r->free_seq < best->free_seq))
                        best = r;
        }
        if (!any_free)
                return limbo ? -EBUSY : -ENOSPC;
        if (!best)
                return -ENOSPC;
        best->state = RMID_USED;
        *ret = (unsigned) (best - m->rmids);
        return 0;
}

static void rmid_free(struct model *m, unsigned rmid)
{
        struct rmid *r = &m->rmids[rmid];

        if (m->cfg.limbo_ms == 0) {
                r->state = RMID_FREE;
                r->free_seq = m->next_free_seq++;
        } else {
                r->state = RMID_LIMBO;
                r->limbo_until = now_usec() + (int64_t) m->cfg.limbo_ms * 1000;
        }
}

/* ---- groups ---- */

static void name_link(struct model *m, struct group *g)
{
        struct group **bucket = &m->names[name_bucket(g->parent, g->name)];

        g->same_name = *bucket;
        *bucket = g;
}

static void name_unlink(struct model *m, struct group *g)
{
        for (struct group **p = &m->names[name_bucket(g->parent, g->name)]; *p;
             p = &(*p)->same_name)
                if (*p == g) {
                        *p = g->same_name;
                        return;
                }
}

static void group_append(struct model *m, struct group *g)
{
        struct group **bucket = id_bucket(m, g->id);

        g->prev = m->last_group;
        m->last_group->next = g;
        m->last_group = g;
        name_link(m, g);
        g->same_id = *bucket;
        *bucket = g;
}

static void group_unlink(struct model *m, struct group *g)
{
        for (struct group **p = id_bucket(m, g->id); *p; p = &(*p)->same_id)
                if (*p == g) {
                        *p = g->same_id;
                        break;
                }
        name_unlink(m, g);
        g->prev->next = g->next;
        if (g->next)
                g->next->prev = g->prev;
        else
                m->last_group = g->prev;
}

int model_mkdir_ctrl(struct model *m, const char *name, mode_t mode, uid_t uid, gid_t gid,
                     struct group **ret)
{
        unsigned closid, rmid;
        struct group *g;
        int r;

        model_status_clear(m);
        r = closid_alloc(m, &closid);
        if (r < 0) {
                model_status_printf(m, "Out of CLOSIDs\n");
                return r;
        }
        r = rmid_alloc(m, closid, &rmid);
        if (r < 0) {
                m->closid_used[closid] = false;
                model_status_printf(m, "Out of RMIDs\n");
                return r;
        }
        g = group_new(m, GROUP_CTRL, name, mode);
        if (!g) {
                m->closid_used[closid] = false;
                rmid_free(m, rmid);
                model_status_printf(m, "Kernel out of memory\n");
                return -ENOSPC;
        }
        g->closid = closid;
        g->rmid = rmid;
        g->uid = uid;
        g->gid = gid;
        group_append(m, g);
        mbm_assign_all(m, g);
        if (ret)
                *ret = g;
        return 0;
}

int model_mkdir_mon(struct model *m, struct group *ctrl, const char *name, mode_t mode, uid_t uid,
                    gid_t gid, struct group **ret)
{
        struct group *g;
        unsigned rmid;
        int r;

        model_status_clear(m);
        r = rmid_alloc(m, ctrl->closid, &rmid);
        if (r < 0) {
                model_status_printf(m, "Out of RMIDs\n");
                return r;
        }
        g = group_new(m, GROUP_MON, name, mode);
        if (!g) {
                rmid_free(m, rmid);
                model_status_printf(m, "Kernel out of memory\n");
                return -ENOSPC;
        }
        g->parent = ctrl;
        g->closid = ctrl->closid;
        g->rmid = rmid;
        g->uid = uid;
        g->gid = gid;
        group_append(m, g);
        mbm_assign_all(m, g);
        if (ret)
                *ret = g;
        return 0;
}

static void mon_group_destroy(struct model *m, struct group *g)
{
        mbm_free_all(m, g);
        rmid_free(m, g->rmid);
        group_unlink(m, g);
        group_free(g);
}

void model_rmdir(struct model *m, struct group *g)
{
        struct group *root = m->groups;

        model_refresh(m);
        if (g->type == GROUP_MON) {
                /* rdtgroup_rmdir_mon(): the tasks stay in the parent CTRL_MON group. */
                while (g->tasks)
                        task_place(g->tasks, g->tasks->ctrl, NULL);
                mon_group_destroy(m, g);
        } else {
                /* rdtgroup_rmdir_ctrl(): every task with its CLOSID goes to the root. */
                for (struct group *c = root, *next; c; c = next) {
                        next = c->next;
                        if (c->parent != g)
                                continue;
                        while (c->tasks)
                                task_place(c->tasks, root, NULL);
                        mon_group_destroy(m, c);
                }
                while (g->tasks)
                        task_place(g->tasks, root, NULL);
                m->closid_used[g->closid] = false;
                mbm_free_all(m, g);
                rmid_free(m, g->rmid);
                group_unlink(m, g);
                group_free(g);
        }
}

int model_rename_mon(struct model *m, struct group *g, struct group *new_ctrl, const char *new_name)
{
        char *name;

        model_status_clear(m);
        if (!g || g->type != GROUP_MON) {
                model_status_printf(m, "Source must be a MON group\n");
                return -EPERM;
        }
        if (!new_ctrl || strcmp(new_name, "mon_groups") == 0) {
                model_status_printf(m, "Destination must be a mon_groups subdirectory\n");
                return -EPERM;
        }
        if (g->parent == new_ctrl && strcmp(g->name, new_name) == 0)
                return 0;
        if (model_find_mon(m, new_ctrl, new_name))
                return -EEXIST;
        name = strdup(new_name);
        if (!name)
                return -ENOMEM;
        name_unlink(m, g);
        free(g->name);
        g->name = name;
        /* mongrp_reparent(): members take the new parent's CLOSID, keep the RMID. */
        for (struct task *t = g->tasks; t; t = t->next)
                t->ctrl = new_ctrl;
        g->parent = new_ctrl;
        g->closid = new_ctrl->closid;
        name_link(m, g);
        return 0;
}

/* ---- tasks ---- */

/* _kstrtoull() with base 0 and kstrtoull()'s leading '+': "0x" hex, leading
 * "0" octal, one trailing newline allowed, anything else after the digits is
 * an error. Values beyond 32 bits count as out of range. */
static int parse_kstrtoull(const char *s, bool allow_plus, unsigned long long *ret)
{
        unsigned long long v = 0;
        unsigned base = 10;
        const char *digits;

        if (allow_plus && *s == '+')
                s++;
        if (s[0] == '0') {
                base = 8;
                if (tolower((unsigned char) s[1]) == 'x' && isxdigit((unsigned char) s[2])) {
                        base = 16;
                        s += 2;
                }
        }
        for (digits = s;; s++) {
                int c = tolower((unsigned char) *s);
                unsigned d;

                if (c >= '0' && c <= '9')
                        d = (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        d = (unsigned) (c - 'a' + 10);
                else
                        break;
                if (d >= base)
                        break;
                v = v * base + d;
                if (v > UINT32_MAX)
                        return -ERANGE;
        }
        if (s == digits)
                return -EINVAL;
        if (*s == '\n')
                s++;
        if (*s)
                return -EINVAL;
        *ret = v;
        return 0;
}

/* kstrtoint(s, 0, ret). */
static int parse_kstrtoint(const char *s, int *ret)
{
        unsigned long long v;
        bool neg = s[0] == '-';
        int r;

        r = parse_kstrtoull(neg ? s + 1 : s, !neg, &v);
        if (r < 0)
                return r;
        if (neg ? v > (unsigned long long) INT_MAX + 1 : v > INT_MAX)
                return -ERANGE;
        *ret = neg ? (int) -(long long) v : (int) v;
        return 0;
}

/* The kernel's strim(): trailing, then leading white space. */
static char *strim(char *s)
{
        size_t n = strlen(s);

        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = '\0';
        while (isspace((unsigned char) *s))
                s++;
        return s;
}

/* __rdtgroup_move_task() for one thread; pid is the id as written, for messages. */
static int move_task(struct model *m, struct group *g, pid_t tid, int pid)
{
        struct group *ctrl, *mon = NULL;
        struct task *t;
        uint64_t start;

        if (thread_start_time(m->proc_fd, tid, &start) < 0) {
                model_status_printf(m, "No task %d\n", pid);
                return -ESRCH;
        }
        t = task_find(m, tid);
        if (t && t->start_time != start) {
                /* The id was reused: the new thread starts out untracked. */
                task_remove(m, t);
                t = NULL;
        }
        if (t && t->tgid == 0)
                t->tgid = thread_tgid(m->proc_fd, tid);
        ctrl = t ? t->ctrl : m->groups;
        if (g->type == GROUP_MON) {
                if (ctrl != g->parent) {
                        model_status_printf(m, "Can't move task to different control group\n");
                        return -EINVAL;
                }
                mon = g;
        } else {
                ctrl = g;
        }
        if (!t) {
                t = task_add(m, tid, start);
                if (!t)
                        return -ENOMEM;
                t->tgid = thread_tgid(m->proc_fd, tid);
        }
        task_place(t, ctrl, mon);
        t->joined_at = now_ticks();
        return 0;
}

void model_task_created(struct model *m, pid_t creator, pid_t tid, pid_t tgid)
{
        const struct task *from;
        struct task *t;
        uint64_t start;

        if (thread_start_time(m->proc_fd, tid, &start) < 0)
                return; /* gone already: nothing to place */
        t = task_find(m, tid);
        if (t && t->start_time == start)
                return; /* a tasks write placed it first */
        from = tid == tgid ? task_find(m, creator) : process_task(m, tgid, tid);
        if (!from || !task_is_live(m, from) || start < from->joined_at)
                return; /* an untracked creator: the root group, as untracked */
        if (t)          /* the id's previous thread */
                task_remove(m, t);
        t = task_add(m, tid, start);
        if (!t)
                return;
        t->tgid = tgid;
        t->joined_at = start;
        task_place(t, from->ctrl, from->mon);
}

/* rdtgroup_tasks_write() as of v6.7: a comma-separated list, applied in order
 * up to the first error. */
ssize_t model_tasks_write(struct model *m, struct group *g, const char *buf, size_t len,
                          pid_t caller_tid)
{
        /* kernfs hands over the buffer as a C string: it ends at a NUL. */
        _cleanup_free_ char *text = strndup(buf, len);
        char *p = text;
        int r = 0;

        if (!text)
                return -ENOMEM;
        model_status_clear(m);
        model_refresh(m);
        while (p && p[0] != '\0' && p[0] != '\n') {
                char *item = strim(strsep(&p, ","));
                int pid;

                if (parse_kstrtoint(item, &pid) < 0) {
                        model_status_printf(m, "Task list parsing error pid %s\n", item);
                        r = -EINVAL;
                        break;
                }
                if (pid < 0) {
                        model_status_printf(m, "Invalid pid %d\n", pid);
                        r = -EINVAL;
                        break;
                }
                r = move_task(m, g, pid == 0 ? caller_tid : pid, pid);
                if (r < 0) {
                        model_status_printf(m, "Error while processing task %d\n", pid);
                        break;
                }
        }
        return r < 0 ? r : (ssize_t) len;
}

int model_tasks_read(struct model *m, struct group *g, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;

        /* Exactly the live ones, even before their exits are reported. */
        for (struct group *h = g; h; h = next_listed_group(m, g, h))
                drop_exited(m, h);
        model_refresh(m);
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (const struct group *h = g; h; h = next_listed_group(m, g, h))
                for (const struct task *t = h->tasks; t; t = t->next)
                        (void) fprintf(f, "%d\n", (int) t->tid);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* ---- counters ---- */

static uint64_t scale_usec(uint64_t task_usec, uint64_t per_sec)
{
        return task_usec / USEC_PER_SEC * per_sec +
               task_usec % USEC_PER_SEC * per_sec / USEC_PER_SEC;
}

static uint64_t rmid_event_value(const struct group *g, enum model_event ev)
{
        switch (ev) {
        case EVENT_LLC_OCCUPANCY:
                return g->live_tasks * LLC_BYTES_PER_TASK;
        case EVENT_MBM_TOTAL_BYTES:
                return g->task_usec * MBM_TOTAL_BYTES_PER_USEC;
        case EVENT_MBM_LOCAL_BYTES:
                return g->task_usec * MBM_LOCAL_BYTES_PER_USEC;
        case EVENT_CORE_ENERGY: /* 1 J per task-second */
                return scale_usec(g->task_usec, 1ULL << MODEL_FIXED_POINT_BITS);
        case EVENT_ACTIVITY: /* 1/8 F per task-second */
                return scale_usec(g->task_usec, 1ULL << (MODEL_FIXED_POINT_BITS - 3));
        }
        return 0;
}

uint64_t model_event_value(struct model *m, struct group *g, enum model_event ev)
{
        int64_t now = now_usec();
        uint64_t sum = 0;

        /* Counters are advanced where they are read, or when the count of
         * tasks on them changes: an access costs nothing per group. */
        for (struct group *h = g; h; h = next_listed_group(m, g, h)) {
                group_advance(h, now);
                sum += rmid_event_value(h, ev);
        }
        return sum;
}

/* AET (intel_aet.c): an RMID has data on a package once one of its tasks ran
 * on a CPU of it, CPU c being in package c mod perf_pkg_domains here; the
 * data stays with the RMID, whoever holds it next. Looked at where it is
 * read: each live task's last CPU, as /proc says. */
static void pkg_data_update(struct model *m, const struct group *g)
{
        unsigned n = m->cfg.perf_pkg_domains;

        for (const struct task *t = g->tasks; t; t = t->next) {
                int cpu = thread_cpu(m->proc_fd, t->tid);

                if (cpu >= 0)
                        m->pkg_data[(size_t) g->rmid * n + (unsigned) cpu % n] = true;
        }
}

int model_pkg_event_value(struct model *m, struct group *g, enum model_event ev, unsigned pkg,
                          uint64_t *ret)
{
        int64_t now = now_usec();
        uint64_t sum = 0;
        bool data = false;

        if (!m->cfg.perf_pkg_by_cpu) {
                *ret = model_event_value(m, g, ev);
                return 0;
        }
        /* A CTRL_MON group sums its MON groups that have data, as
         * mon_event_count() skips the children whose read fails. */
        for (struct group *h = g; h; h = next_listed_group(m, g, h)) {
                pkg_data_update(m, h);
                group_advance(h, now);
                /* The root's RMID 0 has data everywhere: every task the
                 * kernel has not moved runs there. */
                if (h->rmid != 0 && !m->pkg_data[(size_t) h->rmid * m->cfg.perf_pkg_domains + pkg])
                        continue;
                data = true;
                sum += rmid_event_value(h, ev);
        }
        if (!data)
                return -ENODATA;
        *ret = sum;
        return 0;
}

/* ---- assignable counters (ABMC) ---- */

static const char *const mbm_event_names[MBM_EVENTS] = {"mbm_total_bytes", "mbm_local_bytes"};
static const enum model_event mbm_model_events[MBM_EVENTS] = {EVENT_MBM_TOTAL_BYTES,
                                                              EVENT_MBM_LOCAL_BYTES};

bool model_abmc(const struct model *m)
{
        return m->cfg.mbm_counters > 0;
}

unsigned model_mbm_available(const struct model *m, unsigned dom)
{
        return m->mbm_available[dom];
}

bool model_mbm_on_mkdir(const struct model *m)
{
        return m->mbm_on_mkdir;
}

int model_mbm_on_mkdir_set(struct model *m, const char *buf)
{
        if ((buf[0] != '0' && buf[0] != '1') || (buf[1] != '\0' && strcmp(buf + 1, "\n") != 0))
                return -EINVAL;
        m->mbm_on_mkdir = buf[0] == '1';
        return 0;
}

static size_t slot(const struct model *m, enum model_mbm_event ev, unsigned dom)
{
        return (size_t) ev * m->cfg.l3_domains + dom;
}

/* rdtgroup_alloc_assign_cntr(): a counter of dom for (g, ev), counting from
 * now; -ENOSPC with the kernel's message when dom has none left. */
static int mbm_assign(struct model *m, struct group *g, enum model_mbm_event ev, unsigned dom)
{
        size_t i = slot(m, ev, dom);

        if (g->assigned[i])
                return 0;
        if (m->mbm_available[dom] == 0) {
                model_status_printf(m, "Failed to allocate counter for %s in domain %u\n",
                                    mbm_event_names[ev], dom);
                return -ENOSPC;
        }
        m->mbm_available[dom]--;
        group_advance(g, now_usec());
        g->assigned[i] = true;
        g->assigned_at[i] = rmid_event_value(g, mbm_model_events[ev]);
        return 0;
}

static void mbm_unassign(struct model *m, struct group *g, enum model_mbm_event ev, unsigned dom)
{
        size_t i = slot(m, ev, dom);

        if (g->assigned[i]) {
                g->assigned[i] = false;
                m->mbm_available[dom]++;
        }
}

/* rdtgroup_assign_cntrs(): each event in every domain, in order, an event
 * stopping at the first domain that fails. */
static void mbm_assign_all(struct model *m, struct group *g)
{
        if (!model_abmc(m) || !m->mbm_on_mkdir)
                return;
        for (unsigned ev = 0; ev < MBM_EVENTS; ev++)
                for (unsigned d = 0; d < m->cfg.l3_domains; d++)
                        if (mbm_assign(m, g, ev, d) < 0)
                                break;
}

static void mbm_free_all(struct model *m, struct group *g)
{
        if (!model_abmc(m))
                return;
        for (unsigned ev = 0; ev < MBM_EVENTS; ev++)
                for (unsigned d = 0; d < m->cfg.l3_domains; d++)
                        mbm_unassign(m, g, ev, d);
}

int model_assignments_read(struct model *m, const struct group *g, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        for (unsigned ev = 0; ev < MBM_EVENTS; ev++) {
                fprintf(f, "%s:", mbm_event_names[ev]);
                for (unsigned d = 0; d < m->cfg.l3_domains; d++)
                        fprintf(f, "%s%u=%c", d ? ";" : "", d,
                                g->assigned[slot(m, ev, d)] ? 'e' : '_');
                fputc('\n', f);
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}

static int parse_domain(const struct model *m, const char *s, bool *ret_all, unsigned *ret)
{
        char *end;
        unsigned long v;

        *ret_all = strcmp(s, "*") == 0;
        if (*ret_all)
                return 0;
        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || *end != '\0' || v >= m->cfg.l3_domains)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

/* mbm_L3_assignments_write(): applied in order up to the first error. */
ssize_t model_assignments_write(struct model *m, struct group *g, const char *buf, size_t len)
{
        _cleanup_free_ char *text = strndup(buf, len);
        char *p, *colon, *item, *save = NULL;
        unsigned ev;

        if (!text)
                return -ENOMEM;
        model_status_clear(m);
        p = strim(text);
        colon = strchr(p, ':');
        if (!colon) {
                model_status_printf(m, "Invalid format\n");
                return -EINVAL;
        }
        *colon = '\0';
        for (ev = 0; ev < MBM_EVENTS && strcmp(p, mbm_event_names[ev]) != 0; ev++)
                ;
        if (ev == MBM_EVENTS) {
                model_status_printf(m, "Invalid event %s\n", p);
                return -EINVAL;
        }
        for (item = strtok_r(colon + 1, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
                char *eq = strchr(item, '=');
                unsigned dom = 0;
                bool all = false;

                if (eq)
                        *eq = '\0';
                if (!eq || parse_domain(m, item, &all, &dom) < 0 ||
                    (strcmp(eq + 1, "e") != 0 && strcmp(eq + 1, "_") != 0)) {
                        model_status_printf(m, "Invalid assignment %s\n", item);
                        return -EINVAL;
                }
                for (unsigned d = all ? 0 : dom; d < (all ? m->cfg.l3_domains : dom + 1); d++) {
                        if (eq[1] == '_') {
                                mbm_unassign(m, g, ev, d);
                                continue;
                        }
                        if (mbm_assign(m, g, ev, d) < 0)
                                return -ENOSPC;
                }
        }
        return (ssize_t) len;
}

int model_mbm_value(struct model *m, struct group *g, enum model_mbm_event ev, unsigned dom,
                    uint64_t *ret)
{
        int64_t now = now_usec();
        bool any = false;

        if (!model_abmc(m)) {
                *ret = model_event_value(m, g, mbm_model_events[ev]);
                return 0;
        }
        *ret = 0;
        for (struct group *h = g; h; h = next_listed_group(m, g, h)) {
                size_t i = slot(m, ev, dom);

                if (!h->assigned[i])
                        continue;
                group_advance(h, now);
                *ret += rmid_event_value(h, mbm_model_events[ev]) - h->assigned_at[i];
                any = true;
        }
        return any ? 0 : -ENOENT;
}

int model_max_threshold_set(struct model *m, const char *buf)
{
        unsigned long long v;
        int r;

        model_status_clear(m);
        r = parse_kstrtoull(buf, true, &v);
        if (r < 0)
                return r;
        if (v > L3_CACHE_BYTES)
                return -EINVAL;
        m->max_threshold = (unsigned) v;
        return 0;
}

unsigned model_max_threshold(const struct model *m)
{
        return m->max_threshold;
}

int model_format_fixed_point(uint64_t raw, unsigned bits, char *buf, size_t size)
{
        /* decplaces[] of fs/resctrl/ctrlmondata.c: ceil(bits * log10(2)). */
        static const unsigned decplaces[28] = {1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 4,
                                               5, 5, 5, 6, 6, 6, 7, 7, 7, 7, 8, 8, 8, 9};
        uint64_t frac, pow10 = 1;
        int n;

        if (bits < 1 || bits >= ELEMENTSOF(decplaces))
                return -EINVAL;
        for (unsigned i = 0; i < decplaces[bits]; i++)
                pow10 *= 10;
        frac = raw & ((1ULL << bits) - 1);
        frac *= pow10;
        frac += 1ULL << (bits - 1);
        frac >>= bits;
        n = snprintf(buf, size, "%llu.%0*llu\n", (unsigned long long) (raw >> bits),
                     (int) decplaces[bits], (unsigned long long) frac);
        if (n < 0 || (size_t) n >= size)
                return -ENOBUFS;
        return n;
}
