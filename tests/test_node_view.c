/* SPDX-License-Identifier: Apache-2.0 */
/* The readers' model (hook/node_view.h) of a stateDir on a scratch tree:
 * pods, members live, gone and zombie, waiting ones, a pod of an earlier
 * boot, a finished pod. Neither root nor resctrl. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "finished.h"
#include "fsutil.h"
#include "macro.h"
#include "node_view.h"
#include "pod_state.h"
#include "proc.h"
#include "statedir.h"
#include "tmptree.h"

#define UID_A "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define UID_B "9b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define UID_C "1b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define OTHER_BOOT "00000000-0000-4000-8000-000000000000"

static struct config config;
static int state_fd = -EBADF, proc_fd = -EBADF;
static pid_t zombie = -1;

static void setup(void)
{
        const char *p;
        char path[PATH_MAX];

        (void) close(tmptree_new(&p));
        snprintf(path, sizeof(path), "%s/state", p);
        ck_assert_int_eq(config_init(&config), 0);
        free(config.state_dir);
        config.state_dir = strdup(path);
        ck_assert_ptr_nonnull(config.state_dir);
        ck_assert_int_eq(statedir_open(path, true, &state_fd), 0);
        ck_assert_int_eq(proc_open(&proc_fd), 0);
}

static void teardown(void)
{
        if (zombie > 0) {
                (void) kill(zombie, SIGKILL);
                (void) waitpid(zombie, NULL, 0);
        }
        closep(&proc_fd);
        closep(&state_fd);
        config_done(&config);
}

static uint64_t start_time_of(pid_t pid)
{
        uint64_t t = 0;

        ck_assert_int_eq(proc_start_time(proc_fd, pid, &t), 0);
        return t;
}

/* A child that has exited and is not reaped: a zombie until teardown. */
static pid_t make_zombie(void)
{
        siginfo_t info;
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitid(P_PID, (id_t) pid, &info, WEXITED | WNOWAIT), 0);
        return pid;
}

/* Pod A: this process monitored (live), its pid with another start time
 * (pid reused: gone), a zombie, this process waiting for an RMID (live and
 * waiting), the zombie waiting (not live: does not wait). */
static void save_pod_a(void)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        uint64_t self = start_time_of(getpid());

        zombie = make_zombie();
        ck_assert_int_eq(pod_state_set_pod(&st, "ns", "a"), 0);
        ck_assert_int_eq(pod_state_add_group(&st, "/", true), 0);
        ck_assert_int_eq(pod_state_add_member(&st, "live", "/", getpid(), self, true, NULL), 0);
        ck_assert_int_eq(pod_state_add_member(&st, "reused", "/", getpid(), self + 1, true, NULL),
                         0);
        ck_assert_int_eq(
            pod_state_add_member(&st, "zombie", "/", zombie, start_time_of(zombie), true, NULL), 0);
        ck_assert_int_eq(pod_state_add_member(&st, "waits", "/", getpid(), self, false,
                                              unmonitored_text(UNMONITORED_ENOSPC)),
                         0);
        ck_assert_int_eq(pod_state_add_member(&st, "zombie-waits", "/", zombie,
                                              start_time_of(zombie), false,
                                              unmonitored_text(UNMONITORED_BUSY)),
                         0);
        ck_assert_int_eq(pod_state_save(state_fd, UID_A, &st), 0);
}

/* Pod B: written in an earlier boot, naming this process. */
static void save_pod_b(void)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};

        ck_assert_int_eq(proc_pid_ns(proc_fd, &st.pid_ns), 0);
        memcpy(st.boot_id, OTHER_BOOT, sizeof(st.boot_id));
        ck_assert_int_eq(pod_state_add_group(&st, "/", true), 0);
        ck_assert_int_eq(
            pod_state_add_member(&st, "c", "/", getpid(), start_time_of(getpid()), true, NULL), 0);
        ck_assert_int_eq(pod_state_save(state_fd, UID_B, &st), 0);
}

/* Pod C: finished, its group's final counters kept, made 5 s before its removal. */
static void save_finished_c(void)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        _cleanup_close_ int dir_fd = -EBADF;
        struct finished_pod f = {0};

        ck_assert_int_eq(pod_state_set_pod(&st, "ns", "c"), 0);
        ck_assert_int_eq(pod_state_add_group(&st, "/", true), 0);
        st.groups[0].created_ms = now_unix_ms() - 5000;
        ck_assert_int_eq(finished_pod_init(&f, UID_C, &st, &st.groups[0]), 0);
        f.removed_ms = st.groups[0].created_ms + 5000;
        ck_assert_int_eq(statedir_open_finished(state_fd, true, &dir_fd), 0);
        ck_assert_int_eq(finished_save(dir_fd, &f, &FINISHED_LIMITS(60), now_usec() + 1000000), 0);
        finished_pod_done(&f);
}

