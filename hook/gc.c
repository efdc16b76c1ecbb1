/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "abmc.h"
#include "counters.h"
#include "finished.h"
#include "fsutil.h"
#include "gc.h"
#include "intake.h"
#include "log.h"
#include "macro.h"
#include "pod_bandwidth.h"
#include "pod_ownership.h"
#include "pod_threads.h"
#include "proc.h"
#include "rdt.h"
#include "string_table.h"
#include "text.h"

/* A hook holds a pod lock for milliseconds; a pod busy for longer is left to
 * the next pass rather than waited for. */
#define GC_POD_LOCK_TIMEOUT_MS 200u

struct gc_opts {
        bool dry_run;
        bool json;
        unsigned interval; /* seconds; 0: one pass */
};

struct pod_age {
        const char *uid;
        uint64_t started; /* its earliest monitored (or waiting) container's start time */
};

static int age_compare(const void *a, const void *b)
{
        const struct pod_age *x = a, *y = b;

        if (x->started != y->started)
                return x->started < y->started ? -1 : 1;
        return strcmp(x->uid, y->uid); /* started in the same tick */
}

struct gc {
        struct gc_opts opts;
        struct pod_env env;
        struct cgroup_mounts cgroups; /* this pass's */
        bool abmc;                    /* this pass's: bandwidth counters are assigned (abmc.h) */
        json_t *actions;              /* this pass's, for --json */
        /* This pass's pods with members, by the pid namespace their state
         * was written in: gc's own, or another (skipped). */
        unsigned pods_ours, pods_foreign;
        uint64_t foreign_ns; /* the last other pid namespace seen */
        /* This pass's pods with a live member waiting for an RMID, and the
         * control groups where mkdir found none. */
        struct pod_age *waiting;
        size_t n_waiting;
        char **full;
        size_t n_full;
        unsigned joined; /* this pass's: threads join_cgroups put into their pods' groups */
        bool busy;       /* this pass's: a lock was not had in time, or not again */
};

/* What gc does (or, with --dry-run, would do) to a pod, by the name its
 * output gives it (docs/operations.md). */
enum gc_action {
        GC_DROP_MEMBER,
        GC_COMPLETE_MEMBER,
        GC_REJOIN_MEMBER,
        GC_BRING_IN_MEMBER,
        GC_TAKE_IN,
        GC_JOIN_TASKS,
        GC_ASSIGN_COUNTER,
        GC_MAKE_GROUP,
        GC_RECREATE_GROUP,
        GC_REMOVE_GROUP,
        GC_KEEP_GROUP,
        GC_LINGER_GROUP,
        GC_FORGET_GROUP,
        GC_SKIP_POD,
        GC_REMOVE_TEMP,
        GC_REMOVE_LOCK,
        GC_REMOVE_STATE,
        _GC_ACTION_MAX,
};

static const char *const gc_action_names[_GC_ACTION_MAX] = {
    [GC_DROP_MEMBER] = "drop-member",
    [GC_COMPLETE_MEMBER] = "complete-member",
    [GC_REJOIN_MEMBER] = "rejoin-member",
    [GC_BRING_IN_MEMBER] = "bring-in-member",
    [GC_TAKE_IN] = "take-in",
    [GC_JOIN_TASKS] = "join-tasks",
    [GC_ASSIGN_COUNTER] = "assign-counter",
    [GC_MAKE_GROUP] = "make-group",
    [GC_RECREATE_GROUP] = "recreate-group",
    [GC_REMOVE_GROUP] = "remove-group",
    [GC_KEEP_GROUP] = "keep-group",
    [GC_LINGER_GROUP] = "linger-group",
    [GC_FORGET_GROUP] = "forget-group",
    [GC_SKIP_POD] = "skip-pod",
    [GC_REMOVE_TEMP] = "remove-temp",
    [GC_REMOVE_LOCK] = "remove-lock",
    [GC_REMOVE_STATE] = "remove-state",
};
DEFINE_PRIVATE_STRING_TABLE_TO_STRING(gc_action_name, gc_action_names, enum gc_action)

/* Prints an action at once as "ACTION key=value ...". */
static void print_action(const char *action, json_t *fields)
{
        const char *key;
        json_t *v;

        printf("%s", action);
        json_object_foreach(fields, key, v) {
                char safe[TEXT_ESCAPED_SIZE];

                if (json_is_integer(v)) {
                        printf(" %s=%" JSON_INTEGER_FORMAT, key, json_integer_value(v));
                        continue;
                }
                text_escape(safe, sizeof(safe), json_string_value(v));
                printf(strchr(safe, ' ') ? " %s=\"%s\"" : " %s=%s", key, safe);
        }
        putchar('\n');
}

/* One action with its fields (an object, stolen; NULL when it could not be
 * made): printed at once, or collected for the pass's JSON line as an
 * object whose first key is "action". */
static void report(struct gc *gc, enum gc_action action, json_t *fields)
{
        json_auto_t *f = fields;
        const char *name = gc_action_name(action);
        json_t *a;

        assert(name);
        if (!f) {
                log_error("out of memory");
                return;
        }
        if (!gc->opts.json) {
                print_action(name, f);
                return;
        }
        a = json_pack("{s:s}", "action", name);
        if (a && json_object_update(a, f) == 0) {
                (void) json_array_append_new(gc->actions, a);
                return;
        }
        json_decref(a);
        log_error("out of memory");
}

static void report_pod(struct gc *gc, enum gc_action action, const char *uid, const char *reason)
{
        report(gc, action, json_pack("{s:s, s:s*}", "pod", uid, "reason", reason));
}

static void report_group(struct gc *gc, enum gc_action action, const char *uid, const char *ctrl)
{
        report(gc, action, json_pack("{s:s, s:s}", "pod", uid, "ctrl", ctrl));
}

static void report_member(struct gc *gc, enum gc_action action, const char *uid,
                          const struct member *m, const char *reason)
{
        report(gc, action,
               json_pack("{s:s, s:s, s:i, s:s*}", "pod", uid, "container", m->id, "pid", m->pid,
                         "reason", reason));
}

