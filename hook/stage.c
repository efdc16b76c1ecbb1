/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "counters.h"
#include "filter.h"
#include "fsutil.h"
#include "intake.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "outcome.h"
#include "pod_bandwidth.h"
#include "pod_ownership.h"
#include "pod_state.h"
#include "pod_threads.h"
#include "proc.h"
#include "rdt.h"
#include "runtime_cgroup.h"
#include "stage.h"
#include "statedir.h"
#include "string_table.h"
#include "text.h"
#include "watchdog.h"

/* What createRuntime learns of the container's cgroups, before any lock. */
struct container_cgroups {
        bool has_cgroup;
        struct cgroup_ref cgroup; /* the one its runtime made for it */
        bool has_pod;
        struct cgroup_ref pod; /* the nearest above it that names the pod */
};

static const char *const hook_outcome_names[_OUTCOME_MAX] = {
    [OUTCOME_NOT_OURS] = NULL,
    [OUTCOME_ERROR] = "error",
    [OUTCOME_CONFIG_ERROR] = "config error",
    [OUTCOME_FILTERED] = "filtered",
    [OUTCOME_RUNTIME_MONITORS] = "runtime monitors it",
    [OUTCOME_ALREADY_RECORDED] = "already recorded",
    [OUTCOME_MONITORED] = "monitored",
    [OUTCOME_UNMONITORED] = "unmonitored",
    [OUTCOME_WAITING] = "waiting",
    [OUTCOME_TIMEOUT] = "timeout",
    [OUTCOME_NOT_RECORDED] = "not recorded",
    [OUTCOME_MEMBER_DROPPED] = "member dropped",
    [OUTCOME_GROUP_REMOVED] = "group removed",
    [OUTCOME_GROUP_KEPT] = "group kept",
    [OUTCOME_GROUP_LINGERS] = "group lingers",
};

DEFINE_STRING_TABLE_TO_STRING(hook_outcome_name, hook_outcome_names, enum hook_outcome)

/* Opens resctrl and stateDir for the run, within its deadline. */
static int env_open(const struct hook_ctx *ctx, struct pod_env *e)
{
        int r = pod_env_open(ctx->config, ctx->proc_fd, e);

        if (r < 0)
                pod_env_close(e);
        e->deadline = ctx->deadline;
        return r;
}

/* Locks and loads the pod. -ETIMEDOUT, not logged, when its lock is busy
 * past the run's deadline. */
static int session_open(const struct hook_ctx *ctx, struct pod_env *e, struct pod_session *s)
{
        const char *uid = ctx->pod->uid;
        _cleanup_free_ char *why = NULL;
        int r;

        r = pod_session_lock(e, uid, pod_env_wait_ms(e), s);
        if (r == -ETIMEDOUT)
                return r;
        if (r < 0) /* a read-only or full stateDir, a symlink planted there */
                return log_error_errno(r, "cannot lock pod %s in stateDir '%s'", uid,
                                       ctx->config->state_dir);
        (void) pod_state_remove_temp(e->state_fd, uid); /* a save killed before its rename */
        r = pod_session_load(s, &why);
        if (r == -EBADMSG)
                return log_error_errno(r, "state of pod %s is invalid (%s)", uid, why);
        if (r < 0)
                return log_error_errno(r, "cannot load state of pod %s", uid);
        return 0;
}

static int session_close(struct pod_session *s)
{
        int r = pod_session_close(s);

        return r < 0 ? r : 0;
}

/* The control group the container's init is in: the kernel says so in
 * /proc/<pid>/cpu_resctrl_groups where it has that file; otherwise the runtime
 * put it where config.json's linux.intelRdt says; otherwise it is the root. */
static int resolve_ctrl_group(const struct hook_ctx *ctx, const struct oci_intel_rdt *intel_rdt,
                              char **ret)
{
        char *ctrl = NULL;
        int r;

        r = rdt_task_ctrl_group(ctx->proc_fd, ctx->state->pid, &ctrl);
        if (r >= 0) {
                *ret = ctrl;
                return 0;
        }
        if (r != -ENOENT && r != -ENODATA) {
                log_error_errno(r, "cannot read the control group of pid %d", ctx->state->pid);
                return r;
        }

        ctrl = strdup(intel_rdt->present ? intel_rdt->ctrl_group : "/");
        if (!ctrl)
                return log_error_errno(-ENOMEM, "out of memory");
        *ret = ctrl;
        return 0;
}

/* Reads linux.intelRdt and linux.cgroupsPath from the bundle. A bundle
 * without config.json (or a state without a bundle) simply has neither. */
static int read_bundle(const struct hook_ctx *ctx, struct oci_bundle *ret)
{
        _cleanup_free_ char *why = NULL;
        int r;

        *ret = (struct oci_bundle){0};
        if (!ctx->state->bundle)
                return 0;
        r = oci_bundle_read(ctx->state->bundle, ctx->state->id, ret, &why);
        if (r == -ENOENT)
                return 0;
        if (r == -EINVAL)
                return log_error_errno(r, "bundle '%s': %s", ctx->state->bundle, why);
        if (r < 0)
                return log_error_errno(r, "cannot read config.json of bundle '%s'",
                                       ctx->state->bundle);
        return 0;
}

