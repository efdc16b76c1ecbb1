/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "oci.h"
#include "tmptree.h"

#define POD_UID "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"
#define CRIO_ID "7b1a9c0e5d2f4e3a8b6c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a"
#define CTRD_UID "8d3c6a52-0b1e-4b7f-9e61-2f0c5a7d9e13"

static char *fixture(const char *name, size_t *ret_len)
{
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        char *buf;

        snprintf(path, sizeof(path), "%s/fixtures/state/%s", TEST_SOURCE_DIR, name);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "cannot open %s", path);
        ck_assert_int_eq(read_all_fd(fd, 1 << 20, &buf, ret_len), 0);
        return buf;
}

static void parse_fixture(const char *name, struct oci_state *ret)
{
        _cleanup_free_ char *buf = NULL, *err = NULL;
        size_t len;
        int r;

        buf = fixture(name, &len);
        r = oci_state_parse(buf, len, ret, &err);
        ck_assert_msg(r == 0, "%s: %d %s", name, r, err ? err : "");
}

/* The identity's strings are borrowed from *ret_state: oci_state_done() it after use. */
static void identity_fixture(const char *name, int expect, struct oci_state *ret_state,
                             struct pod_identity *ret)
{
        parse_fixture(name, ret_state);
        ck_assert_int_eq(oci_pod_identity(ret_state, ret), expect);
}

/* Parse must fail with -EINVAL and an error line containing want. */
static void expect_reject(const char *buf, size_t len, const char *want)
{
        _cleanup_free_ char *err = NULL;
        struct oci_state s = {.pid = -42};
        int r;

        r = oci_state_parse(buf, len, &s, &err);
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, want), "'%s' does not mention '%s'", err, want);
        ck_assert_int_eq(s.pid, -42); /* untouched on failure */
}

static void expect_reject_str(const char *json, const char *want)
{
        expect_reject(json, strlen(json), want);
}

START_TEST(test_runc_create_runtime)
{
        struct oci_state s;

        parse_fixture("runc-crio-createRuntime.json", &s);
        ck_assert_str_eq(s.id, CRIO_ID);
        ck_assert_int_eq(s.pid, 48213);
        ck_assert_str_eq(s.bundle,
                         "/run/containers/storage/overlay-containers/" CRIO_ID "/userdata");
        /* The CRI-O volume blob alone is larger than a pipe buffer. */
        ck_assert_uint_gt(strlen(json_string_value(
                              json_object_get(s.annotations, "io.kubernetes.cri-o.Volumes"))),
                          65536);
        oci_state_done(&s);
        ck_assert_ptr_null(s.root);
}
END_TEST

START_TEST(test_runc_poststop_no_pid)
{
        struct oci_state s;

        parse_fixture("runc-crio-poststop.json", &s);
        ck_assert_int_eq(s.pid, 0);
        ck_assert_str_eq(s.id, CRIO_ID);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_crun_created_and_root)
{
        struct oci_state s;

        parse_fixture("crun-crio-createRuntime.json", &s);
        ck_assert_int_eq(s.pid, 48213);
        ck_assert_str_eq(json_string_value(json_object_get(s.root, "status")), "created");
        oci_state_done(&s);

        parse_fixture("crun-crio-poststop.json", &s);
        ck_assert_int_eq(s.pid, 0);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_podman_poststop)
{
        struct oci_state s;

        parse_fixture("podman-poststop.json", &s);
        ck_assert_int_eq(s.pid, 0);
        ck_assert_ptr_nonnull(s.bundle);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_minimal_state)
{
        static const char json[] = "{\"id\":\"c1\"}";
        struct oci_state s;

        ck_assert_int_eq(oci_state_parse(json, strlen(json), &s, NULL), 0);
        ck_assert_str_eq(s.id, "c1");
        ck_assert_int_eq(s.pid, 0);
        ck_assert_ptr_null(s.bundle);
        ck_assert(json_is_object(s.annotations));
        ck_assert_uint_eq(json_object_size(s.annotations), 0);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_pid_limits)
{
        static const char json[] = "{\"id\":\"c1\",\"pid\":2147483647}";
        struct oci_state s;

        ck_assert_int_eq(oci_state_parse(json, strlen(json), &s, NULL), 0);
        ck_assert_int_eq(s.pid, INT_MAX);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_reject_syntax)
{
        static const char nul[] = "{\"id\":\"c\0d\"}";
        static const char nul_outside[] = "{\"id\":\"c1\"}\0";
        static const char bad_utf8[] = "{\"id\":\"c1\",\"annotations\":{\"a\":\"\xc3\x28\"}}";

        expect_reject_str("", "invalid JSON");
        expect_reject_str("   ", "invalid JSON");
        expect_reject_str("{\"id\":\"c1\",\"pid\":1", "invalid JSON");
        expect_reject_str("{\"id\":\"c1\"} {}", "invalid JSON");
        expect_reject_str("[]", "not a JSON object");
        expect_reject_str("\"c1\"", "invalid JSON"); /* no JSON_DECODE_ANY */
        expect_reject(nul, sizeof(nul) - 1, "invalid JSON");
        expect_reject(nul_outside, sizeof(nul_outside) - 1, "invalid JSON");
        expect_reject_str("{\"id\":\"c\\u0000d\"}", "invalid JSON");
        expect_reject_str(bad_utf8, "invalid JSON");
        expect_reject_str("{\"id\":\"c1\",\"id\":\"c2\"}", "duplicate");
        expect_reject_str("{\"id\":\"c1\",\"annotations\":{\"a\":\"1\",\"a\":\"2\"}}", "duplicate");
}
END_TEST

