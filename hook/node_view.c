/* SPDX-License-Identifier: Apache-2.0 */
/* The readers' model of the node: node_view.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "finished.h"
#include "fsutil.h"
#include "intake.h"
#include "kubepods.h"
#include "log.h"
#include "macro.h"
#include "node_view.h"
#include "oci.h"
#include "pod_threads.h"
#include "statedir.h"

bool node_view_reading_delta(const struct group *g, const struct counter_reading *rd,
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
        t->delta_ok = t->delta_ok && node_view_reading_delta(g, rd, &d) &&
                      counter_value_add(&t->delta, &d) >= 0;
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
        free(pv->live);
        for (size_t i = 0; pv->groups && i < pv->st.n_groups; i++)
                free(pv->groups[i].rd);
        free(pv->groups);
        free(pv->totals);
        free(pv->why);
        pod_state_done(&pv->st);
}

void node_view_group_path(const struct node_view *nv, const struct pod_view *pv,
                          const struct group *g, char *buf, size_t size)
{
        bool root = strcmp(g->ctrl, "/") == 0;

        (void) snprintf(buf, size, "%s/%s%smon_groups/%s", nv->config->resctrl_path,
                        root ? "" : g->ctrl, root ? "" : "/", pv->uid);
}

void node_view_done(struct node_view *nv)
{
        for (size_t i = 0; i < nv->n_pods; i++)
                pod_view_done(&nv->pods[i]);
        free(nv->pods);
        for (size_t i = 0; i < nv->n_finished; i++)
                pod_view_done(&nv->finished[i]);
        free(nv->finished);
        free(nv->outcomes);
        free(nv->ctrls);
        cgroup_mounts_close(&nv->mounts);
        closep(&nv->state_fd);
        closep(&nv->proc_fd);
}

/* Each member's liveness, by the one rule. */
static int pod_view_liveness(const struct node_view *nv, struct pod_view *pv)
{
        pv->live = calloc(pv->st.n_members + 1, sizeof(*pv->live));
        if (!pv->live)
                return -ENOMEM;
        for (size_t i = 0; i < pv->st.n_members; i++) {
                const char *why;

                pv->live[i] = pod_member_is_live(nv->proc_fd, &pv->st.members[i], &why) == 1;
        }
        return 0;
}

/* A pod's view from its member file (and intake records) into pv: 1, 0
 * when it is gone meanwhile, -errno. pv is the caller's to free either
 * way. */
static int load_pod(struct node_view *nv, const char *uid, struct pod_view *pv)
{
        int r;

        snprintf(pv->uid, sizeof(pv->uid), "%s", uid);
        /* Without the pod lock: the file is replaced by rename, never torn. */
        r = pod_state_load(nv->state_fd, uid, &pv->st, &pv->why);
        /* Containers left for gc and watch (intake.h) show as waiting. */
        if ((r >= 0 || r == -ENOENT) &&
            intake_view(nv->state_fd, uid, nv->pid_ns, nv->boot_id, &pv->st) > 0)
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
        return 1;
}