/* Drops every member whose init no longer runs: its poststop never came. */
static void drop_dead_members(struct gc *gc, struct pod_session *s)
{
        for (size_t i = 0; i < s->st.n_members;) {
                const struct member *m = &s->st.members[i];
                const char *why = NULL;
                int r = pod_member_is_live(gc->env.proc_fd, m, &why);

                if (r < 0)
                        log_warning_errno(r, "cannot tell whether pid %d of pod %s runs; kept",
                                          m->pid, s->uid);
                if (r != 0) {
                        i++;
                        continue;
                }
                report_member(gc, GC_DROP_MEMBER, s->uid, m, why);
                pod_state_drop_member(&s->st, m->id);
                s->dirty = true;
        }
}

/* A pending member whose init is in the group now: its run is complete. */
static void complete_member(struct gc *gc, struct pod_session *s, struct member *m)
{
        if (!pod_member_is_pending(m))
                return;
        report_member(gc, GC_COMPLETE_MEMBER, s->uid, m, NULL);
        if (s->dry_run)
                return;
        free(m->reason);
        m->reason = NULL;
        m->monitored = true;
        s->dirty = true;
}

/* Every thread of every monitored member's cgroup into the group (whose
 * tasks are in): what a runtime exec'd into a container since the last
 * pass, or what a re-made group lost. Said when some joined; threads the
 * kernel keeps in another control group are counted with them (each pass
 * tries them again: only the kernel can say where a thread is). Without
 * the resctrl lock: each join takes it, in turns of its budget; -ENOLCK
 * when one could not have it in time (pod_member_join_cgroup), else 0. */
static int join_cgroups(struct gc *gc, struct pod_session *s, const char *ctrl, const pid_t *in,
                        size_t n_in)
{
        for (size_t i = 0; i < s->st.n_members; i++) {
                const struct member *m = &s->st.members[i];
                unsigned joined = 0, elsewhere = 0;
                int r = 0;

                if (m->monitored && strcmp(m->ctrl, ctrl) == 0)
                        r = pod_member_join_cgroup(s, &gc->cgroups, m, in, n_in, &joined,
                                                   &elsewhere);
                if (joined > 0) {
                        gc->joined += joined;
                        report(gc, GC_JOIN_TASKS,
                               json_pack("{s:s, s:s, s:i, s:i}", "pod", s->uid, "container", m->id,
                                         "count", (int) joined, "elsewhere", (int) elsewhere));
                }
                if (r == -ENOLCK)
                        return r;
        }
        return 0;
}

/* The unused counters of domain id in available; NULL when it lists none. */
static unsigned *available_in(struct abmc_counts *available, unsigned id)
{
        for (size_t i = 0; i < available->n; i++)
                if (available->ids[i] == id)
                        return &available->counts[i];
        return NULL;
}

/* ABMC: counters of available (decremented) for the wanted events the
 * group lacks, one write per event and domain; the pass has fitted the group
 * to mbmEvents already (ensure_group). A counter counts from zero once
 * assigned: that key's baseline becomes 0. Never for a group another manager
 * made. Under the resctrl lock. */
static void fill_counters(struct gc *gc, struct pod_session *s, const char *ctrl,
                          struct abmc_counts *available)
{
        unsigned want = gc->env.config->mbm_events;
        struct group *g = pod_state_find_group(&s->st, ctrl);
        struct abmc_assignments a;
        struct counter_value zero;

        if (!g || !g->owned || abmc_group_assignments(gc->env.root_fd, ctrl, s->uid, &a) < 0 ||
            abmc_bandwidth(&a, want) == ABMC_FULL)
                return; /* what cannot be read was said by ensure_group */
        (void) counter_value_parse("0", &zero);
        for (int ev = 0; ev < ABMC_EVENTS; ev++) {
                if (!(want & (1U << ev)) || !a.listed[ev])
                        continue;
                for (size_t i = 0; i < a.n; i++) {
                        unsigned *left = available_in(available, a.ids[i]);
                        char key[64];
                        int r;

                        if (a.assigned[ev][i] || !left || *left == 0)
                                continue;
                        r = s->dry_run
                                ? 0
                                : abmc_group_set(gc->env.root_fd, ctrl, s->uid, ev, a.ids[i], true);
                        if (r == -ENOSPC) { /* taken by someone else meanwhile */
                                *left = 0;
                                continue;
                        }
                        if (r < 0) {
                                log_warning_errno(r,
                                                  "cannot assign a %s counter to the group of "
                                                  "pod %s",
                                                  abmc_event_name(ev), s->uid);
                                continue;
                        }
                        (*left)--;
                        (void) snprintf(key, sizeof(key), "mon_L3_%02u/%s", a.ids[i],
                                        abmc_event_name(ev));
                        if (!s->dry_run && pod_state_group_set_baseline(g, key, &zero) >= 0)
                                s->dirty = true;
                        report(gc, GC_ASSIGN_COUNTER,
                               json_pack("{s:s, s:s, s:s, s:i}", "pod", s->uid, "ctrl", ctrl,
                                         "event", abmc_event_name(ev), "domain", (int) a.ids[i]));
                }
        }
}

/* mkdir of the group of (pod, ctrl) failed for want of an RMID (-ENOSPC,
 * -EBUSY) or of the control group (-ENOENT), or was never tried, the
 * resctrl lock busy (-ETIMEDOUT): no init of a pending member can be in it,
 * so each is unmonitored for that reason; for an RMID or the lock it waits. */
static void pending_unmonitored(struct pod_session *s, const char *ctrl, int err,
                                const char *status)
{
        enum unmonitored what = err == -ENOENT      ? UNMONITORED_CTRL_MISSING
                                : err == -EBUSY     ? UNMONITORED_EBUSY
                                : err == -ETIMEDOUT ? UNMONITORED_BUSY
                                                    : UNMONITORED_ENOSPC;

        for (size_t i = 0; i < s->st.n_members; i++) {
                struct member *m = &s->st.members[i];
                char *reason;

                if (!pod_member_is_pending(m) || strcmp(m->ctrl, ctrl) != 0 ||
                    pod_unmonitored_reason(what, err == -ENOENT ? ctrl : status, &reason) < 0)
                        continue;
                free(m->reason);
                m->reason = reason;
                s->dirty = true;
        }
}

