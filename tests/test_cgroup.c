/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "macro.h"
#include "tmptree.h"

static int proc_fd = -EBADF;
/* No hierarchy mounted: paths as /proc/<pid>/cgroup gives them
 * (cgroup_mounts_as_printed, in setup). */
static struct cgroup_mounts none;

static void setup(void)
{
        proc_fd = tmptree_new(NULL);
        tmptree_mkdir(proc_fd, "100");
        tmptree_mkdir(proc_fd, "self");
        cgroup_mounts_as_printed(&none);
}

static void teardown(void)
{
        close(proc_fd);
}

static int of(const char *text, struct cgroup_ref *ret)
{
        tmptree_put(proc_fd, "100/cgroup", text);
        return cgroup_of_pid(proc_fd, &none, 100, ret);
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
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &none, 101, &r), -ESRCH);
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &none, 0, &r), -EINVAL);
}
END_TEST

/* Paths never leave the mount: ".." but where a cgroup namespace shows what
 * lies outside it (leading, and outside any view here), ".", empty
 * components, control characters, length. */
START_TEST(test_of_pid_refuses)
{
        static const char *const bad[] = {
            "0::/a/../b\n",    "0::/../a/../b\n", "0::/a/./b\n",
            "0::/a//b\n",      "0::relative\n",   "8:pids:/a/..\n0::/\n",
            "0::/a\x1b[31m\n", "garbage\n",       "0:/nocolon\n",
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
        ck_assert_int_eq(of("0::/../../kubepods/ab\n", &r), -EXDEV);
        ck_assert_int_eq(of("0::/..\n", &r), -EXDEV);
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
        ck_assert_int_ge(m.v2.fd, 0); /* the one shown from its root, not /sub */
        ck_assert_int_ge(m.v1[0].fd, 0);
        ck_assert_int_lt(m.v1[1].fd, 0); /* cpu: not mounted, */
        ck_assert(!m.v1[1].known);       /* and a fake /proc is no initial cgroup namespace */
        ck_assert(m.v2.known && m.v2.ups == 0 && strcmp(m.v2.ns_root, "/") == 0);
        ck_assert(m.v2.whole);     /* no cgroup.type: a hierarchy's root */
        ck_assert(!m.v1[0].whole); /* no release_agent: not one */

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
        struct cgroup_ref me, cg;
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
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, getpid(), &me), 0);
        ck_assert_str_eq(me.path, "/system/hook");

        tmptree_put(proc_fd, "100/cgroup", "0::/ctr\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own, &cg), 0);
        ck_assert(own);
        ck_assert_str_eq(cg.path, "/ctr"); /* what a joined thread must still be under */
        ck_assert_uint_eq(n, 3);
        ck_assert_int_eq(ids[2], 250);
        free(ids);
        ids = NULL;

        tmptree_put(proc_fd, "100/cgroup", "0::/\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own, NULL), 0);
        ck_assert(!own);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(ids[0], 100);
        ck_assert_int_eq(ids[1], 102);
        free(ids);
        ids = NULL;

        tmptree_put(proc_fd, "100/cgroup", "0::/system\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own, NULL), 0);
        ck_assert(!own);
        ck_assert_uint_eq(n, 2);
        free(TAKE_PTR(ids));

        /* The reader's own cgroup unknown: no cgroup is taken for a container's. */
        ck_assert_int_eq(unlinkat(proc_fd, self, 0), 0);
        tmptree_put(proc_fd, "100/cgroup", "0::/ctr\n");
        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 100, &ids, &n, &own, NULL), 0);
        ck_assert(!own);
        ck_assert_uint_eq(n, 2);

        ck_assert_int_eq(cgroup_container_threads(proc_fd, &m, 300, &ids, &n, &own, NULL), -ESRCH);
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

/* One hierarchy's line, the root included; a v1 one by any controller of its list. */
START_TEST(test_of_pid_in)
{
        struct cgroup_ref r;

        tmptree_put(proc_fd, "100/cgroup", "12:cpu,cpuacct:/kubepods/ab\n8:pids:/\n0::/\n");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V2, NULL, &r), 0);
        ck_assert_int_eq(r.kind, CGROUP_V2);
        ck_assert_str_eq(r.controller, "");
        ck_assert_str_eq(r.path, "/");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V2, "", &r), 0);
        ck_assert_str_eq(r.path, "/");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "cpu", &r), 0);
        ck_assert_int_eq(r.kind, CGROUP_V1);
        ck_assert_str_eq(r.controller, "cpu");
        ck_assert_str_eq(r.path, "/kubepods/ab");
        /* A hierarchy with no view here (none of pids, cpu, memory): not placed. */
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "cpuacct", &r), -EXDEV);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "pids", &r), 0);
        ck_assert_str_eq(r.path, "/");

        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "memory", &r), -ENOENT);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "cpu,cpuacct", &r),
                         -ENOENT);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "", &r), -EINVAL);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, NULL, &r), -EINVAL);
        ck_assert_int_eq(
            cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "a_very_long_controller", &r),
            -EINVAL);
        tmptree_put(proc_fd, "100/cgroup", "8:pids:/a\n");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V2, NULL, &r), -ENOENT);
        tmptree_put(proc_fd, "100/cgroup", "8:pids:/a/../b\n0::/c\n");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V1, "pids", &r), -EBADMSG);
        tmptree_put(proc_fd, "100/cgroup", "garbage\n0::/c\n");
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 100, CGROUP_V2, NULL, &r), -EBADMSG);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 300, CGROUP_V2, NULL, &r), -ESRCH);
        ck_assert_int_eq(cgroup_of_pid_in(proc_fd, &none, 0, CGROUP_V2, NULL, &r), -EINVAL);
}
END_TEST

