/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "abmc.h"
#include "config.h"
#include "fsutil.h"
#include "macro.h"
#include "tmptree.h"

static void assert_lists_eq(const struct string_list *a, const struct string_list *b)
{
        ck_assert_uint_eq(a->n, b->n);
        for (size_t i = 0; i < a->n; i++)
                ck_assert_str_eq(a->items[i], b->items[i]);
}

static void assert_maps_eq(const struct string_map *a, const struct string_map *b)
{
        ck_assert_uint_eq(a->n, b->n);
        for (size_t i = 0; i < a->n; i++) {
                ck_assert_str_eq(a->keys[i], b->keys[i]);
                ck_assert_str_eq(a->values[i], b->values[i]);
        }
}

static void assert_configs_eq(const struct config *a, const struct config *b)
{
        ck_assert_str_eq(a->resctrl_path, b->resctrl_path);
        ck_assert_str_eq(a->state_dir, b->state_dir);
        ck_assert_int_eq(a->require_resctrl_fs, b->require_resctrl_fs);
        assert_lists_eq(&a->namespaces, &b->namespaces);
        assert_lists_eq(&a->runtime_roots, &b->runtime_roots);
        assert_lists_eq(&a->exclude_namespaces, &b->exclude_namespaces);
        assert_maps_eq(&a->label_selector, &b->label_selector);
        assert_maps_eq(&a->annotation_selector, &b->annotation_selector);
        ck_assert_int_eq(a->failure_policy, b->failure_policy);
        ck_assert_int_eq(a->runtime_monitoring, b->runtime_monitoring);
        ck_assert_uint_eq(a->lock_timeout_ms, b->lock_timeout_ms);
        ck_assert_uint_eq(a->remove_delay_sec, b->remove_delay_sec);
        ck_assert_uint_eq(a->empty_pod_linger_sec, b->empty_pod_linger_sec);
        ck_assert_uint_eq(a->final_counters_sec, b->final_counters_sec);
        ck_assert_int_eq(a->rmid_budget, b->rmid_budget);
        ck_assert_uint_eq(a->mbm_events, b->mbm_events);
        ck_assert_int_eq(a->log_level, b->log_level);
        ck_assert_int_eq(a->log_syslog, b->log_syslog);
        ck_assert_int_eq(a->log_stderr, b->log_stderr);
}

static void assert_defaults(const struct config *c)
{
        struct config d;

        ck_assert_int_eq(config_init(&d), 0);
        assert_configs_eq(c, &d);
        config_done(&d);
}

static int parse(struct config *c, const char *yaml, struct config_problems *problems)
{
        return config_parse(c, yaml, strlen(yaml), "test.yaml", problems);
}

START_TEST(test_defaults)
{
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_str_eq(c.resctrl_path, "/sys/fs/resctrl");
        ck_assert_str_eq(c.state_dir, "/run/resctrl-mon-hook");
        ck_assert(c.require_resctrl_fs);
        ck_assert_uint_eq(c.namespaces.n, 0);
        ck_assert_uint_eq(c.exclude_namespaces.n, 0);
        ck_assert_uint_eq(c.label_selector.n, 0);
        ck_assert_uint_eq(c.annotation_selector.n, 0);
        ck_assert_uint_eq(c.runtime_roots.n, 3);
        ck_assert_str_eq(c.runtime_roots.items[0], "/run/runc");
        ck_assert_int_eq(c.failure_policy, FAILURE_POLICY_IGNORE);
        ck_assert_int_eq(c.runtime_monitoring, RUNTIME_MONITORING_SKIP);
        ck_assert_uint_eq(c.lock_timeout_ms, 2000);
        ck_assert_uint_eq(c.remove_delay_sec, 0);
        ck_assert_uint_eq(c.empty_pod_linger_sec, 600);
        ck_assert_uint_eq(c.final_counters_sec, 3600);
        ck_assert_int_eq(c.rmid_budget, RMID_BUDGET_AUTO);
        ck_assert_uint_eq(c.mbm_events, ABMC_ALL_EVENTS);
        ck_assert_int_eq(c.log_level, LOG_INFO);
        ck_assert(c.log_syslog);
        ck_assert(!c.log_stderr);
        config_done(&c);
        ck_assert_ptr_null(c.resctrl_path);
}
END_TEST