/* Why gc made a pod's group. */
enum made_for {
        MADE_FOR_WAITING,     /* its members waited for an RMID */
        MADE_FOR_INTERRUPTED, /* a createRuntime that did not finish never made it */
        MADE_AGAIN,           /* someone else removed it */
};

/* Logs and reports that gc made the group of (pod, ctrl), and why. */
static void say_made(struct gc *gc, const struct pod_session *s, const char *ctrl,
                     enum made_for why)
{
        const char *reason = why == MADE_FOR_WAITING       ? "waiting for an RMID"
                             : why == MADE_FOR_INTERRUPTED ? unmonitored_text(UNMONITORED_PENDING)
                                                           : "removed by someone else";

        report(gc, why == MADE_FOR_WAITING ? GC_MAKE_GROUP : GC_RECREATE_GROUP,
               json_pack("{s:s, s:s, s:s}", "pod", s->uid, "ctrl", ctrl, "reason", reason));
        if (s->dry_run)
                return;
        if (why == MADE_FOR_WAITING)
                log_info("made the group of pod %s in %s for its containers that waited for an "
                         "RMID",
                         s->uid, ctrl_display(ctrl));
        else if (why == MADE_FOR_INTERRUPTED)
                log_info("group of pod %s in %s was not made by a createRuntime that did not "
                         "finish; made it",
                         s->uid, ctrl_display(ctrl));
        else
                log_warning("group of pod %s in %s was removed by someone else; re-created it",
                            s->uid, ctrl_display(ctrl));
}

/* pod_ownership_claim, and what its answer means for the pod: a group gc cannot
 * make leaves its pending members unmonitored, a group made gets its
 * baseline and is said. 1 made, 0 there, or -errno. */
static int claim_group(struct gc *gc, struct pod_session *s, const char *ctrl, enum made_for why)
{
        _cleanup_free_ char *status = NULL;
        int made = pod_ownership_claim(s, ctrl, &status);

        if (made == -ENOSPC || made == -EBUSY || made == -ENOENT) {
                /* A container that waits for an RMID was said to when it
                 * began; watch tries it again after every removal. */
                (void) log_errno_at(why == MADE_FOR_WAITING && made != -ENOENT ? LOG_DEBUG
                                                                               : LOG_WARNING,
                                    made, "cannot make the group of pod %s in %s (%s)", s->uid,
                                    ctrl_display(ctrl), status ? status : "?");
                if (!s->dry_run)
                        pending_unmonitored(s, ctrl, made, status);
        }
        if (made > 0 && !s->dry_run)
                pod_ownership_record_baseline(s, ctrl);
        if (made > 0)
                say_made(gc, s, ctrl, why);
        return made;
}

/* Is m's init in the group? 1 or 0; -errno when the group's tasks could not
 * be read (tasks_read). A group just made holds no one yet. */
static int init_in_group(const struct member *m, bool made, int tasks_read, const pid_t *in,
                         size_t n_in)
{
        if (made)
                return 0;
        if (tasks_read < 0)
                return tasks_read;
        return pid_list_has(in, n_in, m->pid);
}

/* Puts back each live member of ctrl whose init is not in the group (with
 * --dry-run, says so); a member found in it, or put back, is complete. 1
 * when any was put back, 0 when none, -ENOLCK when the resctrl lock could
 * not be taken again after a turn (pod_env_take_turn). */
static int rejoin_missing_members(struct gc *gc, struct pod_session *s, const char *ctrl, bool made,
                                  int tasks_read, const pid_t *in, size_t n_in)
{
        int rejoined = 0;

        for (size_t i = 0; i < s->st.n_members; i++) {
                struct member *m = &s->st.members[i];
                int r;

                if (!(m->monitored || pod_member_is_pending(m)) || strcmp(m->ctrl, ctrl) != 0)
                        continue;
                if (pod_env_take_turn(s->env) == -ENOLCK)
                        return -ENOLCK;
                r = init_in_group(m, made, tasks_read, in, n_in);
                if (r == 1)
                        complete_member(gc, s, m);
                if (r != 0) /* in it, or its tasks cannot be read */
                        continue;
                if (s->dry_run || pod_member_rejoin(s, m) > 0) {
                        report_member(gc, GC_REJOIN_MEMBER, s->uid, m, NULL);
                        complete_member(gc, s, m);
                        rejoined = 1;
                }
        }
        return rejoined;
}

/* The group of live members: make it if it is missing (why says for whom),
 * and put back every member whose init is not in it (a hook killed before
 * its tasks write, the re-creation, a member that waited), under the
 * resctrl lock; then the rest of their containers' threads, the joins
 * taking it for themselves. What pod_ownership_claim returns: 1 made, 0 there,
 * or -errno. */
static int ensure_group(struct gc *gc, struct pod_session *s, const char *ctrl, enum made_for why)
{
        const struct pod_env *e = &gc->env;
        _cleanup_free_ pid_t *in = NULL;
        _cleanup_(rdt_unlockp) int locked = -EBADF;
        size_t n_in = 0;
        int made, tasks_read = 0, rejoined;

        locked = pod_env_lock_resctrl(e);
        gc->busy |= locked == -ETIMEDOUT;
        if (locked < 0)
                return locked;
        made = claim_group(gc, s, ctrl, why);
        if (made < 0)
                return made;
        if (!made)
                tasks_read = pod_threads_group_tasks(e->root_fd, ctrl, s->uid, &in, &n_in);
        rejoined = rejoin_missing_members(gc, s, ctrl, made, tasks_read, in, n_in);
        if (rejoined == -ENOLCK) {
                gc->busy = true; /* the rest is the next pass's */
                return made;
        }
        /* The joins walk the containers' threads without the lock, and take
         * it for their writes, in turns. */
        rdt_unlock(e->root_fd);
        locked = -EBADF;
        /* The inits went in: what the join compares with. */
        if ((made || rejoined > 0) && !s->dry_run) {
                free(TAKE_PTR(in));
                tasks_read = pod_threads_group_tasks(e->root_fd, ctrl, s->uid, &in, &n_in);
        }
        if (tasks_read >= 0 && join_cgroups(gc, s, ctrl, in, n_in) == -ENOLCK) {
                gc->busy = true;
                return made;
        }
        /* mbmEvents on every group of the hook's: what a killed createRuntime
         * did not give up, or what the operator narrowed it to since. */
        if (gc->abmc && pod_state_find_group(&s->st, ctrl)->owned &&
            (locked = pod_env_lock_resctrl(e)) >= 0)
                (void) pod_bandwidth_fit(s, ctrl, &(struct abmc_assignments){0});
        return made;
}

