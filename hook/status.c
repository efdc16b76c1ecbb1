/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abmc.h"
#include "cgroup.h"
#include "command.h"
#include "counters.h"
#include "finished.h"
#include "fsutil.h"
#include "intake.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "outcome.h"
#include "pod.h"
#include "pod_threads.h"
#include "proc.h"
#include "prom.h"
#include "rdt.h"
#include "members.h"
#include "statedir.h"
#include "watch_state.h"
#include "text.h"

#define STATUS_PODS_MAX 65536 /* more state files than RMIDs on any machine */

struct group_view {
        const struct group *g;
        int error; /* reading the counters failed: -errno (-ENOENT: the group is gone) */
        struct counter_reading *rd;
        size_t n_rd;
        int bandwidth;    /* ABMC: enum abmc_bandwidth of mbmEvents; -1: no ABMC, unknown */
        unsigned missing; /* ABMC: (event, domain) pairs of mbmEvents without a counter */
};

/* One counter of a pod, summed across its domains and control groups. */
struct total {
        const char *name, *unit; /* borrowed from a reading */
        enum counter_kind kind;
        enum counter_state state; /* COUNTER_OK when at least one reading had a value */
        struct counter_value sum, delta;
        bool sum_ok;   /* false: the readings could not be added (overflow, mixed scales) */
        bool delta_ok; /* every summed reading had a usable baseline */
        size_t n_unreadable;
};

struct pod_view {
        char uid[POD_UID_LEN + 1];
        struct pod_state st;
        char *why; /* the state file could not be read */
        struct group_view *groups;
        struct total *totals;
        size_t n_totals;
        unsigned threads;               /* of its live monitored containers */
        unsigned threads_in;            /* of those, in the pod's groups */
        unsigned threads_elsewhere;     /* of those, in another monitoring or control group */
        int64_t created_ms, removed_ms; /* a finished pod's (Unix ms; 0: unknown) */
};

struct node_view {
        const struct config *config;
        int proc_fd;
        char boot_id[BOOT_ID_LEN + 1]; /* this boot's; "" when unknown */
        uint64_t pid_ns;               /* this process's; 0 when unknown */
        enum rmid_budget rule;         /* NODE or CTRL_GROUP (rdt_budget_rule) */
        int budget;                    /* NODE: groups of the node; -errno when unknown or CTRL */
        int per_ctrl;                  /* CTRL_GROUP: groups of each control group; -errno */
        struct rdt_ctrl_usage *ctrls;  /* CTRL_GROUP: each control group's */
        size_t n_ctrls;
        bool abmc; /* counters must be assigned (mbm_event mode): total and available are read */
        int64_t gc_last_pass; /* wall-clock seconds of the last gc pass's end; 0: none recorded */
        bool watch_running;   /* watch.state names a watch that runs: watch holds its figures */
        struct watch_state watch;
        struct abmc_counts mbm_total, mbm_available;
        unsigned in_use, owned;
        unsigned unmonitored[_UNMONITORED_MAX];
        unsigned threads, threads_in, threads_elsewhere; /* every pod's, summed */
        struct outcome *outcomes;
        size_t n_outcomes;
        struct pod_view *pods;
        size_t n_pods;
        struct pod_view *finished; /* pods whose group the hook removed: its final counters */
        size_t n_finished;
};

static bool member_alive(const struct node_view *nv, const struct member *m)
{
        const char *why;

        return pod_member_is_live(nv->proc_fd, m, &why) == 1;
}

/* Raw minus baseline: true with *ret; false when unknown (a gauge, no value,
 * no baseline, or the counter went back: its RMID was reset). */
static bool reading_delta(const struct group *g, const struct counter_reading *rd,
                          struct counter_value *ret)
{
        char key[2 * NAME_MAX + 2];
        const struct counter_value *b;

        if (rd->kind != COUNTER_CUMULATIVE || rd->state != COUNTER_OK)
                return false;
        snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
        b = pod_state_group_baseline(g, key);
        return b && counter_value_sub(&rd->value, b, ret) >= 0;
}

/* Is rd's cumulative counter waiting for its baseline (baseline_pending:
 * not readable when the group was taken, its first value to be taken at
 * the group's next claim)? Until then it has no delta, and its raw value,
 * then a delta near 0, would be a counter reset to Prometheus. */
static bool baseline_pending(const struct group *g, const struct counter_reading *rd)
{
        char key[2 * NAME_MAX + 2];

        if (rd->kind != COUNTER_CUMULATIVE)
                return false;
        snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
        for (size_t i = 0; i < g->n_pending; i++)
                if (strcmp(g->pending[i], key) == 0)
                        return true;
        return false;
}

static struct total *total_get(struct pod_view *pv, const struct counter_reading *rd)
{
        struct total *a;

        for (size_t i = 0; i < pv->n_totals; i++)
                if (strcmp(pv->totals[i].name, rd->name) == 0)
                        return &pv->totals[i];
        a = realloc(pv->totals, (pv->n_totals + 1) * sizeof(*a));
        if (!a)
                return NULL;
        pv->totals = a;
        a[pv->n_totals] = (struct total){
            .name = rd->name,
            .unit = rd->unit,
            .kind = rd->kind,
            .state = rd->state,
            .sum = {.scale = rd->value.scale},
            .delta = {.scale = rd->value.scale},
            .sum_ok = true,
            .delta_ok = rd->kind == COUNTER_CUMULATIVE,
        };
        return &a[pv->n_totals++];
}

static int add_to_total(struct pod_view *pv, const struct group *g,
                        const struct counter_reading *rd)
{
        struct total *t = total_get(pv, rd);
        struct counter_value d;

        if (!t)
                return -ENOMEM;
        if (rd->state != COUNTER_OK) {
                t->n_unreadable++;
                return 0;
        }
        if (t->state != COUNTER_OK) { /* the first value after unreadable ones */
                t->state = COUNTER_OK;
                t->sum.scale = t->delta.scale = rd->value.scale;
        }
        t->sum_ok = t->sum_ok && counter_value_add(&t->sum, &rd->value) >= 0;
        t->delta_ok =
            t->delta_ok && reading_delta(g, rd, &d) && counter_value_add(&t->delta, &d) >= 0;
        return 0;
}

static int pod_totals(struct pod_view *pv)
{
        for (size_t i = 0; i < pv->st.n_groups; i++)
                for (size_t j = 0; j < pv->groups[i].n_rd; j++) {
                        int r = add_to_total(pv, pv->groups[i].g, &pv->groups[i].rd[j]);

                        if (r < 0)
                                return r;
                }
        return 0;
}

static void pod_view_done(struct pod_view *pv)
{
        for (size_t i = 0; pv->groups && i < pv->st.n_groups; i++)
                free(pv->groups[i].rd);
        free(pv->groups);
        free(pv->totals);
        free(pv->why);
        pod_state_done(&pv->st);
}

static void node_view_done(struct node_view *nv)
{
        for (size_t i = 0; i < nv->n_pods; i++)
                pod_view_done(&nv->pods[i]);
        free(nv->pods);
        for (size_t i = 0; i < nv->n_finished; i++)
                pod_view_done(&nv->finished[i]);
        free(nv->finished);
        free(nv->outcomes);
        free(nv->ctrls);
        closep(&nv->proc_fd);
}