/* The committed sample documents the defaults; uncommenting it must change nothing. */
START_TEST(test_sample)
{
        static const char sample[] = TEST_SOURCE_DIR "/../config/config.yaml";
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL, *uncommented = NULL;
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        size_t len, n = 0, settings = 0;
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(config_load(&c, sample, &problems), 0);
        ck_assert_uint_eq(problems.n, 0);
        assert_defaults(&c);

        /* "#key: value" lines are the settings, "# text" lines the explanations. */
        fd = open(sample, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(read_all_fd(fd, 1 << 20, &text, &len), 0);
        uncommented = malloc(len + 1);
        ck_assert_ptr_nonnull(uncommented);
        for (size_t i = 0; i < len; i++) {
                bool line_start = i == 0 || text[i - 1] == '\n';

                if (line_start && text[i] == '#' && text[i + 1] != ' ' && text[i + 1] != '\n') {
                        settings++;
                        continue;
                }
                uncommented[n++] = text[i];
        }
        ck_assert_uint_eq(settings, 17); /* every top-level key */
        ck_assert_int_eq(config_parse(&c, uncommented, n, "sample", &problems), 0);
        ck_assert_msg(problems.n == 0, "%s", problems.n ? problems.items[0].text : "");
        assert_defaults(&c);
        config_done(&c);
}
END_TEST

START_TEST(test_full_file)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(config_load(&c, TEST_SOURCE_DIR "/fixtures/config/full.yaml", &problems),
                         0);
        ck_assert_msg(problems.n == 0, "%s", problems.n ? problems.items[0].text : "");
        ck_assert_str_eq(c.resctrl_path, "/tmp/fake-resctrl");
        ck_assert_str_eq(c.state_dir, "/var/run/rmh state");
        ck_assert(!c.require_resctrl_fs);
        ck_assert_uint_eq(c.namespaces.n, 3);
        ck_assert_str_eq(c.namespaces.items[0], "shop");
        ck_assert_str_eq(c.namespaces.items[1], "data");
        ck_assert_str_eq(c.namespaces.items[2], "kube-system");
        ck_assert_uint_eq(c.exclude_namespaces.n, 2);
        ck_assert_str_eq(c.exclude_namespaces.items[0], "kube-public");
        ck_assert_str_eq(c.exclude_namespaces.items[1], "monitoring");
        ck_assert_uint_eq(c.label_selector.n, 1);
        ck_assert_str_eq(c.label_selector.keys[0], "io.kubernetes.container.name");
        ck_assert_str_eq(c.label_selector.values[0], "web");
        ck_assert_uint_eq(c.annotation_selector.n, 2);
        ck_assert_str_eq(c.annotation_selector.keys[0], "example.com/monitor");
        ck_assert_str_eq(c.annotation_selector.values[0], "true");
        ck_assert_str_eq(c.annotation_selector.keys[1], "team");
        ck_assert_str_eq(c.annotation_selector.values[1], "");
        ck_assert_uint_eq(c.runtime_roots.n, 1);
        ck_assert_str_eq(c.runtime_roots.items[0], "/run/other-runc");
        ck_assert_int_eq(c.failure_policy, FAILURE_POLICY_FAIL);
        ck_assert_int_eq(c.runtime_monitoring, RUNTIME_MONITORING_OVERRIDE);
        ck_assert_uint_eq(c.lock_timeout_ms, 600000);
        ck_assert_uint_eq(c.remove_delay_sec, 604800);
        ck_assert_uint_eq(c.empty_pod_linger_sec, 0);
        ck_assert_uint_eq(c.final_counters_sec, 60);
        ck_assert_int_eq(c.rmid_budget, RMID_BUDGET_CTRL_GROUP);
        ck_assert_uint_eq(c.mbm_events, 1U << ABMC_TOTAL);
        ck_assert_int_eq(c.log_level, LOG_WARNING);
        ck_assert(!c.log_syslog);
        ck_assert(c.log_stderr);
        config_done(&c);
}
END_TEST

START_TEST(test_empty_documents)
{
        static const char *const empty[] = {
            "", "\n\n", "# only a comment\n", "---\n", "--- # nothing\n...\n", "{}\n",
        };

        for (size_t i = 0; i < ELEMENTSOF(empty); i++) {
                _cleanup_(config_problems_done) struct config_problems problems = {0};
                struct config c;

                ck_assert_int_eq(config_init(&c), 0);
                ck_assert_int_eq(parse(&c, empty[i], &problems), 0);
                ck_assert_msg(problems.n == 0, "'%s': %s", empty[i],
                              problems.n ? problems.items[0].text : "");
                assert_defaults(&c);
                config_done(&c);
        }
}
END_TEST

