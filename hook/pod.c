/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "lock.h"
#include "log.h"
#include "macro.h"
#include "pod.h"
#include "proc.h"
#include "rdt.h"
#include "string_table.h"

static void env_init(const struct config *c, int proc_fd, struct pod_env *e)
{
        *e = (struct pod_env) POD_ENV_INIT;
        e->config = c;
        e->proc_fd = proc_fd;
}

/* stateDir, and what names this pid namespace and boot in its files. */
static int env_open_state_dir(struct pod_env *e)
{
        int r = statedir_open(e->config->state_dir, true, &e->state_fd);

        if (r < 0)
                return log_error_errno(r, "cannot open state directory '%s'", e->config->state_dir);
        if (proc_pid_ns(e->proc_fd, &e->pid_ns) < 0)
                e->pid_ns = 0;
        if (proc_boot_id(e->proc_fd, e->boot_id) < 0)
                e->boot_id[0] = '\0';
        return 0;
}

int pod_env_open(const struct config *c, int proc_fd, struct pod_env *e)
{
        int r;

        env_init(c, proc_fd, e);
        r = pod_env_open_resctrl(e);
        if (r < 0)
                return pod_env_resctrl_failed(e, LOG_ERR, r);
        return env_open_state_dir(e);
}

int pod_env_open_state_dir(const struct config *c, int proc_fd, struct pod_env *e)
{
        env_init(c, proc_fd, e);
        return env_open_state_dir(e);
}

int pod_env_open_resctrl(struct pod_env *e)
{
        if (e->root_fd >= 0)
                return 0;
        return rdt_open(e->config->resctrl_path, e->config->require_resctrl_fs, &e->root_fd);
}

int pod_env_resctrl_failed(const struct pod_env *e, int level, int r)
{
        const char *path = e->config->resctrl_path;

        if (r == -ENOMEDIUM)
                return log_errno_at(level, r, "'%s' is not a resctrl mount", path);
        if (r == -EOPNOTSUPP)
                return log_errno_at(level, r, "resctrl at '%s' has no monitoring (no mon_groups)",
                                    path);
        return log_errno_at(level, r, "cannot open resctrl at '%s'", path);
}

void pod_env_close_resctrl(struct pod_env *e)
{
        e->root_fd = safe_close(e->root_fd);
}

unsigned pod_env_wait_ms(const struct pod_env *e)
{
        if (e->deadline == 0)
                return e->config->lock_timeout_ms;
        return deadline_left_ms(e->deadline);
}

int pod_env_lock_resctrl(const struct pod_env *e)
{
        int r = rdt_lock(e->root_fd, pod_env_wait_ms(e));

        if (r < 0)
                return log_error_errno(r, "cannot take the resctrl lock (lockTimeoutMs %u ms)",
                                       e->config->lock_timeout_ms);
        return e->root_fd;
}

int pod_env_take_turn(const struct pod_env *e)
{
        int r;

        assert(rdt_lock_is_held());
        if (!rdt_hold_is_spent())
                return 0;
        r = rdt_lock_yield(e->root_fd, pod_env_wait_ms(e));
        if (r < 0) {
                log_warning_errno(r,
                                  "cannot take the resctrl lock again after letting others "
                                  "have their turn (lockTimeoutMs %u ms); the rest waits for "
                                  "the next pass",
                                  e->config->lock_timeout_ms);
                return -ENOLCK;
        }
        return 1;
}

void pod_env_close(struct pod_env *e)
{
        pod_env_close_resctrl(e);
        e->state_fd = safe_close(e->state_fd);
}

int pod_session_lock(const struct pod_env *e, const char *uid, unsigned timeout_ms,
                     struct pod_session *s)
{
        assert(e && uid && s);
        *s = (struct pod_session){.env = e, .lock_fd = -EBADF};
        if (strlen(uid) != POD_UID_LEN)
                return -EINVAL;
        memcpy(s->uid, uid, POD_UID_LEN + 1);
        (void) statedir_name(uid, STATEDIR_LOCK, s->lock_name);
        return lock_file_acquire(e->state_fd, s->lock_name, timeout_ms, &s->lock_fd);
}

int pod_session_load(struct pod_session *s, char **reterr)
{
        int r = pod_state_load(s->env->state_fd, s->uid, &s->st, reterr);

        if (r < 0 && r != -ENOENT)
                return r;
        s->loaded = true;
        if (r == 0 && pod_state_of_other_boot(&s->st, s->env->boot_id, s->env->pid_ns)) {
                log_warning("state of pod %s was written in an earlier boot (boot_id %s): its "
                            "containers and groups are gone (stateDir belongs on tmpfs)",
                            s->uid, s->st.boot_id);
                pod_state_done(&s->st);
                s->st = (struct pod_state){0};
                s->dirty = true;
        }
        /* A file of an older version gets this boot once: else, never
         * rewritten while its pods run, it would be trusted after a reboot.
         * Never the boot a reader of another pid namespace sees. */
        if (!pod_state_pids_are_ours(&s->st, s->env->pid_ns))
                return r == 0;
        /* This boot unknown (boot_id unreadable): the file keeps its own. */
        if (!s->env->boot_id[0])
                return r == 0;
        if (r == 0 && !s->st.boot_id[0])
                s->dirty = true;
        memcpy(s->st.boot_id, s->env->boot_id, sizeof(s->st.boot_id));
        return r == 0;
}