START_TEST(test_reject_pid)
{
        static const char *const bad[] = {
            "\"1\"", "-1",   "2147483648", "1.0", "1e3",
            "true",  "null", "{}",         "[1]", "99999999999999999999",
        };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *json = NULL;
                const char *want = i == ELEMENTSOF(bad) - 1
                                       ? "invalid JSON" /* beyond json_int_t */
                                       : "state: 'pid' is not an integer in [0, 2147483647]";

                ck_assert_int_ge(asprintf(&json, "{\"id\":\"c1\",\"pid\":%s}", bad[i]), 0);
                expect_reject_str(json, want);
        }
}
END_TEST

START_TEST(test_reject_id_bundle_annotations)
{
        expect_reject_str("{}", "state: 'id' is missing");
        expect_reject_str("{\"id\":1}", "'id'");
        expect_reject_str("{\"id\":\"\"}", "'id'");
        expect_reject_str("{\"id\":\"a/b\"}", "'id'");
        expect_reject_str("{\"id\":\"..\"}", "'id'");
        expect_reject_str("{\"id\":\".\"}", "'id'");
        expect_reject_str("{\"id\":\"a\\nb\"}", "'id'");
        expect_reject_str("{\"id\":\"c1\",\"bundle\":\"rel/path\"}", "'bundle'");
        expect_reject_str("{\"id\":\"c1\",\"bundle\":7}", "'bundle'");
        expect_reject_str("{\"id\":\"c1\",\"annotations\":[]}", "'annotations' is not an object");
        expect_reject_str("{\"id\":\"c1\",\"annotations\":null}", "'annotations'");
        expect_reject_str("{\"id\":\"c1\",\"annotations\":{\"k\":1}}",
                          "annotation 'k' is not a string");
        /* A hostile key cannot split the log line. */
        expect_reject_str("{\"id\":\"c1\",\"annotations\":{\"a\\nb\":{}}}", "annotation 'a\nb'");
}
END_TEST

/* jansson 2.14 stops at JSON_PARSER_MAX_DEPTH (2048) instead of recursing on. */
START_TEST(test_reject_deep_nesting)
{
        const size_t depth = 100000;
        _cleanup_free_ char *json = malloc(depth * 2 + 32);
        size_t n;

        ck_assert_ptr_nonnull(json);
        n = (size_t) sprintf(json, "{\"id\":\"c1\",\"x\":");
        memset(json + n, '[', depth);
        memset(json + n + depth, ']', depth);
        strcpy(json + n + 2 * depth, "}");
        expect_reject_str(json, "maximum parsing depth");
}
END_TEST