/* A file overrides the values it names and keeps the others; a list is replaced whole. */
START_TEST(test_overlay)
{
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(
            parse(&c, "namespaces: [a, b]\nlockTimeoutMs: 10\nremoveDelaySeconds: 0\n", NULL), 0);
        ck_assert_uint_eq(c.remove_delay_sec, 0);
        ck_assert_int_eq(parse(&c, "removeDelaySeconds: 30\n", NULL), 0);
        ck_assert_uint_eq(c.remove_delay_sec, 30);
        ck_assert_int_eq(parse(&c, "namespaces:\n- c\nlog: {level: debug}\n", NULL), 0);
        ck_assert_uint_eq(c.namespaces.n, 1);
        ck_assert_str_eq(c.namespaces.items[0], "c");
        ck_assert_uint_eq(c.lock_timeout_ms, 10);
        ck_assert_int_eq(c.log_level, LOG_DEBUG);
        ck_assert(c.log_syslog);
        ck_assert_int_eq(parse(&c, "namespaces: []\n", NULL), 0);
        ck_assert_uint_eq(c.namespaces.n, 0);
        config_done(&c);
}
END_TEST

static const struct {
        const char *yaml;
        enum config_problem_kind kind;
        const char *err;
} bad_cases[] = {
    /* keys */
    {"lockTimeoutMs: 5\nresctrlpath: /x\n", CONFIG_PROBLEM_UNKNOWN_KEY,
     "test.yaml:2: key 'resctrlpath': unknown key, skipped"},
    {"log:\n  level: info\n  color: true\n", CONFIG_PROBLEM_UNKNOWN_KEY,
     "test.yaml:3: key 'log.color': unknown key, skipped"},
    {"stateDir: /a\n\nstateDir: /b\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:3: key 'stateDir': duplicate key, skipped"},
    {"log: {level: info, level: debug}\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'log.level': duplicate key, skipped"},
    {"\"a\\nb\": 1\n", CONFIG_PROBLEM_UNKNOWN_KEY, "test.yaml:1: key 'a\nb': unknown key, skipped"},
    {"? [a]\n: b\n", CONFIG_PROBLEM_BAD_VALUE, "test.yaml:1: expected a key, found a list"},
    /* types */
    {"resctrlPath: sys/fs/resctrl\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: key 'resctrlPath': 'sys/fs/resctrl' is not an absolute path"},
    {"stateDir:\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: key 'stateDir': expected an absolute path, found no value"},
    {"stateDir: {a: b}\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: key 'stateDir': expected an absolute path, found a "
     "mapping"},
    {"requireResctrlFs: yes\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'requireResctrlFs': 'yes' is not true or "
     "false"},
    {"requireResctrlFs: \"true\"\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'requireResctrlFs': expected true or false, found a string"},
    {"requireResctrlFs: [true]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'requireResctrlFs': expected true or false, found a list"},
    {"lockTimeoutMs: yes\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': 'yes' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: -1\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '-1' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: 0\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '0' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: 600001\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '600001' is not an "
     "integer in [1, 600000]"},
    {"lockTimeoutMs: 99999999999999999999\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '99999999999999999999' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: 1.5\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '1.5' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: 0x10\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '0x10' is not an integer "
     "in [1, 600000]"},
    {"lockTimeoutMs: 010\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': '010' is not an integer in "
     "[1, 600000]"},
    {"lockTimeoutMs: '10'\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': expected an integer, found a string"},
    {"removeDelaySeconds: -1\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'removeDelaySeconds': '-1' is not an "
     "integer in [0, 604800]"},
    {"removeDelaySeconds: 604801\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'removeDelaySeconds': '604801' is not "
     "an integer in [0, 604800]"},
    {"removeDelaySeconds: 00\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'removeDelaySeconds': '00' is not an "
     "integer in [0, 604800]"},
    {"mbmEvents: [mbm_total_bytes, mbm_bytes]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'mbmEvents': 'mbm_bytes' is not mbm_total_bytes or mbm_local_bytes"},
    {"mbmEvents: [mbm_local_bytes, mbm_local_bytes]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'mbmEvents': 'mbm_local_bytes' is listed twice"},
    {"mbmEvents: mbm_total_bytes\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'mbmEvents': expected a list, found a scalar"},
    {"rmidBudget: mpam\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'rmidBudget': 'mpam' is not auto, node or ctrlGroup"},
    {"finalCountersSeconds: 604801\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'finalCountersSeconds': '604801' is not "
     "an integer in [0, 604800]"},
    {"emptyPodLingerSeconds: 604801\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'emptyPodLingerSeconds': '604801' is not "
     "an integer in [0, 604800]"},
    {"removeDelaySeconds: 30s\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'removeDelaySeconds': '30s' is not an "
     "integer in [0, 604800]"},
    {"failurePolicy: abort\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'failurePolicy': 'abort' is not ignore or "
     "fail"},
    {"failurePolicy: Ignore\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'failurePolicy': 'Ignore' is not ignore "
     "or fail"},
    {"runtimeMonitoring: both\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'runtimeMonitoring': 'both' is not skip or override"},
    {"log:\n  level: verbose\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:2: key 'log.level': 'verbose' is not err, error, "
     "warn, warning, info or debug"},
    {"log: info\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'log': expected a mapping, found a scalar"},
    {"log:\n  syslog: no\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:2: key 'log.syslog': 'no' is not true or false"},
    {"namespaces: shop\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'namespaces': expected a list, found a scalar"},
    {"namespaces: {a: b}\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'namespaces': expected a list, found a "
     "mapping"},
    {"namespaces:\n  - a\n  - [b]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:3: key 'namespaces': expected a string, found a list"},
    {"namespaces:\n  - a\n  -\n  - b\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:3: key 'namespaces': expected a string, found no value"},
    {"excludeNamespaces: [\"a\\0b\"]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'excludeNamespaces': contains a NUL character"},
    {"labelSelector: [a]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'labelSelector': expected a mapping, found a "
     "list"},
    {"labelSelector:\n  app: web\n  app: db\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:3: key 'labelSelector': duplicate key 'app'"},
    {"annotationSelector: {a: {b: c}}\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'annotationSelector': expected a string, found a mapping"},
    {"annotationSelector: {a: }\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'annotationSelector': expected a string, found no value"},
    /* structure */
    {"- a\n- b\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: expected a mapping at the top level, found a list"},
    {"just text\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: expected a mapping at the top level, found a scalar"},
    {"lockTimeoutMs: 5\n---\nlockTimeoutMs: 6\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:2: more than one YAML document; the first is used"},
    /* anchors, aliases, tags */
    {"namespaces: &ns [a]\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'namespaces': anchors and aliases are not allowed"},
    {"namespaces: [a]\nexcludeNamespaces: *ns\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:2: key 'excludeNamespaces': "
     "anchors and aliases are not allowed"},
    {"&top {}\n", CONFIG_PROBLEM_INCOMPLETE, "test.yaml:1: anchors and aliases are not allowed"},
    {"lockTimeoutMs: !!int 5\n", CONFIG_PROBLEM_BAD_VALUE,
     "test.yaml:1: key 'lockTimeoutMs': tags are not allowed"},
    {"stateDir: !!str /x\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:1: key 'stateDir': tags are not allowed"},
    /* syntax: libyaml's own words */
    {"lockTimeoutMs: 5\nlog:\n\tlevel: info\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:3: found character that cannot start any token"},
    {"lockTimeoutMs: 5\n\tstateDir: /x\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:2: found a tab character that violates indentation"},
    {"lockTimeoutMs: 5\nnamespaces: [a, b\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:3: did not find expected ',' or ']'"},
    {"stateDir: /x\nstateDir /y\nlog: {}\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:3: could not find expected ':'"},
    {"namespaces: [a]\nlog: {level: \"info}\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:3: found unexpected end of stream"},
    {"lockTimeoutMs: 1\n\n\nremoveDelaySeconds: \xc3\x28\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:4: invalid trailing UTF-8 octet"},
    {"stateDir: /x\n\x01\n", CONFIG_PROBLEM_INCOMPLETE,
     "test.yaml:2: control characters are not allowed"},
};