int pod_session_close(struct pod_session *s)
{
        int r = 0;

        if (s->loaded && !s->dry_run) {
                if (s->st.n_members == 0 && s->st.n_groups == 0) {
                        r = pod_state_remove(s->env->state_fd, s->uid);
                        if (r < 0)
                                log_warning_errno(r,
                                                  "cannot remove state of pod %s in stateDir '%s'",
                                                  s->uid, s->env->config->state_dir);
                        else
                                r = 1;
                        lock_file_release_and_unlink(s->env->state_fd, s->lock_name,
                                                     TAKE_FD(s->lock_fd));
                } else if (s->dirty) {
                        r = pod_state_save(s->env->state_fd, s->uid, &s->st);
                        if (r < 0)
                                log_error_errno(r, "cannot save state of pod %s in stateDir '%s'",
                                                s->uid, s->env->config->state_dir);
                }
        }
        pod_state_done(&s->st);
        closep(&s->lock_fd);
        s->lock_fd = -EBADF;
        return r;
}

int pod_member_is_live(int proc_fd, const struct member *m, const char **ret_why)
{
        uint64_t start_time;
        bool running;
        int r;

        if (m->pid <= 0) {
                *ret_why = "no pid";
                return 0;
        }
        r = proc_start_time_running(proc_fd, m->pid, &start_time, &running);
        if (r == -ESRCH) {
                *ret_why = "gone";
                return 0;
        }
        if (r < 0)
                return r;
        if (start_time != m->start_time) {
                *ret_why = "pid reused";
                return 0;
        }
        if (!running)
                *ret_why = "exited";
        return running;
}

/* On disk, at the start of a member's reason: never changes. */
static const char *const unmonitored_texts[_UNMONITORED_MAX] = {
    [UNMONITORED_ENOSPC] = "out of RMIDs (ENOSPC)",
    [UNMONITORED_EBUSY] = "out of RMIDs, some in limbo (EBUSY)",
    [UNMONITORED_CLASS_MISMATCH] = "class mismatch",
    [UNMONITORED_CTRL_MISSING] = "control group missing",
    [UNMONITORED_PENDING] = "createRuntime did not finish",
    [UNMONITORED_BUSY] = "locks busy past lockTimeoutMs",
    [UNMONITORED_ELSEWHERE] = "init in another monitoring or control group",
    [UNMONITORED_OTHER] = "",
};
DEFINE_STRING_TABLE_TO_STRING(unmonitored_text, unmonitored_texts, enum unmonitored)

static const char *const unmonitored_codes[_UNMONITORED_MAX] = {
    [UNMONITORED_ENOSPC] = "enospc",
    [UNMONITORED_EBUSY] = "ebusy",
    [UNMONITORED_CLASS_MISMATCH] = "class_mismatch",
    [UNMONITORED_CTRL_MISSING] = "ctrl_group_missing",
    [UNMONITORED_PENDING] = "interrupted",
    [UNMONITORED_BUSY] = "busy",
    [UNMONITORED_ELSEWHERE] = "elsewhere",
    [UNMONITORED_OTHER] = "other",
};
DEFINE_STRING_TABLE_TO_STRING(unmonitored_code, unmonitored_codes, enum unmonitored)

enum unmonitored unmonitored_of(const char *reason)
{
        for (int u = 0; reason && u < UNMONITORED_OTHER; u++) {
                const char *text = unmonitored_texts[u];

                /* Pending is the whole reason: it never says more. */
                if (u == UNMONITORED_PENDING ? strcmp(reason, text) == 0 : startswith(reason, text))
                        return (enum unmonitored) u;
        }
        return UNMONITORED_OTHER;
}

int pod_unmonitored_reason(enum unmonitored u, const char *status, char **ret)
{
        if (asprintf(ret, "%s%s%s", unmonitored_text(u), status ? ": " : "", status ? status : "") <
            0)
                return -ENOMEM;
        return 0;
}

bool pod_member_is_pending(const struct member *m)
{
        return !m->monitored && unmonitored_of(m->reason) == UNMONITORED_PENDING;
}

bool pod_member_is_waiting(const struct member *m)
{
        enum unmonitored u = m->monitored ? UNMONITORED_OTHER : unmonitored_of(m->reason);

        return u == UNMONITORED_ENOSPC || u == UNMONITORED_EBUSY || u == UNMONITORED_BUSY;
}

uint64_t pod_member_waited_sec(const struct member *m)
{
        long ticks = sysconf(_SC_CLK_TCK);
        int64_t started = (int64_t) (m->start_time / (uint64_t) (ticks > 0 ? ticks : 100));
        int64_t now = now_boottime_sec();

        return now > started ? (uint64_t) (now - started) : 0;
}

bool pod_group_is_held(const struct pod_state *st, const char *ctrl)
{
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];

                if ((m->monitored || pod_member_is_pending(m)) && strcmp(m->ctrl, ctrl) == 0)
                        return true;
        }
        return false;
}

bool pod_group_has_pending(const struct pod_state *st, const char *ctrl, const char *except_id)
{
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];

                if (pod_member_is_pending(m) && strcmp(m->ctrl, ctrl) == 0 &&
                    (!except_id || strcmp(m->id, except_id) != 0))
                        return true;
        }
        return false;
}

const char *ctrl_display(const char *ctrl)
{
        return strcmp(ctrl, "/") == 0 ? "the root control group" : ctrl;
}