/* The cgroup the runtime has just made for the paused init, checked against
 * linux.cgroupsPath, and the pod's above it. What cannot be found is not
 * recorded: gc then joins the container's processes, and looks for the
 * pod's cgroup, as it did before such records. */
static void find_cgroups(const struct hook_ctx *ctx, const char *cgroups_path,
                         struct container_cgroups *ret)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts mounts = CGROUP_MOUNTS_INIT;
        const struct cgroup_mounts *views = ctx->cgroups ? ctx->cgroups : &mounts;
        char expected[CGROUP_PATH_MAX], shown[TEXT_ESCAPED_SIZE];
        bool matched;
        int r;

        *ret = (struct container_cgroups){0};
        if (cgroups_path && runtime_cgroup_path(cgroups_path, expected) < 0) {
                log_warning("linux.cgroupsPath '%s' of container %s is neither a path nor "
                            "slice:prefix:name; ignored",
                            text_escape(shown, sizeof(shown), cgroups_path), ctx->state->id);
                cgroups_path = NULL;
        }
        /* A runtime's hook in the initial cgroup namespace, the common case,
         * reads /proc's paths as they are, without mountinfo. */
        if (!ctx->cgroups && cgroup_in_initial_ns(ctx->proc_fd))
                cgroup_mounts_as_printed(&mounts);
        else if (!ctx->cgroups)
                (void) cgroup_mounts_open(ctx->proc_fd, &mounts);
        r = runtime_container_cgroup(ctx->proc_fd, views, ctx->state->pid,
                                     cgroups_path ? expected : NULL, &ret->cgroup, &matched);
        if (r == -ENOENT) /* none of its own: its init is all there is */
                return;
        if (r == -EXDEV) {
                log_warning("cannot place the cgroups of pid %d in the cgroup mounts seen from "
                            "here (check: node-cgroups); not recorded",
                            ctx->state->pid);
                return;
        }
        if (r < 0) {
                log_warning_errno(r, "cannot read the cgroups of pid %d; not recorded",
                                  ctx->state->pid);
                return;
        }
        if (cgroups_path && !matched)
                log_warning("pid %d is in no cgroup that linux.cgroupsPath '%s' names; recorded "
                            "%s:%s",
                            ctx->state->pid, text_escape(shown, sizeof(shown), cgroups_path),
                            cgroup_hierarchy_name(&ret->cgroup), ret->cgroup.path);
        ret->has_cgroup = true;
        ret->has_pod = runtime_pod_cgroup(&ret->cgroup, ctx->pod->uid, &ret->pod) == 1;
}

/* Is m another live member of (pod, ctrl) than the container of ctx, whose
 * threads a group made again must get back? */
static bool rejoins(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                    const struct member *m)
{
        const char *why;

        /* A member that is not live: its poststop or gc drops it. */
        return (m->monitored || pod_member_is_pending(m)) && strcmp(m->ctrl, ctrl) == 0 &&
               strcmp(m->id, ctx->state->id) != 0 &&
               pod_member_is_live(s->env->proc_fd, m, &why) == 1;
}

/* Puts the inits of the other live members of (pod, ctrl) back into a group
 * that had to be made again: someone removed it, which moved them out, or a
 * killed run never made it. Under the resctrl lock, in turns of its budget:
 * 0, or -ENOLCK when it could not be taken again after one (logged). */
static int rejoin_inits(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl)
{
        for (size_t i = 0; i < s->st.n_members; i++) {
                if (!rejoins(ctx, s, ctrl, &s->st.members[i]))
                        continue;
                if (pod_env_take_turn(s->env) == -ENOLCK)
                        return -ENOLCK;
                (void) pod_member_rejoin(s, &s->st.members[i]);
        }
        return 0;
}

/* The rest of those members' threads, all of their cgroups', within the
 * run's deadline: the joins take the resctrl lock for themselves. What is
 * left, or could not have the lock in time, is the next pass's (said). */
static void rejoin_cgroups(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts mounts = CGROUP_MOUNTS_INIT;
        _cleanup_free_ pid_t *in = NULL;
        size_t n_in;

        (void) cgroup_mounts_open(ctx->proc_fd, &mounts); /* without: the inits alone */
        if (pod_threads_group_tasks(s->env->root_fd, ctrl, s->uid, &in, &n_in) < 0)
                return;
        for (size_t i = 0; i < s->st.n_members; i++) {
                unsigned joined, elsewhere;

                if (rejoins(ctx, s, ctrl, &s->st.members[i]) &&
                    pod_member_join_cgroup(s, &mounts, &s->st.members[i], in, n_in, &joined,
                                           &elsewhere) == -ENOLCK)
                        return;
        }
}

/* A group just made, with ABMC: keeps the counters of the events mbmEvents
 * wants, counts what it got (outcome bandwidth.full, .partial or .none) and
 * says what it lacks. Costs one failed lookup without ABMC. */
