/* SPDX-License-Identifier: Apache-2.0 */
/* rdt against a fake resctrl tree and a fake /proc, both plain directories.
 * What the fake cannot show: mkdir creates no tasks file (tests create it),
 * a tasks write cannot fail per id (ESRCH of an exiting thread), and the
 * RMID limit; the FUSE emulator covers those. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "rdt.h"
#include "tmptree.h"
#include "wait_for.h"

#define UID "5f0c1e9a-7d4b-4a43-9c1e-0a1b2c3d4e5f"

static int top_fd = -EBADF, root_fd = -EBADF, proc_fd = -EBADF;
static char root_path[PATH_MAX];

static void setup(void)
{
        const char *top;

        top_fd = tmptree_new(&top);
        snprintf(root_path, sizeof(root_path), "%s/resctrl", top);

        tmptree_mkdir(top_fd, "resctrl");
        tmptree_mkdir(top_fd, "resctrl/mon_groups");
        tmptree_mkdir(top_fd, "resctrl/info");
        tmptree_put(top_fd, "resctrl/info/last_cmd_status", "ok\n");
        tmptree_mkdir(top_fd, "resctrl/info/L3_MON");
        tmptree_put(top_fd, "resctrl/info/L3_MON/num_rmids", "32\n");
        tmptree_mkdir(top_fd, "resctrl/g1");
        tmptree_mkdir(top_fd, "resctrl/g1/mon_groups");

        tmptree_mkdir(top_fd, "proc");
        tmptree_mkdir(top_fd, "proc/100");
        tmptree_mkdir(top_fd, "proc/100/task");
        tmptree_mkdir(top_fd, "proc/100/task/100");
        tmptree_mkdir(top_fd, "proc/100/task/101");
        tmptree_mkdir(top_fd, "proc/100/task/102");
        tmptree_put(top_fd, "proc/100/cpu_resctrl_groups", "res:/\nmon:\n");

        /* A place a planted symlink could lead to. */
        tmptree_mkdir(top_fd, "outside");
        tmptree_mkdir(top_fd, "outside/mon_groups");
        tmptree_put(top_fd, "outside/tasks", "");

        ck_assert_int_eq(rdt_open(root_path, false, &root_fd), 0);
        proc_fd = openat(top_fd, "proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(proc_fd, 0);
}

/* The writes' tests hold the lock, as their callers must (rdt.h). */
static void setup_locked(void)
{
        setup();
        ck_assert_int_eq(rdt_lock(root_fd, 1000), 0);
        ck_assert(rdt_lock_is_held());
}

static void teardown(void)
{
        close(proc_fd);
        close(root_fd);
        close(top_fd);
}

/* Without CAP_DAC_OVERRIDE, so that a 0555 directory refuses mkdir. */
static void drop_privileges(void)
{
        if (geteuid() != 0)
                return;
        ck_assert_int_eq(setgroups(0, NULL), 0);
        ck_assert_int_eq(setgid(65534), 0);
        ck_assert_int_eq(setuid(65534), 0);
}

START_TEST(test_ctrl_group_is_valid)
{
        ck_assert(rdt_ctrl_group_is_valid("/"));
        ck_assert(rdt_ctrl_group_is_valid("g1"));
        ck_assert(rdt_ctrl_group_is_valid("mon_groups2"));
        ck_assert(!rdt_ctrl_group_is_valid(NULL));
        ck_assert(!rdt_ctrl_group_is_valid(""));
        ck_assert(!rdt_ctrl_group_is_valid("info"));
        ck_assert(!rdt_ctrl_group_is_valid("mon_groups"));
        ck_assert(!rdt_ctrl_group_is_valid("mon_data"));
        ck_assert(!rdt_ctrl_group_is_valid(".."));
        ck_assert(!rdt_ctrl_group_is_valid("a/b"));
        ck_assert(!rdt_ctrl_group_is_valid("/g1"));
        ck_assert(!rdt_ctrl_group_is_valid("g\n"));
}
END_TEST

START_TEST(test_open)
{
        int fd = -EBADF;
        const char *other;
        int other_fd = tmptree_new(&other);

        /* A plain directory is refused when resctrl is required, never otherwise. */
        ck_assert_int_eq(rdt_open(root_path, true, &fd), -ENOMEDIUM);
        ck_assert_int_eq(fd, -EBADF);
        ck_assert_int_eq(rdt_open(other, false, &fd), -EOPNOTSUPP);
        tmptree_put(other_fd, "mon_groups", "");
        ck_assert_int_eq(rdt_open(other, false, &fd), -EOPNOTSUPP);
        ck_assert_int_eq(rdt_open("/nonexistent/resctrl", false, &fd), -ENOENT);
        ck_assert_int_eq(fd, -EBADF);

        ck_assert_int_eq(rdt_open(root_path, false, &fd), 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        close(fd);
        close(other_fd);
}
END_TEST

START_TEST(test_create)
{
        struct stat st;

        umask(022);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        ck_assert_int_eq(fstatat(top_fd, "resctrl/mon_groups/" UID, &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0755);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 0);

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 1);
        ck_assert_int_eq(fstatat(top_fd, "resctrl/g1/mon_groups/" UID, &st, 0), 0);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 0);

        ck_assert_int_eq(rdt_mon_group_exists(root_fd, "/", UID), 1);
        ck_assert_int_eq(rdt_mon_group_exists(root_fd, "g1", UID), 1);
        ck_assert_int_eq(rdt_mon_group_exists(root_fd, "/", "other"), 0);
        ck_assert_int_eq(rdt_mon_group_exists(root_fd, "g2", UID), 0);
}
END_TEST