/* Has the pod a group in ctrl, in resctrl and not only in its record?
 * What cannot be looked at counts as there: no mkdir is tried for it. */
static bool group_is_there(const struct gc *gc, struct pod_session *s, const char *ctrl)
{
        return pod_state_find_group(&s->st, ctrl) &&
               rdt_mon_group_exists(gc->env.root_fd, ctrl, s->uid) != 0;
}

/* The pod's members of ctrl waiting for an RMID whose inits can go into its
 * group now (pod_member_can_join) are marked pending, as createRuntime
 * records its intent, and the group's record, if it lingers, is taken back;
 * ensure_group, whose claim saves before any mkdir, then puts them in. How
 * many; --dry-run reports them and changes nothing. */
static unsigned wake_waiting(struct gc *gc, struct pod_session *s, const char *ctrl)
{
        struct group *g = pod_state_find_group(&s->st, ctrl);
        unsigned n = 0;

        for (size_t i = 0; i < s->st.n_members; i++) {
                struct member *m = &s->st.members[i];
                char *pending = NULL;

                if (!pod_member_is_waiting(m) || strcmp(m->ctrl, ctrl) != 0 ||
                    pod_member_can_join(s, m) != 1 ||
                    (!s->dry_run && !(pending = strdup(unmonitored_text(UNMONITORED_PENDING)))))
                        continue;
                report_member(gc, GC_BRING_IN_MEMBER, s->uid, m, m->reason);
                n++;
                if (s->dry_run)
                        continue;
                free(m->reason);
                m->reason = pending;
                s->dirty = true;
        }
        if (n > 0 && g && !s->dry_run)
                g->emptied = false;
        return n;
}

static void release_group(struct gc *gc, struct pod_session *s, const char *ctrl)
{
        unsigned delay = gc->env.config->remove_delay_sec;
        const struct group *g;
        int64_t left;
        int fate = pod_ownership_release(s, &gc->cgroups, ctrl);

        switch (fate) {
        case GROUP_REMOVED:
                report_group(gc, GC_REMOVE_GROUP, s->uid, ctrl);
                break;
        case GROUP_BUSY:
                report(gc, GC_KEEP_GROUP,
                       json_pack("{s:s, s:s, s:s}", "pod", s->uid, "ctrl", ctrl, "reason",
                                 "still has tasks"));
                break;
        case GROUP_LINGERS:
                g = pod_state_find_group(&s->st, ctrl);
                left = (int64_t) g->emptied_at + delay + 1 - now_boottime_sec();
                report(gc, GC_LINGER_GROUP,
                       json_pack("{s:s, s:s, s:I}", "pod", s->uid, "ctrl", ctrl, "remaining_s",
                                 (json_int_t) (left > 0 ? left : 0)));
                break;
        case GROUP_POD_LIVES:
        case GROUP_POD_UNSEEN:
                report(gc, GC_LINGER_GROUP,
                       json_pack("{s:s, s:s, s:s}", "pod", s->uid, "ctrl", ctrl, "reason",
                                 fate == GROUP_POD_LIVES ? "pod cgroup" : "pod cgroup unseen"));
                break;
        case GROUP_FORGOTTEN:
                report_group(gc, GC_FORGET_GROUP, s->uid, ctrl);
                break;
        default: /* logged */
                break;
        }
}

/* Is the pod's state of another pid namespace (a runtime in a container
 * that shares /run: kind, Docker-in-Docker)? Its pids mean nothing here, nor
 * its cgroups, recorded in that runtime's cgroup namespace, even once no
 * container is left (a group lingering for its pod): the pod is left as it
 * is, said once, and the pass goes on. Only pods with members count for
 * the refusal (gc_pass): they show which namespace the hook runs in. */
static bool foreign_pid_ns(struct gc *gc, const struct pod_session *s)
{
        if (pod_state_pids_are_ours(&s->st, gc->env.pid_ns)) {
                gc->pods_ours += s->st.n_members > 0;
                return false;
        }
        if (s->st.n_members > 0) {
                gc->pods_foreign++;
                gc->foreign_ns = s->st.pid_ns;
        }
        log_warning("state of pod %s was written in pid namespace %llu, gc runs in %llu; "
                    "skipped",
                    s->uid, (unsigned long long) s->st.pid_ns, (unsigned long long) gc->env.pid_ns);
        report_pod(gc, GC_SKIP_POD, s->uid, "another pid namespace");
        return true;
}

/* Merges intake record in (intake.h) into the pod's state; 1 when it did, 0
 * when the record is to go without (its container recorded already, or
 * gone), -1 when it stays (another pid namespace's). */