/* A thread's cgroup against an ancestor, in the ancestor's own hierarchy. */
START_TEST(test_task_is_under)
{
        struct cgroup_ref pod = {.kind = CGROUP_V2, .path = "/kubepods/pod1"};
        struct cgroup_ref pids = {
            .kind = CGROUP_V1, .controller = "pids", .path = "/kubepods/pod1"};
        struct cgroup_ref root = {.kind = CGROUP_V2, .path = "/"};

        /* A thread that leads no thread group has a <proc>/<tid>/ of its own too. */
        tmptree_mkdir(proc_fd, "101");
        tmptree_put(proc_fd, "101/cgroup",
                    "8:pids:/kubepods/pod1/ab/init.scope\n0::/kubepods/pod1/ab/sub\n");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pod), 1);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pids), 1);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &root), 1);

        tmptree_put(proc_fd, "101/cgroup", "8:pids:/kubepods/pod12\n0::/kubepods/pod1\n");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pod), 1);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pids), 0);

        /* Moved out, and a hierarchy the file does not list. */
        tmptree_put(proc_fd, "101/cgroup", "0::/kubepods/pod12/ab\n");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pod), 0);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pids), 0);

        tmptree_put(proc_fd, "101/cgroup", "0::/kubepods/pod1/../x\n");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pod), -EBADMSG);
        tmptree_put(proc_fd, "101/cgroup", "garbage\n");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 101, &pod), -EBADMSG);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &none, 102, &pod), -ESRCH);
}
END_TEST

static void assert_ids(const pid_t *ids, size_t n, const pid_t *want, size_t n_want)
{
        ck_assert_uint_eq(n, n_want);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(ids[i] == want[i], "[%zu]: %d, not %d", i, ids[i], want[i]);
}

/* Every cgroup below ref, each id once, sorted; never through a symlink, nor
 * into ref's parent; a cgroup removed during the walk (its files gone) is
 * skipped. */