START_TEST(test_create_missing_ctrl)
{
        char *status = NULL;

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g2", UID, &status), -ENOENT);
        ck_assert_ptr_null(status);
        ck_assert_int_eq(tmptree_count(top_fd, "resctrl"), 3);
}
END_TEST

START_TEST(test_invalid_names_touch_nothing)
{
        static const char *const bad_names[] = {"", ".", "..", "a/b", "../x", "x\n", "a\tb"};
        static const char *const bad_ctrls[] = {
            "", "..", "info", "mon_groups", "mon_data", "../outside", "g1/mon_groups", "/g1"};
        char *status = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
                const char *n = bad_names[i];

                ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", n, &status), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", n, 100, &status),
                                 -EINVAL);
                ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", n), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_exists(root_fd, "/", n), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_remove(root_fd, "/", n), -EINVAL);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_ctrls); i++) {
                const char *c = bad_ctrls[i];

                ck_assert_int_eq(rdt_mon_group_create(root_fd, c, UID, &status), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, c, UID, 100, &status),
                                 -EINVAL);
                ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, c, UID), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_exists(root_fd, c, UID), -EINVAL);
                ck_assert_int_eq(rdt_mon_group_remove(root_fd, c, UID), -EINVAL);
        }
        ck_assert_ptr_null(status);
        ck_assert_int_eq(tmptree_count(top_fd, "resctrl"), 3);
        ck_assert_int_eq(tmptree_count(top_fd, "resctrl/mon_groups"), 0);
        ck_assert_int_eq(tmptree_count(top_fd, "resctrl/g1/mon_groups"), 0);
        ck_assert_int_eq(tmptree_count(top_fd, "outside/mon_groups"), 0);
        ck_assert_int_eq(tmptree_count(top_fd, "."), 3);
}
END_TEST

START_TEST(test_create_failure_reports_status)
{
        char *status = NULL;

        tmptree_put(top_fd, "resctrl/info/last_cmd_status", "Out of RMIDs\n");
        ck_assert_int_eq(fchmodat(top_fd, "resctrl/mon_groups", 0555, 0), 0);
        drop_privileges();

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, &status), -EACCES);
        ck_assert_str_eq(status, "Out of RMIDs");
        free(status);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), -EACCES);
}
END_TEST

START_TEST(test_symlinked_group_not_followed)
{
        char *status = NULL;
        char *s;
        int r;

        ck_assert_int_eq(symlinkat("../../outside", top_fd, "resctrl/mon_groups/" UID), 0);

        r = rdt_mon_group_create(root_fd, "/", UID, &status);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "create: %d", r);
        r = rdt_mon_group_add_process(root_fd, proc_fd, "/", UID, 100, &status);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "add: %d", r);
        r = rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "is_empty: %d", r);
        r = rdt_mon_group_exists(root_fd, "/", UID);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "exists: %d", r);
        r = rdt_mon_group_remove(root_fd, "/", UID);
        ck_assert_msg(r == -ENOTDIR, "remove: %d", r);

        ck_assert_ptr_null(status);
        s = tmptree_get(top_fd, "outside/tasks");
        ck_assert_str_eq(s, "");
        free(s);
        ck_assert_int_eq(tmptree_count(top_fd, "outside"), 2);
        ck_assert_int_eq(tmptree_count(top_fd, "outside/mon_groups"), 0);
}
END_TEST

START_TEST(test_symlinked_ctrl_not_followed)
{
        char *s;
        int r;

        ck_assert_int_eq(symlinkat("../outside", top_fd, "resctrl/g2"), 0);
        tmptree_mkdir(top_fd, "outside/mon_groups/" UID);
        tmptree_put(top_fd, "outside/mon_groups/" UID "/tasks", "");

        r = rdt_mon_group_create(root_fd, "g2", "new", NULL);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "create: %d", r);
        r = rdt_mon_group_add_process(root_fd, proc_fd, "g2", UID, 100, NULL);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "add: %d", r);
        r = rdt_mon_group_exists(root_fd, "g2", UID);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "exists: %d", r);
        r = rdt_mon_group_remove(root_fd, "g2", UID);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "remove: %d", r);

        ck_assert_int_eq(tmptree_count(top_fd, "outside/mon_groups"), 1);
        s = tmptree_get(top_fd, "outside/mon_groups/" UID "/tasks");
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