/* One problem, named as the case says; a key-level one costs that key only. */
START_TEST(test_problem)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        _cleanup_free_ char *more = NULL;
        const char *yaml = bad_cases[_i].yaml;
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(parse(&c, yaml, &problems), 0);
        ck_assert_uint_eq(problems.n, 1);
        ck_assert_str_eq(problems.items[0].text, bad_cases[_i].err);
        ck_assert_int_eq(problems.items[0].kind, bad_cases[_i].kind);
        config_done(&c);
        if (bad_cases[_i].kind == CONFIG_PROBLEM_INCOMPLETE)
                return;

        /* Reading goes on after it: a key that follows is used. */
        config_problems_done(&problems);
        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_ge(asprintf(&more, "%sfailurePolicy: fail\n", yaml), 0);
        ck_assert_int_eq(parse(&c, more, &problems), 0);
        ck_assert_uint_ge(problems.n, 1);
        if (!strstr(yaml, "failurePolicy"))
                ck_assert_int_eq(c.failure_policy, FAILURE_POLICY_FAIL);
        config_done(&c);
}
END_TEST

/* A bad value costs its key only; a syntax error keeps what was read before it. */
START_TEST(test_partial)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(parse(&c,
                               "lockTimeoutMs: 0\nremoveDelaySeconds: 3\nnewKey: {a: [1, 2]}\n"
                               "namespaces: [a, {b: c}, d]\nexcludeNamespaces: [x]\n",
                               &problems),
                         0);
        ck_assert_uint_eq(c.lock_timeout_ms, CONFIG_DEFAULT_LOCK_TIMEOUT_MS);
        ck_assert_uint_eq(c.remove_delay_sec, 3);
        ck_assert_uint_eq(c.namespaces.n, 0);
        ck_assert_uint_eq(c.exclude_namespaces.n, 1);
        ck_assert_uint_eq(problems.n, 3);
        ck_assert_int_eq(problems.items[0].kind, CONFIG_PROBLEM_BAD_VALUE);
        ck_assert_int_eq(problems.items[1].kind, CONFIG_PROBLEM_UNKNOWN_KEY);
        ck_assert_str_eq(problems.items[1].text, "test.yaml:3: key 'newKey': unknown key, skipped");
        ck_assert_int_eq(problems.items[2].kind, CONFIG_PROBLEM_BAD_VALUE);
        ck_assert(!config_problems_have(&problems, CONFIG_PROBLEM_INCOMPLETE));
        config_done(&c);
        config_problems_done(&problems);

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(
            parse(&c, "removeDelaySeconds: 4\nnamespaces: [a, b\nlockTimeoutMs: 9\n", &problems),
            0);
        ck_assert_uint_eq(c.remove_delay_sec, 4);
        ck_assert_uint_eq(c.namespaces.n, 0);
        ck_assert_uint_eq(c.lock_timeout_ms, CONFIG_DEFAULT_LOCK_TIMEOUT_MS);
        ck_assert_uint_eq(problems.n, 1);
        ck_assert(config_problems_have(&problems, CONFIG_PROBLEM_INCOMPLETE));
        config_done(&c);
}
END_TEST