START_TEST(test_identity_crio)
{
        struct pod_identity id;
        struct oci_state s;

        identity_fixture("runc-crio-createRuntime.json", 1, &s, &id);
        ck_assert_int_eq(id.runtime, POD_RUNTIME_CRIO);
        ck_assert_str_eq(id.uid, POD_UID);
        ck_assert_str_eq(pod_runtime_to_string(id.runtime), "cri-o");
        oci_state_done(&s);
}
END_TEST

START_TEST(test_identity_crio_fields)
{
        struct pod_identity id;
        struct oci_state s;

        identity_fixture("crun-crio-poststop.json", 1, &s, &id);
        ck_assert_str_eq(id.namespace, "shop");
        ck_assert_str_eq(id.pod_name, "web-7d9f8b6c5-x2x4z");
        ck_assert_str_eq(id.container_name, "web");
        oci_state_done(&s);
}
END_TEST

START_TEST(test_identity_containerd)
{
        struct pod_identity id;
        struct oci_state s;

        identity_fixture("runc-containerd-createRuntime.json", 1, &s, &id);
        ck_assert_int_eq(id.runtime, POD_RUNTIME_CONTAINERD);
        ck_assert_str_eq(id.uid, CTRD_UID);
        ck_assert_str_eq(id.namespace, "data");
        ck_assert_str_eq(id.pod_name, "cache-0");
        ck_assert_str_eq(id.container_name, "redis");
        ck_assert_str_eq(pod_runtime_to_string(id.runtime), "containerd");
        oci_state_done(&s);

        identity_fixture("runc-containerd-poststop.json", 1, &s, &id);
        ck_assert_str_eq(id.uid, CTRD_UID);
        oci_state_done(&s);
}
END_TEST

