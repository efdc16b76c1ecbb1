/* SPDX-License-Identifier: Apache-2.0 */
/* status --prometheus: status_print.h. */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "prom.h"
#include "status_print.h"

/* A series' labels as prom_add takes them: "key", "value", ..., NULL. */
struct labels {
        const char *v[13]; /* a pod's three pairs, up to three more, NULL */
        size_t n;
};

static void labels_add(struct labels *l, const char *key, const char *value)
{
        assert(l->n + 2 < ELEMENTSOF(l->v));
        l->v[l->n++] = key;
        l->v[l->n++] = value;
        l->v[l->n] = NULL;
}

/* The labels every pod series starts with. */
static struct labels pod_labels(const struct pod_view *pv)
{
        struct labels l = {0};

        labels_add(&l, "pod_uid", pv->uid);
        labels_add(&l, "namespace", or_dash(pv->st.namespace));
        labels_add(&l, "pod", or_dash(pv->st.pod_name));
        return l;
}

/* A counter file whose text does not parse: its series has no sample, and
 * this one says so, by event, with the labels the series would have. */
static int prom_counter_error(struct prom_writer *w, struct labels l, const char *event)
{
        labels_add(&l, "event", event);
        return prom_add(w, "resctrl_pod_event_error", "gauge",
                        "1 for a counter file of the pod's group whose text is neither a value "
                        "nor one of the kernel's words (status shows it as error); that counter "
                        "has no sample, the group's others do",
                        l.v, "1");
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
        struct labels labels = pod_labels(pv);
        _cleanup_free_ char *name = NULL, *help = NULL;
        char value[COUNTER_VALUE_STRLEN];
        struct counter_value d;
        bool gauge = rd->kind == COUNTER_GAUGE;
        int r;

        labels_add(&labels, "ctrl_group", gv->g->ctrl);
        labels_add(&labels, "domain", rd->domain);
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
        r = counter_value_format(node_view_reading_delta(gv->g, rd, &d) ? &d : &rd->value, value,
                                 sizeof(value));
        if (r < 0)
                return r;
        return prom_add(w, name, gauge ? "gauge" : "counter", help, labels.v, value);
}

static int prom_uint(struct prom_writer *w, const char *name, const char *type, const char *help,
                     const char *const *labels, uint64_t v)
{
        char value[COUNTER_VALUE_STRLEN];

        snprintf(value, sizeof(value), "%" PRIu64, v);
        return prom_add(w, name, type, help, labels, value);
}

/* The running watch's series. */
static int prom_watch(struct prom_writer *w, const struct node_view *nv)
{
        int r;

        r = prom_uint(w, "resctrl_watch_running", "gauge", "1 while resctrl-mon-hook watch runs",
                      NULL, nv->watch_live > 0);
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
        return r;
}

/* ABMC: each L3 domain's counters and those free. */
static int prom_mbm_counters(struct prom_writer *w, const struct node_view *nv)
{
        int r = 0;

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
        return r;
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
                r = prom_watch(w, nv);
        if (r >= 0)
                r = prom_mbm_counters(w, nv);
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
        const struct labels labels = pod_labels(pv);
        int r;

        r = prom_uint(w, "resctrl_pod_threads", "gauge",
                      "Threads of the pod's live monitored containers", labels.v, pv->threads);
        if (r >= 0)
                r = prom_uint(w, "resctrl_pod_unmonitored_threads", "gauge",
                              "Threads of the pod's monitored containers outside its groups that "
                              "gc joins (not those in another monitor's group)",
                              labels.v, pv->threads - pv->threads_in - pv->threads_elsewhere);
        if (r >= 0)
                r = prom_uint(w, "resctrl_pod_threads_elsewhere", "gauge",
                              "Threads of the pod's monitored containers in another monitoring "
                              "or control group, which gc never takes",
                              labels.v, pv->threads_elsewhere);
        for (size_t j = 0; r >= 0 && j < pv->st.n_members; j++) {
                const struct member *m = &pv->st.members[j];
                struct labels container = labels;

                if (!pod_view_member_waits(pv, j))
                        continue;
                labels_add(&container, "container", m->id);
                r = prom_uint(w, "resctrl_container_waiting_seconds", "gauge",
                              "How long a live container left unmonitored for want of an RMID "
                              "has waited; gc brings it in once one is free",
                              container.v, pod_member_waited_sec(m));
        }
        for (size_t j = 0; r >= 0 && j < pv->st.n_groups; j++) {
                struct labels group = labels;

                if (pv->groups[j].bandwidth < 0)
                        continue;
                labels_add(&group, "ctrl_group", pv->groups[j].g->ctrl);
                r = prom_uint(w, "resctrl_pod_bandwidth_counters_missing", "gauge",
                              "Bandwidth events and L3 domains of mbmEvents that the pod's group "
                              "has no counter for (ABMC)",
                              group.v, pv->groups[j].missing);
        }
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
        struct labels labels = pod_labels(pv);
        int r;

        labels_add(&labels, "ctrl_group", pv->st.groups[0].ctrl);
        r = prom_uint(w, "resctrl_pod_final_timestamp_seconds", "gauge",
                      "When the hook removed the pod's group and kept its final counters "
                      "(Unix time)",
                      labels.v, (uint64_t) pv->removed_ms / 1000);
        return r < 0 ? r : prom_readings(w, pv, true);
}

int status_render_prometheus(const struct node_view *nv, char **ret)
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