static int add_pod(struct node_view *nv, int state_fd, const char *uid)
{
        struct pod_view *a, *pv;
        int r;

        if (nv->n_pods >= STATUS_PODS_MAX)
                return -E2BIG;
        a = realloc(nv->pods, (nv->n_pods + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        nv->pods = a;
        pv = &a[nv->n_pods];
        *pv = (struct pod_view){0};
        snprintf(pv->uid, sizeof(pv->uid), "%s", uid);
        /* Without the pod lock: the file is replaced by rename, never torn. */
        r = pod_state_load(state_fd, uid, &pv->st, &pv->why);
        /* Containers left for gc and watch (intake.h) show as waiting. */
        if ((r >= 0 || r == -ENOENT) &&
            intake_view(state_fd, uid, nv->pid_ns, nv->boot_id, &pv->st) > 0)
                r = 0;
        if (r == -ENOENT)
                return 0; /* its last poststop ran meanwhile */
        if (r < 0 && !pv->why && asprintf(&pv->why, "%s", strerror(-r)) < 0)
                return -ENOMEM;
        if (r >= 0 && pod_state_of_other_boot(&pv->st, nv->boot_id, nv->pid_ns)) {
                if (asprintf(&pv->why,
                             "written in an earlier boot (boot_id %s): its containers "
                             "and groups are gone; gc removes it",
                             pv->st.boot_id) < 0)
                        return -ENOMEM;
                pod_state_done(&pv->st);
                pv->st = (struct pod_state){0};
        }
        pv->groups = calloc(pv->st.n_groups + 1, sizeof(*pv->groups));
        if (!pv->groups)
                return -ENOMEM;
        for (size_t i = 0; i < pv->st.n_groups; i++)
                pv->groups[i].g = &pv->st.groups[i];
        nv->n_pods++;
        return 0;
}

/* A record's counts since its group was made: each cumulative reading less
 * its baseline, which is then 0, so that records of the same group's
 * incarnations add up. A counter that went back keeps its raw value. */
static int apply_baselines(struct finished_pod *f)
{
        struct group *g = &f->group;
        int r = 0;

        for (size_t i = 0; i < f->n_rd; i++) {
                struct counter_value d;

                if (reading_delta(g, &f->rd[i], &d))
                        f->rd[i].value = d;
        }
        pod_state_group_clear_baseline(g);
        for (size_t i = 0; r >= 0 && i < f->n_rd; i++) {
                const struct counter_reading *rd = &f->rd[i];
                char key[2 * NAME_MAX + 2];

                if (rd->kind != COUNTER_CUMULATIVE || rd->state != COUNTER_OK)
                        continue;
                (void) snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
                r = pod_state_group_set_baseline(g, key,
                                                 &(struct counter_value){0, rd->value.scale});
        }
        return r;
}

/* Another record of a finished pod's group in the same control group (it
 * was made again after it went): its counts added to the view's, so that
 * one series says the pod's count there, and the times widened. */
static int merge_finished(struct pod_view *pv, const struct finished_pod *f)
{
        struct group_view *gv = &pv->groups[0];

        for (size_t i = 0; i < f->n_rd; i++) {
                const struct counter_reading *rd = &f->rd[i];
                struct counter_reading *have = NULL, *a;
                char key[2 * NAME_MAX + 2];

                for (size_t j = 0; j < gv->n_rd && !have; j++)
                        if (strcmp(gv->rd[j].domain, rd->domain) == 0 &&
                            strcmp(gv->rd[j].name, rd->name) == 0)
                                have = &gv->rd[j];
                if (have && have->state == COUNTER_OK && rd->state == COUNTER_OK)
                        (void) counter_value_add(&have->value, &rd->value); /* kept on overflow */
                else if (have && rd->state == COUNTER_OK)
                        *have = *rd;
                if (have)
                        continue;
                a = reallocarray(gv->rd, gv->n_rd + 1, sizeof(*a));
                if (!a)
                        return -ENOMEM;
                gv->rd = a;
                a[gv->n_rd++] = *rd;
                (void) snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
                if (rd->state == COUNTER_OK &&
                    pod_state_group_set_baseline(&pv->st.groups[0], key,
                                                 &(struct counter_value){0, rd->value.scale}) < 0)
                        return -ENOMEM;
        }
        if (f->created_ms > 0 && (pv->created_ms == 0 || f->created_ms < pv->created_ms))
                pv->created_ms = f->created_ms;
        if (f->removed_ms > pv->removed_ms)
                pv->removed_ms = f->removed_ms;
        return 0;
}

/* A finished pod's record as the view of a pod with one group, whose
 * readings are those read right before its removal: the totals, JSON and
 * series of live pods then serve it too. Takes what f holds. */
static int add_finished(struct node_view *nv, struct finished_pod *f)
{
        struct pod_view *pv = &nv->finished[nv->n_finished];

        *pv = (struct pod_view){.created_ms = f->created_ms, .removed_ms = f->removed_ms};
        memcpy(pv->uid, f->uid, sizeof(pv->uid));
        pv->st.groups = calloc(1, sizeof(*pv->st.groups));
        pv->groups = calloc(1, sizeof(*pv->groups));
        if (!pv->st.groups || !pv->groups) {
                pod_view_done(pv);
                return -ENOMEM;
        }
        pv->st.namespace = TAKE_PTR(f->namespace);
        pv->st.pod_name = TAKE_PTR(f->pod_name);
        pv->st.groups[0] = f->group;
        f->group = (struct group){0};
        pv->st.n_groups = 1;
        pv->groups[0] = (struct group_view){
            .g = &pv->st.groups[0], .rd = TAKE_PTR(f->rd), .n_rd = f->n_rd, .bandwidth = -1};
        f->n_rd = 0;
        nv->n_finished++;
        return 0;
}

static struct pod_view *finished_view(struct node_view *nv, const struct finished_pod *f)
{
        for (size_t i = 0; i < nv->n_finished; i++)
                if (nv->finished[i].st.n_groups == 1 && strcmp(nv->finished[i].uid, f->uid) == 0 &&
                    strcmp(nv->finished[i].st.groups[0].ctrl, f->group.ctrl) == 0)
                        return &nv->finished[i];
        return NULL;
}

/* Is f's group still there: its removal was killed between the record and
 * the rmdir? Then its counters are the live pod's, not yet final. */
static bool group_lives(const struct node_view *nv, const struct finished_pod *f)
{
        for (size_t i = 0; i < nv->n_pods; i++) {
                const struct pod_view *pv = &nv->pods[i];

                if (strcmp(pv->uid, f->uid) != 0)
                        continue;
                for (size_t j = 0; j < pv->st.n_groups; j++)
                        if (finished_pod_is_of(f, pv->groups[j].g) &&
                            pv->groups[j].error != -ENOENT)
                                return true;
        }
        return false;
}

/* The final counters kept in stateDir/finished/ (finished.h), but those of
 * groups still there. */
static int gather_finished(struct node_view *nv)
{
        _cleanup_close_ int state_fd = -EBADF, dir_fd = -EBADF;
        struct finished_pod *f = NULL;
        unsigned bad = 0;
        size_t n = 0;
        int r;

        r = statedir_open(nv->config->state_dir, false, &state_fd);
        if (r >= 0)
                r = statedir_open_finished(state_fd, false, &dir_fd);
        if (r == -ENOENT)
                return 0; /* no hook has run, or removed a group, yet */
        if (r >= 0)
                r = finished_load(dir_fd, nv->config->final_counters_sec, &f, &n, &bad);
        if (r < 0)
                return r;
        if (bad > 0)
                log_warning("%u records of final counters in %s/%s do not parse; passed over", bad,
                            nv->config->state_dir, STATEDIR_FINISHED);
        nv->finished = calloc(n + 1, sizeof(*nv->finished));
        if (!nv->finished)
                r = -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct pod_view *pv;

                if (r >= 0 && !group_lives(nv, &f[i])) {
                        r = apply_baselines(&f[i]);
                        pv = finished_view(nv, &f[i]);
                        if (r >= 0)
                                r = pv ? merge_finished(pv, &f[i]) : add_finished(nv, &f[i]);
                }
                finished_pod_done(&f[i]);
        }
        free(f);
        for (size_t i = 0; r >= 0 && i < nv->n_finished; i++)
                r = pod_totals(&nv->finished[i]);
        return r;
}

static int gather_pods(struct node_view *nv)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t n = 0;
        int r;

        r = statedir_open(nv->config->state_dir, false, &fd);
        if (r == -ENOENT)
                return 0; /* no hook has run yet */
        if (r >= 0)
                r = statedir_scan(fd, &pods, &n);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (pods[i].members || pods[i].intake)
                        r = add_pod(nv, fd, pods[i].uid);
        if (r < 0)
                return r;
        if (fstatat(fd, STATEDIR_GC_LAST_PASS, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode))
                nv->gc_last_pass = st.st_mtim.tv_sec;
        nv->watch_running = watch_state_load(fd, &nv->watch) == 0 &&
                            watch_state_is_live(nv->proc_fd, &nv->watch) == 1;
        return outcome_read_all(fd, &nv->outcomes, &nv->n_outcomes);
}