static void fit_bandwidth(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl)
{
        struct abmc_assignments a;
        enum abmc_bandwidth bw;
        char missing[512];

        if (pod_bandwidth_fit(s, ctrl, &a) <= 0)
                return;
        bw = abmc_bandwidth(&a, ctx->config->mbm_events);
        (void) outcome_count(s->env->state_fd, "bandwidth", abmc_bandwidth_name(bw));
        if (bw == ABMC_FULL)
                return;
        pod_bandwidth_missing(s, &a, missing, sizeof(missing));
        log_warning("group of pod %s in %s counts %s bandwidth: no hardware counter was left "
                    "for %s (info/L3_MON/available_mbm_cntrs); gc assigns them as others free up",
                    ctx->pod->uid, ctrl_display(ctrl), bw == ABMC_NONE ? "no" : "only part of its",
                    missing);
}

/* RMIDs freed lately wait in limbo until their cache occupancy drops below
 * max_threshold_occupancy, which the kernel checks every second; mkdir says
 * EBUSY meanwhile. Worth one such check, no more (on a busy cache they may
 * stay for long, and the pod lock is held): steps of LIMBO_STEP_MS, the
 * resctrl lock let go meanwhile, for LIMBO_WAIT_MS at most, and only while
 * the run keeps LIMBO_SPARE_MS for what follows (the move, the saves). */
#define LIMBO_STEP_MS 100
#define LIMBO_WAIT_MS 1100
#define LIMBO_SPARE_MS 200

/* Waits a step for limbo to drain, and takes the resctrl lock again: true
 * then; false when the wait is over (since started) or the run has no time
 * for another try. */
static bool wait_for_limbo(const struct pod_env *e, int64_t started)
{
        int64_t next = deadline_after_ms(LIMBO_STEP_MS);

        if (e->deadline == 0 || next > usec_after_ms(started, LIMBO_WAIT_MS) ||
            usec_after_ms(next, LIMBO_SPARE_MS) > e->deadline)
                return false;
        rdt_unlock(e->root_fd);
        (void) nanosleep(&(struct timespec){.tv_nsec = (long) LIMBO_STEP_MS * 1000 * 1000}, NULL);
        return pod_env_lock_resctrl(e) >= 0;
}

/* Was a group of ctrl removed lately (statedir.h)? *ret_ms: how long ago. */
static bool freed_lately(const struct pod_session *s, const char *ctrl, int64_t *ret_ms)
{
        return statedir_freed_age_ms(s->env->state_fd, ctrl, ret_ms) >= 0 &&
               *ret_ms < (int64_t) STATEDIR_FREED_RECENT_SEC * 1000;
}

/* Is mkdir's r (out of RMIDs) worth a wait for limbo? EBUSY: every free
 * RMID is in limbo. ENOSPC where each control group has PMGs of its own
 * (Arm MPAM): one of ctrl's in limbo says so too, which a group of ctrl
 * removed lately makes likely. */
static bool limbo_may_end(const struct pod_session *s, const char *ctrl, int r)
{
        int64_t ms;

        if (r == -EBUSY)
                return true;
        return r == -ENOSPC &&
               rdt_budget_rule(s->env->config->rmid_budget) == RMID_BUDGET_CTRL_GROUP &&
               freed_lately(s, ctrl, &ms);
}

/* "the root control group", "control group 'gold'": for a log line. */
static const char *ctrl_named(const char *ctrl, char buf[static TEXT_ESCAPED_SIZE + 16])
{
        char safe[TEXT_ESCAPED_SIZE];

        if (strcmp(ctrl, "/") == 0)
                return ctrl_display(ctrl);
        (void) snprintf(buf, TEXT_ESCAPED_SIZE + 16, "control group '%s'",
                        text_escape(safe, sizeof(safe), ctrl));
        return buf;
}

/* The other control groups' free monitoring groups, for a line: "gold 2,
 * silver 1"; "" when none has one. */
static void room_elsewhere(const struct rdt_ctrl_usage *use, size_t n, const char *ctrl,
                           unsigned per_ctrl, char *buf, size_t size)
{
        size_t len = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n && len < size; i++)
                if (strcmp(use[i].name, ctrl) != 0 && use[i].mon_groups < per_ctrl)
                        len += (size_t) snprintf(
                            buf + len, size - len, "%s%s %u", len ? ", " : "",
                            strcmp(use[i].name, "/") == 0 ? "the root control group" : use[i].name,
                            per_ctrl - use[i].mon_groups);
}

/* mkdir found no RMID in ctrl where each control group has PMGs of its own
 * (Arm MPAM): says that ctrl is full (the root as any), what it holds, and
 * whether other control groups, the node, have room, which a pod of ctrl
 * cannot use. The caller holds the resctrl lock. */
