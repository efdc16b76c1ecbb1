/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "statedir.h"
#include "tmptree.h"

#define UID_A "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define UID_B "9b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"

static int dir_fd = -EBADF;
static char dir_path[PATH_MAX];

static void setup(void)
{
        const char *p;

        dir_fd = tmptree_new(&p);
        snprintf(dir_path, sizeof(dir_path), "%s", p);
}

static void teardown(void)
{
        close(dir_fd);
}

START_TEST(test_open)
{
        char path[PATH_MAX + 32];
        struct stat st;
        int fd = -EBADF;

        umask(022);
        snprintf(path, sizeof(path), "%s/state", dir_path);
        /* A reader never makes it. */
        ck_assert_int_eq(statedir_open(path, false, &fd), -ENOENT);
        ck_assert_int_eq(statedir_open(path, true, &fd), 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        ck_assert_int_eq(fstat(fd, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0700);
        ck_assert_uint_eq(st.st_uid, geteuid());
        close(fd);

        /* Existing, and readable by others, is fine. */
        ck_assert_int_eq(fchmodat(dir_fd, "state", 0755, 0), 0);
        ck_assert_int_eq(statedir_open(path, true, &fd), 0);
        close(fd);
        fd = -EBADF;

        ck_assert_int_eq(fchmodat(dir_fd, "state", 0777, 0), 0);
        ck_assert_int_eq(statedir_open(path, true, &fd), -EPERM);
        /* A reader reads it all the same (check's state-dir row says what is wrong). */
        ck_assert_int_eq(statedir_open(path, false, &fd), 0);
        close(fd);
        fd = -EBADF;
        ck_assert_int_eq(fchmodat(dir_fd, "state", 0720, 0), 0);
        ck_assert_int_eq(statedir_open(path, true, &fd), -EPERM);
        ck_assert_int_eq(fchmodat(dir_fd, "state", 0702, 0), 0);
        ck_assert_int_eq(statedir_open(path, true, &fd), -EPERM);
        ck_assert_int_eq(fd, -EBADF);
}
END_TEST

START_TEST(test_open_refuses)
{
        char path[PATH_MAX + 32];
        int fd = -EBADF, r;

        tmptree_mkdir(dir_fd, "real");
        ck_assert_int_eq(fchmodat(dir_fd, "real", 0700, 0), 0);
        ck_assert_int_eq(symlinkat("real", dir_fd, "link"), 0);
        snprintf(path, sizeof(path), "%s/link", dir_path);
        r = statedir_open(path, true, &fd);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "symlink: %d", r);
        r = statedir_open(path, false, &fd);
        ck_assert_msg(r == -ELOOP || r == -ENOTDIR, "symlink, read: %d", r);
        snprintf(path, sizeof(path), "%s/link/", dir_path);
        ck_assert_int_eq(statedir_open(path, true, &fd), -EINVAL);
        ck_assert_int_eq(statedir_open("", true, &fd), -EINVAL);

        tmptree_put(dir_fd, "file", "");
        snprintf(path, sizeof(path), "%s/file", dir_path);
        ck_assert_int_eq(statedir_open(path, true, &fd), -ENOTDIR);

        /* Only the last component is created. */
        snprintf(path, sizeof(path), "%s/missing/state", dir_path);
        ck_assert_int_eq(statedir_open(path, true, &fd), -ENOENT);
        ck_assert_int_eq(tmptree_count(dir_fd, "."), 3);

        /* Owned by someone else. Only root can give a directory away. */
        if (geteuid() == 0) {
                ck_assert_int_eq(fchownat(dir_fd, "real", 65534, 65534, 0), 0);
                snprintf(path, sizeof(path), "%s/real", dir_path);
                ck_assert_int_eq(statedir_open(path, true, &fd), -EPERM);
        }
        ck_assert_int_eq(fd, -EBADF);
}
END_TEST

/* Every name of a pod's file, from one place. */
START_TEST(test_names)
{
        char name[STATEDIR_NAME_SIZE];

        ck_assert_int_eq(statedir_name(UID_A, STATEDIR_MEMBERS, name), 0);
        ck_assert_str_eq(name, UID_A ".members");
        ck_assert_int_eq(statedir_name(UID_A, STATEDIR_MEMBERS_TMP, name), 0);
        ck_assert_str_eq(name, UID_A ".members.tmp");
        ck_assert_int_eq(statedir_name(UID_A, STATEDIR_LOCK, name), 0);
        ck_assert_str_eq(name, UID_A ".lock");
        ck_assert_int_eq(statedir_name("../x", STATEDIR_LOCK, name), -EINVAL);
        ck_assert_int_eq(statedir_name("", STATEDIR_LOCK, name), -EINVAL);
        ck_assert_int_eq(statedir_name(UID_A "0", STATEDIR_LOCK, name), -EINVAL);
        ck_assert_int_eq(statedir_name(UID_A, (enum statedir_file)(STATEDIR_LOCK + 1), name),
                         -EINVAL);
}
END_TEST

/* The pods of the directory by their files, sorted; nothing else counts. */
START_TEST(test_scan)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        size_t n = 99;

        ck_assert_int_eq(statedir_scan(dir_fd, &pods, &n), 0);
        ck_assert_uint_eq(n, 0);
        /* Made in the reverse of their order. */
        for (char c = 'f'; c >= 'a'; c--) {
                char name[STATEDIR_NAME_SIZE];

                ck_assert_int_eq(statedir_name(UID_A, STATEDIR_LOCK, name), 0);
                name[0] = c;
                tmptree_put(dir_fd, name, "");
        }
        tmptree_put(dir_fd, UID_B ".members", "");
        tmptree_put(dir_fd, UID_B ".members.tmp", "");
        tmptree_put(dir_fd, UID_A ".lock", "");
        tmptree_put(dir_fd, "0B7F4A52-3C1D-4E6F-9A8B-1C2D3E4F5A6B.members", ""); /* not canonical */
        tmptree_put(dir_fd, UID_A ".other", "");
        tmptree_put(dir_fd, STATEDIR_GC_LAST_PASS, "");
        tmptree_put(dir_fd, STATEDIR_OUTCOME_PREFIX "poststop.error", "");
        ck_assert_int_eq(statedir_scan(dir_fd, &pods, &n), 0);
        ck_assert_uint_eq(n, 8);
        for (size_t i = 1; i < n; i++)
                ck_assert_int_lt(strcmp(pods[i - 1].uid, pods[i].uid), 0);
        ck_assert_str_eq(pods[0].uid, UID_A);
        ck_assert(!pods[0].members && pods[0].lock && !pods[0].temp);
        ck_assert_str_eq(pods[1].uid, UID_B);
        ck_assert(pods[1].members && !pods[1].lock && pods[1].temp);
}
END_TEST