static void read_group(const struct node_view *nv, int root_fd, const char *uid,
                       struct group_view *gv)
{
        _cleanup_close_ int fd = -EBADF;
        struct abmc_assignments a;

        gv->error = rdt_mon_group_open(root_fd, gv->g->ctrl, uid, &fd);
        if (gv->error >= 0)
                gv->error = counters_read(fd, false, &gv->rd, &gv->n_rd);
        gv->bandwidth = -1;
        if (!nv->abmc || abmc_group_assignments(root_fd, gv->g->ctrl, uid, &a) < 0)
                return;
        gv->bandwidth = (int) abmc_bandwidth(&a, nv->config->mbm_events);
        for (int ev = 0; ev < ABMC_EVENTS; ev++)
                for (size_t i = 0; i < a.n; i++)
                        gv->missing += (nv->config->mbm_events & (1U << ev)) && a.listed[ev] &&
                                       !a.assigned[ev][i];
}

/* Reads every group's counters and counts the groups in use, each pod's and
 * the count under the kernel's shared lock, so that no cooperating tool
 * changes a group meanwhile; taken per pod, so that a hook waiting to
 * change one waits for one pod's reads at most. The pod's coverage, a walk
 * of every thread of its containers, is a snapshot that needs no lock: it
 * is read after. */
static int gather_resctrl(struct node_view *nv)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts mounts = CGROUP_MOUNTS_INIT;
        _cleanup_close_ int root_fd = -EBADF;
        unsigned budget;
        int r;

        (void) cgroup_mounts_open(nv->proc_fd, &mounts); /* without: the inits' threads */

        r = rdt_open(nv->config->resctrl_path, nv->config->require_resctrl_fs, &root_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open resctrl at '%s'", nv->config->resctrl_path);
        nv->rule = rdt_budget_rule(nv->config->rmid_budget);
        if (nv->rule == RMID_BUDGET_NODE) {
                r = rdt_rmid_budget(root_fd, &budget);
                nv->budget = r < 0 ? r : (int) budget;
                nv->per_ctrl = -ENOTSUP;
        } else {
                r = rdt_mon_groups_per_ctrl(root_fd, &budget);
                nv->per_ctrl = r < 0 ? r : (int) budget;
                nv->budget = -ENOTSUP;
        }
        nv->abmc = abmc_active(root_fd) == 1 &&
                   abmc_counters(root_fd, &nv->mbm_total, &nv->mbm_available) >= 0;

        for (size_t i = 0; i < nv->n_pods; i++) {
                struct pod_coverage cover;

                r = rdt_lock_shared(root_fd, nv->config->lock_timeout_ms);
                if (r < 0)
                        return log_error_errno(r, "cannot take the resctrl lock within %u ms",
                                               nv->config->lock_timeout_ms);
                for (size_t j = 0; j < nv->pods[i].st.n_groups; j++)
                        read_group(nv, root_fd, nv->pods[i].uid, &nv->pods[i].groups[j]);
                rdt_unlock(root_fd);
                pod_coverage(nv->proc_fd, root_fd, &mounts, nv->pods[i].uid, &nv->pods[i].st,
                             &cover);
                nv->pods[i].threads = cover.threads;
                nv->pods[i].threads_in = cover.in;
                nv->pods[i].threads_elsewhere = cover.elsewhere;
                nv->threads += nv->pods[i].threads;
                nv->threads_in += nv->pods[i].threads_in;
                nv->threads_elsewhere += nv->pods[i].threads_elsewhere;
        }
        r = rdt_lock_shared(root_fd, nv->config->lock_timeout_ms);
        if (r < 0)
                return log_error_errno(r, "cannot take the resctrl lock within %u ms",
                                       nv->config->lock_timeout_ms);
        r = rdt_groups_count(root_fd, &nv->in_use);
        if (r >= 0 && nv->rule == RMID_BUDGET_CTRL_GROUP)
                r = rdt_mon_groups_count(root_fd, &nv->ctrls, &nv->n_ctrls);
        rdt_unlock(root_fd);
        if (r < 0)
                return log_error_errno(r, "cannot list the groups");
        return 0;
}