static void say_ctrl_full(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                          const char *status)
{
        _cleanup_free_ struct rdt_ctrl_usage *use = NULL;
        char name[TEXT_ESCAPED_SIZE + 16], room[512], limbo[160] = "";
        const struct rdt_ctrl_usage *u = NULL;
        unsigned per_ctrl = 0;
        size_t n = 0;
        int64_t ms;

        if (rdt_mon_groups_per_ctrl(s->env->root_fd, &per_ctrl) < 0 ||
            rdt_mon_groups_count(s->env->root_fd, pod_uid_is_canonical, &use, &n) < 0) {
                log_warning("cannot create group for pod %s: %s has no monitoring group left (%s); "
                            "container starts unmonitored",
                            ctx->pod->uid, ctrl_named(ctrl, name), status ? status : "?");
                return;
        }
        for (size_t i = 0; i < n && !u; i++)
                u = strcmp(use[i].name, ctrl) == 0 ? &use[i] : NULL;
        room_elsewhere(use, n, ctrl, per_ctrl, room, sizeof(room));
        if (freed_lately(s, ctrl, &ms))
                (void) snprintf(limbo, sizeof(limbo),
                                "; a group there was removed %lld ms ago, its PMG in limbo until "
                                "its cache lines age out: watch brings the container in once it "
                                "is free",
                                (long long) ms);
        log_warning("cannot create group for pod %s: %s is full (%s): %u of %u monitoring groups "
                    "in use, %u of them pods' groups (per control group, as on Arm MPAM: its "
                    "PMGs less its own)%s; %s%s%s%s; container starts unmonitored",
                    ctx->pod->uid, ctrl_named(ctrl, name), status ? status : "?",
                    u ? u->mon_groups : 0, per_ctrl, u ? u->pod_groups : 0,
                    u && u->mon_groups < per_ctrl ? ", the rest of its PMGs in limbo" : "",
                    room[0] ? "the node has room, free monitoring groups in other control "
                              "groups ("
                            : "no other control group has room either",
                    room[0] ? room : "", room[0] ? "), which a pod's group cannot use" : "", limbo);
}

/* Fewer groups than the node has RMIDs for: an ENOSPC then is one control
 * group's (Arm MPAM, though rmidBudget says node). */
static bool node_has_room(const struct pod_session *s)
{
        unsigned budget, used;

        return rdt_rmid_budget(s->env->root_fd, &budget) >= 0 &&
               rdt_groups_count(s->env->root_fd, &used) >= 0 && used < budget;
}

/* Claims the pod's group in ctrl (pod_ownership.h), making it if missing; the caller
 * holds the resctrl lock (and still does on return, unless taking it again
 * after a wait for limbo failed). 1 when made, 0 when it was there, -errno
 * otherwise. For what only leaves the container unmonitored (out of RMIDs,
 * control group gone) it also sets *ret_reason. */
static int make_group(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                      char **ret_reason)
{
        const char *uid = ctx->pod->uid;
        _cleanup_free_ char *status = NULL;
        unsigned budget = 0;
        int r;

        for (int64_t started = now_usec();;) {
                r = pod_ownership_claim(s, ctrl, &status);
                if (!limbo_may_end(s, ctrl, r) || !wait_for_limbo(s->env, started))
                        break;
                free(TAKE_PTR(status));
        }
        if (r == -ENOSPC &&
            (rdt_budget_rule(s->env->config->rmid_budget) == RMID_BUDGET_CTRL_GROUP ||
             node_has_room(s))) {
                say_ctrl_full(ctx, s, ctrl, status);
                (void) pod_unmonitored_reason(UNMONITORED_ENOSPC, status, ret_reason);
        } else if (r == -ENOSPC || r == -EBUSY) {
                (void) rdt_rmid_budget(s->env->root_fd, &budget);
                log_warning("cannot create group for pod %s in %s: %s (%s; the node's %u groups "
                            "at most); container starts unmonitored",
                            uid, ctrl_display(ctrl), strerror(-r), status ? status : "?", budget);
                (void) pod_unmonitored_reason(r == -EBUSY ? UNMONITORED_EBUSY : UNMONITORED_ENOSPC,
                                              status, ret_reason);
        } else if (r == -ENOENT) {
                log_warning("control group '%s' does not exist; container starts unmonitored",
                            ctrl);
                (void) pod_unmonitored_reason(UNMONITORED_CTRL_MISSING, ctrl, ret_reason);
        }
        return r;
}

/* Moves createRuntime's paused init, every thread of it, into the group;
 * the caller holds the resctrl lock. 1 when the container is monitored; 0
 * when its task is in another control group (*ret_reason set); -errno on
 * errors. */
static int move_new_init(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                         char **ret_reason)
{
        const char *uid = ctx->pod->uid;
        pid_t pid = ctx->state->pid;
        _cleanup_free_ char *status = NULL;
        int r;

        r = rdt_mon_group_add_process(s->env->root_fd, ctx->proc_fd, ctrl, uid, pid, &status);
        if (r >= 0)
                return 1;
        if (r != -EINVAL && rdt_mon_group_has_task(s->env->root_fd, ctrl, uid, pid) == 1) {
                /* The leader moved, some thread did not: it is monitored, and
                 * recorded so, else nothing would ever remove the group. */
                log_warning_errno(r, "moved pid %d into the group of pod %s, but not every thread",
                                  pid, uid);
                return 1;
        }
        if (r != -EINVAL)
                return log_error_errno(r, "cannot move pid %d into the group of pod %s (%s)", pid,
                                       uid, status ? status : "?");
        log_warning("pid %d is not in %s (%s); container starts unmonitored", pid,
                    ctrl_display(ctrl), status ? status : "?");
        r = pod_unmonitored_reason(UNMONITORED_CLASS_MISMATCH, status, ret_reason);
        return r < 0 ? r : 0;
}