/* A removal's mark, per control group: its name by the control group's
 * hash, its age from its mtime; marks are no pod's files. */
START_TEST(test_freed)
{
        _cleanup_free_ struct statedir_pod *pods = NULL;
        char root[STATEDIR_FREED_NAME_SIZE], gold[STATEDIR_FREED_NAME_SIZE];
        struct timespec past[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_sec = 1000}};
        int64_t age = -1;
        size_t n = 99;

        statedir_freed_name("/", root);
        statedir_freed_name("gold", gold);
        ck_assert_str_eq(root, "freed.af63a24c860189fe");
        ck_assert_str_ne(root, gold);
        ck_assert(statedir_is_freed_name(root) && statedir_is_freed_name(gold));
        ck_assert(!statedir_is_freed_name("freed.af63a24c860189f") &&
                  !statedir_is_freed_name("freed.af63a24c860189fex") &&
                  !statedir_is_freed_name("freed.AF63A24C860189FE") &&
                  !statedir_is_freed_name(UID_A ".members"));

        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "gold", &age), -ENOENT);
        ck_assert_int_eq(statedir_mark_freed(dir_fd, "gold"), 0);
        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "gold", &age), 0);
        ck_assert_int_lt(age, 5000);
        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "/", &age), -ENOENT);
        ck_assert_int_eq(utimensat(dir_fd, gold, past, 0), 0);
        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "gold", &age), 0);
        ck_assert_int_gt(age, (int64_t) STATEDIR_FREED_RECENT_SEC * 1000);
        ck_assert_int_eq(statedir_mark_freed(dir_fd, "gold"), 0); /* again: now */
        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "gold", &age), 0);
        ck_assert_int_lt(age, 5000);
        ck_assert_int_eq(symlinkat("gold", dir_fd, root), 0);
        ck_assert_int_eq(statedir_mark_freed(dir_fd, "/"), -ELOOP);
        ck_assert_int_eq(statedir_freed_age_ms(dir_fd, "/", &age), -ENOENT);
        ck_assert_int_eq(statedir_scan(dir_fd, &pods, &n), 0);
        ck_assert_uint_eq(n, 0);
}
END_TEST

static Suite *statedir_suite(void)
{
        Suite *s = suite_create("statedir");
        TCase *tc = tcase_create("statedir");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_open);
        tcase_add_test(tc, test_open_refuses);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_scan);
        tcase_add_test(tc, test_freed);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(statedir_suite());
}