static int gather(struct node_view *nv)
{
        int r;

        r = proc_open(&nv->proc_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open /proc");
        if (proc_boot_id(nv->proc_fd, nv->boot_id) < 0)
                nv->boot_id[0] = '\0';
        if (proc_pid_ns(nv->proc_fd, &nv->pid_ns) < 0)
                nv->pid_ns = 0;
        r = gather_pods(nv);
        if (r < 0)
                return log_error_errno(r, "cannot read the state directory '%s'",
                                       nv->config->state_dir);
        r = gather_resctrl(nv);
        if (r < 0)
                return r;
        r = gather_finished(nv);
        if (r < 0)
                return log_error_errno(r, "cannot read the final counters in '%s/%s'",
                                       nv->config->state_dir, STATEDIR_FINISHED);
        for (size_t i = 0; i < nv->n_pods; i++) {
                struct pod_view *pv = &nv->pods[i];

                for (size_t j = 0; j < pv->st.n_groups; j++)
                        nv->owned += pv->st.groups[j].owned && pv->groups[j].error != -ENOENT;
                for (size_t j = 0; j < pv->st.n_members; j++)
                        if (!pv->st.members[j].monitored)
                                nv->unmonitored[unmonitored_of(pv->st.members[j].reason)]++;
                if (pod_totals(pv) < 0)
                        return log_error_errno(-ENOMEM, "out of memory");
        }
        return 0;
}

/* --- output ----------------------------------------------------------------- */

static const char *or_dash(const char *s)
{
        return s ? s : "-";
}

/* A string from outside (annotations, the state file, the config) as one
 * table cell: escaped and capped, "-" when absent. */
static const char *cell(char buf[static TEXT_ESCAPED_SIZE], const char *s)
{
        return text_escape(buf, TEXT_ESCAPED_SIZE, or_dash(s));
}

/* The group's directory: <resctrl>/mon_groups/<uid> or <resctrl>/<ctrl>/mon_groups/<uid>. */
static void group_path(const struct node_view *nv, const struct pod_view *pv, const struct group *g,
                       char *buf, size_t size)
{
        bool root = strcmp(g->ctrl, "/") == 0;

        snprintf(buf, size, "%s/%s%smon_groups/%s", nv->config->resctrl_path, root ? "" : g->ctrl,
                 root ? "" : "/", pv->uid);
}

static void format_value(bool ok, const struct counter_value *v,
                         char buf[static COUNTER_VALUE_STRLEN])
{
        if (!ok || counter_value_format(v, buf, COUNTER_VALUE_STRLEN) < 0)
                snprintf(buf, COUNTER_VALUE_STRLEN, "-");
}

static void print_pod_members(const struct node_view *nv, const struct pod_view *pv)
{
        char path[PATH_MAX], a[TEXT_ESCAPED_SIZE], b[TEXT_ESCAPED_SIZE];

        for (size_t i = 0; i < pv->st.n_groups; i++) {
                const struct group_view *gv = &pv->groups[i];

                group_path(nv, pv, gv->g, path, sizeof(path));
                char bw[32] = "";

                if (gv->bandwidth > ABMC_FULL)
                        (void) snprintf(bw, sizeof(bw), "  (bandwidth: %s)",
                                        abmc_bandwidth_name(gv->bandwidth));
                printf("  group %s  %s%s%s%s%s\n", cell(a, gv->g->ctrl), cell(b, path),
                       gv->g->owned ? "" : "  (not ours)", gv->error == -ENOENT ? "  (gone)" : "",
                       gv->g->emptied ? "  (lingers: no container)" : "", bw);
                for (size_t j = 0; j < pv->st.n_members; j++) {
                        const struct member *m = &pv->st.members[j];

                        if (m->monitored && strcmp(m->ctrl, gv->g->ctrl) == 0)
                                printf("    %-24s pid %-8d %s\n", cell(a, m->id), m->pid,
                                       member_alive(nv, m) ? "alive" : "gone");
                }
        }
        for (size_t j = 0; j < pv->st.n_members; j++) {
                const struct member *m = &pv->st.members[j];

                bool alive = member_alive(nv, m);

                if (m->monitored)
                        continue;
                printf("  unmonitored %s  pid %d %s  %s: %s", cell(a, m->id), m->pid,
                       alive ? "alive" : "gone", unmonitored_code(unmonitored_of(m->reason)),
                       cell(b, m->reason));
                if (alive && pod_member_is_waiting(m))
                        printf("  (waiting for %s for %llu s)",
                               unmonitored_of(m->reason) == UNMONITORED_BUSY ? "the locks"
                                                                             : "an RMID",
                               (unsigned long long) pod_member_waited_sec(m));
                putchar('\n');
        }
}

static void print_pod_totals(const struct pod_view *pv)
{
        if (pv->n_totals == 0)
                return;
        printf("  %-22s %-11s %-7s %20s %20s\n", "COUNTER", "KIND", "UNIT", "VALUE",
               "SINCE CREATED");
        for (size_t i = 0; i < pv->n_totals; i++) {
                const struct total *t = &pv->totals[i];
                char value[COUNTER_VALUE_STRLEN], delta[COUNTER_VALUE_STRLEN];

                format_value(t->sum_ok, &t->sum, value);
                format_value(t->state == COUNTER_OK && t->delta_ok, &t->delta, delta);
                printf("  %-22s %-11s %-7s %20s %20s%s\n", t->name, counter_kind_to_string(t->kind),
                       or_dash(t->unit),
                       t->state == COUNTER_OK ? value : counter_state_to_string(t->state), delta,
                       t->n_unreadable > 0 && t->state == COUNTER_OK ? "  (some domains unreadable)"
                                                                     : "");
        }
}

static void print_finished(const struct node_view *nv)
{
        char a[TEXT_ESCAPED_SIZE], b[TEXT_ESCAPED_SIZE], c[TEXT_ESCAPED_SIZE];
        time_t now = time(NULL);

        if (nv->n_finished > 0)
                printf("finished pods, their counters when the hook removed their group (kept %u "
                       "s):\n",
                       nv->config->final_counters_sec);
        for (size_t i = 0; i < nv->n_finished; i++) {
                const struct pod_view *pv = &nv->finished[i];

                printf("pod %s  %s/%s  group %s removed %lld s ago", pv->uid,
                       cell(a, pv->st.namespace), cell(b, pv->st.pod_name),
                       cell(c, pv->st.groups[0].ctrl), (long long) (now - pv->removed_ms / 1000));
                if (pv->created_ms > 0)
                        printf(", %lld s after it was made",
                               (long long) (pv->removed_ms - pv->created_ms) / 1000);
                putchar('\n');
                print_pod_totals(pv);
                putchar('\n');
        }
}

static void print_table(const struct node_view *nv)
{
        char a[TEXT_ESCAPED_SIZE], b[TEXT_ESCAPED_SIZE];

        for (size_t i = 0; i < nv->n_pods; i++) {
                const struct pod_view *pv = &nv->pods[i];

                printf("pod %s  %s/%s\n", pv->uid, cell(a, pv->st.namespace),
                       cell(b, pv->st.pod_name));
                if (pv->why)
                        printf("  state unreadable: %s\n", cell(a, pv->why));
                print_pod_members(nv, pv);
                for (size_t j = 0; j < pv->st.n_groups; j++)
                        if (pv->groups[j].error < 0 && pv->groups[j].error != -ENOENT)
                                printf("  counters of %s unreadable: %s\n",
                                       cell(a, pv->groups[j].g->ctrl),
                                       strerror(-pv->groups[j].error));
                if (pv->threads > 0 && pv->threads_elsewhere > 0)
                        printf("  threads: %u in its containers, %u in its groups, %u in other "
                               "monitoring or control groups (left there)\n",
                               pv->threads, pv->threads_in, pv->threads_elsewhere);
                else if (pv->threads > 0)
                        printf("  threads: %u in its containers, %u in its groups\n", pv->threads,
                               pv->threads_in);
                print_pod_totals(pv);
                printf("\n");
        }
        print_finished(nv);
        if (nv->budget >= 0)
                printf("node: %d RMIDs for groups, %u in use, %u groups owned by the hook\n",
                       nv->budget, nv->in_use, nv->owned);
        if (nv->per_ctrl >= 0) {
                printf("node: %d monitoring groups in each control group (per control group, as "
                       "on Arm MPAM: its PMGs less its own):",
                       nv->per_ctrl);
                for (size_t i = 0; i < nv->n_ctrls; i++) {
                        char use[NAME_MAX + 96];

                        rdt_ctrl_usage_format(&nv->ctrls[i], (unsigned) nv->per_ctrl, use,
                                              sizeof(use));
                        printf(" %s%s", cell(a, use), i + 1 < nv->n_ctrls ? "," : "");
                }
                printf("; %u groups owned by the hook\n", nv->owned);
        }
        if (nv->abmc) {
                printf("bandwidth counters (mbm_event mode):");
                for (size_t i = 0; i < nv->mbm_total.n; i++)
                        printf(" domain %u %u of %u free%s", nv->mbm_total.ids[i],
                               i < nv->mbm_available.n ? nv->mbm_available.counts[i] : 0,
                               nv->mbm_total.counts[i], i + 1 < nv->mbm_total.n ? "," : "");
                printf("\n");
        }
        if (nv->gc_last_pass > 0)
                printf("gc: last pass %lld s ago\n",
                       (long long) (time(NULL) - (time_t) nv->gc_last_pass));
        else
                printf("gc: no pass recorded since boot\n");
        if (nv->watch_running)
                printf("watch: pid %d, %s; threads joined: %" PRIu64 " at execs, %" PRIu64
                       " in its gc passes; events lost %" PRIu64 " times\n",
                       (int) nv->watch.pid,
                       nv->watch.events ? "process events on" : "no process events, passes only",
                       nv->watch.joins_watch, nv->watch.joins_gc, nv->watch.lost_events);
        else
                printf("watch: not running\n");
        printf("coverage: %u of %u threads of monitored containers in their pod's groups\n",
               nv->threads_in, nv->threads);
        printf("unmonitored containers:");
        for (int u = 0; u < _UNMONITORED_MAX; u++)
                printf(" %s %u%s", unmonitored_code(u), nv->unmonitored[u],
                       u + 1 < _UNMONITORED_MAX ? "," : "\n");
        if (nv->n_outcomes > 0)
                printf("hook outcomes since boot:\n");
        for (size_t i = 0; i < nv->n_outcomes; i++)
                printf("  %-14s %-20s %" PRIu64 "\n", nv->outcomes[i].stage, nv->outcomes[i].result,
                       nv->outcomes[i].count);
}

/* Integers exact (up to 2^63); fixed-point as a JSON number (a double). */
static json_t *json_value(bool ok, const struct counter_value *v)
{
        if (!ok)
                return json_null();
        if (v->scale == 0 && v->v <= INT64_MAX)
                return json_integer((json_int_t) v->v);
        return json_real(counter_value_to_double(v));
}

static json_t *json_readings(const struct group_view *gv)
{
        json_auto_t *a = json_array();

        for (size_t i = 0; a && i < gv->n_rd; i++) {
                const struct counter_reading *rd = &gv->rd[i];
                char key[2 * NAME_MAX + 2];
                struct counter_value d;
                const struct counter_value *b;
                bool ok = rd->state == COUNTER_OK;

                snprintf(key, sizeof(key), "%s/%s", rd->domain, rd->name);
                b = pod_state_group_baseline(gv->g, key);
                if (json_array_append_new(
                        a, json_pack(
                               "{s:s, s:s, s:s, s:s?, s:s, s:o, s:o, s:o}", "domain", rd->domain,
                               "name", rd->name, "kind", counter_kind_to_string(rd->kind), "unit",
                               rd->unit, "state", counter_state_to_string(rd->state), "value",
                               json_value(ok, &rd->value), "baseline", json_value(b != NULL, b),
                               "delta", json_value(reading_delta(gv->g, rd, &d), &d))) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

static json_t *json_groups(const struct node_view *nv, const struct pod_view *pv)
{
        json_auto_t *a = json_array();
        char path[PATH_MAX];

        for (size_t i = 0; a && i < pv->st.n_groups; i++) {
                const struct group_view *gv = &pv->groups[i];
                json_auto_t *members = json_array();

                for (size_t j = 0; members && j < pv->st.n_members; j++) {
                        const struct member *m = &pv->st.members[j];

                        if (m->monitored && strcmp(m->ctrl, gv->g->ctrl) == 0 &&
                            json_array_append_new(members, json_pack("{s:s, s:i, s:b}", "id", m->id,
                                                                     "pid", m->pid, "alive",
                                                                     member_alive(nv, m))) < 0)
                                return NULL;
                }
                group_path(nv, pv, gv->g, path, sizeof(path));
                if (!members ||
                    json_array_append_new(
                        a,
                        json_pack("{s:s, s:s, s:b, s:b, s:b, s:s?, s:O, s:o, s:s?}", "ctrl_group",
                                  gv->g->ctrl, "path", path, "owned", gv->g->owned, "exists",
                                  gv->error != -ENOENT, "lingering", gv->g->emptied, "bandwidth",
                                  gv->bandwidth >= 0 ? abmc_bandwidth_name(gv->bandwidth) : NULL,
                                  "members", members, "counters", json_readings(gv), "error",
                                  gv->error < 0 && gv->error != -ENOENT ? strerror(-gv->error)
                                                                        : NULL)) < 0)
                        return NULL;
        }
        return TAKE_PTR(a);
}

/* A pod's counters summed across its domains and groups. */
static json_t *json_totals(const struct pod_view *pv)
{
        json_auto_t *totals = json_array();

        for (size_t i = 0; totals && i < pv->n_totals; i++) {
                const struct total *t = &pv->totals[i];
                bool ok = t->state == COUNTER_OK;

                if (json_array_append_new(
                        totals, json_pack("{s:s, s:s, s:s?, s:s, s:o, s:o, s:I}", "name", t->name,
                                          "kind", counter_kind_to_string(t->kind), "unit", t->unit,
                                          "state", counter_state_to_string(t->state), "value",
                                          json_value(ok && t->sum_ok, &t->sum), "delta",
                                          json_value(ok && t->delta_ok, &t->delta), "unreadable",
                                          (json_int_t) t->n_unreadable)) < 0)
                        return NULL;
        }
        return TAKE_PTR(totals);
}

static json_t *json_pod(const struct node_view *nv, const struct pod_view *pv)
{
        json_auto_t *unmonitored = json_array();

        for (size_t j = 0; unmonitored && j < pv->st.n_members; j++) {
                const struct member *m = &pv->st.members[j];

                bool alive = member_alive(nv, m);

                if (!m->monitored &&
                    json_array_append_new(
                        unmonitored,
                        json_pack("{s:s, s:s, s:i, s:b, s:s, s:s, s:o}", "id", m->id, "ctrl_group",
                                  m->ctrl, "pid", m->pid, "alive", alive, "reason",
                                  unmonitored_code(unmonitored_of(m->reason)), "detail", m->reason,
                                  "waiting_seconds",
                                  alive && pod_member_is_waiting(m)
                                      ? json_integer((json_int_t) pod_member_waited_sec(m))
                                      : json_null())) < 0)
                        return NULL;
        }
        if (!unmonitored)
                return NULL;
        return json_pack("{s:s, s:s?, s:s?, s:s?, s:o, s:O, s:o, s:{s:I, s:I, s:I}}", "uid",
                         pv->uid, "namespace", pv->st.namespace, "pod", pv->st.pod_name, "error",
                         pv->why, "groups", json_groups(nv, pv), "unmonitored", unmonitored,
                         "counters", json_totals(pv), "threads", "containers",
                         (json_int_t) pv->threads, "in_groups", (json_int_t) pv->threads_in,
                         "elsewhere", (json_int_t) pv->threads_elsewhere);
}

/* The running watch's figures; null when none runs. */
static json_t *json_watch(const struct node_view *nv)
{
        if (!nv->watch_running)
                return json_null();
        return json_pack("{s:i, s:b, s:{s:I, s:I}, s:I, s:I}", "pid", (int) nv->watch.pid, "events",
                         nv->watch.events, "joins", "watch", (json_int_t) nv->watch.joins_watch,
                         "gc", (json_int_t) nv->watch.joins_gc, "lost_events",
                         (json_int_t) nv->watch.lost_events, "passes",
                         (json_int_t) nv->watch.passes);
}

/* Each control group's monitoring groups, where the budget is per control
 * group; null where it is the node's. */
static json_t *json_ctrls(const struct node_view *nv)
{
        json_auto_t *a = NULL;

        if (nv->rule == RMID_BUDGET_NODE)
                return json_null();
        a = json_array();
        for (size_t i = 0; a && i < nv->n_ctrls; i++)
                if (json_array_append_new(
                        a, json_pack("{s:s, s:I, s:I, s:b}", "name", nv->ctrls[i].name,
                                     "mon_groups", (json_int_t) nv->ctrls[i].mon_groups,
                                     "pod_groups", (json_int_t) nv->ctrls[i].pod_groups, "full",
                                     nv->per_ctrl >= 0 &&
                                         (int) nv->ctrls[i].mon_groups >= nv->per_ctrl)) < 0)
                        return NULL;
        return TAKE_PTR(a);
}

static json_t *json_node(const struct node_view *nv)
{
        json_auto_t *reasons = json_object(), *outcomes = json_array(), *counters = json_array();

        for (int u = 0; reasons && u < _UNMONITORED_MAX; u++)
                if (json_object_set_new(reasons, unmonitored_code(u),
                                        json_integer(nv->unmonitored[u])) < 0)
                        return NULL;
        for (size_t i = 0; outcomes && i < nv->n_outcomes; i++)
                if (json_array_append_new(
                        outcomes, json_pack("{s:s, s:s, s:I}", "stage", nv->outcomes[i].stage,
                                            "result", nv->outcomes[i].result, "count",
                                            (json_int_t) nv->outcomes[i].count)) < 0)
                        return NULL;
        if (!reasons || !outcomes)
                return NULL;
        for (size_t i = 0; counters && nv->abmc && i < nv->mbm_total.n; i++)
                if (json_array_append_new(
                        counters,
                        json_pack("{s:I, s:I, s:I}", "domain", (json_int_t) nv->mbm_total.ids[i],
                                  "total", (json_int_t) nv->mbm_total.counts[i], "available",
                                  (json_int_t) (i < nv->mbm_available.n
                                                    ? nv->mbm_available.counts[i]
                                                    : 0))) < 0)
                        return NULL;
        if (!counters)
                return NULL;
        return json_pack(
            "{s:s, s:o, s:o, s:o, s:I, s:I, s:O, s:O, s:{s:I, s:I}, s:o, s:o, s:o}", "rmid_budget",
            nv->rule == RMID_BUDGET_NODE ? "node" : "ctrl_group", "mon_groups_per_ctrl",
            nv->per_ctrl >= 0 ? json_integer(nv->per_ctrl) : json_null(), "ctrl_groups",
            json_ctrls(nv), "rmids_total", nv->budget >= 0 ? json_integer(nv->budget) : json_null(),
            "rmids_in_use", (json_int_t) nv->in_use, "groups_owned", (json_int_t) nv->owned,
            "unmonitored", reasons, "hook_outcomes", outcomes, "threads", "containers",
            (json_int_t) nv->threads, "in_groups", (json_int_t) nv->threads_in, "mbm_counters",
            nv->abmc ? json_incref(counters) : json_null(), "gc_last_pass",
            nv->gc_last_pass > 0 ? json_integer(nv->gc_last_pass) : json_null(), "watch",
            json_watch(nv));
}

/* A finished pod: its totals and readings when its group was removed. */
static json_t *json_finished(const struct pod_view *pv)
{
        return json_pack("{s:s, s:s?, s:s?, s:s, s:o, s:I, s:o, s:o}", "uid", pv->uid, "namespace",
                         pv->st.namespace, "pod", pv->st.pod_name, "ctrl_group",
                         pv->st.groups[0].ctrl, "created_at",
                         pv->created_ms > 0 ? json_integer(pv->created_ms / 1000) : json_null(),
                         "removed_at", (json_int_t) pv->removed_ms / 1000, "counters",
                         json_totals(pv), "readings", json_readings(&pv->groups[0]));
}

static int print_json(const struct node_view *nv)
{
        json_auto_t *pods = json_array(), *finished = json_array(), *root = NULL;
        _cleanup_free_ char *text = NULL;

        for (size_t i = 0; pods && i < nv->n_pods; i++)
                if (json_array_append_new(pods, json_pod(nv, &nv->pods[i])) < 0)
                        return -ENOMEM;
        for (size_t i = 0; finished && i < nv->n_finished; i++)
                if (json_array_append_new(finished, json_finished(&nv->finished[i])) < 0)
                        return -ENOMEM;
        root = pods && finished
                   ? json_pack("{s:s, s:o, s:O, s:O}", "resctrl_path", nv->config->resctrl_path,
                               "node", json_node(nv), "pods", pods, "finished", finished)
                   : NULL;
        text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
        if (!text)
                return -ENOMEM;
        puts(text);
        return 0;
}

/* A counter file whose text does not parse: its series has no sample, and
 * this one says so, by event, with the labels the series would have. */
static int prom_counter_error(struct prom_writer *w, const char *const *labels, const char *event)
{
        const char *l[13];
        size_t n = 0;

        for (; labels[n] && n < 10; n++)
                l[n] = labels[n];
        l[n++] = "event";
        l[n++] = event;
        l[n] = NULL;
        return prom_add(w, "resctrl_pod_event_error", "gauge",
                        "1 for a counter file of the pod's group whose text is neither a value "
                        "nor one of the kernel's words (status shows it as error); that counter "
                        "has no sample, the group's others do",
                        l, "1");
}

/* A counter's value for Prometheus: the count since the hook started using
 * the group where a baseline exists, so that a reused RMID's residue is no
 * increase; the raw value otherwise. A re-created group starts again near
 * zero, which Prometheus takes as a counter reset. A finished pod's
 * (resctrl_pod_final_*) has the same labels, so that the sum of both series
 * goes on where the live one ends. */
static int prom_reading(struct prom_writer *w, const struct pod_view *pv,
                        const struct group_view *gv, const struct counter_reading *rd, bool final)
{
        const char *labels[] = {"pod_uid",    pv->uid,
                                "namespace",  or_dash(pv->st.namespace),
                                "pod",        or_dash(pv->st.pod_name),
                                "ctrl_group", gv->g->ctrl,
                                "domain",     rd->domain,
                                NULL};
        _cleanup_free_ char *name = NULL, *help = NULL;
        char value[COUNTER_VALUE_STRLEN];
        struct counter_value d;
        bool gauge = rd->kind == COUNTER_GAUGE;
        int r;

        if (rd->state == COUNTER_UNPARSED && !final)
                return prom_counter_error(w, labels, rd->name);
        if (rd->state != COUNTER_OK)
                return 0; /* Unavailable, Error, Unassigned: no sample */
        if (!final && baseline_pending(gv->g, rd))
                return 0; /* no delta yet: no sample until its baseline is taken */
        r = prom_counter_name(final ? "resctrl_pod_final_" : "resctrl_pod_", rd->name, rd->kind,
                              rd->unit, &name);
        if (r < 0)
                return r;
        if (asprintf(&help, "resctrl %s of the pod's monitoring group per domain%s%s%s%s", rd->name,
                     rd->unit ? ", in " : "", rd->unit ? rd->unit : "",
                     gauge ? "" : ", since the hook started using the group",
                     final ? ", when the hook removed it (kept finalCountersSeconds)" : "") < 0)
                return -ENOMEM;
        r = counter_value_format(reading_delta(gv->g, rd, &d) ? &d : &rd->value, value,
                                 sizeof(value));
        if (r < 0)
                return r;
        return prom_add(w, name, gauge ? "gauge" : "counter", help, labels, value);
}

static int prom_uint(struct prom_writer *w, const char *name, const char *type, const char *help,
                     const char *const *labels, uint64_t v)
{
        char value[COUNTER_VALUE_STRLEN];

        snprintf(value, sizeof(value), "%" PRIu64, v);
        return prom_add(w, name, type, help, labels, value);
}

static int prom_node(struct prom_writer *w, const struct node_view *nv)
{
        int r = 0;

        if (nv->budget >= 0)
                r = prom_uint(w, "resctrl_rmids_capacity", "gauge",
                              "Monitoring groups the node can have (smallest num_rmids less the "
                              "root's)",
                              NULL, (uint64_t) nv->budget);
        if (nv->per_ctrl >= 0)
                r = prom_uint(w, "resctrl_ctrl_group_mon_groups_capacity", "gauge",
                              "Monitoring groups each control group can have (Arm MPAM: "
                              "num_rmids / num_closids less the control group's own)",
                              NULL, (uint64_t) nv->per_ctrl);
        for (size_t i = 0; r >= 0 && i < nv->n_ctrls; i++)
                r = prom_uint(w, "resctrl_ctrl_group_mon_groups", "gauge",
                              "Monitoring groups in the control group, whoever made them",
                              (const char *const[]){"ctrl_group", nv->ctrls[i].name, NULL},
                              nv->ctrls[i].mon_groups);
        if (r >= 0)
                r = prom_uint(w, "resctrl_rmids_in_use", "gauge",
                              "Groups holding an RMID, whoever made them", NULL, nv->in_use);
        if (r >= 0)
                r = prom_uint(w, "resctrl_groups_owned", "gauge",
                              "Pod groups the hook created and still holds", NULL, nv->owned);
        for (int u = 0; r >= 0 && u < _UNMONITORED_MAX; u++)
                r = prom_uint(w, "resctrl_unmonitored_containers", "gauge",
                              "Recorded containers that run outside their pod's group, by reason",
                              (const char *const[]){"reason", unmonitored_code(u), NULL},
                              nv->unmonitored[u]);
        if (r >= 0)
                r = prom_uint(w, "resctrl_node_unmonitored_threads", "gauge",
                              "Threads of monitored containers outside their pod's groups that "
                              "gc joins (not those in another monitor's group)",
                              NULL, nv->threads - nv->threads_in - nv->threads_elsewhere);
        if (r >= 0 && nv->gc_last_pass > 0)
                r = prom_uint(w, "resctrl_gc_last_pass_timestamp_seconds", "gauge",
                              "When the last gc pass ended (Unix time)", NULL,
                              (uint64_t) nv->gc_last_pass);
        if (r >= 0)
                r = prom_uint(w, "resctrl_watch_running", "gauge",
                              "1 while resctrl-mon-hook watch runs", NULL, nv->watch_running);
        if (r >= 0 && nv->watch_running)
                r = prom_uint(w, "resctrl_watch_events", "gauge",
                              "1 while the running watch receives the kernel's process events",
                              NULL, nv->watch.events);
        for (int by = 0; r >= 0 && nv->watch_running && by < 2; by++)
                r = prom_uint(w, "resctrl_joins_total", "counter",
                              "Threads the running watch put into their pods' groups, at an "
                              "exec event or in its gc passes",
                              (const char *const[]){"by", by == 0 ? "watch" : "gc", NULL},
                              by == 0 ? nv->watch.joins_watch : nv->watch.joins_gc);
        if (r >= 0 && nv->watch_running)
                r = prom_uint(w, "resctrl_watch_lost_events_total", "counter",
                              "Times the kernel dropped process events for the running watch", NULL,
                              nv->watch.lost_events);
        for (size_t i = 0; r >= 0 && nv->abmc && i < nv->mbm_total.n; i++) {
                char dom[16];

                (void) snprintf(dom, sizeof(dom), "%u", nv->mbm_total.ids[i]);
                r = prom_uint(w, "resctrl_mbm_counters", "gauge",
                              "Assignable bandwidth counters of an L3 domain (ABMC)",
                              (const char *const[]){"domain", dom, NULL}, nv->mbm_total.counts[i]);
                if (r >= 0 && i < nv->mbm_available.n)
                        r = prom_uint(w, "resctrl_mbm_counters_available", "gauge",
                                      "Assignable bandwidth counters of an L3 domain not in use",
                                      (const char *const[]){"domain", dom, NULL},
                                      nv->mbm_available.counts[i]);
        }
        for (size_t i = 0; r >= 0 && i < nv->n_outcomes; i++)
                r = prom_uint(w, "resctrl_hook_outcomes_total", "counter",
                              "Hook runs since boot by stage and result",
                              (const char *const[]){"stage", nv->outcomes[i].stage, "result",
                                                    nv->outcomes[i].result, NULL},
                              nv->outcomes[i].count);
        return r;
}

/* The pod's own series: its containers' threads and those outside its groups,
 * its containers waiting for an RMID, the bandwidth counters it lacks. */
static int prom_pod(struct prom_writer *w, const struct node_view *nv, const struct pod_view *pv)
{
        const char *labels[] = {"pod_uid",   pv->uid,
                                "namespace", or_dash(pv->st.namespace),
                                "pod",       or_dash(pv->st.pod_name),
                                NULL};
        int r;

        r = prom_uint(w, "resctrl_pod_threads", "gauge",
                      "Threads of the pod's live monitored containers", labels, pv->threads);
        if (r >= 0)
                r = prom_uint(w, "resctrl_pod_unmonitored_threads", "gauge",
                              "Threads of the pod's monitored containers outside its groups that "
                              "gc joins (not those in another monitor's group)",
                              labels, pv->threads - pv->threads_in - pv->threads_elsewhere);
        if (r >= 0)
                r = prom_uint(w, "resctrl_pod_threads_elsewhere", "gauge",
                              "Threads of the pod's monitored containers in another monitoring "
                              "or control group, which gc never takes",
                              labels, pv->threads_elsewhere);
        for (size_t j = 0; r >= 0 && j < pv->st.n_members; j++) {
                const struct member *m = &pv->st.members[j];

                if (pod_member_is_waiting(m) && member_alive(nv, m))
                        r = prom_uint(w, "resctrl_container_waiting_seconds", "gauge",
                                      "How long a live container left unmonitored for want of an "
                                      "RMID has waited; gc brings it in once one is free",
                                      (const char *const[]){"pod_uid", pv->uid, "namespace",
                                                            or_dash(pv->st.namespace), "pod",
                                                            or_dash(pv->st.pod_name), "container",
                                                            m->id, NULL},
                                      pod_member_waited_sec(m));
        }
        for (size_t j = 0; r >= 0 && j < pv->st.n_groups; j++)
                if (pv->groups[j].bandwidth >= 0)
                        r = prom_uint(w, "resctrl_pod_bandwidth_counters_missing", "gauge",
                                      "Bandwidth events and L3 domains of mbmEvents that the pod's "
                                      "group has no counter for (ABMC)",
                                      (const char *const[]){"pod_uid", pv->uid, "namespace",
                                                            or_dash(pv->st.namespace), "pod",
                                                            or_dash(pv->st.pod_name), "ctrl_group",
                                                            pv->groups[j].g->ctrl, NULL},
                                      pv->groups[j].missing);
        return r;
}

static int prom_readings(struct prom_writer *w, const struct pod_view *pv, bool final)
{
        int r = 0;

        for (size_t j = 0; r >= 0 && j < pv->st.n_groups; j++)
                for (size_t k = 0; r >= 0 && k < pv->groups[j].n_rd; k++)
                        r = prom_reading(w, pv, &pv->groups[j], &pv->groups[j].rd[k], final);
        return r;
}

/* When a finished pod's group went, with the labels of its final series. */
static int prom_finished(struct prom_writer *w, const struct pod_view *pv)
{
        const char *labels[] = {"pod_uid",    pv->uid,
                                "namespace",  or_dash(pv->st.namespace),
                                "pod",        or_dash(pv->st.pod_name),
                                "ctrl_group", pv->st.groups[0].ctrl,
                                NULL};
        int r;

        r = prom_uint(w, "resctrl_pod_final_timestamp_seconds", "gauge",
                      "When the hook removed the pod's group and kept its final counters "
                      "(Unix time)",
                      labels, (uint64_t) pv->removed_ms / 1000);
        return r < 0 ? r : prom_readings(w, pv, true);
}

static int render_prometheus(const struct node_view *nv, char **ret)
{
        _cleanup_(prom_writer_done) struct prom_writer w = {0};
        int r;

        r = prom_node(&w, nv);
        for (size_t i = 0; r >= 0 && i < nv->n_pods; i++)
                r = prom_pod(&w, nv, &nv->pods[i]);
        for (size_t i = 0; r >= 0 && i < nv->n_pods; i++)
                r = prom_readings(&w, &nv->pods[i], false);
        for (size_t i = 0; r >= 0 && i < nv->n_finished; i++)
                r = prom_finished(&w, &nv->finished[i]);
        if (r < 0)
                return r;
        return prom_render(&w, ret);
}

/* Replaces path atomically, readable by all (node_exporter may run as its own
 * user); the temp name does not end in .prom, so the collector skips it. */
static int write_output(const char *path, const char *text)
{
        _cleanup_free_ char *dir_copy = strdup(path), *name_copy = strdup(path), *tmp = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const char *name;

        if (!dir_copy || !name_copy)
                return -ENOMEM;
        name = basename(name_copy);
        if (!name_is_valid(name))
                return -EINVAL;
        if (asprintf(&tmp, ".%s.%d.tmp", name, (int) getpid()) < 0)
                return -ENOMEM;
        dir_fd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        return write_atomic_at(dir_fd, name, tmp, text, strlen(text), 0644);
}

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_PROMETHEUS };

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] status [OPTIONS]\n"
               "\n"
               "Lists the pods with state, their groups, members and unmonitored containers\n"
               "(and how long those waiting for an RMID have waited), their counters and\n"
               "coverage, and the node's RMID budget and hook outcomes. Reads only.\n"
               "\n"
               "Options:\n"
               "  -j, --json                one JSON object\n"
               "  -p, --prometheus          the Prometheus text format\n"
               "  -o, --output FILE         with --prometheus: replace FILE atomically (the\n"
               "                            node_exporter textfile collector)\n"
               "  -h, --help                show this help\n");
}

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_status_args(int argc, char **argv, enum format *ret_format,
                             const char **ret_output)
{
        static const struct option options[] = {
            {"json", no_argument, NULL, 'j'},
            {"prometheus", no_argument, NULL, 'p'},
            {"output", required_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+jpo:h", options, NULL)) >= 0) {
                if (c == 'h') {
                        help();
                        return 0;
                }
                if (c == 'j')
                        *ret_format = FORMAT_JSON;
                else if (c == 'p')
                        *ret_format = FORMAT_PROMETHEUS;
                else if (c == 'o')
                        *ret_output = optarg;
                else
                        return command_bad_option(argv);
        }
        if (optind != argc || (*ret_output && *ret_format != FORMAT_PROMETHEUS)) {
                log_error("usage: status [--json | --prometheus [--output FILE]] (see --help)");
                return -EINVAL;
        }
        return 1;
}

static int emit(const struct node_view *nv, enum format format, const char *output)
{
        _cleanup_free_ char *text = NULL;
        int r;

        if (format == FORMAT_TABLE) {
                print_table(nv);
                return 0;
        }
        if (format == FORMAT_JSON)
                return print_json(nv) < 0 ? log_error_errno(-ENOMEM, "out of memory") : 0;
        r = render_prometheus(nv, &text);
        if (r < 0)
                return log_error_errno(r, "cannot render the metrics");
        if (!output)
                return fputs(text, stdout) < 0 ? -EIO : 0;
        r = write_output(output, text);
        if (r < 0)
                return log_error_errno(r, "cannot write '%s'", output);
        return 0;
}

int status_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_(node_view_done) struct node_view nv = {.proc_fd = -EBADF};
        enum format format = FORMAT_TABLE;
        const char *output = NULL;
        int r;

        r = parse_status_args(argc, argv, &format, &output);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        if (config_init(&config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        if (command_load_config(ctx, &config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        nv.config = &config;
        if (gather(&nv) < 0 || emit(&nv, format, output) < 0)
                return COMMAND_FAILED;
        return COMMAND_OK;
}