/* Adopt's init is in another monitor's group, or another control group,
 * where it stays: 0 with *ret_reason set, or -ENOMEM. */
static int left_elsewhere(const struct hook_ctx *ctx, const char *ctrl, char **ret_reason)
{
        int r;

        log_warning("pid %d is in another monitoring or control group than the default one of "
                    "%s (another monitor's); left there, container %s not monitored",
                    ctx->state->pid, ctrl_display(ctrl), ctx->state->id);
        r = pod_unmonitored_reason(UNMONITORED_ELSEWHERE, NULL, ret_reason);
        return r < 0 ? r : 0;
}

/* Moves adopt's running init into the group as gc moves any thread
 * (pod_member_rejoin): pinned as the process its runtime recorded, so that
 * a pid reused while the run waited for the locks is never moved, and only
 * from its control group's default monitoring group: what another monitor
 * placed stays where it is. Its other threads join after
 * (adopt_container). The caller holds the resctrl lock. 1 when monitored;
 * 0 when its init is in another monitoring or control group (*ret_reason
 * set); -ESRCH when it exited; -errno. */
static int move_running_init(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                             char **ret_reason)
{
        int r = pod_member_rejoin(s, pod_state_find_member(&s->st, ctx->state->id));

        return r == 0 ? left_elsewhere(ctx, ctrl, ret_reason) : r;
}

/* Before any mkdir for adopt's init: where it is (pod_member_can_join), so
 * that one another monitor placed costs no group made and removed again at
 * every adopt, nor a wait for an RMID it would never take. 1 to go on; 0
 * when it is elsewhere (*ret_reason set); -ESRCH when it exited. The write
 * (move_running_init) checks again. */
static int running_init_can_join(const struct hook_ctx *ctx, struct pod_session *s,
                                 const char *ctrl, char **ret_reason)
{
        int r = pod_member_can_join(s, pod_state_find_member(&s->st, ctx->state->id));

        if (r == 0)
                return left_elsewhere(ctx, ctrl, ret_reason);
        return r == -ESRCH ? r : 1; /* another failure: the write tells */
}

/* Moves the init into the group (move_new_init, move_running_init); a group
 * this call created and could not use is removed again. */
static int move_process(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                        bool created, char **ret_reason)
{
        int r = ctx->running_since != 0 ? move_running_init(ctx, s, ctrl, ret_reason)
                                        : move_new_init(ctx, s, ctrl, ret_reason);

        if (r <= 0 && created &&
            rdt_mon_group_is_empty(s->env->root_fd, ctx->proc_fd, ctrl, ctx->pod->uid) == 1 &&
            rdt_mon_group_remove(s->env->root_fd, ctrl, ctx->pod->uid) >= 0)
                (void) statedir_mark_freed(s->env->state_fd, ctrl); /* its RMID is in limbo */
        return r;
}

/* Claims the pod's group in ctrl, making it if missing, and moves the init's
 * threads into it, under the resctrl lock; a group made again gets the
 * other members' threads back, their inits first. 1 when the container is
 * monitored; 0 when it cannot be (out of RMIDs, class mismatch, another
 * monitor's group, control group gone), with *ret_reason; -ETIMEDOUT or
 * -ENOLCK when the resctrl lock was not had, or not had again, before the
 * run's deadline (not logged); -ESRCH when adopt's init exited (not
 * logged); -errno on errors. */
static int join_group(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl,
                      bool recorded, bool interrupted, char **ret_reason)
{
        _cleanup_(rdt_unlockp) int locked = -EBADF;
        int created, moved, r;

        r = rdt_lock(s->env->root_fd, pod_env_wait_ms(s->env));
        if (r == -ETIMEDOUT)
                return r;
        if (r < 0)
                return log_error_errno(r, "cannot take the resctrl lock");
        locked = s->env->root_fd;

        if (ctx->running_since != 0) {
                r = running_init_can_join(ctx, s, ctrl, ret_reason);
                if (r <= 0)
                        return r;
        }
        created = make_group(ctx, s, ctrl, ret_reason);
        if (created < 0)
                return *ret_reason ? 0 : created;
        if (created)
                fit_bandwidth(ctx, s, ctrl);
        if (created || !recorded)
                pod_ownership_record_baseline(s, ctrl);
        if (created && recorded) {
                if (interrupted)
                        log_info("group of pod %s in %s was not made by a createRuntime that "
                                 "did not finish; made it",
                                 ctx->pod->uid, ctrl_display(ctrl));
                else
                        log_warning("group of pod %s in %s was removed by someone else; "
                                    "re-created it",
                                    ctx->pod->uid, ctrl_display(ctrl));
                r = rejoin_inits(ctx, s, ctrl);
                if (r < 0)
                        return r;
        }
        moved = move_process(ctx, s, ctrl, created, ret_reason);
        if (created && recorded) {
                rdt_unlock(s->env->root_fd);
                locked = -EBADF;
                rejoin_cgroups(ctx, s, ctrl);
        }
        return moved;
}

