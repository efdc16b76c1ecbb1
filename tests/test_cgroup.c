/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "macro.h"
#include "tmptree.h"

static int proc_fd = -EBADF;

static void setup(void)
{
        proc_fd = tmptree_new(NULL);
        tmptree_mkdir(proc_fd, "100");
        tmptree_mkdir(proc_fd, "self");
}

static void teardown(void)
{
        close(proc_fd);
}

static int of(const char *text, struct cgroup_ref *ret)
{
        tmptree_put(proc_fd, "100/cgroup", text);
        return cgroup_of_pid(proc_fd, 100, ret);
}

/* The unified hierarchy where the process is below its root (pure v2, or
 * hybrid with the runtime there); else the first of pids, cpu, memory. */
START_TEST(test_of_pid)
{
        struct cgroup_ref r;

        ck_assert_int_eq(of("0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope\n", &r),
                         0);
        ck_assert_int_eq(r.kind, CGROUP_V2);
        ck_assert_str_eq(r.path, "/kubepods.slice/kubepods-pod1.slice/cri-containerd-ab.scope");
        ck_assert_str_eq(r.controller, "");

        ck_assert_int_eq(of("12:cpu,cpuacct:/kubepods/pod1/ab\n8:pids:/kubepods/pod1/ab\n"
                            "1:name=systemd:/kubepods/pod1/ab\n0::/\n",
                            &r),
                         0);
        ck_assert_int_eq(r.kind, CGROUP_V1);
        ck_assert_str_eq(r.controller, "pids");
        ck_assert_str_eq(r.path, "/kubepods/pod1/ab");

        ck_assert_int_eq(of("4:cpu,cpuacct:/podman/ab\n3:pids:/\n0::/\n", &r), 0);
        ck_assert_str_eq(r.controller, "cpu");
        ck_assert_str_eq(r.path, "/podman/ab");

        /* At the root everywhere: no cgroup of its own. */
        ck_assert_int_eq(of("8:pids:/\n1:cpu:/\n0::/\n", &r), -ENOENT);
        ck_assert_int_eq(of("0::/\n", &r), -ENOENT);
        ck_assert_int_eq(cgroup_of_pid(proc_fd, 101, &r), -ESRCH);
        ck_assert_int_eq(cgroup_of_pid(proc_fd, 0, &r), -EINVAL);
}
END_TEST

/* Paths never leave the mount: ".." (what a cgroup namespace shows of what
 * lies outside it), ".", empty components, control characters, length. */
START_TEST(test_of_pid_refuses)
{
        static const char *const bad[] = {
            "0::/../../kubepods/ab\n", "0::/a/./b\n",     "0::/a//b\n", "0::relative\n",
            "8:pids:/a/..\n0::/\n",    "0::/a\x1b[31m\n", "garbage\n",  "0:/nocolon\n",
        };
        char huge[CGROUP_PATH_MAX + 16];
        struct cgroup_ref r;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(of(bad[i], &r) == -EBADMSG, "%zu: %s", i, bad[i]);
        memset(huge, 'a', sizeof(huge));
        memcpy(huge, "0::/", 4);
        huge[sizeof(huge) - 2] = '\n';
        huge[sizeof(huge) - 1] = '\0';
        ck_assert_int_eq(of(huge, &r), -EBADMSG);
}
END_TEST

START_TEST(test_contains)
{
        struct cgroup_ref a = {.kind = CGROUP_V2, .path = "/kubepods"};
        struct cgroup_ref b = {.kind = CGROUP_V2, .path = "/kubepods/pod1/ab"};
        struct cgroup_ref c = {.kind = CGROUP_V2, .path = "/kubepods-besteffort"};
        struct cgroup_ref root = {.kind = CGROUP_V2, .path = "/"};
        struct cgroup_ref v1 = {.kind = CGROUP_V1, .controller = "pids", .path = "/kubepods"};

        ck_assert_int_eq(cgroup_contains(&a, &b), 1);
        ck_assert_int_eq(cgroup_contains(&a, &a), 1);
        ck_assert_int_eq(cgroup_contains(&b, &a), 0);
        ck_assert_int_eq(cgroup_contains(&a, &c), 0);
        ck_assert_int_eq(cgroup_contains(&root, &c), 1);
        ck_assert_int_eq(cgroup_contains(&v1, &b), 0);
}
END_TEST

/* A mountinfo naming MNT as the hierarchy, the cgroup tree below it. */
static void mountinfo(const char *mnt)
{
        char text[4096];

        (void) snprintf(text, sizeof(text),
                        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                        "50 31 0:40 /sub %s/elsewhere rw - cgroup2 cgroup2 rw\n"
                        "41 31 0:38 / %s/v2 rw,relatime - cgroup2 cgroup2 rw\n"
                        "39 31 0:36 / %s/p\\040ids rw,relatime - cgroup cgroup rw,pids\n",
                        mnt, mnt, mnt);
        tmptree_put(proc_fd, "self/mountinfo", text);
}