START_TEST(test_symlinked_tasks_not_followed)
{
        char *s;

        tmptree_mkdir(top_fd, "resctrl/mon_groups/" UID);
        ck_assert_int_eq(
            symlinkat("../../../outside/tasks", top_fd, "resctrl/mon_groups/" UID "/tasks"), 0);
        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", UID, 100, NULL), -ELOOP);
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), -ELOOP);
        s = tmptree_get(top_fd, "outside/tasks");
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

START_TEST(test_add_process_leader_first)
{
        char *status = NULL;
        char *s;

        /* A non-numeric entry is not a thread. */
        tmptree_mkdir(top_fd, "proc/100/task/self");
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 1);
        tmptree_put(top_fd, "resctrl/g1/mon_groups/" UID "/tasks", "");

        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "g1", UID, 100, &status), 0);
        ck_assert_ptr_null(status);

        /* One id per write: a regular file keeps them in write order. */
        s = tmptree_get(top_fd, "resctrl/g1/mon_groups/" UID "/tasks");
        ck_assert_msg(strcmp(s, "100\n101\n102\n") == 0 || strcmp(s, "100\n102\n101\n") == 0,
                      "tasks: '%s'", s);
        free(s);
}
END_TEST

START_TEST(test_add_process_gone)
{
        char *status = NULL;
        char *s;

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "");

        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", UID, 999, &status),
                         -ESRCH);
        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", UID, 0, &status),
                         -EINVAL);
        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", "other", 100, &status),
                         -ENOENT);
        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "g2", UID, 100, &status),
                         -ENOENT);
        ck_assert_ptr_null(status);
        s = tmptree_get(top_fd, "resctrl/mon_groups/" UID "/tasks");
        ck_assert_str_eq(s, "");
        free(s);

        /* On the fake tree mkdir made no tasks file. */
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 1);
        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "g1", UID, 100, &status),
                         -ENOENT);
}
END_TEST

START_TEST(test_add_process_leader_fails)
{
        struct rlimit rl = {.rlim_cur = 0, .rlim_max = RLIM_INFINITY};
        char *status = NULL;
        char *s;

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "");
        tmptree_put(top_fd, "resctrl/info/last_cmd_status",
                    "No task 100\nError while processing task 100\n");

        /* A file size limit of 0 makes the first write(2) fail (EFBIG). */
        signal(SIGXFSZ, SIG_IGN);
        ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);

        ck_assert_int_eq(rdt_mon_group_add_process(root_fd, proc_fd, "/", UID, 100, &status),
                         -EFBIG);
        ck_assert_str_eq(status, "No task 100; Error while processing task 100");
        free(status);
        s = tmptree_get(top_fd, "resctrl/mon_groups/" UID "/tasks");
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

START_TEST(test_is_empty)
{
        char big[40000];

        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), -ENOENT);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), -ENOENT);

        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "");
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 1);
        tmptree_mkdir(top_fd, "proc/4242");
        tmptree_put(top_fd, "proc/4242/stat",
                    "4242 (sleep) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "4242\n");
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 0);

        /* Exited but not yet reaped, or gone: the kernel still lists zombies. */
        tmptree_put(top_fd, "proc/4242/stat",
                    "4242 (sleep) Z 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 1);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "4242\n4343\n");
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 1);
        tmptree_put(top_fd, "proc/4242/stat",
                    "4242 (sleep) S 1 4242 4242 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 0);

        /* An id well past the first page still counts. */
        tmptree_mkdir(top_fd, "proc/42");
        tmptree_put(top_fd, "proc/42/stat",
                    "42 (sleep) S 1 42 42 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0\n");
        memset(big, '\n', sizeof(big) - 4);
        memcpy(big + sizeof(big) - 4, "42\n", 4);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", big);
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 0);
        memset(big, '\n', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", big);
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 1);
}
END_TEST

START_TEST(test_has_task)
{
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", UID, 42), -ENOENT);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "");
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", UID, 42), 0);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "4242\n142\n420\n");
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", UID, 42), 0);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", "4242\n142\n42\n");
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", UID, 42), 1);
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", UID, 4242), 1);
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "g1", UID, 42), -ENOENT);
        ck_assert_int_eq(rdt_mon_group_has_task(root_fd, "/", "..", 42), -EINVAL);
}
END_TEST

START_TEST(test_is_empty_huge)
{
        size_t len = 2 * 1024 * 1024;
        char *huge = malloc(len + 1);

        ck_assert_ptr_nonnull(huge);
        for (size_t i = 0; i < len; i += 8)
                memcpy(huge + i, "1234567\n", 8);
        huge[len] = '\0';
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        tmptree_put(top_fd, "resctrl/mon_groups/" UID "/tasks", huge);
        ck_assert_int_eq(rdt_mon_group_is_empty(root_fd, proc_fd, "/", UID), 0);
        free(huge);
}
END_TEST

