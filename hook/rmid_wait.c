/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "gc.h"
#include "log.h"
#include "macro.h"
#include "pod.h"
#include "rdt.h"
#include "rmid_wait.h"

/* How long one try may wait for the pod's lock and resctrl's: a pod busy
 * for longer is tried at the next step. */
#define RMID_WAIT_TRY_MS 100u
#define RMID_WAIT_WINDOW_USEC ((int64_t) STATEDIR_FREED_RECENT_SEC * 1000000)

void rmid_wait_init(struct rmid_wait *rw, const struct config *c)
{
        *rw = (struct rmid_wait){
            .per_ctrl = rdt_budget_rule(c->rmid_budget) == RMID_BUDGET_CTRL_GROUP,
            .next_try = INT64_MAX,
        };
}

static void waiter_done(struct rmid_waiter *x)
{
        free(x->ctrl);
}

void rmid_wait_forget_all(struct rmid_wait *rw)
{
        for (size_t i = 0; i < rw->n_waiters; i++)
                waiter_done(&rw->waiters[i]);
        free(TAKE_PTR(rw->waiters));
        rw->n_waiters = 0;
        rw->next_try = INT64_MAX;
}

void rmid_wait_done(struct rmid_wait *rw)
{
        rmid_wait_forget_all(rw);
        free(TAKE_PTR(rw->freed));
        rw->n_freed = 0;
}

/* When a removal that serves ctrl was last seen; 0: none. */
static int64_t freed_at(const struct rmid_wait *rw, const char *ctrl)
{
        char name[STATEDIR_FREED_NAME_SIZE];
        int64_t at = 0;

        statedir_freed_name(ctrl, name);
        for (size_t i = 0; i < rw->n_freed; i++)
                if ((!rw->per_ctrl || strcmp(rw->freed[i].name, name) == 0) && rw->freed[i].at > at)
                        at = rw->freed[i].at;
        return at;
}

/* A container waiting for an RMID (not for the locks: watch's due pods). */
static bool waits_for_rmid(const struct member *m)
{
        return pod_member_is_waiting(m) && unmonitored_of(m->reason) != UNMONITORED_BUSY;
}

/* The entry of (uid, ctrl), made if missing, with the until it had; NULL
 * when out of memory (said). */
static struct rmid_waiter *waiter_get(struct rmid_wait *rw, struct rmid_waiter *old, size_t n_old,
                                      const char *uid, const char *ctrl)
{
        struct rmid_waiter *x, *more;
        int64_t until = 0;

        for (size_t i = 0; i < rw->n_waiters; i++)
                if (strcmp(rw->waiters[i].uid, uid) == 0 && strcmp(rw->waiters[i].ctrl, ctrl) == 0)
                        return &rw->waiters[i];
        for (size_t i = 0; i < n_old; i++)
                if (strcmp(old[i].ctrl, ctrl) == 0)
                        until = old[i].until;
        more = reallocarray(rw->waiters, rw->n_waiters + 1, sizeof(*more));
        if (!more) {
                log_error("out of memory");
                return NULL;
        }
        rw->waiters = more;
        x = &more[rw->n_waiters];
        *x = (struct rmid_waiter){.ctrl = strdup(ctrl), .until = until, .started = UINT64_MAX};
        if (!x->ctrl) {
                log_error("out of memory");
                return NULL;
        }
        (void) snprintf(x->uid, sizeof(x->uid), "%s", uid);
        rw->n_waiters++;
        return x;
}

/* Takes pod uid's entries out of rw into *ret (malloc'd; *ret_n of them). */
static void take_pod(struct rmid_wait *rw, const char *uid, struct rmid_waiter **ret, size_t *ret_n)
{
        size_t kept = 0, n = 0;

        *ret = calloc(rw->n_waiters + 1, sizeof(**ret));
        for (size_t i = 0; i < rw->n_waiters; i++) {
                if (strcmp(rw->waiters[i].uid, uid) != 0)
                        rw->waiters[kept++] = rw->waiters[i];
                else if (*ret)
                        (*ret)[n++] = rw->waiters[i];
                else
                        waiter_done(&rw->waiters[i]);
        }
        rw->n_waiters = kept;
        *ret_n = n;
}