START_TEST(test_open_and_threads)
{
        const char *path;
        int top = tmptree_new(&path);
        _cleanup_free_ pid_t *ids = NULL;
        struct cgroup_ref v2 = {.kind = CGROUP_V2, .path = "/kubepods/ab"};
        struct cgroup_ref v1 = {.kind = CGROUP_V1, .controller = "pids", .path = "/podman/cd"};
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        size_t n = 0;
        int fd = -EBADF;

        mountinfo(path);
        tmptree_mkdir(top, "v2");
        tmptree_mkdir(top, "v2/kubepods");
        tmptree_mkdir(top, "v2/kubepods/ab");
        tmptree_put(top, "v2/kubepods/ab/cgroup.threads", "12\n7\nnot-an-id\n30\n");
        tmptree_mkdir(top, "p ids");
        tmptree_mkdir(top, "p ids/podman");
        tmptree_mkdir(top, "p ids/podman/cd");
        tmptree_put(top, "p ids/podman/cd/tasks", "5\n");
        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);
        ck_assert_int_ge(m.v2_fd, 0); /* the one shown from its root, not /sub */
        ck_assert_int_ge(m.v1_fd[0], 0);
        ck_assert_int_lt(m.v1_fd[1], 0); /* cpu: not mounted */

        ck_assert_int_eq(cgroup_open(&m, &v2, &fd), 0);
        ck_assert_int_eq(cgroup_threads(fd, CGROUP_V2, &ids, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(ids[0], 7);
        ck_assert_int_eq(ids[1], 12);
        ck_assert_int_eq(ids[2], 30);
        close(fd);
        free(ids);
        ids = NULL;

        ck_assert_int_eq(cgroup_open(&m, &v1, &fd), 0);
        ck_assert_int_eq(cgroup_threads(fd, CGROUP_V1, &ids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(ids[0], 5);
        close(fd);

        /* Gone, never there, a symlink planted on the way, a bad path. */
        v2 = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/kubepods/gone"};
        ck_assert_int_eq(cgroup_open(&m, &v2, &fd), -ENOENT);
        ck_assert_int_eq(symlinkat("/etc", top, "v2/kubepods/link"), 0);
        v2 = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/kubepods/link/x"};
        ck_assert_int_lt(cgroup_open(&m, &v2, &fd), 0);
        v2 = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/kubepods/link"};
        ck_assert_int_eq(cgroup_open(&m, &v2, &fd), -ENOTDIR);
        v2 = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/kubepods/../../etc"};
        ck_assert_int_eq(cgroup_open(&m, &v2, &fd), -EINVAL);
        v1 = (struct cgroup_ref){.kind = CGROUP_V1, .controller = "memory", .path = "/a"};
        ck_assert_int_eq(cgroup_open(&m, &v1, &fd), -ENOENT); /* not mounted here */
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

/* A container's threads: its cgroup's; its init's where the init is at the
 * root, or in a cgroup that holds the reader too (a system's, not a
 * container's). */
START_TEST(test_container_threads)
{
        const char *path;
        int top = tmptree_new(&path);
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        _cleanup_free_ pid_t *ids = NULL;
        char self[32];
        size_t n = 0;
        bool own = true;

        mountinfo(path);
        tmptree_mkdir(top, "v2");
        tmptree_mkdir(top, "v2/ctr");
        tmptree_put(top, "v2/ctr/cgroup.threads", "100\n101\n250\n");
        tmptree_mkdir(proc_fd, "100/task");
        tmptree_mkdir(proc_fd, "100/task/100");
        tmptree_mkdir(proc_fd, "100/task/102");
        (void) snprintf(self, sizeof(self), "%d", (int) getpid());
        tmptree_mkdir(proc_fd, self);
        tmptree_put(proc_fd, strcat(self, "/cgroup"), "0::/system/hook\n");
        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);
        ck_assert_str_eq(m.self.path, "/system/hook");

        tmptree_put(proc_fd, "100/cgroup", "0::/ctr\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own), 0);
        ck_assert(own);
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(ids[2], 250);
        free(ids);
        ids = NULL;

        tmptree_put(proc_fd, "100/cgroup", "0::/\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own), 0);
        ck_assert(!own);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(ids[0], 100);
        ck_assert_int_eq(ids[1], 102);
        free(ids);
        ids = NULL;

        tmptree_put(proc_fd, "100/cgroup", "0::/system\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own), 0);
        ck_assert(!own);
        ck_assert_uint_eq(n, 2);

        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 300, &ids, &n, &own), -ESRCH);
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

static Suite *cgroup_suite(void)
{
        Suite *s = suite_create("cgroup");
        TCase *tc = tcase_create("cgroup");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_of_pid);
        tcase_add_test(tc, test_of_pid_refuses);
        tcase_add_test(tc, test_contains);
        tcase_add_test(tc, test_open_and_threads);
        tcase_add_test(tc, test_container_threads);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(cgroup_suite());
}