static int collect_group(const char *ctrl, const char *mon, void *userdata)
{
        char *list = userdata;

        snprintf(list + strlen(list), 256 - strlen(list), "%s/%s ", ctrl, mon ? mon : "-");
        return 0;
}

START_TEST(test_groups_foreach)
{
        char list[256] = "";
        unsigned n = 99;

        /* Only g1 holds an RMID so far; info, mon_groups and files are no groups. */
        ck_assert_int_eq(rdt_groups_count(root_fd, &n), 0);
        ck_assert_uint_eq(n, 1);

        ck_assert_int_eq(rdt_mon_group_create(root_fd, "/", UID, NULL), 1);
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 1);
        ck_assert_int_eq(rdt_groups_foreach(root_fd, collect_group, list), 0);
        ck_assert_str_eq(list, "//" UID " g1/- g1/" UID " ");
        ck_assert_int_eq(rdt_groups_count(root_fd, &n), 0);
        ck_assert_uint_eq(n, 3);
}
END_TEST

START_TEST(test_remove)
{
        ck_assert_int_eq(rdt_mon_group_create(root_fd, "g1", UID, NULL), 1);
        /* rmdir of a kernfs group works with its files in place; a tmpfs one must be empty. */
        ck_assert_int_eq(rdt_mon_group_remove(root_fd, "g1", UID), 0);
        ck_assert_int_eq(rdt_mon_group_exists(root_fd, "g1", UID), 0);
        ck_assert_int_eq(rdt_mon_group_remove(root_fd, "g1", UID), 0);
        ck_assert_int_eq(rdt_mon_group_remove(root_fd, "g2", UID), 0);
        ck_assert_int_eq(rdt_mon_group_remove(root_fd, "/", UID), 0);

        ck_assert_int_eq(tmptree_count(top_fd, "resctrl/g1"), 1);
        ck_assert_int_eq(tmptree_count(top_fd, "resctrl/g1/mon_groups"), 0);
}
END_TEST

START_TEST(test_rmid_budget)
{
        unsigned n = 0;

        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), 0);
        ck_assert_uint_eq(n, 31);

        tmptree_mkdir(top_fd, "resctrl/info/PERF_PKG_MON");
        tmptree_put(top_fd, "resctrl/info/PERF_PKG_MON/num_rmids", "576\n");
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), 0);
        ck_assert_uint_eq(n, 31);
        tmptree_put(top_fd, "resctrl/info/PERF_PKG_MON/num_rmids", "16\n");
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), 0);
        ck_assert_uint_eq(n, 15);

        tmptree_put(top_fd, "resctrl/info/L3_MON/num_rmids", "abc\n");
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), -EBADMSG);
        tmptree_put(top_fd, "resctrl/info/L3_MON/num_rmids", "0\n");
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), -EBADMSG);
        tmptree_put(top_fd, "resctrl/info/L3_MON/num_rmids", "-5\n");
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), -EBADMSG);

        ck_assert_int_eq(unlinkat(top_fd, "resctrl/info/L3_MON/num_rmids", 0), 0);
        ck_assert_int_eq(unlinkat(top_fd, "resctrl/info/L3_MON", AT_REMOVEDIR), 0);
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), 0);
        ck_assert_uint_eq(n, 15);
        ck_assert_int_eq(unlinkat(top_fd, "resctrl/info/PERF_PKG_MON/num_rmids", 0), 0);
        ck_assert_int_eq(unlinkat(top_fd, "resctrl/info/PERF_PKG_MON", AT_REMOVEDIR), 0);
        n = 7;
        ck_assert_int_eq(rdt_rmid_budget(root_fd, &n), -ENOENT);
        ck_assert_uint_eq(n, 7);
}
END_TEST

/* Arm MPAM: num_rmids is PMGs times PARTIDs, PARTIDs the smallest
 * num_closids of any resource: with MB alone (no L3 control), or with CDP. */
START_TEST(test_mon_groups_per_ctrl)
{
        unsigned n = 0;

        ck_assert_int_eq(rdt_mon_groups_per_ctrl(root_fd, &n), -ENOENT); /* no num_closids */
        tmptree_mkdir(top_fd, "resctrl/info/MB");
        tmptree_put(top_fd, "resctrl/info/MB/num_closids", "8\n");
        ck_assert_int_eq(rdt_mon_groups_per_ctrl(root_fd, &n), 0);
        ck_assert_uint_eq(n, 3); /* 32 / 8, less each control group's own */
        tmptree_mkdir(top_fd, "resctrl/info/L3CODE");
        tmptree_put(top_fd, "resctrl/info/L3CODE/num_closids", "4\n");
        tmptree_mkdir(top_fd, "resctrl/info/L3DATA");
        tmptree_put(top_fd, "resctrl/info/L3DATA/num_closids", "4\n");
        ck_assert_int_eq(rdt_mon_groups_per_ctrl(root_fd, &n), 0);
        ck_assert_uint_eq(n, 7);
        tmptree_put(top_fd, "resctrl/info/MB/num_closids", "64\n"); /* more PARTIDs than RMIDs */
        tmptree_put(top_fd, "resctrl/info/L3CODE/num_closids", "64\n");
        tmptree_put(top_fd, "resctrl/info/L3DATA/num_closids", "64\n");
        ck_assert_int_eq(rdt_mon_groups_per_ctrl(root_fd, &n), -EBADMSG);
}
END_TEST