static int merge_intake(struct gc *gc, struct pod_session *s, const struct pod_state *in)
{
        const struct member *m = &in->members[0];
        const struct member *old = pod_state_find_member(&s->st, m->id);
        struct member *added;
        const char *why;

        if (pod_state_of_other_boot(in, gc->env.boot_id, gc->env.pid_ns))
                return 0;
        if (!pod_state_pids_are_ours(in, gc->env.pid_ns))
                return -1;
        if (old && old->pid == m->pid && old->start_time == m->start_time)
                return 0;
        if (pod_member_is_live(gc->env.proc_fd, m, &why) != 1)
                return 0;
        report_member(gc, GC_TAKE_IN, s->uid, m, m->reason);
        if (s->dry_run)
                return 1;
        /* Live, with the id: the process recorded under it before is gone. */
        if (old)
                pod_state_drop_member(&s->st, m->id);
        if (pod_state_add_member(&s->st, m->id, m->ctrl, m->pid, m->start_time, false, m->reason) <
                0 ||
            (!s->st.namespace && pod_state_set_pod(&s->st, in->namespace, in->pod_name) < 0)) {
                log_error("out of memory");
                return -1;
        }
        added = &s->st.members[s->st.n_members - 1];
        added->has_cgroup = m->has_cgroup;
        added->cgroup = m->cgroup;
        if (!s->st.has_pod_cgroup && in->has_pod_cgroup) {
                s->st.has_pod_cgroup = true;
                s->st.pod_cgroup = in->pod_cgroup;
        }
        if (s->st.pid_ns == 0)
                s->st.pid_ns = in->pid_ns;
        s->dirty = true;
        return 1;
}

/* The pod's intake records become its members, waiting, as their
 * createRuntime would have recorded them had it had the pod's lock in time;
 * the pass then brings them in as any waiting member. The state is saved
 * before a record goes: a kill in between leaves a record of a member,
 * which the next pass removes. A record that cannot be read is said and
 * goes. */
static void take_in_intake(struct gc *gc, struct pod_session *s)
{
        char **names = NULL;
        bool *done = NULL;
        size_t n = 0;
        int r;

        r = intake_list(gc->env.state_fd, s->uid, &names, &n);
        if (r < 0)
                log_warning_errno(r, "cannot list the intake records of pod %s", s->uid);
        if (n > 0 && !(done = calloc(n, sizeof(*done))))
                log_error("out of memory");
        for (size_t i = 0; done && i < n; i++) {
                _cleanup_(pod_state_done) struct pod_state in = {0};
                _cleanup_free_ char *why = NULL;

                r = intake_load(gc->env.state_fd, names[i], s->uid, &in, &why);
                if (r == -EBADMSG)
                        log_warning("intake record %s in stateDir '%s' is invalid (%s); removed",
                                    names[i], gc->env.config->state_dir, why ? why : "?");
                else if (r < 0)
                        log_warning_errno(r, "cannot read intake record %s", names[i]);
                done[i] = r == -EBADMSG || (r >= 0 && merge_intake(gc, s, &in) >= 0);
        }
        if (done && !s->dry_run && s->dirty) {
                r = pod_state_save(gc->env.state_fd, s->uid, &s->st);
                if (r < 0)
                        log_error_errno(r, "cannot save state of pod %s in stateDir '%s'", s->uid,
                                        gc->env.config->state_dir);
                else
                        s->dirty = false;
        }
        for (size_t i = 0; done && i < n && !s->dry_run && !s->dirty; i++)
                if (done[i] && unlinkat(gc->env.state_fd, names[i], 0) < 0 && errno != ENOENT)
                        log_warning("cannot remove intake record %s: %m", names[i]);
        free(done);
        intake_names_free(names, n);
}

/* Debris first (a temp file of a killed save), then members, then groups.
 * Anything about one pod is reported and skipped. */
