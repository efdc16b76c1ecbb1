/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "runtime_cgroup.h"
#include "tmptree.h"

#define UID "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"

static int proc_fd = -EBADF;
static char self[32];

/* A fake /proc with the container's init at 100 and the caller (the hook, in
 * its runtime's cgroup) at getpid(). */
/* No hierarchy mounted: paths as /proc/<pid>/cgroup gives them
 * (cgroup_mounts_as_printed, in setup). */
static struct cgroup_mounts none;

static void setup(void)
{
        proc_fd = tmptree_new(NULL);
        tmptree_mkdir(proc_fd, "100");
        (void) snprintf(self, sizeof(self), "%d", (int) getpid());
        tmptree_mkdir(proc_fd, self);
        cgroup_mounts_as_printed(&none);
}

static void teardown(void)
{
        close(proc_fd);
}

static void put(const char *init, const char *hook)
{
        char path[64];

        tmptree_put(proc_fd, "100/cgroup", init);
        (void) snprintf(path, sizeof(path), "%s/cgroup", self);
        tmptree_put(proc_fd, path, hook);
}

static const char *path_of(const char *cgroups_path)
{
        static char out[CGROUP_PATH_MAX];

        return runtime_cgroup_path(cgroups_path, out) == 0 ? out : NULL;
}

START_TEST(test_cgroups_path)
{
        ck_assert_str_eq(path_of("/kubepods/burstable/pod" UID "/ab"),
                         "/kubepods/burstable/pod" UID "/ab");
        ck_assert_str_eq(path_of("relative/ab"), "/relative/ab");
        ck_assert_str_eq(path_of("kubepods-burstable-pod0b7f4a52_3c1d.slice:cri-containerd:ab"),
                         "/kubepods.slice/kubepods-burstable.slice/"
                         "kubepods-burstable-pod0b7f4a52_3c1d.slice/cri-containerd-ab.scope");
        ck_assert_str_eq(path_of("kubepods.slice:crio:ab"), "/kubepods.slice/crio-ab.scope");
        /* runc's: no prefix is "-<name>.scope", no slice system.slice, a
         * name that is a slice the unit itself. */
        ck_assert_str_eq(path_of("system.slice::ab"), "/system.slice/-ab.scope");
        ck_assert_str_eq(path_of(":crio:ab"), "/system.slice/crio-ab.scope");
        ck_assert_str_eq(path_of("-.slice:crio:ab"), "/crio-ab.scope");
        ck_assert_str_eq(path_of("a.slice:x:a-b.slice"), "/a.slice/a-b.slice");
        ck_assert_ptr_null(path_of("a:b"));
        ck_assert_ptr_null(path_of("a.slice:b:c:d"));
        ck_assert_ptr_null(path_of("a.slice:b:"));
        ck_assert_ptr_null(path_of("a-.slice:b:c"));
        ck_assert_ptr_null(path_of("a--b.slice:b:c"));
        ck_assert_ptr_null(path_of("a/b.slice:b:c"));
        ck_assert_ptr_null(path_of("notaslice:b:c"));
        ck_assert_ptr_null(path_of("/a/../b"));
        ck_assert_ptr_null(path_of("/a\nb"));
}
END_TEST

static int container(const char *expected, struct cgroup_ref *ret, bool *matched)
{
        return runtime_container_cgroup(proc_fd, &none, 100, expected, ret, matched);
}

/* The runtime's own word, linux.cgroupsPath, picks the hierarchy. */
START_TEST(test_container_expected)
{
        struct cgroup_ref cg;
        bool matched;

        put("0::/kubepods/burstable/pod1/ab\n", "0::/system.slice/containerd.service\n");
        ck_assert_int_eq(container("/kubepods/burstable/pod1/ab", &cg, &matched), 0);
        ck_assert(matched);
        ck_assert_int_eq(cg.kind, CGROUP_V2);
        ck_assert_str_eq(cg.path, "/kubepods/burstable/pod1/ab");

        /* Hybrid, the runtime left the container in the unified cgroup its
         * shim inherited: the v1 hierarchy its cgroupsPath names. */
        put("12:memory:/kubepods/pod1/ab\n8:pids:/kubepods/pod1/ab\n"
            "0::/system.slice/containerd.service\n",
            "8:pids:/system.slice/containerd.service\n0::/system.slice/containerd.service\n");
        ck_assert_int_eq(container("/kubepods/pod1/ab", &cg, &matched), 0);
        ck_assert(matched);
        ck_assert_int_eq(cg.kind, CGROUP_V1);
        ck_assert_str_eq(cg.controller, "pids");
        ck_assert_str_eq(cg.path, "/kubepods/pod1/ab");

        /* A path that names a suffix: the runtime's nested below the node's root. */
        put("0::/kind/kubelet/kubepods/pod1/ab\n", "0::/kind/system.slice\n");
        ck_assert_int_eq(container("/kubelet/kubepods/pod1/ab", &cg, &matched), 0);
        ck_assert(matched);
        ck_assert_int_eq(container("/pod1/a", &cg, &matched), 0); /* not at a boundary */
        ck_assert(!matched);
        ck_assert_str_eq(cg.path, "/kind/kubelet/kubepods/pod1/ab");

        /* crun's systemd driver: the init in "container" below the scope
         * the runtime made: the scope is recorded. */
        put("0::/kubepods.slice/kubepods-pod1.slice/crio-ab.scope/container\n",
            "0::/system.slice\n");
        ck_assert_int_eq(
            container("/kubepods.slice/kubepods-pod1.slice/crio-ab.scope", &cg, &matched), 0);
        ck_assert(matched);
        ck_assert_str_eq(cg.path, "/kubepods.slice/kubepods-pod1.slice/crio-ab.scope");
}
END_TEST