/* Billion laughs: refused at the first anchor, long before any expansion. */
START_TEST(test_alias_bomb)
{
        static const char bomb[] = "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
                                   "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                                   "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
                                   "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                                   "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                                   "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                                   "namespaces: [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n";
        static const char bomb_known[] = "namespaces: &a [\"lol\",\"lol\"]\n"
                                         "excludeNamespaces: [*a,*a,*a,*a,*a,*a]\n";
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        struct config c;

        /* Unknown keys are skipped unread; the known one is refused at its aliases. */
        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(parse(&c, bomb, &problems), 0);
        ck_assert_uint_eq(problems.n, 7);
        ck_assert_str_eq(problems.items[0].text, "test.yaml:1: key 'a': unknown key, skipped");
        ck_assert_str_eq(problems.items[6].text,
                         "test.yaml:7: key 'namespaces': anchors and aliases are not allowed");
        ck_assert_uint_eq(c.namespaces.n, 0);
        config_problems_done(&problems);
        ck_assert_int_eq(parse(&c, bomb_known, &problems), 0);
        ck_assert_uint_eq(problems.n, 2);
        ck_assert_str_eq(problems.items[0].text,
                         "test.yaml:1: key 'namespaces': anchors and aliases are not allowed");
        ck_assert_uint_eq(c.exclude_namespaces.n, 0);
        config_done(&c);
}
END_TEST

START_TEST(test_limits)
{
        _cleanup_free_ char *big = NULL, *many = NULL;
        _cleanup_close_ int dir_fd = -EBADF, fd = -EBADF;
        const char *dir;
        char path[PATH_MAX];
        const size_t size = (1u << 20) + 1;
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        struct config c;
        size_t n = 0;

        ck_assert_int_eq(config_init(&c), 0);

        /* Over 1 MiB, from memory or from a file: refused before parsing. */
        big = malloc(size);
        ck_assert_ptr_nonnull(big);
        memset(big, '#', size);
        ck_assert_int_eq(config_parse(&c, big, size, "big", &problems), -EFBIG);
        dir_fd = tmptree_new(&dir);
        snprintf(path, sizeof(path), "%s/big.yaml", dir);
        fd = openat(dir_fd, "big.yaml", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, big, size), 0);
        ck_assert_int_eq(config_load(&c, path, &problems), -EFBIG);
        ck_assert_uint_eq(problems.n, 0);

        /* At most 1024 entries per list. */
        many = malloc(16 + 3 * 1025);
        ck_assert_ptr_nonnull(many);
        n = (size_t) sprintf(many, "namespaces: [");
        for (size_t i = 0; i < 1025; i++)
                n += (size_t) sprintf(many + n, "a%c", i < 1024 ? ',' : ']');
        ck_assert_int_eq(config_parse(&c, many, n, "many", &problems), 0);
        ck_assert_uint_eq(problems.n, 1);
        ck_assert_str_eq(problems.items[0].text,
                         "many:1: key 'namespaces': more than 1024 entries");
        ck_assert_uint_eq(c.namespaces.n, 0);
        many[n - 3] = ']';
        ck_assert_int_eq(config_parse(&c, many, n - 2, "many", NULL), 0);
        ck_assert_uint_eq(c.namespaces.n, 1024);
        config_done(&c);
}
END_TEST