/* What createRuntime knows of its container before any lock. */
struct container {
        const char *ctrl;
        uint64_t start_time;
        struct container_cgroups cgroups;
};

/* Adds the container to st, not monitored, for that reason, with the pod's
 * identity: what a member file (record_intent) and an intake record
 * (prepare_intake) say of it. -ENOMEM. */
static int add_member(const struct hook_ctx *ctx, const struct pod_env *e,
                      const struct container *c, enum unmonitored reason, struct pod_state *st)
{
        struct member *m;
        int r;

        if (e->pid_ns != 0)
                st->pid_ns = e->pid_ns;
        r = pod_state_set_pod(st, ctx->pod->namespace, ctx->pod->pod_name);
        if (r >= 0)
                r = pod_state_add_member(st, ctx->state->id, c->ctrl, ctx->state->pid,
                                         c->start_time, false, unmonitored_text(reason));
        if (r < 0)
                return r;
        m = &st->members[st->n_members - 1];
        m->has_cgroup = c->cgroups.has_cgroup;
        m->cgroup = c->cgroups.cgroup;
        /* Once recorded, the pod's cgroup stays: kubelet keeps it for the
         * pod's life, and every container of the pod is below it. */
        if (c->cgroups.has_pod) {
                st->has_pod_cgroup = true;
                st->pod_cgroup = c->cgroups.pod;
        }
        return 0;
}

/* Records the member as pending, so that the save that pod_ownership_claim makes
 * before touching resctrl names it: a hook killed at any point leaves state
 * that names everything it may have done. */
static int record_intent(const struct hook_ctx *ctx, struct pod_session *s,
                         const struct container *c)
{
        struct group *g = pod_state_find_group(&s->st, c->ctrl);

        /* A lingering group is taken back: same RMID, counters continue. */
        if (g)
                g->emptied = false;
        if (add_member(ctx, s->env, c, UNMONITORED_PENDING, &s->st) < 0)
                return log_error_errno(-ENOMEM, "out of memory");
        s->dirty = true;
        return 0;
}

/* The container's intake record (intake.h), written and not linked: what
 * the run leaves if it cannot record the container itself in time (its
 * pod's lock busy, or the watchdog). Without one (logged) the run goes on:
 * only such a run would lose the container. */
static void prepare_intake(const struct hook_ctx *ctx, const struct pod_env *e,
                           const struct container *c, struct intake *ret)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        int r;

        memcpy(st.boot_id, e->boot_id, sizeof(st.boot_id));
        r = add_member(ctx, e, c, UNMONITORED_BUSY, &st);
        if (r >= 0)
                r = intake_prepare(e->state_fd, ctx->pod->uid, ctx->state->id, &st, ret);
        if (r < 0)
                log_warning_errno(r,
                                  "cannot write the intake record of container %s in "
                                  "stateDir '%s': a run that cannot record it in time loses "
                                  "it",
                                  ctx->state->id, ctx->config->state_dir);
}

/* Is this container already recorded for this very process, and monitored?
 * Then a second run (prestart and createRuntime both registered, a retry,
 * adopt) changes nothing. */
static bool already_member(const struct hook_ctx *ctx, struct pod_session *s, uint64_t start_time)
{
        const struct member *m = pod_state_find_member(&s->st, ctx->state->id);

        if (!m)
                return false;
        if (m->pid == ctx->state->pid && m->start_time == start_time && m->monitored)
                return true;
        /* Another process, a run that was killed, or one that left it
         * unmonitored (RMIDs may have freed up since): record it anew. */
        pod_state_drop_member(&s->st, ctx->state->id);
        s->dirty = true;
        return false;
}

/* Replaces the pending record of the container with its outcome. */
static int record_outcome(const struct hook_ctx *ctx, struct pod_session *s, const char *reason)
{
        struct member *m = pod_state_find_member(&s->st, ctx->state->id);
        char *copy = reason ? strdup(reason) : NULL;

        if (reason && !copy)
                return log_error_errno(-ENOMEM, "out of memory");
        free(m->reason);
        m->reason = copy;
        m->monitored = !reason;
        s->dirty = true;
        return 0;
}

/* The container did not get into a group this run recorded: the record goes
 * again unless another member holds the group, or it names a group the hook
 * made and could not remove. */
static void forget_unused_group(const struct hook_ctx *ctx, struct pod_session *s, const char *ctrl)
{
        const struct group *g = pod_state_find_group(&s->st, ctrl);

        if (!g || pod_group_is_held(&s->st, ctrl))
                return;
        if (g->owned && rdt_mon_group_exists(s->env->root_fd, ctrl, ctx->pod->uid) != 0)
                return;
        pod_state_drop_group(&s->st, ctrl);
        s->dirty = true;
}

