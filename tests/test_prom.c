/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "prom.h"
#include "tmptree.h"

static void assert_name(const char *event, enum counter_kind kind, const char *unit,
                        const char *want)
{
        _cleanup_free_ char *name = NULL;

        ck_assert_int_eq(prom_counter_name("resctrl_pod_", event, kind, unit, &name), 0);
        ck_assert_str_eq(name, want);
}

START_TEST(test_counter_names)
{
        assert_name("llc_occupancy", COUNTER_GAUGE, "bytes", "resctrl_pod_llc_occupancy_bytes");
        assert_name("mbm_total_bytes", COUNTER_CUMULATIVE, "bytes",
                    "resctrl_pod_mbm_total_bytes_total");
        assert_name("core_energy", COUNTER_CUMULATIVE, "joules",
                    "resctrl_pod_core_energy_joules_total");
        assert_name("activity", COUNTER_CUMULATIVE, "farads", "resctrl_pod_activity_farads_total");
        assert_name("uops_retired", COUNTER_CUMULATIVE, NULL, "resctrl_pod_uops_retired_total");
        assert_name("odd-name.x:y", COUNTER_CUMULATIVE, NULL, "resctrl_pod_odd_name_x_y_total");
        /* "bytes" inside the name is no unit suffix */
        assert_name("bytesread", COUNTER_GAUGE, "bytes", "resctrl_pod_bytesread_bytes");
}
END_TEST

START_TEST(test_render_groups_families)
{
        _cleanup_(prom_writer_done) struct prom_writer w = {0};
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(prom_add(&w, "a_total", "counter", "A things", NULL, "1"), 0);
        ck_assert_int_eq(prom_add(&w, "b", "gauge", "B\\now\nline",
                                  (const char *const[]){"x", "q\"uo\\te\nnl", NULL}, "2.500000"),
                         0);
        ck_assert_int_eq(prom_add(&w, "a_total", "counter", "ignored",
                                  (const char *const[]){"k", "v", "l", "w", NULL}, "3"),
                         0);
        ck_assert_int_eq(prom_render(&w, &text), 0);
        ck_assert_str_eq(text, "# HELP a_total A things\n"
                               "# TYPE a_total counter\n"
                               "a_total 1\n"
                               "a_total{k=\"v\",l=\"w\"} 3\n"
                               "# HELP b B\\\\now\\nline\n"
                               "# TYPE b gauge\n"
                               "b{x=\"q\\\"uo\\\\te\\nnl\"} 2.500000\n");
}
END_TEST

START_TEST(test_refuses)
{
        _cleanup_(prom_writer_done) struct prom_writer w = {0};

        ck_assert_int_eq(prom_add(&w, "1abc", "gauge", "h", NULL, "1"), -EINVAL);
        ck_assert_int_eq(prom_add(&w, "a b", "gauge", "h", NULL, "1"), -EINVAL);
        ck_assert_int_eq(prom_add(&w, "ok", "histogram", "h", NULL, "1"), -EINVAL);
        ck_assert_int_eq(
            prom_add(&w, "ok", "gauge", "h", (const char *const[]){"a:b", "v", NULL}, "1"),
            -EINVAL);
        ck_assert_int_eq(prom_add(&w, "ok", "gauge", "h", NULL, "1"), 0);
        ck_assert_int_eq(prom_add(&w, "ok", "counter", "h", NULL, "1"), -EINVAL);
        ck_assert_uint_eq(w.n, 1);
}
END_TEST

START_TEST(test_empty)
{
        struct prom_writer w = {0};
        _cleanup_free_ char *text = NULL;

        ck_assert_int_eq(prom_render(&w, &text), 0);
        ck_assert_str_eq(text, "");
}
END_TEST

static Suite *prom_suite(void)
{
        Suite *s = suite_create("prom");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_counter_names);
        tcase_add_test(tc, test_render_groups_families);
        tcase_add_test(tc, test_refuses);
        tcase_add_test(tc, test_empty);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(prom_suite());
}