START_TEST(test_identity_other)
{
        struct pod_identity id;
        struct oci_state s;

        /* Podman's own io.container.manager is "libpod"; the 32-hex UID is canonicalised. */
        identity_fixture("crun-podman-createRuntime.json", 1, &s, &id);
        ck_assert_int_eq(id.runtime, POD_RUNTIME_OTHER);
        ck_assert_str_eq(id.uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
        ck_assert_str_eq(id.namespace, "lab");
        ck_assert_str_eq(id.pod_name, "bench");
        ck_assert_ptr_null(id.container_name);
        ck_assert_str_eq(pod_runtime_to_string(id.runtime), "other");
        oci_state_done(&s);

        identity_fixture("podman-poststop.json", 1, &s, &id);
        ck_assert_str_eq(id.uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
        oci_state_done(&s);
}
END_TEST

START_TEST(test_identity_spoofing)
{
        struct pod_identity id;
        struct oci_state s;

        /* A CRI-O pod annotated with containerd's keys keeps CRI-O's UID and
         * namespace (CRI-O strips io.kubernetes.cri.container-type itself). */
        identity_fixture("runc-crio-spoofed-createRuntime.json", 1, &s, &id);
        ck_assert_int_eq(id.runtime, POD_RUNTIME_CRIO);
        ck_assert_str_eq(id.uid, POD_UID);
        ck_assert_str_eq(id.namespace, "shop");
        oci_state_done(&s);

        /* A containerd pod passing io.kubernetes.pod.* and io.container.manager
         * through keeps containerd's. */
        identity_fixture("runc-containerd-spoofed-createRuntime.json", 1, &s, &id);
        ck_assert_int_eq(id.runtime, POD_RUNTIME_CONTAINERD);
        ck_assert_str_eq(id.uid, CTRD_UID);
        ck_assert_str_eq(id.namespace, "data");
        oci_state_done(&s);
}
END_TEST

static int identity_of(const char *json, struct pod_identity *ret)
{
        struct oci_state s;
        int r;

        ck_assert_int_eq(oci_state_parse(json, strlen(json), &s, NULL), 0);
        r = oci_pod_identity(&s, ret);
        oci_state_done(&s);
        return r;
}

/* Names as long as Kubernetes makes them are kept; longer ones are none. */
START_TEST(test_identity_name_bound)
{
        _cleanup_free_ char *json = NULL;
        struct pod_identity id;
        struct oci_state s;
        char name[POD_NAME_MAX + 2];

        for (size_t len = POD_NAME_MAX; len <= POD_NAME_MAX + 1; len++) {
                memset(name, 'n', len);
                name[len] = '\0';
                free(json);
                ck_assert_int_ge(
                    asprintf(&json,
                             "{\"id\":\"c1\",\"annotations\":{\"io.kubernetes.pod.uid\":"
                             "\"" POD_UID "\",\"io.kubernetes.pod.namespace\":\"%s\","
                             "\"io.kubernetes.pod.name\":\"%s\"}}",
                             name, name),
                    0);
                ck_assert_int_eq(oci_state_parse(json, strlen(json), &s, NULL), 0);
                ck_assert_int_eq(oci_pod_identity(&s, &id), 1);
                if (len == POD_NAME_MAX) {
                        ck_assert_str_eq(id.namespace, name);
                        ck_assert_str_eq(id.pod_name, name);
                } else {
                        ck_assert_ptr_null(id.namespace);
                        ck_assert_ptr_null(id.pod_name);
                }
                oci_state_done(&s);
        }
}
END_TEST

START_TEST(test_identity_missing_or_malformed)
{
        struct pod_identity id = {.uid = "untouched"};
        struct oci_state s;

        identity_fixture("podman-plain-poststop.json", 0, &s, &id);
        oci_state_done(&s);
        ck_assert_int_eq(identity_of("{\"id\":\"c1\"}", &id), 0);
        /* CRI-O without the kubelet's label: not a pod of ours. */
        ck_assert_int_eq(identity_of("{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":"
                                     "\"cri-o\",\"io.kubernetes.cri.sandbox-uid\":\"" POD_UID
                                     "\"}}",
                                     &id),
                         0);
        /* containerd without sandbox-uid (before 1.7): no fallback to other keys. */
        ck_assert_int_eq(identity_of("{\"id\":\"c1\",\"annotations\":{\"io.kubernetes.cri."
                                     "container-type\":\"container\",\"io.kubernetes.pod.uid\":"
                                     "\"" POD_UID "\"}}",
                                     &id),
                         0);
        ck_assert_str_eq(id.uid, "untouched");

        /* containerd's sandbox: the pod's, marked as no container of it. */
        ck_assert_int_eq(identity_of("{\"id\":\"s1\",\"annotations\":{\"io.kubernetes.cri."
                                     "container-type\":\"sandbox\",\"io.kubernetes.cri."
                                     "sandbox-uid\":\"" POD_UID "\"}}",
                                     &id),
                         1);
        ck_assert(id.sandbox);
        ck_assert_int_eq(identity_of("{\"id\":\"c1\",\"annotations\":{\"io.kubernetes.cri."
                                     "container-type\":\"container\",\"io.kubernetes.cri."
                                     "sandbox-uid\":\"" POD_UID "\"}}",
                                     &id),
                         1);
        ck_assert(!id.sandbox);
        /* CRI-O's infra container, and one of its containers. */
        ck_assert_int_eq(identity_of("{\"id\":\"s1\",\"annotations\":{\"io.container.manager\":"
                                     "\"cri-o\",\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
                                     "\"io.kubernetes.pod.uid\":\"" POD_UID "\"}}",
                                     &id),
                         1);
        ck_assert(id.sandbox);
        ck_assert_int_eq(
            identity_of("{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":"
                        "\"cri-o\",\"io.kubernetes.cri-o.ContainerType\":\"container\","
                        "\"io.kubernetes.pod.uid\":\"" POD_UID "\"}}",
                        &id),
            1);
        ck_assert(!id.sandbox);
        strcpy(id.uid, "untouched");

        ck_assert_int_eq(identity_of("{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":"
                                     "\"cri-o\",\"io.kubernetes.pod.uid\":\"../../etc\"}}",
                                     &id),
                         -EINVAL);
        ck_assert_int_eq(identity_of("{\"id\":\"c1\",\"annotations\":{\"io.kubernetes.cri."
                                     "container-type\":\"container\",\"io.kubernetes.cri."
                                     "sandbox-uid\":\"\"}}",
                                     &id),
                         -EINVAL);
        ck_assert_str_eq(id.uid, "untouched");
}
END_TEST

START_TEST(test_uid_canonicalise)
{
        static const struct {
                const char *in, *out;
        } good[] = {
            {"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b", "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"},
            {"1F2E3D4C-5B6A-4978-8A9B-0C1D2E3F4A5B", "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"},
            {"1f2e3d4c5b6a49788a9b0c1d2e3f4a5b", "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b"},
            {"ABCDEF0123456789abcdef0123456789", "abcdef01-2345-6789-abcd-ef0123456789"},
            {"00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"},
        };
        static const char *const bad[] = {
            "",
            "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5",   /* 35 */
            "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5bc", /* 37 */
            "1f2e3d4c5b6a49788a9b0c1d2e3f4a5",       /* 31 */
            "1f2e3d4c5b6a49788a9b0c1d2e3f4a5b0",     /* 33 */
            "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5g",  /* not hex */
            "1f2e3d4c5-b6a-4978-8a9b-0c1d2e3f4a5b",  /* dash misplaced */
            "1f2e3d4c-5b6a-49788-a9b-0c1d2e3f4a5b",  /* dash misplaced */
            "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5-",  /* dash at the end */
            "1f2e3d4c-5b6a-4978-8a9b+0c1d2e3f4a5b",  /* other separator */
            "1f2e3d4c 5b6a 4978 8a9b 0c1d2e3f4a5b",
            "1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\n",
            "../../../../../../../../../../../etc", /* 36 */
            "/sys/fs/resctrl/../../../../../../..", /* 36 */
            "../../../../../../../../../../..",     /* 32 */
            "1f2e3d4c5b6a49788a9b0c1d2e3f4a-b",     /* 32, with a dash */
            "-1f2e3d4c5b6a49788a9b0c1d2e3f4a5",
            "0x1f2e3d4c5b6a49788a9b0c1d2e3f4a",
            /* 36 bytes, 18 characters */
            ("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
             "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"),
        };
        char out[POD_UID_LEN + 1];

        for (size_t i = 0; i < ELEMENTSOF(good); i++) {
                memset(out, 'x', sizeof(out));
                ck_assert_int_eq(pod_uid_canonicalise(good[i].in, out), 0);
                ck_assert_str_eq(out, good[i].out);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                memset(out, 'x', sizeof(out));
                ck_assert_msg(pod_uid_canonicalise(bad[i], out) == -EINVAL, "accepted '%s'",
                              bad[i]);
                ck_assert_int_eq(out[0], 'x'); /* untouched on failure */
        }
        ck_assert_int_eq(pod_uid_canonicalise(NULL, out), -EINVAL);
}
END_TEST

/* --- linux.intelRdt of <bundle>/config.json --- */

static char bundle[PATH_MAX - 32]; /* room for a file name after it */

/* A bundle directory of the suite's tree, which tmptree_run removes. */
static void bundle_setup(void)
{
        const char *dir;

        (void) close(tmptree_new(&dir));
        snprintf(bundle, sizeof(bundle), "%s", dir);
}

static void write_config(const char *json)
{
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;

        snprintf(path, sizeof(path), "%s/config.json", bundle);
        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, json, strlen(json)), 0);
}

