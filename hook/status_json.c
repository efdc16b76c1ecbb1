/* SPDX-License-Identifier: Apache-2.0 */
/* status --json: status_print.h. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "status_print.h"

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
                        a,
                        json_pack("{s:s, s:s, s:s, s:s?, s:s, s:o, s:o, s:o}", "domain", rd->domain,
                                  "name", rd->name, "kind", counter_kind_to_string(rd->kind),
                                  "unit", rd->unit, "state", counter_state_to_string(rd->state),
                                  "value", json_value(ok, &rd->value), "baseline",
                                  json_value(b != NULL, b), "delta",
                                  json_value(node_view_reading_delta(gv->g, rd, &d), &d))) < 0)
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
                node_view_group_path(nv, pv, gv->g, path, sizeof(path));
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

int status_print_json(const struct node_view *nv)
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
