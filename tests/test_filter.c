/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "filter.h"
#include "macro.h"
#include "oci.h"
#include "tmptree.h"

/* A CRI-O container: the kubelet's four labels, as CRI-O exposes them. */
static const char crio_state[] =
    "{\"id\":\"c1\",\"annotations\":{"
    "\"io.container.manager\":\"cri-o\","
    "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\","
    "\"io.kubernetes.pod.namespace\":\"shop\","
    "\"io.kubernetes.pod.name\":\"web-0\","
    "\"io.kubernetes.container.name\":\"web\","
    "\"io.kubernetes.cri-o.Labels\":\"{\\\"io.kubernetes.container.name\\\":\\\"web\\\","
    "\\\"io.kubernetes.pod.namespace\\\":\\\"shop\\\"}\","
    "\"example.com/monitor\":\"true\"}}";

static const char containerd_state[] =
    "{\"id\":\"c2\",\"annotations\":{"
    "\"io.kubernetes.cri.container-type\":\"container\","
    "\"io.kubernetes.cri.sandbox-uid\":\"8d3c6a52-0b1e-4b7f-9e61-2f0c5a7d9e13\","
    "\"io.kubernetes.cri.sandbox-namespace\":\"data\"}}";

/* A pod UID without a namespace (Podman with only --annotation io.kubernetes.pod.uid). */
static const char bare_state[] = "{\"id\":\"c3\",\"annotations\":{"
                                 "\"io.kubernetes.pod.uid\":\"0f1e2d3c4b5a69788796a5b4c3d2e1f0\"}}";

static struct config cfg;
static struct oci_state state;
static struct pod_identity ident;

static void setup(void)
{
        ck_assert_int_eq(config_init(&cfg), 0);
}

static void teardown(void)
{
        config_done(&cfg);
        oci_state_done(&state);
}

static void configure(const char *yaml)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};

        ck_assert_int_eq(config_parse(&cfg, yaml, strlen(yaml), "test.yaml", &problems), 0);
        ck_assert_msg(problems.n == 0, "%s", problems.n ? problems.items[0].text : "");
}

static void load(const char *json)
{
        oci_state_done(&state);
        ck_assert_int_eq(oci_state_parse(json, strlen(json), &state, NULL), 0);
        ck_assert_int_eq(oci_pod_identity(&state, &ident), 1);
}

/* NULL: must match; otherwise must not match, for exactly that reason. */
static void expect(const char *json, const char *reason)
{
        const char *got = "untouched";
        bool match;

        load(json);
        match = pod_filter_match(&cfg, &state, &ident, &got);
        if (!reason) {
                ck_assert_msg(match, "rejected: %s", got);
                ck_assert_str_eq(got, "untouched");
        } else {
                ck_assert(!match);
                ck_assert_str_eq(got, reason);
        }
}

START_TEST(test_defaults_match_all)
{
        expect(crio_state, NULL);
        expect(containerd_state, NULL);
        expect(bare_state, NULL);
        ck_assert(pod_filter_match(&cfg, &state, &ident, NULL));
}
END_TEST

START_TEST(test_namespaces)
{
        configure("namespaces: [shop, other]");
        expect(crio_state, NULL);
        expect(containerd_state, "namespace not selected");
        expect(bare_state, "namespace not selected");
        configure("namespaces: [data]");
        expect(containerd_state, NULL);
        expect(crio_state, "namespace not selected");
}
END_TEST

START_TEST(test_exclude_namespaces)
{
        configure("excludeNamespaces: [kube-system, data]");
        expect(crio_state, NULL);
        expect(containerd_state, "namespace excluded");
        expect(bare_state, NULL); /* no namespace: matches no exclusion */

        /* Both lists: the exclusion wins over the selection. */
        configure("namespaces: [shop, data]\nexcludeNamespaces: [data]");
        expect(crio_state, NULL);
        expect(containerd_state, "namespace excluded");
        ck_assert(!pod_filter_match(&cfg, &state, &ident, NULL));
}
END_TEST

START_TEST(test_labels)
{
        configure("labelSelector: {io.kubernetes.container.name: web}");
        expect(crio_state, NULL);
        expect(containerd_state, "labels not exposed by this runtime");
        expect(bare_state, "labels not exposed by this runtime");

        configure("labelSelector: {io.kubernetes.container.name: web, "
                  "io.kubernetes.pod.namespace: shop}");
        expect(crio_state, NULL);
        configure("labelSelector: {io.kubernetes.container.name: db}");
        expect(crio_state, "labels do not match");
        configure("labelSelector: {app: web}");
        expect(crio_state, "labels do not match");
}
END_TEST

START_TEST(test_labels_malformed)
{
        static const char *const states[] = {
            /* no Labels annotation at all */
            "{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\"}}",
            /* not JSON */
            "{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\","
            "\"io.kubernetes.cri-o.Labels\":\"{app: web\"}}",
            /* not an object */
            "{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\","
            "\"io.kubernetes.cri-o.Labels\":\"[\\\"app\\\",\\\"web\\\"]\"}}",
            /* a label that is not a string */
            "{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\","
            "\"io.kubernetes.cri-o.Labels\":\"{\\\"app\\\":1}\"}}",
            /* duplicate keys: no guessing which one counts */
            "{\"id\":\"c1\",\"annotations\":{\"io.container.manager\":\"cri-o\","
            "\"io.kubernetes.pod.uid\":\"1f2e3d4c-5b6a-4978-8a9b-0c1d2e3f4a5b\","
            "\"io.kubernetes.cri-o.Labels\":\"{\\\"app\\\":\\\"web\\\","
            "\\\"app\\\":\\\"web\\\"}\"}}",
        };

        configure("labelSelector: {app: web}");
        for (size_t i = 0; i < ELEMENTSOF(states); i++)
                expect(states[i], "labels do not match");
}
END_TEST

START_TEST(test_annotations)
{
        configure("annotationSelector: {example.com/monitor: \"true\"}");
        expect(crio_state, NULL);
        expect(containerd_state, "annotations do not match");
        configure("annotationSelector: {example.com/monitor: \"false\"}");
        expect(crio_state, "annotations do not match");
        configure("annotationSelector: {example.com/monitor: \"true\", "
                  "io.kubernetes.pod.namespace: shop}");
        expect(crio_state, NULL);
        configure("annotationSelector: {io.kubernetes.cri.sandbox-namespace: data}");
        expect(containerd_state, NULL);
}
END_TEST

/* Every filter at once: the first that fails names itself. */
START_TEST(test_order)
{
        configure("namespaces: [shop]\n"
                  "labelSelector: {io.kubernetes.container.name: web}\n"
                  "annotationSelector: {example.com/monitor: \"true\"}\n");
        expect(crio_state, NULL);
        expect(containerd_state, "namespace not selected");
        configure("namespaces: [shop, data]");
        expect(containerd_state, "labels not exposed by this runtime");
        configure("labelSelector: {}\n");
        expect(containerd_state, "annotations do not match");
}
END_TEST

static Suite *filter_suite(void)
{
        Suite *s = suite_create("filter");
        TCase *tc = tcase_create("filter");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_defaults_match_all);
        tcase_add_test(tc, test_namespaces);
        tcase_add_test(tc, test_exclude_namespaces);
        tcase_add_test(tc, test_labels);
        tcase_add_test(tc, test_labels_malformed);
        tcase_add_test(tc, test_annotations);
        tcase_add_test(tc, test_order);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(filter_suite());
}