/* oci_bundle_read's linux.intelRdt alone. */
static int read_rdt(const char *dir, const char *id, struct oci_intel_rdt *ret, char **reterr)
{
        struct oci_bundle b;
        int r = oci_bundle_read(dir, id, &b, reterr);

        if (r >= 0) {
                *ret = b.intel_rdt;
                free(b.cgroups_path);
        }
        return r;
}

static int rdt_of(const char *json, struct oci_intel_rdt *ret, char **reterr)
{
        write_config(json);
        return read_rdt(bundle, "ctr1", ret, reterr);
}

START_TEST(test_cgroups_path)
{
        struct oci_bundle b;
        _cleanup_free_ char *err = NULL;

        write_config("{\"linux\":{\"cgroupsPath\":\"kubepods.slice:cri-containerd:abc\"}}");
        ck_assert_int_eq(oci_bundle_read(bundle, "ctr1", &b, NULL), 0);
        ck_assert_str_eq(b.cgroups_path, "kubepods.slice:cri-containerd:abc");
        ck_assert(!b.intel_rdt.present);
        oci_bundle_done(&b);
        ck_assert_ptr_null(b.cgroups_path);

        write_config("{\"linux\":{\"cgroupsPath\":\"\"}}");
        ck_assert_int_eq(oci_bundle_read(bundle, "ctr1", &b, NULL), 0);
        ck_assert_ptr_null(b.cgroups_path);
        write_config("{\"linux\":{\"cgroupsPath\":null}}");
        ck_assert_int_eq(oci_bundle_read(bundle, "ctr1", &b, NULL), 0);
        ck_assert_ptr_null(b.cgroups_path);

        write_config("{\"linux\":{\"cgroupsPath\":7}}");
        ck_assert_int_eq(oci_bundle_read(bundle, "ctr1", &b, &err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "cgroupsPath"));
}
END_TEST