void rmid_wait_note(struct rmid_wait *rw, const char *uid, const struct pod_state *st)
{
        _cleanup_free_ struct rmid_waiter *old = NULL;
        int64_t now = now_usec();
        size_t n_old = 0;

        take_pod(rw, uid, &old, &n_old);
        for (size_t i = 0; st && i < st->n_members; i++) {
                const struct member *m = &st->members[i];
                struct rmid_waiter *x;
                int64_t at;

                if (!waits_for_rmid(m) || !(x = waiter_get(rw, old, n_old, uid, m->ctrl)))
                        continue;
                if (m->start_time < x->started)
                        x->started = m->start_time;
                /* A removal seen before this container waited (its
                 * createRuntime waited for limbo first) serves it too. */
                at = freed_at(rw, m->ctrl);
                if (at > 0 && at + RMID_WAIT_WINDOW_USEC > x->until)
                        x->until = at + RMID_WAIT_WINDOW_USEC;
                if (x->until > now && rw->next_try == INT64_MAX)
                        rw->next_try = now;
        }
        for (size_t i = 0; i < n_old; i++)
                waiter_done(&old[i]);
}

bool rmid_wait_freed(struct rmid_wait *rw, const char *name)
{
        int64_t now = now_usec();
        struct rmid_freed *f = NULL;

        if (!statedir_is_freed_name(name))
                return false;
        for (size_t i = 0; i < rw->n_freed && !f; i++)
                f = strcmp(rw->freed[i].name, name) == 0 ? &rw->freed[i] : NULL;
        if (!f) {
                struct rmid_freed *more = reallocarray(rw->freed, rw->n_freed + 1, sizeof(*more));

                if (!more) {
                        log_error("out of memory");
                        return true;
                }
                rw->freed = more;
                f = &more[rw->n_freed++];
                (void) snprintf(f->name, sizeof(f->name), "%s", name);
        }
        f->at = now;
        for (size_t i = 0; i < rw->n_waiters; i++) {
                char mine[STATEDIR_FREED_NAME_SIZE];

                statedir_freed_name(rw->waiters[i].ctrl, mine);
                if (!rw->per_ctrl || strcmp(mine, name) == 0) {
                        rw->waiters[i].until = now + RMID_WAIT_WINDOW_USEC;
                        rw->next_try = now;
                }
        }
        return true;
}

static int started_compare(const void *a, const void *b)
{
        const struct rmid_waiter *x = a, *y = b;

        if (x->started != y->started)
                return x->started < y->started ? -1 : 1;
        return strcmp(x->uid, y->uid);
}

/* Does pod uid still have a container waiting for an RMID in ctrl, as its
 * member file says now? What cannot be read counts as not. */
static bool still_waits(int state_fd, const char *uid, const char *ctrl)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        bool waits = false;

        if (pod_state_load(state_fd, uid, &st, NULL) < 0)
                return false;
        for (size_t i = 0; i < st.n_members && !waits; i++)
                waits = waits_for_rmid(&st.members[i]) && strcmp(st.members[i].ctrl, ctrl) == 0;
        return waits;
}

/* Is ctrl among the first n control groups that still had no RMID this step
 * (any, where RMIDs are the node's)? */
static bool found_full(const struct rmid_wait *rw, char *const *full, size_t n, const char *ctrl)
{
        for (size_t i = 0; i < n; i++)
                if (!rw->per_ctrl || strcmp(full[i], ctrl) == 0)
                        return true;
        return false;
}

unsigned rmid_wait_try(struct rmid_wait *rw, const struct config *c, int proc_fd, int state_fd)
{
        _cleanup_free_ char **full = calloc(rw->n_waiters + 1, sizeof(*full));
        int64_t now = now_usec();
        unsigned joined = 0;
        size_t n_full = 0;
        bool due = false;

        if (rw->n_waiters > 1) /* the oldest first, as gc's pass brings them in */
                qsort(rw->waiters, rw->n_waiters, sizeof(*rw->waiters), started_compare);
        /* What a try changes reaches rmid_wait_note later, through inotify:
         * the entries stay as they are meanwhile. */
        for (size_t i = 0; full && i < rw->n_waiters; i++) {
                const struct rmid_waiter *x = &rw->waiters[i];
                unsigned j = 0;
                int r;

                due |= x->until > now;
                if (x->until <= now || found_full(rw, full, n_full, x->ctrl))
                        continue;
                r = gc_pod_now(c, proc_fd, x->uid, deadline_after_ms(RMID_WAIT_TRY_MS), &j);
                joined += j;
                if (r != -EBUSY && still_waits(state_fd, x->uid, x->ctrl))
                        full[n_full++] = x->ctrl;
        }
        /* Out of memory: tried again at the next step. */
        rw->next_try = due || !full ? now_usec() + (int64_t) RMID_WAIT_STEP_MS * 1000 : INT64_MAX;
        return joined;
}