/* Without a word from the runtime: never the cgroup that holds the hook. */
START_TEST(test_container_guessed)
{
        struct cgroup_ref cg;
        bool matched;

        put("8:pids:/kubepods/pod1/ab\n0::/system.slice/containerd.service\n",
            "8:pids:/system.slice/containerd.service\n0::/system.slice/containerd.service\n");
        ck_assert_int_eq(container(NULL, &cg, &matched), 0);
        ck_assert(!matched);
        ck_assert_int_eq(cg.kind, CGROUP_V1);
        ck_assert_str_eq(cg.path, "/kubepods/pod1/ab");

        /* The hook's cgroup below the init's: still the runtime's tree. */
        put("8:pids:/\n0::/user.slice\n", "8:pids:/\n0::/user.slice/session-1.scope\n");
        ck_assert_int_eq(container(NULL, &cg, &matched), -ENOENT);
        put("0::/\n", "0::/\n");
        ck_assert_int_eq(container(NULL, &cg, &matched), -ENOENT);
        /* The hook's own cgroup cannot be read: nothing is guessed. */
        put("0::/a/b\n", "garbage\n");
        ck_assert_int_eq(container(NULL, &cg, &matched), -ENOENT);

        ck_assert_int_eq(runtime_container_cgroup(proc_fd, &none, 101, NULL, &cg, &matched),
                         -ESRCH);
        put("0::/../x\n", "0::/\n"); /* outside what is mounted here */
        ck_assert_int_eq(container(NULL, &cg, &matched), -EXDEV);
        put("0::/x/../y\n", "0::/\n");
        ck_assert_int_eq(container(NULL, &cg, &matched), -EBADMSG);
}
END_TEST

static const char *pod_of(const char *path)
{
        static struct cgroup_ref pod;
        struct cgroup_ref cg = {.kind = CGROUP_V2};

        (void) snprintf(cg.path, sizeof(cg.path), "%s", path);
        return runtime_pod_cgroup(&cg, UID, &pod) == 1 ? pod.path : NULL;
}

/* Kubelet's names of a pod's cgroup, under any root. */
START_TEST(test_pod_cgroup)
{
        ck_assert_str_eq(pod_of("/kubepods/burstable/pod" UID "/ab"),
                         "/kubepods/burstable/pod" UID);
        ck_assert_str_eq(pod_of("/kubelet/kubepods/pod" UID "/ab"), "/kubelet/kubepods/pod" UID);
        ck_assert_str_eq(pod_of("/pod" UID "/ab"), "/pod" UID);
        ck_assert_str_eq(
            pod_of(
                "/kubepods.slice/kubepods-besteffort.slice/"
                "kubepods-besteffort-pod0b7f4a52_3c1d_4e6f_9a8b_1c2d3e4f5a6b.slice/crio-ab.scope"),
            "/kubepods.slice/kubepods-besteffort.slice/"
            "kubepods-besteffort-pod0b7f4a52_3c1d_4e6f_9a8b_1c2d3e4f5a6b.slice");
        /* A static pod: its UID as kubelet was given it, 32 hex digits. */
        ck_assert_str_eq(
            pod_of("/kubepods.slice/kubepods-pod0b7f4a523c1d4e6f9a8b1c2d3e4f5a6b.slice/"
                   "cri-containerd-ab.scope"),
            "/kubepods.slice/kubepods-pod0b7f4a523c1d4e6f9a8b1c2d3e4f5a6b.slice");
        ck_assert_str_eq(pod_of("/kubepods/pod0B7F4A523C1D4E6F9A8B1C2D3E4F5A6B/ab"),
                         "/kubepods/pod0B7F4A523C1D4E6F9A8B1C2D3E4F5A6B");
        /* Parents that do not name the pod. */
        ck_assert_ptr_null(pod_of("/machine.slice/libpod-ab.scope"));
        ck_assert_ptr_null(pod_of("/kubepods/burstable/podother/ab"));
        ck_assert_ptr_null(pod_of("/kubepods/burstable/xpod" UID "/ab"));
        /* A few levels up: crun's "<scope>/container", a delegated cgroup. */
        ck_assert_str_eq(pod_of("/kubepods/pod" UID "/ab/container"), "/kubepods/pod" UID);
        ck_assert_str_eq(pod_of("/kubepods/pod" UID "/ab/x/y"), "/kubepods/pod" UID);
        ck_assert_ptr_null(pod_of("/kubepods/pod" UID "/ab/x/y/z"));
        ck_assert_ptr_null(pod_of("/ab"));
}
END_TEST

static Suite *runtime_cgroup_suite(void)
{
        Suite *s = suite_create("runtime_cgroup");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_cgroups_path);
        tcase_add_test(tc, test_container_expected);
        tcase_add_test(tc, test_container_guessed);
        tcase_add_test(tc, test_pod_cgroup);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(runtime_cgroup_suite());
}