START_TEST(test_budget_rule)
{
        struct utsname u;
        bool arm;

        ck_assert_int_eq(uname(&u), 0);
        arm = strcmp(u.machine, "aarch64") == 0;
        ck_assert_int_eq(rdt_budget_rule(RMID_BUDGET_NODE), RMID_BUDGET_NODE);
        ck_assert_int_eq(rdt_budget_rule(RMID_BUDGET_CTRL_GROUP), RMID_BUDGET_CTRL_GROUP);
        ck_assert_int_eq(rdt_budget_rule(RMID_BUDGET_AUTO),
                         arm ? RMID_BUDGET_CTRL_GROUP : RMID_BUDGET_NODE);
}
END_TEST

static int task_ctrl_group(const char *content, char **ret)
{
        tmptree_put(top_fd, "proc/100/cpu_resctrl_groups", content);
        return rdt_task_ctrl_group(proc_fd, 100, ret);
}

START_TEST(test_task_ctrl_group)
{
        static const char *const malformed[] = {
            "",
            "garbage\n",
            "res:/",
            "res:/\n",
            "res:info\nmon:\n",
            "res:/g1/mon_groups/m\nmon:\n",
            "mon:\nres:/\n",
            "res:..\nmon:\n",
            "res:a b\tc\nmon:\n",
        };
        char *ctrl = NULL;

        ck_assert_int_eq(task_ctrl_group("res:/\nmon:\n", &ctrl), 0);
        ck_assert_str_eq(ctrl, "/");
        free(ctrl);
        ck_assert_int_eq(task_ctrl_group("res:/\nmon:m0\n", &ctrl), 0);
        ck_assert_str_eq(ctrl, "/");
        free(ctrl);
        ck_assert_int_eq(task_ctrl_group("res:g1\nmon:m1\n", &ctrl), 0);
        ck_assert_str_eq(ctrl, "g1");
        free(ctrl);
        ctrl = NULL;

        ck_assert_int_eq(task_ctrl_group("res:\nmon:\n", &ctrl), -ENODATA);
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++)
                ck_assert_msg(task_ctrl_group(malformed[i], &ctrl) == -EBADMSG, "'%s'",
                              malformed[i]);
        ck_assert_ptr_null(ctrl);

        ck_assert_int_eq(rdt_task_ctrl_group(proc_fd, 999, &ctrl), -ENOENT);
        ck_assert_int_eq(unlinkat(top_fd, "proc/100/cpu_resctrl_groups", 0), 0);
        ck_assert_int_eq(rdt_task_ctrl_group(proc_fd, 100, &ctrl), -ENOENT);
        ck_assert_ptr_null(ctrl);
}
END_TEST

static int task_mon_group(const char *content, char **ret_ctrl, char **ret_mon)
{
        tmptree_put(top_fd, "proc/100/cpu_resctrl_groups", content);
        return rdt_task_mon_group(proc_fd, 100, ret_ctrl, ret_mon);
}