START_TEST(test_load_errors)
{
        const char *dir;
        char path[PATH_MAX];
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        struct config c;

        ck_assert_int_eq(config_init(&c), 0);
        ck_assert_int_eq(config_load(&c, "/nonexistent/config.yaml", &problems), -ENOENT);
        (void) close(tmptree_new(&dir));
        ck_assert_int_eq(config_load(&c, dir, &problems), -EISDIR);
        ck_assert_uint_eq(problems.n, 0);

        /* The file name in the message is the path given. */
        snprintf(path, sizeof(path), "%s/config.yaml", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write_all(fd, "log:\n  stderr: 1\n", 17), 0);
        ck_assert_int_eq(config_load(&c, path, &problems), 0);
        ck_assert_uint_eq(problems.n, 1);
        ck_assert_str_eq(
            strstr(problems.items[0].text, ":2: key 'log.stderr': '1' is not true or false"),
            ":2: key 'log.stderr': '1' is not true or false");
        ck_assert_int_eq(strncmp(problems.items[0].text, path, strlen(path)), 0);
        assert_defaults(&c);
        config_done(&c);
}
END_TEST

START_TEST(test_log_levels)
{
        ck_assert_int_eq(log_level_from_string("err"), LOG_ERR);
        ck_assert_int_eq(log_level_from_string("error"), LOG_ERR);
        ck_assert_int_eq(log_level_from_string("warn"), LOG_WARNING);
        ck_assert_int_eq(log_level_from_string("warning"), LOG_WARNING);
        ck_assert_int_eq(log_level_from_string("info"), LOG_INFO);
        ck_assert_int_eq(log_level_from_string("debug"), LOG_DEBUG);
        ck_assert_int_eq(log_level_from_string("Debug"), -EINVAL);
        ck_assert_int_eq(log_level_from_string("notice"), -EINVAL);
        ck_assert_int_eq(log_level_from_string(""), -EINVAL);
        ck_assert_int_eq(log_level_from_string(NULL), -EINVAL);
}
END_TEST

static Suite *config_suite(void)
{
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("config");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_sample);
        tcase_add_test(tc, test_full_file);
        tcase_add_test(tc, test_empty_documents);
        tcase_add_test(tc, test_overlay);
        tcase_add_loop_test(tc, test_problem, 0, ELEMENTSOF(bad_cases));
        tcase_add_test(tc, test_partial);
        tcase_add_test(tc, test_alias_bomb);
        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_load_errors);
        tcase_add_test(tc, test_log_levels);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(config_suite());
}
