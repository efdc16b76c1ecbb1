/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kubepods.h"
#include "macro.h"
#include "tmptree.h"

#define UID "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"
#define UID_ "0b7f4a52_3c1d_4e6f_9a8b_1c2d3e4f5a6b"

static int top = -EBADF;
static struct cgroup_mounts m;

/* A unified hierarchy at v2/ and a v1 pids hierarchy at pids/. */
static void setup(void)
{
        top = tmptree_new(NULL);
        tmptree_mkdir(top, "v2");
        tmptree_mkdir(top, "pids");
        m = (struct cgroup_mounts) CGROUP_MOUNTS_INIT;
        m.v2.fd = openat(top, "v2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        m.v1[0].fd = openat(top, "pids", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert(m.v2.fd >= 0 && m.v1[0].fd >= 0);
}

static void teardown(void)
{
        cgroup_mounts_close(&m);
        close(top);
}

static void make_pod(const char *path, const char *file, const char *text)
{
        char p[512] = "";

        for (const char *c = strchr(path, '/'); c; c = strchr(c + 1, '/')) {
                (void) snprintf(p, sizeof(p), "%.*s", (int) (c - path), path);
                if (faccessat(top, p, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
                        tmptree_mkdir(top, p);
        }
        tmptree_mkdir(top, path);
        (void) snprintf(p, sizeof(p), "%s/%s", path, file);
        tmptree_put(top, p, text);
}

static int look(enum pod_cgroup *ret, struct cgroup_ref *ref)
{
        return kubepods_pod_cgroup(&m, UID, ret, ref);
}

START_TEST(test_gone)
{
        enum pod_cgroup st = POD_CGROUP_POPULATED;
        struct cgroup_ref ref;

        /* In none of kubelet's layouts: unseen but where a whole hierarchy is seen. */
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_UNSEEN);
        m.v1[0].whole = true;
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_GONE);
        /* Another pod's cgroup is not this one's. */
        make_pod("v2/kubepods/burstable/pod11111111-2222-4333-8444-555555555555", "cgroup.events",
                 "populated 1\nfrozen 0\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_GONE);
}
END_TEST

/* Each driver and QoS class, v2 from cgroup.events. */
START_TEST(test_v2_layouts)
{
        static const char *const places[] = {
            "v2/kubepods/pod" UID,
            "v2/kubepods/burstable/pod" UID,
            "v2/kubepods/besteffort/pod" UID,
            "v2/kubepods.slice/kubepods-pod" UID_ ".slice",
            "v2/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
            "v2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
        };

        for (size_t i = 0; i < ELEMENTSOF(places); i++) {
                enum pod_cgroup st;
                struct cgroup_ref ref;
                int fd = tmptree_new(NULL);

                close(m.v2.fd);
                close(top);
                top = fd;
                tmptree_mkdir(top, "v2");
                m.v2.fd = openat(top, "v2", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                make_pod(places[i], "cgroup.events",
                         i % 2 ? "populated 0\nfrozen 0\n" : "populated 1\nfrozen 0\n");
                ck_assert_int_eq(look(&st, &ref), 0);
                ck_assert_int_eq(st, i % 2 ? POD_CGROUP_EMPTY : POD_CGROUP_POPULATED);
                ck_assert_int_eq(ref.kind, CGROUP_V2);
                ck_assert_str_eq(ref.path, places[i] + 2);
        }
}
END_TEST

/* v1: pids.current counts the processes of the whole subtree. */
START_TEST(test_v1_pids)
{
        enum pod_cgroup st;
        struct cgroup_ref ref;

        make_pod("pids/kubepods/besteffort/pod" UID, "pids.current", "3\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_POPULATED);
        ck_assert_int_eq(ref.kind, CGROUP_V1);
        ck_assert_str_eq(ref.controller, "pids");
        tmptree_put(top, "pids/kubepods/besteffort/pod" UID "/pids.current", "0\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_EMPTY);
        /* The unified hierarchy comes first where kubelet uses it. */
        make_pod("v2/kubepods/pod" UID, "cgroup.events", "populated 1\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(ref.kind, CGROUP_V2);
        ck_assert_int_eq(st, POD_CGROUP_POPULATED);
}
END_TEST

/* Nothing that does not parse passes for an answer. */
START_TEST(test_bad_files)
{
        static const char *const events[] = {
            "", "populated\n", "populated 2\n", "populated 1", "frozen 0\n", "xpopulated 1\n"};
        static const char *const counts[] = {"",     "-1\n", "3",
                                             "3 \n", "x\n",  "99999999999999999999\n"};
        enum pod_cgroup st;
        struct cgroup_ref ref;

        make_pod("v2/kubepods/pod" UID, "cgroup.events", "populated 1\n");
        for (size_t i = 0; i < ELEMENTSOF(events); i++) {
                tmptree_put(top, "v2/kubepods/pod" UID "/cgroup.events", events[i]);
                ck_assert_msg(look(&st, &ref) == -EBADMSG, "events '%s'", events[i]);
        }
        tmptree_put(top, "v2/kubepods/pod" UID "/cgroup.events", "frozen 0\npopulated 0\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_EMPTY);

        make_pod("pids/kubepods/pod" UID, "pids.current", "1\n");
        close(m.v2.fd);
        m.v2.fd = -EBADF; /* pure v1 */
        for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
                tmptree_put(top, "pids/kubepods/pod" UID "/pids.current", counts[i]);
                ck_assert_msg(look(&st, &ref) == -EBADMSG, "pids.current '%s'", counts[i]);
        }
}
END_TEST

/* A symlink on the way is never followed, wherever it points. */
START_TEST(test_symlinks)
{
        enum pod_cgroup st;
        struct cgroup_ref ref;
        int r;

        make_pod("elsewhere/pod" UID, "cgroup.events", "populated 1\n");
        tmptree_mkdir(top, "v2/kubepods");
        ck_assert_int_eq(symlinkat("../../elsewhere", top, "v2/kubepods/burstable"), 0);
        r = look(&st, &ref);
        ck_assert(r == -ELOOP || r == -ENOTDIR); /* O_DIRECTORY|O_NOFOLLOW gives either */
        ck_assert_str_eq(ref.path, "/kubepods/burstable/pod" UID);

        ck_assert_int_eq(unlinkat(top, "v2/kubepods/burstable", 0), 0);
        tmptree_mkdir(top, "v2/kubepods/burstable");
        ck_assert_int_eq(
            symlinkat("../../../elsewhere/pod" UID, top, "v2/kubepods/burstable/pod" UID), 0);
        r = look(&st, &ref);
        ck_assert(r == -ELOOP || r == -ENOTDIR);
}
END_TEST

/* A static pod: kubelet names its cgroup with the UID as given, 32 hex digits. */
START_TEST(test_static_pod)
{
        enum pod_cgroup st = POD_CGROUP_GONE;
        struct cgroup_ref ref;

        make_pod("v2/kubepods.slice/kubepods-besteffort.slice/"
                 "kubepods-besteffort-pod0b7f4a523c1d4e6f9a8b1c2d3e4f5a6b.slice",
                 "cgroup.events", "populated 1\nfrozen 0\n");
        ck_assert_int_eq(look(&st, &ref), 0);
        ck_assert_int_eq(st, POD_CGROUP_POPULATED);
}
END_TEST

/* A recorded pod cgroup, anywhere: gone only where its parent is seen. */
START_TEST(test_recorded)
{
        struct cgroup_ref ref = {.kind = CGROUP_V2, .path = "/kubelet/kubepods/podx"};
        struct cgroup_ref v1 = {.kind = CGROUP_V1, .controller = "memory", .path = "/podx"};
        enum pod_cgroup st = POD_CGROUP_GONE;

        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_UNSEEN);
        make_pod("v2/kubelet/kubepods/podx", "cgroup.events", "populated 0\n");
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_EMPTY);
        tmptree_put(top, "v2/kubelet/kubepods/podx/cgroup.events", "populated 1\n");
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_POPULATED);
        ck_assert_int_eq(unlinkat(top, "v2/kubelet/kubepods/podx/cgroup.events", 0), 0);
        ck_assert_int_eq(unlinkat(top, "v2/kubelet/kubepods/podx", AT_REMOVEDIR), 0);
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_GONE);
        /* A hierarchy not mounted here: unseen, never gone. */
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &v1, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_UNSEEN);
        /* Below the root: the root is always seen. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/podx"};
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_GONE);
        /* Its whole tree gone: only where every cgroup is seen is it gone. */
        ref = (struct cgroup_ref){.kind = CGROUP_V2, .path = "/kubelet/kubepods/gone/podx"};
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_UNSEEN);
        m.v2.whole = true;
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_GONE);
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &v1, &st), 0); /* not mounted here */
        ck_assert_int_eq(st, POD_CGROUP_UNSEEN);
}
END_TEST