/* Both lines of the kernel's table (resctrl.md §5); a mon name is a plain name. */
START_TEST(test_task_mon_group)
{
        static const char *const malformed[] = {
            "res:/\n",
            "mon:m1\nres:/\n",
            "res:g1\nmon:..\n",
            "res:g1\nmon:.\n",
            "res:g1\nmon:a/b\n",
            "res:g1\nmon:/g1/mon_groups/m1\n",
            "res:g1\nmon:m\t1\n",
            "res:info\nmon:m1\n",
        };
        char *ctrl = NULL, *mon = NULL;

        ck_assert_int_eq(task_mon_group("res:/\nmon:\n", &ctrl, &mon), 0);
        ck_assert_str_eq(ctrl, "/");
        ck_assert_ptr_null(mon);
        free(ctrl);
        ck_assert_int_eq(task_mon_group("res:/\nmon:m0\n", &ctrl, &mon), 0);
        ck_assert_str_eq(ctrl, "/");
        ck_assert_str_eq(mon, "m0");
        free(ctrl);
        free(mon);
        ck_assert_int_eq(task_mon_group("res:g1\nmon:\n", &ctrl, &mon), 0);
        ck_assert_str_eq(ctrl, "g1");
        ck_assert_ptr_null(mon);
        free(ctrl);
        ck_assert_int_eq(task_mon_group("res:g1\nmon:" UID "\n", &ctrl, &mon), 0);
        ck_assert_str_eq(ctrl, "g1");
        ck_assert_str_eq(mon, UID);
        free(ctrl);
        free(mon);
        ctrl = mon = NULL;

        ck_assert_int_eq(task_mon_group("res:\nmon:\n", &ctrl, &mon), -ENODATA);
        for (size_t i = 0; i < ELEMENTSOF(malformed); i++) {
                ck_assert_msg(task_mon_group(malformed[i], &ctrl, &mon) == -EBADMSG, "'%s'",
                              malformed[i]);
                /* One parser: what one refuses, so does the other. */
                ck_assert_int_eq(rdt_task_ctrl_group(proc_fd, 100, &ctrl), -EBADMSG);
        }
        ck_assert_ptr_null(ctrl);
        ck_assert_ptr_null(mon);

        /* A thread that leads no thread group has its own /proc/<tid>/. */
        tmptree_mkdir(top_fd, "proc/101");
        tmptree_put(top_fd, "proc/101/cpu_resctrl_groups", "res:g1\nmon:pqos\n");
        ck_assert_int_eq(rdt_task_mon_group(proc_fd, 101, &ctrl, &mon), 0);
        ck_assert_str_eq(ctrl, "g1");
        ck_assert_str_eq(mon, "pqos");
        free(ctrl);
        free(mon);
        ctrl = mon = NULL;

        ck_assert_int_eq(rdt_task_mon_group(proc_fd, 999, &ctrl, &mon), -ENOENT);
        ck_assert_int_eq(rdt_task_mon_group(proc_fd, 0, &ctrl, &mon), -EINVAL);
        ck_assert_ptr_null(ctrl);
        ck_assert_ptr_null(mon);
}
END_TEST

static void assert_ids(const pid_t *ids, size_t n, const pid_t *want, size_t n_want)
{
        ck_assert_uint_eq(n, n_want);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(ids[i] == want[i], "[%zu]: %d, not %d", i, ids[i], want[i]);
}

/* What the other monitoring groups of one control group hold: ours left
 * out, each id once, sorted; a group removed meanwhile (its tasks gone) and
 * other control groups' ignored; never through a symlink. */
START_TEST(test_ctrl_mon_tasks)
{
        static const pid_t others[] = {7, 100, 200, 300};
        static const pid_t all[] = {7, 50, 100, 200, 300};
        static const pid_t root[] = {400};
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 99;
        int r;

        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "g1", UID, &ids, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(ids);

        tmptree_mkdir(top_fd, "resctrl/g1/mon_groups/pqos");
        /* 100 listed twice: it moved during the scan. No final newlines, so
         * that the texts would run together in either order. */
        tmptree_put(top_fd, "resctrl/g1/mon_groups/pqos/tasks", "300\n100");
        tmptree_mkdir(top_fd, "resctrl/g1/mon_groups/other");
        tmptree_put(top_fd, "resctrl/g1/mon_groups/other/tasks", "200\n100\n7");
        tmptree_mkdir(top_fd, "resctrl/g1/mon_groups/" UID);
        tmptree_put(top_fd, "resctrl/g1/mon_groups/" UID "/tasks", "50\n");
        tmptree_mkdir(top_fd, "resctrl/g1/mon_groups/gone");
        tmptree_mkdir(top_fd, "resctrl/mon_groups/m0");
        tmptree_put(top_fd, "resctrl/mon_groups/m0/tasks", "400\n");

        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "g1", UID, &ids, &n), 0);
        assert_ids(ids, n, others, ELEMENTSOF(others));
        free(ids);
        ids = NULL;
        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "g1", NULL, &ids, &n), 0);
        assert_ids(ids, n, all, ELEMENTSOF(all));
        free(ids);
        ids = NULL;
        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "/", UID, &ids, &n), 0);
        assert_ids(ids, n, root, ELEMENTSOF(root));
        free(ids);
        ids = NULL;
        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "/", "m0", &ids, &n), 0);
        ck_assert_uint_eq(n, 0);

        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "g2", NULL, &ids, &n), -ENOENT);
        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "info", NULL, &ids, &n), -EINVAL);
        ck_assert_int_eq(rdt_ctrl_mon_tasks(root_fd, "../outside", NULL, &ids, &n), -EINVAL);

        tmptree_put(top_fd, "outside/tasks", "666\n");
        ck_assert_int_eq(symlinkat("../outside", top_fd, "resctrl/g2"), 0);
        r = rdt_ctrl_mon_tasks(root_fd, "g2", NULL, &ids, &n);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "ctrl: %d", r);
        ck_assert_int_eq(symlinkat("../../../outside", top_fd, "resctrl/g1/mon_groups/planted"), 0);
        r = rdt_ctrl_mon_tasks(root_fd, "g1", UID, &ids, &n);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "mon: %d", r);
        ck_assert_ptr_null(ids);
}
END_TEST