START_TEST(test_subtree_threads)
{
        static const pid_t want[] = {5, 10, 20, 30, 40};
        static const pid_t want_v1[] = {5, 6};
        const char *path;
        int top = tmptree_new(&path);
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        struct cgroup_ref ref = {.kind = CGROUP_V2, .path = "/pod/ctr"};
        struct cgroup_ref v1 = {.kind = CGROUP_V1, .controller = "pids", .path = "/podman/cd"};
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 0;
        bool cut = true;

        mountinfo(path);
        tmptree_mkdir(top, "v2");
        tmptree_mkdir(top, "v2/pod");
        tmptree_put(top, "v2/pod/cgroup.threads", "1\n");
        tmptree_mkdir(top, "v2/pod/ctr");
        tmptree_put(top, "v2/pod/ctr/cgroup.threads", "30\n10\n");
        tmptree_mkdir(top, "v2/pod/ctr/init.scope");
        tmptree_put(top, "v2/pod/ctr/init.scope/cgroup.threads", "20\n10\n"); /* 10 moved here */
        tmptree_mkdir(top, "v2/pod/ctr/docker");
        tmptree_put(top, "v2/pod/ctr/docker/cgroup.threads", "");
        tmptree_mkdir(top, "v2/pod/ctr/docker/a");
        tmptree_put(top, "v2/pod/ctr/docker/a/cgroup.threads", "40\n");
        tmptree_mkdir(top, "v2/pod/ctr/docker/a/b");
        tmptree_put(top, "v2/pod/ctr/docker/a/b/cgroup.threads", "5\n");
        tmptree_mkdir(top, "v2/pod/ctr/gone");
        tmptree_mkdir(top, "v2/elsewhere");
        tmptree_put(top, "v2/elsewhere/cgroup.threads", "99\n");
        ck_assert_int_eq(symlinkat("../../elsewhere", top, "v2/pod/ctr/link"), 0);
        tmptree_mkdir(top, "p ids");
        tmptree_mkdir(top, "p ids/podman");
        tmptree_mkdir(top, "p ids/podman/cd");
        tmptree_put(top, "p ids/podman/cd/tasks", "5\n");
        tmptree_mkdir(top, "p ids/podman/cd/sub");
        tmptree_put(top, "p ids/podman/cd/sub/tasks", "6\n");
        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);

        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(!cut);
        assert_ids(ids, n, want, ELEMENTSOF(want));
        free(ids);
        ids = NULL;

        ck_assert_int_eq(cgroup_subtree_threads(&m, &v1, &ids, &n, &cut), 0);
        ck_assert(!cut);
        assert_ids(ids, n, want_v1, ELEMENTSOF(want_v1));
        free(ids);
        ids = NULL;

        /* None at all: no list. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/pod/ctr/docker/a/b"};
        tmptree_put(top, "v2/pod/ctr/docker/a/b/cgroup.threads", "");
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(ids);

        /* ref gone, removed, a symlink, a hierarchy not mounted here. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/pod/none"};
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), -ENOENT);
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/pod/ctr/gone"};
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), -ENOENT);
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/pod/ctr/link"};
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), -ENOTDIR);
        ref = (struct cgroup_ref){.kind = CGROUP_V1, .controller = "memory", .path = "/a"};
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), -ENOENT);
        ck_assert_ptr_null(ids);
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

/* The ids first..last, one a line. */
static char *id_lines(pid_t first, pid_t last)
{
        size_t len = 0;
        char *text = NULL;
        FILE *f = open_memstream(&text, &len);

        ck_assert_ptr_nonnull(f);
        for (pid_t id = first; id <= last; id++)
                fprintf(f, "%d\n", (int) id);
        ck_assert_int_eq(fclose(f), 0);
        return text;
}

/* CGROUP_SUBTREE_DEPTH levels below ref and no deeper; CGROUP_SUBTREE_THREADS
 * ids, those of the cgroups nearer ref first. */