static int gc_locked_pod(struct gc *gc, struct pod_session *s)
{
        _cleanup_free_ char *why = NULL;
        char tmp[STATEDIR_NAME_SIZE];
        int r;

        (void) statedir_name(s->uid, STATEDIR_MEMBERS_TMP, tmp);
        r = s->dry_run ? faccessat(gc->env.state_fd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0
                       : pod_state_remove_temp(gc->env.state_fd, s->uid);
        if (r == 1)
                report(gc, GC_REMOVE_TEMP, json_pack("{s:s, s:s}", "pod", s->uid, "file", tmp));

        r = pod_session_load(s, &why);
        if (r == -EBADMSG) {
                log_warning("state of pod %s is invalid (%s); skipped", s->uid, why);
                report_pod(gc, GC_SKIP_POD, s->uid, "invalid state");
                return 0;
        }
        if (r < 0) {
                log_warning_errno(r, "cannot load state of pod %s; skipped", s->uid);
                report_pod(gc, GC_SKIP_POD, s->uid, strerror(-r));
                return 0;
        }
        if (foreign_pid_ns(gc, s)) {
                s->loaded = false; /* leave it as it is */
                return 0;
        }

        take_in_intake(gc, s);
        drop_dead_members(gc, s);
        /* Backwards: releasing a group may drop it, moving only later ones. */
        for (size_t i = s->st.n_groups; i-- > 0;) {
                _cleanup_free_ char *ctrl = strdup(s->st.groups[i].ctrl);
                enum made_for again;

                if (!ctrl)
                        return log_error_errno(-ENOMEM, "out of memory");
                /* Why it would be made again, said before any waiting member is woken. */
                again =
                    pod_group_has_pending(&s->st, ctrl, NULL) ? MADE_FOR_INTERRUPTED : MADE_AGAIN;
                /* The pod has a group there, or one its monitored members
                 * get back now: those waiting need no RMID of their own.
                 * Where only its record is (a createRuntime killed before
                 * it saved that mkdir failed, another manager's rmdir),
                 * they wait in line (bring_in_waiting). */
                if (pod_group_is_held(&s->st, ctrl) || group_is_there(gc, s, ctrl))
                        (void) wake_waiting(gc, s, ctrl);
                if (pod_group_is_held(&s->st, ctrl))
                        (void) ensure_group(gc, s, ctrl, again);
                else
                        release_group(gc, s, ctrl);
        }
        return 0;
}

/* A dry run never takes a lock it would have to create. */
static void dry_run_debris(struct gc *gc, const struct statedir_pod *p)
{
        char tmp[STATEDIR_NAME_SIZE];

        if (p->temp && statedir_name(p->uid, STATEDIR_MEMBERS_TMP, tmp) >= 0)
                report(gc, GC_REMOVE_TEMP, json_pack("{s:s, s:s}", "pod", p->uid, "file", tmp));
        if (p->lock)
                report_pod(gc, GC_REMOVE_LOCK, p->uid, NULL);
}

/* Notes the pod for bring_in_waiting when a member of it (live: the dead
 * are dropped by now) waits for an RMID, by the oldest such member. */
static void note_waiting(struct gc *gc, const char *uid, const struct pod_session *s)
{
        uint64_t started = UINT64_MAX;

        for (size_t i = 0; s->loaded && i < s->st.n_members; i++)
                if (pod_member_is_waiting(&s->st.members[i]) &&
                    s->st.members[i].start_time < started)
                        started = s->st.members[i].start_time;
        if (started != UINT64_MAX)
                gc->waiting[gc->n_waiting++] = (struct pod_age){uid, started};
}

static int gc_pod(struct gc *gc, const struct statedir_pod *p)
{
        unsigned timeout = gc->env.config->lock_timeout_ms;
        struct pod_session s;
        bool gone;
        int r, q;

        if (!p->members && !p->intake && gc->opts.dry_run) {
                dry_run_debris(gc, p);
                return 0;
        }
        /* A lock file without state is taken only if free at once: a hook
         * holding it is about to write the state. A pass with a deadline
         * (watch's of one pod) waits no longer than that. */
        if (timeout > GC_POD_LOCK_TIMEOUT_MS)
                timeout = GC_POD_LOCK_TIMEOUT_MS;
        if (gc->env.deadline != 0 && timeout > pod_env_wait_ms(&gc->env))
                timeout = pod_env_wait_ms(&gc->env);
        r = pod_session_lock(&gc->env, p->uid, p->members || p->intake ? timeout : 0, &s);
        gc->busy |= r == -ETIMEDOUT;
        if (r < 0) {
                if (r != -ETIMEDOUT)
                        log_warning_errno(r, "cannot lock pod %s in stateDir '%s'; skipped", p->uid,
                                          gc->env.config->state_dir);
                report_pod(gc, GC_SKIP_POD, p->uid, r == -ETIMEDOUT ? "busy" : strerror(-r));
                (void) pod_session_close(&s);
                return 0;
        }
        s.dry_run = gc->opts.dry_run;
        r = gc_locked_pod(gc, &s);
        note_waiting(gc, p->uid, &s);
        gone = s.loaded && s.st.n_members == 0 && s.st.n_groups == 0;
        q = pod_session_close(&s);
        if (gone && (s.dry_run || q == 1))
                report_pod(gc, p->members ? GC_REMOVE_STATE : GC_REMOVE_LOCK, p->uid, NULL);
        return r;
}

static bool counters_free(const struct abmc_counts *available)
{
        for (size_t i = 0; i < available->n; i++)
                if (available->counts[i] > 0)
                        return true;
        return false;
}

/* After the pass, which freed the counters of the pods that went: free
 * counters go to the groups that lack some, the pod that has waited longest
 * first; what is free is read once, so that --dry-run hands out no more
 * than there is. Without ABMC, or with no counter free, nothing more is
 * read. */
static void hand_out_counters(struct gc *gc, const struct statedir_pod *pods, size_t n)
{
        _cleanup_free_ struct pod_age *ages = NULL;
        struct abmc_counts total, available;
        size_t n_ages = 0;
        int r;

        r = abmc_counters(gc->env.root_fd, &total, &available);
        if (r == -EBADMSG || r == -E2BIG)
                log_warning_errno(r, "cannot understand info/L3_MON/num_mbm_cntrs or "
                                     "available_mbm_cntrs; no bandwidth counter handed out");
        if (r < 0 || n == 0 || !counters_free(&available) || !(ages = calloc(n, sizeof(*ages))))
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(pod_state_done) struct pod_state st = {0};
                uint64_t started = UINT64_MAX;

                if (!pods[i].members ||
                    pod_state_load(gc->env.state_fd, pods[i].uid, &st, NULL) < 0 ||
                    !pod_state_pids_are_ours(&st, gc->env.pid_ns)) /* foreign_pid_ns */
                        continue;
                for (size_t j = 0; j < st.n_members; j++)
                        if (st.members[j].monitored && st.members[j].start_time < started)
                                started = st.members[j].start_time;
                if (started != UINT64_MAX)
                        ages[n_ages++] = (struct pod_age){pods[i].uid, started};
        }
        if (n_ages > 0)
                qsort(ages, n_ages, sizeof(*ages), age_compare);
        for (size_t i = 0; i < n_ages && counters_free(&available); i++) {
                struct pod_session s;

                r = pod_session_lock(&gc->env, ages[i].uid, GC_POD_LOCK_TIMEOUT_MS, &s);
                s.dry_run = gc->opts.dry_run;
                if (r >= 0 && pod_session_load(&s, NULL) > 0) {
                        for (size_t j = 0; j < s.st.n_groups; j++) {
                                const char *ctrl = s.st.groups[j].ctrl;
                                _cleanup_(rdt_unlockp) int locked = -EBADF;

                                if (!pod_group_is_held(&s.st, ctrl))
                                        continue;
                                locked = pod_env_lock_resctrl(&gc->env);
                                if (locked >= 0)
                                        fill_counters(gc, &s, ctrl, &available);
                        }
                }
                (void) pod_session_close(&s);
        }
}

/* Does resctrl show an RMID free, fewer groups than it has RMIDs for? One
 * in limbo looks free too: mkdir then says EBUSY. */
static bool rmid_free(const struct gc *gc)
{
        unsigned budget, used;

        return rdt_rmid_budget(gc->env.root_fd, &budget) >= 0 &&
               rdt_groups_count(gc->env.root_fd, &used) >= 0 && used < budget;
}

/* Has a mkdir in ctrl found no RMID this pass? (Arm MPAM limits groups per
 * control group: one can be full while the node has RMIDs for others.) */
static bool ctrl_is_full(const struct gc *gc, const char *ctrl)
{
        for (size_t i = 0; i < gc->n_full; i++)
                if (strcmp(gc->full[i], ctrl) == 0)
                        return true;
        return false;
}

static void note_full(struct gc *gc, const char *ctrl)
{
        char **p = realloc(gc->full, (gc->n_full + 1) * sizeof(*p));

        if (!p)
                return;
        gc->full = p;
        if ((p[gc->n_full] = strdup(ctrl)))
                gc->n_full++;
}