/* Adopt's container exited, or its pid names another process now: nothing
 * is recorded. 0. */
static int adopted_init_exited(const struct hook_ctx *ctx, enum hook_outcome *ret_outcome)
{
        log_info("container %s exited while it was adopted; not recorded", ctx->state->id);
        *ret_outcome = OUTCOME_NOT_RECORDED;
        return 0;
}

static int create_in_session(const struct hook_ctx *ctx, struct pod_session *s,
                             const struct container *c, enum hook_outcome *ret_outcome)
{
        _cleanup_free_ char *reason = NULL;
        const char *ctrl = c->ctrl;
        bool recorded, interrupted;
        int r;

        /* State recorded from another pid namespace (a runtime in a
         * container that shares /run): its pids and cgroups mean nothing
         * here, this one's nothing there, with or without members left.
         * It is left as it is. */
        if (!pod_state_pids_are_ours(&s->st, s->env->pid_ns)) {
                log_warning("state of pod %s was written in pid namespace %llu, this hook runs "
                            "in %llu; not recorded, the container starts unmonitored",
                            ctx->pod->uid, (unsigned long long) s->st.pid_ns,
                            (unsigned long long) s->env->pid_ns);
                *ret_outcome =
                    OUTCOME_UNMONITORED; /* as out of RMIDs: never the container's failure */
                return 0;
        }
        if (already_member(ctx, s, c->start_time)) {
                *ret_outcome = OUTCOME_ALREADY_RECORDED;
                return 0;
        }

        recorded = pod_state_find_group(&s->st, ctrl) != NULL;
        /* Did another container's createRuntime stop before it finished?
         * Then a group missing is its doing, not someone else's. */
        interrupted = pod_group_has_pending(&s->st, ctrl, ctx->state->id);
        r = record_intent(ctx, s, c);
        if (r >= 0)
                r = join_group(ctx, s, ctrl, recorded, interrupted, &reason);
        if (r == 1) {
                *ret_outcome = OUTCOME_MONITORED;
                return record_outcome(ctx, s, NULL);
        }
        if (r == -ETIMEDOUT || r == -ENOLCK) {
                log_warning("resctrl lock busy past lockTimeoutMs (%u ms); container %s of pod %s "
                            "recorded as waiting: watch or the next gc pass brings it in",
                            ctx->config->lock_timeout_ms, ctx->state->id, ctx->pod->uid);
                *ret_outcome = OUTCOME_WAITING;
                return record_outcome(ctx, s, unmonitored_text(UNMONITORED_BUSY));
        }
        if (r < 0) {
                pod_state_drop_member(&s->st, ctx->state->id); /* nothing was done */
                s->dirty = true;
        }
        if (!recorded)
                forget_unused_group(ctx, s, ctrl);
        if (r == -ESRCH && ctx->running_since != 0)
                return adopted_init_exited(ctx, ret_outcome);
        if (r < 0)
                return r;
        *ret_outcome = OUTCOME_UNMONITORED;
        return record_outcome(ctx, s, reason);
}

/* The pod's lock is busy past the run's deadline: the container is left in
 * its intake record, for watch or gc to record. */
static int leave_intake(const struct hook_ctx *ctx, const struct intake *in,
                        enum hook_outcome *ret_outcome)
{
        int r = intake_commit(in);

        if (r < 0 && r != -EEXIST)
                return log_error_errno(r,
                                       "pod %s busy past lockTimeoutMs (%u ms), and its intake "
                                       "record cannot be left in stateDir '%s'; not recorded",
                                       ctx->pod->uid, ctx->config->lock_timeout_ms,
                                       ctx->config->state_dir);
        log_warning("pod %s busy past lockTimeoutMs (%u ms); container %s left in stateDir as "
                    "%s: watch or the next gc pass records it",
                    ctx->pod->uid, ctx->config->lock_timeout_ms, ctx->state->id, in->name);
        *ret_outcome = OUTCOME_WAITING;
        return 0;
}

/* Records the container, c, in its pod's state under the pod's lock; with
 * the lock busy past the deadline, leaves its intake record instead. */
static int record_container(const struct hook_ctx *ctx, const struct container *c,
                            enum hook_outcome *ret_outcome)
{
        struct pod_env e = POD_ENV_INIT;
        struct pod_session s = {.lock_fd = -EBADF};
        struct intake intake = INTAKE_INIT;
        int r, q;

        r = env_open(ctx, &e);
        if (r < 0)
                return r;
        prepare_intake(ctx, &e, c, &intake);
        watchdog_set_intake(intake.fd >= 0 ? &intake : NULL);
        r = session_open(ctx, &e, &s);
        if (r == -ETIMEDOUT && intake.fd >= 0)
                r = leave_intake(ctx, &intake, ret_outcome);
        else if (r == -ETIMEDOUT)
                log_error("cannot lock pod %s (lockTimeoutMs %u ms); not recorded", ctx->pod->uid,
                          ctx->config->lock_timeout_ms);
        else if (r >= 0)
                r = create_in_session(ctx, &s, c, ret_outcome);
        q = session_close(&s);
        /* Recorded, or left: the watchdog has nothing more to leave. */
        watchdog_set_intake(NULL);
        intake_discard(&intake);
        pod_env_close(&e);
        return r < 0 ? r : q;
}