static const struct pod_view *member_of(const struct pod_view *pv, const char *id, size_t *ret)
{
        for (size_t i = 0; i < pv->st.n_members; i++)
                if (strcmp(pv->st.members[i].id, id) == 0) {
                        *ret = i;
                        return pv;
                }
        ck_abort_msg("no member %s", id);
        return NULL;
}

START_TEST(test_no_state_dir)
{
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;

        free(config.state_dir);
        config.state_dir = strdup("/nonexistent/state");
        ck_assert_int_eq(node_view_open(&nv, &config), 0);
        ck_assert_int_eq(node_view_read_finished(&nv), 0);
        ck_assert_uint_eq(nv.n_pods, 0);
        ck_assert_uint_eq(nv.n_finished, 0);
        ck_assert_int_eq(nv.watch_live, -ENOENT);
        ck_assert_int_eq(nv.gc_last_pass, 0);
}
END_TEST

START_TEST(test_members_liveness)
{
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;
        const struct pod_view *pv;
        size_t i;

        save_pod_a();
        ck_assert_int_eq(node_view_open(&nv, &config), 0);
        ck_assert_uint_eq(nv.n_pods, 1);
        pv = node_view_pod(&nv, UID_A);
        ck_assert_ptr_nonnull(pv);
        ck_assert_ptr_null(node_view_pod(&nv, UID_B));
        ck_assert_ptr_null(pv->why);
        ck_assert_str_eq(pv->st.pod_name, "a");
        ck_assert_uint_eq(pv->st.n_members, 5);
        ck_assert(member_of(pv, "live", &i)->live[i]);
        ck_assert(!pod_view_member_waits(pv, i));
        ck_assert(!member_of(pv, "reused", &i)->live[i]);
        /* A zombie is gone, as gc drops it. */
        ck_assert(!member_of(pv, "zombie", &i)->live[i]);
        ck_assert(member_of(pv, "waits", &i)->live[i]);
        ck_assert(pod_view_member_waits(pv, i));
        ck_assert(!member_of(pv, "zombie-waits", &i)->live[i]);
        ck_assert(!pod_view_member_waits(pv, i));
        /* No cgroup recorded: nothing to be unseen. */
        ck_assert(!pod_view_cgroup_unseen(&nv, pv));

        ck_assert_int_eq(node_view_read_finished(&nv), 0);
        ck_assert_uint_eq(nv.unmonitored[UNMONITORED_ENOSPC], 1);
        ck_assert_uint_eq(nv.unmonitored[UNMONITORED_BUSY], 1);
        ck_assert_uint_eq(nv.unmonitored[UNMONITORED_OTHER], 0);
        ck_assert_uint_eq(nv.owned, 1);
}
END_TEST

START_TEST(test_earlier_boot)
{
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;
        const struct pod_view *pv;

        save_pod_b();
        ck_assert_int_eq(node_view_open(&nv, &config), 0);
        if (!nv.boot_id[0])
                return; /* this boot unknown: no state is of another */
        pv = node_view_pod(&nv, UID_B);
        ck_assert_ptr_nonnull(pv);
        ck_assert_ptr_nonnull(pv->why);
        ck_assert_ptr_nonnull(strstr(pv->why, OTHER_BOOT));
        ck_assert_uint_eq(pv->st.n_members, 0);
        ck_assert_uint_eq(pv->st.n_groups, 0);
        ck_assert_int_eq(node_view_read_finished(&nv), 0);
        ck_assert_uint_eq(nv.owned, 0);
}
END_TEST

START_TEST(test_finished_and_node)
{
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;
        const struct pod_view *pv;

        save_pod_a();
        save_finished_c();
        tmptree_put(state_fd, STATEDIR_GC_LAST_PASS, "");
        tmptree_put(state_fd, STATEDIR_WATCH_STATE, "garbage\n");
        ck_assert_int_eq(node_view_open(&nv, &config), 0);
        ck_assert_int_gt(nv.gc_last_pass, 0);
        ck_assert_int_le(nv.watch_live, 0); /* no watch runs */
        ck_assert_int_eq(node_view_read_finished(&nv), 0);
        ck_assert_uint_eq(nv.n_pods, 1);
        ck_assert_uint_eq(nv.n_finished, 1);
        pv = &nv.finished[0];
        ck_assert_str_eq(pv->uid, UID_C);
        ck_assert_str_eq(pv->st.pod_name, "c");
        ck_assert_uint_eq(pv->st.n_groups, 1);
        ck_assert_str_eq(pv->st.groups[0].ctrl, "/");
        ck_assert_int_eq(pv->removed_ms - pv->created_ms, 5000);
        /* A finished pod is none of the running ones. */
        ck_assert_ptr_null(node_view_pod(&nv, UID_C));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("node_view");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_no_state_dir);
        tcase_add_test(tc, test_members_liveness);
        tcase_add_test(tc, test_earlier_boot);
        tcase_add_test(tc, test_finished_and_node);
        suite_add_tcase(s, tc);
        return tmptree_run(s);
}