START_TEST(test_subtree_bounds)
{
        const char *path;
        int top = tmptree_new(&path);
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        struct cgroup_ref ref = {.kind = CGROUP_V2, .path = "/d"};
        _cleanup_free_ pid_t *ids = NULL;
        _cleanup_free_ char *text = NULL;
        char dir[256] = "v2/d";
        size_t n = 0;
        bool cut = true;

        mountinfo(path);
        tmptree_mkdir(top, "v2");
        for (int level = 0; level <= CGROUP_SUBTREE_DEPTH; level++) {
                char file[300], id[16];

                if (level > 0)
                        (void) snprintf(dir + strlen(dir), sizeof(dir) - strlen(dir), "/l%d",
                                        level);
                tmptree_mkdir(top, dir);
                (void) snprintf(file, sizeof(file), "%s/cgroup.threads", dir);
                (void) snprintf(id, sizeof(id), "%d\n", level + 1);
                tmptree_put(top, file, id);
        }
        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(!cut);
        ck_assert_uint_eq(n, CGROUP_SUBTREE_DEPTH + 1);
        free(ids);
        ids = NULL;

        /* One level deeper: left out, and said. */
        tmptree_mkdir(top, strcat(dir, "/deeper"));
        tmptree_put(top, strcat(dir, "/cgroup.threads"), "1000\n");
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(cut);
        ck_assert_uint_eq(n, CGROUP_SUBTREE_DEPTH + 1);
        ck_assert_int_eq(ids[n - 1], CGROUP_SUBTREE_DEPTH + 1);
        free(ids);
        ids = NULL;

        /* As many cgroups below ref as the bound: nothing cut; one more
         * (empty, as a container's thousands of cgroups may be): cut. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/wide"};
        tmptree_mkdir(top, "v2/wide");
        tmptree_put(top, "v2/wide/cgroup.threads", "");
        for (int i = 0; i < CGROUP_SUBTREE_CGROUPS; i++) {
                char sub[64];

                (void) snprintf(sub, sizeof(sub), "v2/wide/c%d", i);
                tmptree_mkdir(top, sub);
                (void) snprintf(sub, sizeof(sub), "v2/wide/c%d/cgroup.threads", i);
                tmptree_put(top, sub, "");
        }
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(!cut);
        tmptree_mkdir(top, "v2/wide/one-more");
        tmptree_put(top, "v2/wide/one-more/cgroup.threads", "");
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(cut);

        /* Exactly the bound in ref, none below: nothing cut. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/big"};
        text = id_lines(1000, 1000 + CGROUP_SUBTREE_THREADS - 1);
        tmptree_mkdir(top, "v2/big");
        tmptree_put(top, "v2/big/cgroup.threads", text);
        tmptree_mkdir(top, "v2/big/sub");
        tmptree_put(top, "v2/big/sub/cgroup.threads", "");
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(!cut);
        ck_assert_uint_eq(n, CGROUP_SUBTREE_THREADS);
        free(ids);
        ids = NULL;

        /* One more below ref: ref's own are kept, the newcomer is left out. */
        tmptree_put(top, "v2/big/sub/cgroup.threads", "7\n");
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(cut);
        ck_assert_uint_eq(n, CGROUP_SUBTREE_THREADS);
        ck_assert_int_eq(ids[0], 1000);
        free(ids);
        ids = NULL;

        /* More than the bound in ref itself. */
        free(text);
        text = id_lines(1, CGROUP_SUBTREE_THREADS + 1);
        tmptree_put(top, "v2/big/cgroup.threads", text);
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(cut);
        ck_assert_uint_eq(n, CGROUP_SUBTREE_THREADS);
        ck_assert_int_eq(ids[n - 1], CGROUP_SUBTREE_THREADS);
        free(ids);
        ids = NULL;

        /* A cgroup below listing more than cgroup_threads reads (1 MiB): past
         * the bound, not an error. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/huge"};
        free(text);
        text = id_lines(1000000, 1000000 + 150000);
        tmptree_mkdir(top, "v2/huge");
        tmptree_put(top, "v2/huge/cgroup.threads", "3\n");
        tmptree_mkdir(top, "v2/huge/c");
        tmptree_put(top, "v2/huge/c/cgroup.threads", text);
        ck_assert_int_eq(cgroup_subtree_threads(&m, &ref, &ids, &n, &cut), 0);
        ck_assert(cut);
        ck_assert_uint_eq(n, 1);
        ck_assert_int_eq(ids[0], 3);
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

/* A reader in a cgroup namespace of its own below kubepods/pod1/ctr, the
 * node's tree mounted from its root ("/../../.." in mountinfo), over the
 * namespace's own mount at the same place: paths outside the namespace are
 * translated through it; where the reader is not found, nothing is. */
START_TEST(test_namespace_view)
{
        const char *path;
        int top = tmptree_new(&path);
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        struct cgroup_ref r, pod = {.kind = CGROUP_V2, .path = "/kubepods/pod2"};
        char text[4096], self[32], procs[32];

        (void) snprintf(text, sizeof(text),
                        "41 31 0:38 / %s/v2 ro - cgroup2 cgroup2 rw\n"
                        "42 31 0:38 /../../.. %s/v2 ro - cgroup2 cgroup2 rw\n"
                        "43 31 0:38 /../../../x %s/x ro - cgroup2 cgroup2 rw\n",
                        path, path, path);
        tmptree_put(proc_fd, "self/mountinfo", text);
        tmptree_mkdir(top, "v2");
        tmptree_mkdir(top, "v2/kubepods");
        tmptree_mkdir(top, "v2/kubepods/pod0");
        tmptree_mkdir(top, "v2/kubepods/pod1");
        tmptree_mkdir(top, "v2/kubepods/pod1/ctr");
        tmptree_mkdir(top, "v2/kubepods/pod1/ctr/sub");
        tmptree_mkdir(top, "v2/kubepods/pod2");
        tmptree_put(top, "v2/kubepods/pod0/cgroup.threads", "1\n");
        (void) snprintf(procs, sizeof(procs), "1\n%d\n", (int) getpid());
        tmptree_put(top, "v2/kubepods/pod1/ctr/sub/cgroup.threads", procs);
        (void) snprintf(self, sizeof(self), "%d", (int) getpid());
        tmptree_mkdir(proc_fd, self);
        tmptree_put(proc_fd, strcat(self, "/cgroup"), "0::/sub\n");

        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);
        ck_assert_uint_eq(m.v2.ups, 3);
        ck_assert(m.v2.known);
        ck_assert_str_eq(m.v2.ns_root, "/kubepods/pod1/ctr");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, getpid(), &r), 0);
        ck_assert_str_eq(r.path, "/kubepods/pod1/ctr/sub");
        ck_assert(m.v2.whole);

        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), -ESRCH);
        tmptree_put(proc_fd, "100/cgroup", "0::/../../pod2/c2\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), 0);
        ck_assert_str_eq(r.path, "/kubepods/pod2/c2");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &m, 100, &pod), 1);
        tmptree_put(proc_fd, "100/cgroup", "0::/../../../system.slice/x\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), 0);
        ck_assert_str_eq(r.path, "/system.slice/x");
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &m, 100, &pod), 0);
        tmptree_put(proc_fd, "100/cgroup", "0::/../../..\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), -ENOENT); /* the root */
        tmptree_put(proc_fd, "100/cgroup", "0::/a\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), 0);
        ck_assert_str_eq(r.path, "/kubepods/pod1/ctr/a");
        tmptree_put(proc_fd, "100/cgroup", "0::/\n"); /* the namespace's root itself */
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), 0);
        ck_assert_str_eq(r.path, "/kubepods/pod1/ctr");
        /* Above the mount's root: outside the view. */
        tmptree_put(proc_fd, "100/cgroup", "0::/../../../../y\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), -EXDEV);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &m, 100, &pod), 0);
        cgroup_mounts_close(&m);

        /* The reader in no cgroup below: the view cannot translate. */
        tmptree_put(top, "v2/kubepods/pod1/ctr/sub/cgroup.threads", "1\n");
        ck_assert_int_eq(cgroup_mounts_open(proc_fd, &m), 0);
        ck_assert(!m.v2.known && !m.v2.whole);
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, getpid(), &r), -EXDEV);
        tmptree_put(proc_fd, "100/cgroup", "0::/../../pod2/c2\n");
        ck_assert_int_eq(cgroup_of_pid(proc_fd, &m, 100, &r), -EXDEV);
        ck_assert_int_eq(cgroup_task_is_under(proc_fd, &m, 100, &pod), -EXDEV);
        cgroup_mounts_close(&m);
        close(top);
}
END_TEST