/* The pod's members waiting for an RMID, a control group at a time, where
 * the pod has no group (where it has one, the pass woke them; a record
 * alone is none): woken
 * (wake_waiting) and brought into a group made for them (ensure_group), so
 * that a kill at any point leaves what the next pass completes. Where that
 * fails before mkdir could say why, they wait again: no pending member is
 * left without its group's record. A control group whose mkdir finds no
 * RMID is skipped for the rest of the pass. true when the node has no RMID
 * left. */
static bool bring_in_pod(struct gc *gc, struct pod_session *s)
{
        if (!pod_state_pids_are_ours(&s->st, gc->env.pid_ns))
                return false; /* its pids mean nothing here (foreign_pid_ns) */
        for (size_t i = 0; i < s->st.n_members; i++) {
                _cleanup_free_ char *ctrl = NULL;
                int made;

                if (!pod_member_is_waiting(&s->st.members[i]) ||
                    ctrl_is_full(gc, s->st.members[i].ctrl) ||
                    group_is_there(gc, s, s->st.members[i].ctrl))
                        continue;
                ctrl = strdup(s->st.members[i].ctrl);
                if (!ctrl) {
                        log_error_errno(-ENOMEM, "out of memory");
                        return true;
                }
                if (wake_waiting(gc, s, ctrl) == 0 || s->dry_run)
                        continue;
                made = ensure_group(gc, s, ctrl, MADE_FOR_WAITING);
                if (made < 0 && !pod_state_find_group(&s->st, ctrl))
                        pending_unmonitored(s, ctrl, made == -ETIMEDOUT ? made : -ENOSPC, NULL);
                if (made != -ENOSPC && made != -EBUSY)
                        continue;
                note_full(gc, ctrl);
                if (!rmid_free(gc))
                        return true;
        }
        return false;
}

/* After the pass, which freed the RMIDs of the pods that went: the members
 * left unmonitored for want of one (pod_member_is_waiting) are brought in,
 * the pod whose container has waited longest first, while resctrl shows an
 * RMID free; the next pass goes on. */
static void bring_in_waiting(struct gc *gc)
{
        bool full = false;

        if (gc->n_waiting > 1) /* qsort wants an array, even of nothing */
                qsort(gc->waiting, gc->n_waiting, sizeof(*gc->waiting), age_compare);
        for (size_t i = 0; i < gc->n_waiting && !full && rmid_free(gc); i++) {
                struct pod_session s;
                int r = pod_session_lock(&gc->env, gc->waiting[i].uid, GC_POD_LOCK_TIMEOUT_MS, &s);

                s.dry_run = gc->opts.dry_run;
                if (r >= 0 && pod_session_load(&s, NULL) > 0)
                        full = bring_in_pod(gc, &s);
                (void) pod_session_close(&s);
        }
}

/* STATEDIR_GC_LAST_PASS's mtime to now; a failure costs only that figure. */
static void mark_pass(int state_fd)
{
        _cleanup_close_ int fd = openat(state_fd, STATEDIR_GC_LAST_PASS,
                                        O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0 || futimens(fd, NULL) < 0)
                log_debug("cannot mark the pass in %s: %m", STATEDIR_GC_LAST_PASS);
}

/* Final counters past finalCountersSeconds go, though no pod ends to make
 * its writer remove them (finished.h); a failure costs only the space. */
static void prune_final_counters(const struct pod_env *e)
{
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        r = statedir_open_finished(e->state_fd, true, &dir_fd);
        if (r >= 0)
                r = finished_prune(dir_fd, &FINISHED_LIMITS(e->config->final_counters_sec),
                                   deadline_after_ms(pod_env_wait_ms(e)));
        if (r < 0)
                log_warning_errno(r, "cannot remove expired final counters in stateDir '%s'",
                                  e->config->state_dir);
        else if (r > 0)
                log_debug("removed %d expired records of final counters", r);
}

/* What a pass opens: resctrl, stateDir, the cgroup mounts; whether ABMC
 * assigns the bandwidth counters. 0 or -errno (logged). */
static int gc_open(struct gc *gc, const struct config *c, int proc_fd)
{
        int active, r;

        r = pod_env_open(c, proc_fd, &gc->env);
        if (r < 0)
                return r;
        if (cgroup_mounts_open(proc_fd, &gc->cgroups) < 0)
                log_warning("cannot read the cgroup mounts: no thread joins its group this pass");
        /* Without ABMC no group is asked about its counters. */
        active = abmc_active(gc->env.root_fd);
        if (active < 0)
                log_warning_errno(active, "cannot understand info/L3_MON/mbm_assign_mode; "
                                          "bandwidth counters left as they are");
        gc->abmc = active == 1;
        gc->n_waiting = 0;
        gc->joined = 0;
        gc->busy = false;
        return 0;
}

/* What a pass leaves: nothing open, its report printed. */
static int gc_close(struct gc *gc, int r)
{
        free(TAKE_PTR(gc->waiting));
        for (size_t i = 0; i < gc->n_full; i++)
                free(gc->full[i]);
        free(TAKE_PTR(gc->full));
        gc->n_full = 0;
        pod_env_close(&gc->env);
        cgroup_mounts_close(&gc->cgroups);
        if (r >= 0 && gc->opts.json) {
                json_auto_t *doc =
                    json_pack("{s:b, s:O}", "dry_run", gc->opts.dry_run, "actions", gc->actions);

                if (!doc || json_dumpf(doc, stdout, JSON_COMPACT) < 0)
                        r = log_error_errno(-ENOMEM, "cannot print the report");
                putchar('\n');
        }
        (void) json_array_clear(gc->actions);
        (void) fflush(stdout);
        return r;
}

