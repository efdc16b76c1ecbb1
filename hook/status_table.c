/* SPDX-License-Identifier: Apache-2.0 */
/* status as a table: status_print.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "status_print.h"
#include "text.h"

/* A string from outside (annotations, the state file, the config) as one
 * table cell: escaped and capped, "-" when absent. */
static const char *cell(char buf[static TEXT_ESCAPED_SIZE], const char *s)
{
        return text_escape(buf, TEXT_ESCAPED_SIZE, or_dash(s));
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

                node_view_group_path(nv, pv, gv->g, path, sizeof(path));
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

/* The node's lines: RMIDs, counters, gc, watch, coverage, outcomes. */
static void print_node(const struct node_view *nv)
{
        char a[TEXT_ESCAPED_SIZE];

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

void status_print_table(const struct node_view *nv)
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
        print_node(nv);
}