int stage_create(const struct hook_ctx *ctx, enum hook_outcome *ret_outcome)
{
        _cleanup_(oci_bundle_done) struct oci_bundle bundle = {0};
        _cleanup_free_ char *ctrl = NULL;
        struct container c;
        const char *why;
        int r;

        if (ctx->state->pid <= 0) {
                log_error("state has no pid at createRuntime");
                return -EINVAL;
        }

        if (!pod_filter_match(ctx->config, ctx->state, ctx->pod, &why)) {
                log_debug("pod %s not selected: %s", ctx->pod->uid, why);
                *ret_outcome = OUTCOME_FILTERED;
                return 0;
        }

        r = read_bundle(ctx, &bundle);
        if (r < 0)
                return r;
        if (bundle.intel_rdt.enable_monitoring &&
            ctx->config->runtime_monitoring == RUNTIME_MONITORING_SKIP) {
                log_debug("linux.intelRdt.enableMonitoring is set: the runtime monitors it");
                *ret_outcome = OUTCOME_RUNTIME_MONITORS;
                return 0;
        }

        r = resolve_ctrl_group(ctx, &bundle.intel_rdt, &ctrl);
        if (r < 0)
                return r;
        c.ctrl = ctrl;
        find_cgroups(ctx, bundle.cgroups_path, &c.cgroups);
        /* Read after the control group and the cgroups: when it is the one
         * adopt's runtime recorded, so was the process they were read of. */
        r = proc_start_time(ctx->proc_fd, ctx->state->pid, &c.start_time);
        if (ctx->running_since != 0 &&
            (r == -ESRCH || (r >= 0 && c.start_time != ctx->running_since)))
                return adopted_init_exited(ctx, ret_outcome);
        if (r < 0)
                return log_error_errno(r, "cannot read start time of pid %d", ctx->state->pid);

        return record_container(ctx, &c, ret_outcome);
}

static enum hook_outcome fate_outcome(enum group_fate fate)
{
        switch (fate) {
        case GROUP_REMOVED:
                return OUTCOME_GROUP_REMOVED;
        case GROUP_BUSY:
                return OUTCOME_GROUP_KEPT;
        case GROUP_LINGERS:
        case GROUP_POD_LIVES:
        case GROUP_POD_UNSEEN:
                return OUTCOME_GROUP_LINGERS;
        case GROUP_FORGOTTEN:
                break;
        }
        return OUTCOME_MEMBER_DROPPED;
}

static int poststop_in_session(const struct hook_ctx *ctx, struct pod_session *s,
                               enum hook_outcome *ret_outcome)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts mounts = CGROUP_MOUNTS_INIT;
        _cleanup_free_ char *ctrl = NULL;
        struct member *m = pod_state_find_member(&s->st, ctx->state->id);
        int r;

        if (!m) {
                *ret_outcome = OUTCOME_NOT_RECORDED;
                return 0;
        }
        ctrl = strdup(m->ctrl);
        if (!ctrl)
                return log_error_errno(-ENOMEM, "out of memory");
        pod_state_drop_member(&s->st, ctx->state->id);
        s->dirty = true;
        *ret_outcome = OUTCOME_MEMBER_DROPPED;

        if (pod_group_is_held(&s->st, ctrl))
                return 0;
        /* Without the mounts the pod's cgroup is not looked for: today's fate. */
        (void) cgroup_mounts_open(ctx->proc_fd, &mounts);
        r = pod_ownership_release(s, &mounts, ctrl);
        if (r < 0)
                return r;
        *ret_outcome = fate_outcome(r);
        return 0;
}

int stage_poststop(const struct hook_ctx *ctx, enum hook_outcome *ret_outcome)
{
        struct pod_env e = POD_ENV_INIT;
        struct pod_session s = {.lock_fd = -EBADF};
        char name[STATEDIR_NAME_SIZE];
        _cleanup_free_ char *path = NULL;
        int r, q;

        /* A pod without state has nothing to drop; do not make a lock file for it. */
        if (statedir_name(ctx->pod->uid, STATEDIR_MEMBERS, name) < 0 ||
            asprintf(&path, "%s/%s", ctx->config->state_dir, name) < 0)
                return log_error_errno(-ENOMEM, "out of memory");
        if (access(path, F_OK) < 0 && errno == ENOENT) {
                *ret_outcome = OUTCOME_NOT_RECORDED;
                return 0;
        }

        r = env_open(ctx, &e);
        if (r < 0)
                return r;
        r = session_open(ctx, &e, &s);
        if (r == -ETIMEDOUT) /* gc drops the member once its process is gone */
                log_error("cannot lock pod %s (lockTimeoutMs %u ms)", ctx->pod->uid,
                          ctx->config->lock_timeout_ms);
        else if (r >= 0)
                r = poststop_in_session(ctx, &s, ret_outcome);
        q = session_close(&s);
        pod_env_close(&e);
        return r < 0 ? r : q;
}