/* In the initial cgroup namespace the mounts show every hierarchy from its
 * root; in a namespace of its own below, the reader finds where its root
 * lies, and its own cgroup reads as before. */
START_TEST(test_real_namespace)
{
        _cleanup_close_ int real = -EBADF;
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        struct cgroup_ref before;
        pid_t child;
        int status;

        real = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(real, 0);
        ck_assert_int_eq(cgroup_mounts_open(real, &m), 0);
        ck_assert(m.v2.fd >= 0 && m.v2.ups == 0 && m.v2.whole);
        ck_assert_int_eq(cgroup_of_pid_in(real, &m, getpid(), CGROUP_V2, NULL, &before), 0);
        cgroup_mounts_close(&m);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                struct cgroup_ref after;
                unsigned depth = 0;

                for (const char *c = before.path; (c = strchr(c, '/')); c++)
                        depth += c[1] != '\0';
                if (unshare(CLONE_NEWCGROUP) < 0)
                        _exit(2);
                if (cgroup_mounts_open(real, &m) < 0 || m.v2.ups != depth || !m.v2.known ||
                    !m.v2.whole)
                        _exit(3);
                if (cgroup_of_pid_in(real, &m, getpid(), CGROUP_V2, NULL, &after) < 0 ||
                    strcmp(after.path, before.path) != 0)
                        _exit(4);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *cgroup_suite(void)
{
        Suite *s = suite_create("cgroup");
        TCase *tc = tcase_create("cgroup");

        /* test_subtree_bounds writes and reads 100,000 ids: seconds under ASan. */
        tcase_set_timeout(tc, 120);

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_of_pid);
        tcase_add_test(tc, test_of_pid_refuses);
        tcase_add_test(tc, test_contains);
        tcase_add_test(tc, test_open_and_threads);
        tcase_add_test(tc, test_container_threads);
        tcase_add_test(tc, test_of_pid_in);
        tcase_add_test(tc, test_task_is_under);
        tcase_add_test(tc, test_subtree_threads);
        tcase_add_test(tc, test_subtree_bounds);
        tcase_add_test(tc, test_namespace_view);
        tcase_add_test(tc, test_real_namespace);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(cgroup_suite());
}