START_TEST(test_rdt_absent)
{
        struct oci_intel_rdt r = {.present = true};

        ck_assert_int_eq(rdt_of("{\"ociVersion\":\"1.2.0\",\"process\":{}}", &r, NULL), 0);
        ck_assert(!r.present);
        ck_assert_ptr_null(r.ctrl_group);
        ck_assert_int_eq(rdt_of("{\"linux\":{\"namespaces\":[]}}", &r, NULL), 0);
        ck_assert(!r.present);
        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":null}}", &r, NULL), 0);
        ck_assert(!r.present);
        oci_intel_rdt_done(&r);
}
END_TEST

START_TEST(test_rdt_clos_id)
{
        struct oci_intel_rdt r;

        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":{\"closID\":\"gold\","
                                "\"l3CacheSchema\":\"L3:0=ff\"}}}",
                                &r, NULL),
                         0);
        ck_assert(r.present);
        ck_assert_str_eq(r.ctrl_group, "gold");
        ck_assert(!r.enable_monitoring);
        oci_intel_rdt_done(&r);
        ck_assert_ptr_null(r.ctrl_group);

        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":{\"closID\":\"/\"}}}", &r, NULL), 0);
        ck_assert_str_eq(r.ctrl_group, "/");
        oci_intel_rdt_done(&r);
}
END_TEST

START_TEST(test_rdt_container_group)
{
        struct oci_intel_rdt r;

        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":{\"schemata\":[\"L3:0=f\"],"
                                "\"enableMonitoring\":true}}}",
                                &r, NULL),
                         0);
        ck_assert(r.present);
        ck_assert_str_eq(r.ctrl_group, "ctr1");
        ck_assert(r.enable_monitoring);
        oci_intel_rdt_done(&r);

        /* runc treats an empty closID as unset. */
        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":{\"closID\":\"\"}}}", &r, NULL), 0);
        ck_assert_str_eq(r.ctrl_group, "ctr1");
        oci_intel_rdt_done(&r);

        ck_assert_int_eq(rdt_of("{\"linux\":{\"intelRdt\":{}}}", &r, NULL), 0);
        ck_assert(r.present);
        ck_assert_str_eq(r.ctrl_group, "ctr1");
        ck_assert(!r.enable_monitoring);
        oci_intel_rdt_done(&r);
}
END_TEST

static void expect_rdt_reject(const char *json, const char *want)
{
        _cleanup_free_ char *err = NULL;
        char untouched[] = "untouched";
        struct oci_intel_rdt r = {.ctrl_group = untouched};

        ck_assert_int_eq(rdt_of(json, &r, &err), -EINVAL);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, want), "'%s' does not mention '%s'", err, want);
        ck_assert_ptr_eq(r.ctrl_group, untouched);
}

START_TEST(test_rdt_reject)
{
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":\"../x\"}}}",
                          "'../x' is not a valid resctrl group name");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":\"info\"}}}", "'info'");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":\"mon_groups\"}}}", "'mon_groups'");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":\"..\"}}}", "'..'");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":\"a\\nb\"}}}", "'a\nb'");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"closID\":5}}}", "closID");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":{\"enableMonitoring\":\"yes\"}}}",
                          "enableMonitoring");
        expect_rdt_reject("{\"linux\":{\"intelRdt\":[]}}", "'linux.intelRdt' is not an object");
        expect_rdt_reject("{\"linux\":[]}", "'linux' is not an object");
        expect_rdt_reject("[]", "not a JSON object");
        expect_rdt_reject("{\"linux\":", "invalid JSON");
        expect_rdt_reject("", "invalid JSON");
}
END_TEST

