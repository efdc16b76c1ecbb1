/* SPDX-License-Identifier: Apache-2.0 */
/* The readers' model of the node (status, check): what stateDir records,
 * read from one stateDir fd without any pod lock (member files are replaced
 * by rename, never torn), each member's liveness by the one rule
 * (pod_member_is_live), and what resctrl and /proc say of the pods: their
 * groups' counters, their coverage, the node's RMID budget. Built in steps,
 * each reading what its caller needs: node_view_open, then
 * node_view_read_resctrl or node_view_read_coverage, then
 * node_view_read_finished. The model reads only; the printers and the
 * checks say what it means. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "abmc.h"
#include "cgroup.h"
#include "config.h"
#include "counters.h"
#include "outcome.h"
#include "pod.h"
#include "pod_state.h"
#include "proc.h"
#include "rdt.h"
#include "watch_state.h"

#define NODE_VIEW_PODS_MAX 65536 /* more state files than RMIDs on any machine */

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
        struct pod_state st; /* empty when written in an earlier boot */
        char *why;           /* the state file could not be read, or is of an earlier boot */
        bool *live;          /* of each member of st: pod_member_is_live */
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
        int state_fd; /* -EBADF: no stateDir yet */
        struct cgroup_mounts mounts;
        char boot_id[BOOT_ID_LEN + 1]; /* this boot's; "" when unknown */
        uint64_t pid_ns;               /* this process's; 0 when unknown */
        enum rmid_budget rule;         /* NODE or CTRL_GROUP (rdt_budget_rule) */
        int budget;                    /* NODE: groups of the node; -errno when unknown or CTRL */
        int per_ctrl;                  /* CTRL_GROUP: groups of each control group; -errno */
        struct rdt_ctrl_usage *ctrls;  /* CTRL_GROUP: each control group's */
        size_t n_ctrls;
        bool abmc; /* counters must be assigned (mbm_event mode): total and available are read */
        int64_t gc_last_pass; /* wall-clock seconds of the last gc pass's end; 0: none recorded */
        int watch_live;       /* watch_state_is_live: 1, 0, or -errno (-ENOENT: no watch.state) */
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

#define NODE_VIEW_INIT                                                                             \
        {                                                                                          \
                .proc_fd = -EBADF, .state_fd = -EBADF, .mounts = CGROUP_MOUNTS_INIT,               \
                .watch_live = -ENOENT                                                              \
        }

/* Opens /proc and stateDir (config's) and reads what stateDir records: the
 * pods with their members (intake records' containers as waiting members)
 * and each member's liveness, gc's last pass, watch.state, the outcomes.
 * No stateDir is no pod. 0, or -errno (not logged): /proc or stateDir
 * cannot be opened or read; what was read stays. */
int node_view_open(struct node_view *nv, const struct config *config);

/* From resctrl at root_fd: the RMID budget, each pod's groups' counters
 * (under the shared resctrl lock, one pod at a time), each pod's coverage
 * (after letting go), the groups in use. 0, or -errno (logged). */
int node_view_read_resctrl(struct node_view *nv, int root_fd);

/* Each pod's coverage alone, from resctrl at root_fd: what check needs. */
void node_view_read_coverage(struct node_view *nv, int root_fd);

/* The finished pods' final counters from stateDir/finished/ (but those of
 * groups still there), then the node's tallies: groups owned, unmonitored
 * containers by reason, each pod's totals. 0, or -errno (not logged). */
int node_view_read_finished(struct node_view *nv);

void node_view_done(struct node_view *nv);

/* The group's directory: <resctrl>/mon_groups/<uid> or
 * <resctrl>/<ctrl>/mon_groups/<uid>. */
void node_view_group_path(const struct node_view *nv, const struct pod_view *pv,
                          const struct group *g, char *buf, size_t size);

/* The pod of that UID, NULL when stateDir has none. */
const struct pod_view *node_view_pod(const struct node_view *nv, const char *uid);

/* Is the member live and waiting for an RMID or the locks (gc or watch
 * brings it in)? */
bool pod_view_member_waits(const struct pod_view *pv, size_t member);

/* Is the pod's cgroup recorded but not to be seen from here (gc then keeps
 * its groups)? */
bool pod_view_cgroup_unseen(const struct node_view *nv, const struct pod_view *pv);

/* A cumulative reading less its group's baseline: true with *ret; false
 * when unknown (a gauge, no value, no baseline, or the counter went back:
 * its RMID was reset). */
bool node_view_reading_delta(const struct group *g, const struct counter_reading *rd,
                             struct counter_value *ret);