/* Back into the control group's own tasks: "tasks" of the root for "/". */
START_TEST(test_ctrl_add_task)
{
        char *s;
        int r;

        tmptree_put(top_fd, "resctrl/tasks", "");
        tmptree_put(top_fd, "resctrl/g1/tasks", "");
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "g1", 101), 0);
        s = tmptree_get(top_fd, "resctrl/g1/tasks");
        ck_assert_str_eq(s, "101\n");
        free(s);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "/", 102), 0);
        s = tmptree_get(top_fd, "resctrl/tasks");
        ck_assert_str_eq(s, "102\n");
        free(s);

        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "g2", 101), -ENOENT);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "info", 101), -EINVAL);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "mon_groups", 101), -EINVAL);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "../outside", 101), -EINVAL);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "g1", 0), -EINVAL);

        /* Neither a planted control group nor a planted tasks file is followed. */
        ck_assert_int_eq(symlinkat("../outside", top_fd, "resctrl/g2"), 0);
        r = rdt_ctrl_add_task(root_fd, "g2", 101);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "ctrl: %d", r);
        ck_assert_int_eq(unlinkat(top_fd, "resctrl/g1/tasks", 0), 0);
        ck_assert_int_eq(symlinkat("../../outside/tasks", top_fd, "resctrl/g1/tasks"), 0);
        ck_assert_int_eq(rdt_ctrl_add_task(root_fd, "g1", 101), -ELOOP);
        s = tmptree_get(top_fd, "outside/tasks");
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