static int add_pod(struct node_view *nv, const char *uid)
{
        struct pod_view *a, *pv;
        int r;

        if (nv->n_pods >= NODE_VIEW_PODS_MAX)
                return -E2BIG;
        a = realloc(nv->pods, (nv->n_pods + 1) * sizeof(*a));
        if (!a)
                return -ENOMEM;
        nv->pods = a;
        pv = &a[nv->n_pods];
        *pv = (struct pod_view){0};
        r = load_pod(nv, uid, pv);
        if (r <= 0) {
                pod_view_done(pv);
                return r;
        }
        nv->n_pods++;
        return pod_view_liveness(nv, pv);
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

                if (node_view_reading_delta(g, &f->rd[i], &d))
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
static int read_finished(struct node_view *nv)
{
        _cleanup_close_ int dir_fd = -EBADF;
        struct finished_pod *f = NULL;
        unsigned bad = 0;
        size_t n = 0;
        int r;

        if (nv->state_fd < 0)
                return 0; /* no hook has run yet */
        r = statedir_open_finished(nv->state_fd, false, &dir_fd);
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

/* gc's last pass, watch.state (read first: check tells whether watch
 * runs even where a member file cannot be read), the pods of stateDir, the
 * outcomes. */
static int read_state_dir(struct node_view *nv)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        struct stat st;
        size_t n = 0;
        int r;

        if (fstatat(nv->state_fd, STATEDIR_GC_LAST_PASS, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode))
                nv->gc_last_pass = st.st_mtim.tv_sec;
        r = watch_state_load(nv->state_fd, &nv->watch);
        nv->watch_live = r < 0 ? r : watch_state_is_live(nv->proc_fd, &nv->watch);
        r = statedir_scan(nv->state_fd, &pods, &n);
        for (size_t i = 0; r >= 0 && i < n; i++)
                if (pods[i].members || pods[i].intake)
                        r = add_pod(nv, pods[i].uid);
        if (r < 0)
                return r;
        return outcome_read_all(nv->state_fd, &nv->outcomes, &nv->n_outcomes);
}

int node_view_open(struct node_view *nv, const struct config *config)
{
        int r;

        nv->config = config;
        r = proc_open(&nv->proc_fd);
        if (r < 0)
                return r;
        if (proc_boot_id(nv->proc_fd, nv->boot_id) < 0)
                nv->boot_id[0] = '\0';
        if (proc_pid_ns(nv->proc_fd, &nv->pid_ns) < 0)
                nv->pid_ns = 0;
        (void) cgroup_mounts_open(nv->proc_fd, &nv->mounts); /* without: the inits' threads */
        r = statedir_open(config->state_dir, false, &nv->state_fd);
        if (r == -ENOENT)
                return 0; /* no hook has run yet */
        return r < 0 ? r : read_state_dir(nv);
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

/* A pod's coverage, a walk of every thread of its containers: a snapshot
 * that needs no lock. */
static void cover_pod(struct node_view *nv, int root_fd, struct pod_view *pv)
{
        struct pod_coverage cover;

        pod_coverage(nv->proc_fd, root_fd, &nv->mounts, pv->uid, &pv->st, pv->live, &cover);
        pv->threads = cover.threads;
        pv->threads_in = cover.in;
        pv->threads_elsewhere = cover.elsewhere;
        nv->threads += pv->threads;
        nv->threads_in += pv->threads_in;
        nv->threads_elsewhere += pv->threads_elsewhere;
}

void node_view_read_coverage(struct node_view *nv, int root_fd)
{
        for (size_t i = 0; i < nv->n_pods; i++)
                cover_pod(nv, root_fd, &nv->pods[i]);
}

static void read_budget(struct node_view *nv, int root_fd)
{
        unsigned budget;
        int r;

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
}

/* Reads every group's counters and counts the groups in use, each pod's and
 * the count under the kernel's shared lock, so that no cooperating tool
 * changes a group meanwhile; taken per pod, so that a hook waiting to
 * change one waits for one pod's reads at most. The pod's coverage is read
 * after. */
static int lock_shared(const struct node_view *nv, int root_fd)
{
        int r = rdt_lock_shared(root_fd, nv->config->lock_timeout_ms);

        if (r < 0)
                return log_error_errno(r, "cannot take the resctrl lock within %u ms",
                                       nv->config->lock_timeout_ms);
        return 0;
}

/* A pod's groups' counters, under the shared lock. */
static int read_pod_groups(struct node_view *nv, int root_fd, struct pod_view *pv)
{
        _cleanup_(rdt_unlockp) int locked = -EBADF;
        int r = lock_shared(nv, root_fd);

        if (r < 0)
                return r;
        locked = root_fd;
        for (size_t j = 0; j < pv->st.n_groups; j++)
                read_group(nv, root_fd, pv->uid, &pv->groups[j]);
        return 0;
}

/* The groups in use, and each control group's, under the shared lock. */
static int count_groups(struct node_view *nv, int root_fd)
{
        _cleanup_(rdt_unlockp) int locked = -EBADF;
        int r = lock_shared(nv, root_fd);

        if (r < 0)
                return r;
        locked = root_fd;
        r = rdt_groups_count(root_fd, &nv->in_use);
        if (r >= 0 && nv->rule == RMID_BUDGET_CTRL_GROUP)
                r = rdt_mon_groups_count(root_fd, pod_uid_is_canonical, &nv->ctrls, &nv->n_ctrls);
        if (r < 0)
                return log_error_errno(r, "cannot list the groups");
        return 0;
}

int node_view_read_resctrl(struct node_view *nv, int root_fd)
{
        int r;

        read_budget(nv, root_fd);
        for (size_t i = 0; i < nv->n_pods; i++) {
                r = read_pod_groups(nv, root_fd, &nv->pods[i]);
                if (r < 0)
                        return r;
                cover_pod(nv, root_fd, &nv->pods[i]);
        }
        return count_groups(nv, root_fd);
}

int node_view_read_finished(struct node_view *nv)
{
        int r = read_finished(nv);

        if (r < 0)
                return r;
        for (size_t i = 0; i < nv->n_pods; i++) {
                struct pod_view *pv = &nv->pods[i];

                for (size_t j = 0; j < pv->st.n_groups; j++)
                        nv->owned += pv->st.groups[j].owned && pv->groups[j].error != -ENOENT;
                for (size_t j = 0; j < pv->st.n_members; j++)
                        if (!pv->st.members[j].monitored)
                                nv->unmonitored[unmonitored_of(pv->st.members[j].reason)]++;
                r = pod_totals(pv);
                if (r < 0)
                        return r;
        }
        return 0;
}

const struct pod_view *node_view_pod(const struct node_view *nv, const char *uid)
{
        for (size_t i = 0; i < nv->n_pods; i++)
                if (strcmp(nv->pods[i].uid, uid) == 0)
                        return &nv->pods[i];
        return NULL;
}

bool pod_view_member_waits(const struct pod_view *pv, size_t member)
{
        return pv->live[member] && pod_member_is_waiting(&pv->st.members[member]);
}

bool pod_view_cgroup_unseen(const struct node_view *nv, const struct pod_view *pv)
{
        enum pod_cgroup state;

        return pv->st.has_pod_cgroup &&
               (kubepods_recorded_cgroup(&nv->mounts, &pv->st.pod_cgroup, &state) < 0 ||
                state == POD_CGROUP_UNSEEN);
}