/* A pod cgroup recorded in a v1 hierarchy without pids.current (cpu,
 * memory): populated by a process in it or below it, never gone for want
 * of the file. */
START_TEST(test_v1_without_pids)
{
        struct cgroup_ref ref = {.kind = CGROUP_V1, .controller = "memory", .path = "/podx"};
        enum pod_cgroup st = POD_CGROUP_GONE;

        tmptree_mkdir(top, "memory");
        m.v1[2].fd = openat(top, "memory", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert(m.v1[2].fd >= 0);
        make_pod("memory/podx/c1/sub", "cgroup.procs", "");
        tmptree_put(top, "memory/podx/cgroup.procs", "");
        tmptree_put(top, "memory/podx/c1/cgroup.procs", "");
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_EMPTY);
        tmptree_put(top, "memory/podx/c1/sub/cgroup.procs", "42\n");
        ck_assert_int_eq(kubepods_recorded_cgroup(&m, &ref, &st), 0);
        ck_assert_int_eq(st, POD_CGROUP_POPULATED);
}
END_TEST

static Suite *kubepods_suite(void)
{
        Suite *s = suite_create("kubepods");
        TCase *tc = tcase_create("kubepods");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_gone);
        tcase_add_test(tc, test_v2_layouts);
        tcase_add_test(tc, test_v1_pids);
        tcase_add_test(tc, test_bad_files);
        tcase_add_test(tc, test_symlinks);
        tcase_add_test(tc, test_static_pod);
        tcase_add_test(tc, test_recorded);
        tcase_add_test(tc, test_v1_without_pids);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(kubepods_suite());
}