START_TEST(test_lock_times_out)
{
        int ready[2];
        pid_t child;
        char c;

        ck_assert_int_eq(pipe(ready), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                /* Its own open of the root, as another hook process would have. */
                int fd = -EBADF;

                if (rdt_open(root_path, false, &fd) < 0 || rdt_lock(fd, 1000) < 0)
                        _exit(1);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        ck_assert_int_eq(read(ready[0], &c, 1), 1);

        ck_assert_int_eq(rdt_lock(root_fd, 100), -ETIMEDOUT);
        kill(child, SIGKILL);
        /* flock belongs to the open file description: the holder's death frees it. */
        ck_assert_int_eq(rdt_lock(root_fd, 10000), 0);
        rdt_unlock(root_fd);
}
END_TEST

/* A lock held through rdt_unlockp is let go of where its scope ends; a
 * holder of none (a take that failed) lets go of nothing. */
/* What the contracts' assert()s ask: held exclusive, from rdt_lock until
 * rdt_unlock; a shared hold is no writer's. */
START_TEST(test_lock_is_held)
{
        ck_assert(!rdt_lock_is_held());
        ck_assert_int_eq(rdt_lock(root_fd, 100), 0);
        ck_assert(rdt_lock_is_held());
        rdt_unlock(root_fd);
        ck_assert(!rdt_lock_is_held());
        ck_assert_int_eq(rdt_lock_shared(root_fd, 100), 0);
        ck_assert(!rdt_lock_is_held());
        rdt_unlock(root_fd);
}
END_TEST

START_TEST(test_unlockp_lets_go_at_scope_end)
{
        _cleanup_close_ int other = -EBADF;

        ck_assert_int_eq(rdt_open(root_path, false, &other), 0);
        {
                _cleanup_(rdt_unlockp) int locked = -EBADF;

                ck_assert_int_eq(rdt_lock(root_fd, 100), 0);
                locked = root_fd;
                ck_assert_int_eq(rdt_lock(other, 50), -ETIMEDOUT);
        }
        ck_assert_int_eq(rdt_lock(other, 100), 0);
        {
                _cleanup_(rdt_unlockp) int locked = rdt_lock(root_fd, 50);

                ck_assert_int_eq(locked, -ETIMEDOUT);
        }
        ck_assert_int_eq(rdt_lock(root_fd, 50), -ETIMEDOUT);
        rdt_unlock(other);
}
END_TEST

/* A writer that finds the root's lock free takes it at once, whoever holds
 * the turnstile; one that finds it taken waits through the turnstile; a
 * reader always does. */
START_TEST(test_lock_free_needs_no_turnstile)
{
        _cleanup_close_ int other = -EBADF, turnstile = -EBADF;

        ck_assert_int_eq(rdt_open(root_path, false, &other), 0);
        turnstile = openat(root_fd, "info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(turnstile, 0);
        ck_assert_int_eq(flock(turnstile, LOCK_EX | LOCK_NB), 0);

        ck_assert_int_eq(rdt_lock(root_fd, 50), 0);
        rdt_unlock(root_fd);
        ck_assert_int_eq(rdt_lock_shared(root_fd, 50), -ETIMEDOUT);
        ck_assert_int_eq(flock(other, LOCK_SH | LOCK_NB), 0);
        ck_assert_int_eq(rdt_lock(root_fd, 50), -ETIMEDOUT);

        ck_assert_int_eq(flock(turnstile, LOCK_UN), 0);
        ck_assert_int_eq(rdt_lock_shared(root_fd, 50), 0);
        rdt_unlock(root_fd);
        ck_assert_int_eq(rdt_lock(root_fd, 50), -ETIMEDOUT); /* the reader holds it */
        rdt_unlock(other);
        ck_assert_int_eq(rdt_lock(root_fd, 50), 0);
        rdt_unlock(root_fd);
}
END_TEST

/* Adds ms to t. */
static void add_ms(struct timespec *t, long ms)
{
        t->tv_nsec += ms * 1000000;
        t->tv_sec += t->tv_nsec / 1000000000;
        t->tv_nsec %= 1000000000;
}

/* A reader that cannot take the lock says so ('f'): the other keeps the
 * pipe open, so its end alone would not tell. */
static _Noreturn void reader_failed(int pipe_fd)
{
        (void) !write(pipe_fd, "f", 1);
        _exit(1);
}

/* Two readers on a fixed clock so that one always holds the shared lock (each
 * holds 15 ms of every 20, 10 ms apart), as overlapping scrapes do: a writer
 * still gets the lock, through the turnstile that keeps new readers out
 * while it waits. Polling alone, it would wait for a gap that never comes.
 * The writer starts once both readers have held the lock. */
START_TEST(test_lock_readers_cannot_starve_a_writer)
{
        struct timespec start;
        pid_t readers[2];
        int running[2];
        char c;

        ck_assert_int_eq(pipe(running), 0);
        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &start), 0);
        add_ms(&start, 100);
        for (int i = 0; i < 2; i++) {
                readers[i] = fork();
                ck_assert_int_ge(readers[i], 0);
                if (readers[i] == 0) {
                        struct timespec at = start;
                        int fd = -EBADF;

                        if (rdt_open(root_path, false, &fd) < 0)
                                reader_failed(running[1]);
                        add_ms(&at, i * 10);
                        for (bool first = true;; first = false) {
                                (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
                                if (rdt_lock_shared(fd, 60000) < 0)
                                        reader_failed(running[1]);
                                if (first && write(running[1], "r", 1) != 1)
                                        _exit(1);
                                add_ms(&at, 15);
                                (void) clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
                                rdt_unlock(fd);
                                add_ms(&at, 5);
                        }
                }
        }
        close(running[1]);
        for (int i = 0; i < 2; i++) {
                ck_assert_int_eq(read(running[0], &c, 1), 1);
                ck_assert_msg(c == 'r', "a reader could not take the lock");
        }

        ck_assert_int_eq(rdt_lock(root_fd, WAIT_PROCESS_MS), 0);
        rdt_unlock(root_fd);
        for (int i = 0; i < 2; i++) {
                kill(readers[i], SIGKILL);
                ck_assert_int_eq(waitpid(readers[i], NULL, 0), readers[i]);
        }
        close(running[0]);
}
END_TEST

static Suite *rdt_suite(void)
{
        Suite *s = suite_create("rdt");
        TCase *tc = tcase_create("fake-tree");
        TCase *lock = tcase_create("lock");

        tcase_add_checked_fixture(tc, setup_locked, teardown);
        tcase_add_test(tc, test_ctrl_group_is_valid);
        tcase_add_test(tc, test_open);
        tcase_add_test(tc, test_create);
        tcase_add_test(tc, test_create_missing_ctrl);
        tcase_add_test(tc, test_invalid_names_touch_nothing);
        tcase_add_test(tc, test_create_failure_reports_status);
        tcase_add_test(tc, test_symlinked_group_not_followed);
        tcase_add_test(tc, test_symlinked_ctrl_not_followed);
        tcase_add_test(tc, test_symlinked_tasks_not_followed);
        tcase_add_test(tc, test_add_process_leader_first);
        tcase_add_test(tc, test_add_process_gone);
        tcase_add_test(tc, test_add_process_leader_fails);
        tcase_add_test(tc, test_is_empty);
        tcase_add_test(tc, test_is_empty_huge);
        tcase_add_test(tc, test_groups_foreach);
        tcase_add_test(tc, test_has_task);
        tcase_add_test(tc, test_remove);
        tcase_add_test(tc, test_mon_groups_per_ctrl);
        tcase_add_test(tc, test_budget_rule);
        tcase_add_test(tc, test_rmid_budget);
        tcase_add_test(tc, test_task_ctrl_group);
        tcase_add_test(tc, test_task_mon_group);
        tcase_add_test(tc, test_ctrl_mon_tasks);
        tcase_add_test(tc, test_ctrl_add_task);
        suite_add_tcase(s, tc);
        tcase_add_checked_fixture(lock, setup, teardown);
        tcase_add_test(lock, test_lock_times_out);
        tcase_add_test(lock, test_lock_is_held);
        tcase_add_test(lock, test_unlockp_lets_go_at_scope_end);
        tcase_add_test(lock, test_lock_readers_cannot_starve_a_writer);
        tcase_add_test(lock, test_lock_free_needs_no_turnstile);
        suite_add_tcase(s, lock);
        return s;
}

int main(void)
{
        return tmptree_run(rdt_suite());
}