static int gc_pass(struct gc *gc, const struct config *c, int proc_fd)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        size_t n = 0;
        int r;

        r = gc_open(gc, c, proc_fd);
        if (r >= 0) {
                r = statedir_scan(gc->env.state_fd, &pods, &n);
                if (r < 0)
                        log_error_errno(r, "cannot read state directory '%s'", c->state_dir);
        }
        if (r >= 0 && n > 0 && !(gc->waiting = calloc(n, sizeof(*gc->waiting))))
                r = log_error_errno(-ENOMEM, "out of memory");
        gc->pods_ours = gc->pods_foreign = 0;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = gc_pod(gc, &pods[i]);
        /* Only state of other namespaces: gc may be the one in the wrong
         * namespace (run without hostPID). Not in the initial one, which no
         * namespace lies above: there the others can only be nested
         * runtimes' (kind, Docker-in-Docker sharing /run), each skipped. */
        if (r >= 0 && gc->pods_foreign > 0 && gc->pods_ours == 0 &&
            gc->env.pid_ns != PROC_PID_NS_INIT_INO) {
                log_error("the state of every pod here was written in another pid namespace "
                          "(%llu), gc runs in %llu: run gc in the host pid namespace (hostPID), "
                          "where the hook runs; refusing",
                          (unsigned long long) gc->foreign_ns, (unsigned long long) gc->env.pid_ns);
                r = -EXDEV;
        }
        if (r >= 0)
                bring_in_waiting(gc);
        if (r >= 0 && gc->abmc)
                hand_out_counters(gc, pods, n);
        if (r >= 0 && !gc->opts.dry_run) {
                prune_final_counters(&gc->env);
                mark_pass(gc->env.state_fd);
        }
        return gc_close(gc, r);
}

int gc_pod_now(const struct config *c, int proc_fd, const char *uid, int64_t deadline,
               unsigned *ret_joined)
{
        json_auto_t *actions = json_array();
        struct gc gc = {.env = POD_ENV_INIT, .cgroups = CGROUP_MOUNTS_INIT, .actions = actions};
        struct statedir_pod pod = {.members = true, .intake = true};
        int r;

        *ret_joined = 0;
        if (!actions)
                return log_error_errno(-ENOMEM, "out of memory");
        (void) snprintf(pod.uid, sizeof(pod.uid), "%s", uid);
        r = gc_open(&gc, c, proc_fd);
        if (r >= 0 && !(gc.waiting = calloc(1, sizeof(*gc.waiting))))
                r = log_error_errno(-ENOMEM, "out of memory");
        if (r >= 0) {
                gc.env.deadline = deadline;
                r = gc_pod(&gc, &pod);
        }
        if (r >= 0)
                bring_in_waiting(&gc);
        if (r >= 0 && gc.busy)
                r = -EBUSY;
        *ret_joined = gc.joined;
        return gc_close(&gc, r);
}

int gc_pass_once(const struct config *c, int proc_fd, unsigned *ret_joined)
{
        json_auto_t *actions = json_array();
        struct gc gc = {.env = POD_ENV_INIT, .cgroups = CGROUP_MOUNTS_INIT, .actions = actions};
        int r;

        *ret_joined = 0;
        if (!actions)
                return log_error_errno(-ENOMEM, "out of memory");
        r = gc_pass(&gc, c, proc_fd);
        *ret_joined = gc.joined;
        return r;
}

static void sleep_sec(unsigned sec)
{
        struct timespec left = {.tv_sec = sec};

        while (nanosleep(&left, &left) < 0 && errno == EINTR)
                ;
}

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] gc [OPTIONS]\n"
               "\n"
               "Drops members whose process is gone, removes groups left without members,\n"
               "cleans up after killed hook runs, and re-creates groups removed under live\n"
               "members. Safe beside running hooks. Prints one line per action.\n"
               "\n"
               "Options:\n"
               "  -n, --dry-run             say what would be done, change nothing\n"
               "  -j, --json                one JSON object per pass instead of lines\n"
               "  -i, --interval SECONDS    run a pass every SECONDS, in the foreground\n"
               "  -h, --help                show this help\n");
}

int gc_parse_interval(const char *s, unsigned *ret)
{
        unsigned long v;
        char *end;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (s[0] < '1' || s[0] > '9' || *end != '\0' || errno != 0 || v > GC_INTERVAL_MAX) {
                log_error("--interval takes seconds in [1, %u], not '%s'", GC_INTERVAL_MAX, s);
                return -EINVAL;
        }
        *ret = (unsigned) v;
        return 0;
}

/* gc's options but -h, into the struct gc_opts at userdata. */
static int set_gc_option(int c, const char *arg, void *userdata)
{
        struct gc_opts *o = userdata;

        switch (c) {
        case 'n':
                o->dry_run = true;
                return 0;
        case 'j':
                o->json = true;
                return 0;
        case 'i':
                return gc_parse_interval(arg, &o->interval);
        default:
                return -EINVAL;
        }
}

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_gc_args(int argc, char **argv, struct gc_opts *o)
{
        static const struct option options[] = {
            {"dry-run", no_argument, NULL, 'n'},
            {"json", no_argument, NULL, 'j'},
            {"interval", required_argument, NULL, 'i'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        static const struct command_options gc_options = {
            .shortopts = "nji:h", .longopts = options, .help = help, .set = set_gc_option};

        *o = (struct gc_opts){0};
        return command_parse_options(&gc_options, argc, argv, o);
}

int gc_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_close_ int proc_fd = -EBADF;
        json_auto_t *actions = json_array();
        struct gc gc = {.env = POD_ENV_INIT, .cgroups = CGROUP_MOUNTS_INIT, .actions = actions};
        const struct config *c = &config;
        int r;

        r = parse_gc_args(argc, argv, &gc.opts);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        if (!actions) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        if (command_setup(ctx, &config, &proc_fd) < 0)
                return COMMAND_FAILED;

        /* A pass that cannot run (resctrl not mounted yet, stateDir missing,
         * only pods of another pid namespace so far) is logged and tried
         * again at the next interval: a DaemonSet's gc waits for the node
         * instead of crash-looping. Each pass closes what it opened
         * (gc_close): nothing of resctrl is held across the sleep
         * (pod_env_open_resctrl says why). */
        for (;;) {
                r = gc_pass(&gc, c, proc_fd);
                if (gc.opts.interval == 0)
                        return r < 0 ? COMMAND_FAILED : COMMAND_OK;
                sleep_sec(gc.opts.interval);
        }
}