START_TEST(test_rdt_bad_container_id)
{
        struct oci_intel_rdt r;

        write_config("{\"linux\":{\"intelRdt\":{}}}");
        ck_assert_int_eq(read_rdt(bundle, "info", &r, NULL), -EINVAL);
        ck_assert_int_eq(read_rdt(bundle, "a/b", &r, NULL), -EINVAL);
}
END_TEST

START_TEST(test_rdt_files)
{
        _cleanup_free_ char *big = NULL;
        char path[PATH_MAX], target[PATH_MAX];
        struct oci_intel_rdt r;
        const size_t size = (4u << 20) + 1;

        /* No config.json, or no bundle at all. */
        ck_assert_int_eq(read_rdt(bundle, "ctr1", &r, NULL), -ENOENT);
        ck_assert_int_eq(read_rdt("/nonexistent-bundle", "ctr1", &r, NULL), -ENOENT);
        ck_assert_int_eq(read_rdt("relative", "ctr1", &r, NULL), -EINVAL);

        /* A symlinked config.json is not followed. */
        snprintf(target, sizeof(target), "%s/real.json", bundle);
        snprintf(path, sizeof(path), "%s/config.json", bundle);
        ck_assert_int_eq(symlink(target, path), 0);
        ck_assert_int_eq(read_rdt(bundle, "ctr1", &r, NULL), -ELOOP);
        ck_assert_int_eq(unlink(path), 0);

        /* Over 4 MiB. */
        big = malloc(size + 1);
        ck_assert_ptr_nonnull(big);
        memset(big, ' ', size);
        big[0] = '{';
        big[size - 1] = '}';
        big[size] = '\0';
        write_config(big);
        ck_assert_int_eq(read_rdt(bundle, "ctr1", &r, NULL), -EFBIG);
}
END_TEST

static Suite *oci_suite(void)
{
        Suite *s = suite_create("oci");
        TCase *tc = tcase_create("state");
        TCase *id = tcase_create("identity");
        TCase *rdt = tcase_create("intel_rdt");

        tcase_add_test(tc, test_runc_create_runtime);
        tcase_add_test(tc, test_runc_poststop_no_pid);
        tcase_add_test(tc, test_crun_created_and_root);
        tcase_add_test(tc, test_podman_poststop);
        tcase_add_test(tc, test_minimal_state);
        tcase_add_test(tc, test_pid_limits);
        tcase_add_test(tc, test_reject_syntax);
        tcase_add_test(tc, test_reject_pid);
        tcase_add_test(tc, test_reject_id_bundle_annotations);
        tcase_add_test(tc, test_reject_deep_nesting);
        suite_add_tcase(s, tc);

        tcase_add_test(id, test_identity_crio);
        tcase_add_test(id, test_identity_crio_fields);
        tcase_add_test(id, test_identity_containerd);
        tcase_add_test(id, test_identity_other);
        tcase_add_test(id, test_identity_spoofing);
        tcase_add_test(id, test_identity_missing_or_malformed);
        tcase_add_test(id, test_identity_name_bound);
        tcase_add_test(id, test_uid_canonicalise);
        suite_add_tcase(s, id);

        tcase_add_checked_fixture(rdt, bundle_setup, NULL);
        tcase_add_test(rdt, test_rdt_absent);
        tcase_add_test(rdt, test_cgroups_path);
        tcase_add_test(rdt, test_rdt_clos_id);
        tcase_add_test(rdt, test_rdt_container_group);
        tcase_add_test(rdt, test_rdt_reject);
        tcase_add_test(rdt, test_rdt_bad_container_id);
        tcase_add_test(rdt, test_rdt_files);
        suite_add_tcase(s, rdt);
        return s;
}

int main(void)
{
        return tmptree_run(oci_suite());
}
