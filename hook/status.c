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
#include "node_view.h"
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
                                       pv->live[j] ? "alive" : "gone");
                }
        }
        for (size_t j = 0; j < pv->st.n_members; j++) {
                const struct member *m = &pv->st.members[j];

                bool alive = pv->live[j];

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
        if (nv->watch_live > 0)
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
                               "delta", json_value(group_reading_delta(gv->g, rd, &d), &d))) < 0)
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
                            json_array_append_new(members,
                                                  json_pack("{s:s, s:i, s:b}", "id", m->id, "pid",
                                                            m->pid, "alive", pv->live[j])) < 0)
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

                bool alive = pv->live[j];

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
        if (nv->watch_live <= 0)
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
        r = counter_value_format(group_reading_delta(gv->g, rd, &d) ? &d : &rd->value, value,
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
                              "1 while resctrl-mon-hook watch runs", NULL, nv->watch_live > 0);
        if (r >= 0 && nv->watch_live > 0)
                r = prom_uint(w, "resctrl_watch_events", "gauge",
                              "1 while the running watch receives the kernel's process events",
                              NULL, nv->watch.events);
        for (int by = 0; r >= 0 && nv->watch_live > 0 && by < 2; by++)
                r = prom_uint(w, "resctrl_joins_total", "counter",
                              "Threads the running watch put into their pods' groups, at an "
                              "exec event or in its gc passes",
                              (const char *const[]){"by", by == 0 ? "watch" : "gc", NULL},
                              by == 0 ? nv->watch.joins_watch : nv->watch.joins_gc);
        if (r >= 0 && nv->watch_live > 0)
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
static int prom_pod(struct prom_writer *w, const struct pod_view *pv)
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

                if (pod_view_member_waits(pv, j))
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
                r = prom_pod(&w, &nv->pods[i]);
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

/* The whole model, each failure logged. */
static int gather(struct node_view *nv, const struct config *config)
{
        _cleanup_close_ int root_fd = -EBADF;
        int r;

        r = node_view_open(nv, config);
        if (r < 0 && nv->proc_fd < 0)
                return log_error_errno(r, "cannot open /proc");
        if (r < 0)
                return log_error_errno(r, "cannot read the state directory '%s'",
                                       config->state_dir);
        r = rdt_open(config->resctrl_path, config->require_resctrl_fs, &root_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open resctrl at '%s'", config->resctrl_path);
        r = node_view_read_resctrl(nv, root_fd);
        if (r < 0)
                return r;
        r = node_view_read_finished(nv);
        if (r == -ENOMEM)
                return log_error_errno(r, "out of memory");
        if (r < 0)
                return log_error_errno(r, "cannot read the final counters in '%s/%s'",
                                       config->state_dir, STATEDIR_FINISHED);
        return 0;
}

int status_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;
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
        if (gather(&nv, &config) < 0 || emit(&nv, format, output) < 0)
                return COMMAND_FAILED;
        return COMMAND_OK;
}
