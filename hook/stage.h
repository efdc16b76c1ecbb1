/* SPDX-License-Identifier: Apache-2.0 */
/* What the hook does at each stage, for one container of one pod. */
#pragma once

#include <stdint.h>

#include "cgroup.h"
#include "config.h"
#include "oci.h"

/* How a stage ended for a container: logged as "outcome=<name>" and counted
 * under its name (outcome.h), the words operators see. */
enum hook_outcome {
        OUTCOME_NOT_OURS, /* not a pod's container: neither logged nor counted */
        OUTCOME_ERROR,
        OUTCOME_CONFIG_ERROR,
        OUTCOME_FILTERED,
        OUTCOME_RUNTIME_MONITORS,
        OUTCOME_ALREADY_RECORDED,
        OUTCOME_MONITORED,
        OUTCOME_UNMONITORED,
        OUTCOME_WAITING, /* recorded, waiting for the locks: gc or watch brings it in */
        OUTCOME_TIMEOUT, /* the watchdog ended the run (watchdog.h) */
        OUTCOME_NOT_RECORDED,
        OUTCOME_MEMBER_DROPPED,
        OUTCOME_GROUP_REMOVED,
        OUTCOME_GROUP_KEPT,
        OUTCOME_GROUP_LINGERS,
        _OUTCOME_MAX,
};

/* "monitored", "group lingers", ...; NULL for OUTCOME_NOT_OURS. */
const char *hook_outcome_name(enum hook_outcome o);

struct hook_ctx {
        const struct config *config;
        const struct oci_state *state;
        const struct pod_identity *pod;
        int proc_fd;
        int64_t deadline; /* now_usec() time by which every wait of the run gives up */
        /* The caller's views of the cgroups (adopt's); NULL: a stage reads
         * what it needs itself. */
        const struct cgroup_mounts *cgroups;
        /* Adopt's: the start time its runtime recorded for an init that has
         * run for a while. The init is taken as gc takes any thread
         * (pod_member_rejoin), pinned, as that process, and only from its
         * control group's default monitoring group. 0: createRuntime's
         * paused, new init, whose every thread goes in. */
        uint64_t running_since;
};

/* createRuntime/prestart: put the container's init into the pod's monitoring
 * group and record it as a member. 0 when done or deliberately not done (the
 * container then starts unmonitored; *ret_outcome says why); -errno on an
 * error, already logged, which failurePolicy turns into an exit status. */
int stage_create(const struct hook_ctx *ctx, enum hook_outcome *ret_outcome);

/* poststop: drop the container from the pod's members and remove the group
 * when its last member is gone. Errors are logged and returned, but the
 * caller exits 0 whatever happens. */
int stage_poststop(const struct hook_ctx *ctx, enum hook_outcome *ret_outcome);
