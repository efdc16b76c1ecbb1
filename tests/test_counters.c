/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "counters.h"
#include "macro.h"
#include "tmptree.h"

static void assert_value(const char *text, uint64_t v, unsigned scale)
{
        struct counter_value cv = {0};

        ck_assert_int_eq(counter_value_parse(text, &cv), 0);
        ck_assert_uint_eq(cv.v, v);
        ck_assert_uint_eq(cv.scale, scale);
}

START_TEST(test_parse_values)
{
        assert_value("0\n", 0, 0);
        assert_value("123456789", 123456789, 0);
        assert_value("18446744073709551615\n", UINT64_MAX, 0);
        /* print_event_value() of 0x60000 with 18 binary bits */
        assert_value("1.500000\n", 1500000, 6);
        assert_value("0.022030\n", 22030, 6);
        assert_value("35184372088831.99999\n", 3518437208883199999ULL, 5);
}
END_TEST

START_TEST(test_parse_refuses)
{
        static const char *const bad[] = {
            "",      "\n",    "-1",   "+1",          " 1",
            "1 ",    "1\n\n", "0x10", "1.",          ".5",
            "1.2.3", "1,5",   "1e3",  "Unavailable", "1.0000000000000000000"};
        struct counter_value cv = {7, 7};

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(counter_value_parse(bad[i], &cv) == -EINVAL, "'%s' accepted", bad[i]);
        ck_assert_int_eq(counter_value_parse("18446744073709551616", &cv), -ERANGE);
        ck_assert_int_eq(counter_value_parse("18446744073709551.616", &cv), -ERANGE);
        ck_assert_uint_eq(cv.v, 7); /* untouched on failure */
}
END_TEST

START_TEST(test_text_states)
{
        struct counter_value cv = {0};
        enum counter_state st;

        ck_assert_int_eq(counter_text_parse("Unavailable\n", &st, &cv), 0);
        ck_assert_int_eq(st, COUNTER_UNAVAILABLE);
        ck_assert_int_eq(counter_text_parse("Error\n", &st, &cv), 0);
        ck_assert_int_eq(st, COUNTER_ERROR);
        ck_assert_int_eq(counter_text_parse("Unassigned", &st, &cv), 0);
        ck_assert_int_eq(st, COUNTER_UNASSIGNED);
        ck_assert_int_eq(counter_text_parse("42\n", &st, &cv), 0);
        ck_assert_int_eq(st, COUNTER_OK);
        ck_assert_uint_eq(cv.v, 42);
        ck_assert_int_eq(counter_text_parse("unavailable\n", &st, &cv), -EINVAL);
        ck_assert_int_eq(counter_text_parse("Error\nX", &st, &cv), -EINVAL);
}
END_TEST

START_TEST(test_format_round_trip)
{
        static const char *const texts[] = {
            "0", "7", "18446744073709551615", "1.500000", "0.000001", "0.022030", "12.000000000"};
        char buf[COUNTER_VALUE_STRLEN];
        struct counter_value cv;

        for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
                ck_assert_int_eq(counter_value_parse(texts[i], &cv), 0);
                ck_assert_int_eq(counter_value_format(&cv, buf, sizeof(buf)), 0);
                ck_assert_str_eq(buf, texts[i]);
        }
        ck_assert_int_eq(counter_value_format(&cv, buf, 5), -ENOBUFS);
}
END_TEST

START_TEST(test_arithmetic)
{
        struct counter_value a = {1500000, 6}, b = {22030, 6}, r, big = {UINT64_MAX, 0};

        ck_assert_int_eq(counter_value_sub(&a, &b, &r), 0);
        ck_assert_uint_eq(r.v, 1477970);
        ck_assert_uint_eq(r.scale, 6);
        ck_assert_int_eq(counter_value_sub(&b, &a, &r), -ERANGE);
        ck_assert_int_eq(counter_value_add(&a, &b), 0);
        ck_assert_uint_eq(a.v, 1522030);
        ck_assert_int_eq(counter_value_add(&a, &big), -EDOM);
        r = (struct counter_value){1, 0};
        ck_assert_int_eq(counter_value_add(&big, &r), -ERANGE);
        ck_assert_uint_eq(big.v, UINT64_MAX);
        ck_assert(counter_value_to_double(&a) == 1.52203);
}
END_TEST

START_TEST(test_describe)
{
        enum counter_kind k;
        const char *u;

        counter_describe("llc_occupancy", &k, &u);
        ck_assert_int_eq(k, COUNTER_GAUGE);
        ck_assert_str_eq(u, "bytes");
        counter_describe("mbm_total_bytes", &k, &u);
        ck_assert_int_eq(k, COUNTER_CUMULATIVE);
        ck_assert_str_eq(u, "bytes");
        counter_describe("mbm_local_bytes", &k, &u);
        ck_assert_str_eq(u, "bytes");
        counter_describe("core_energy", &k, &u);
        ck_assert_int_eq(k, COUNTER_CUMULATIVE);
        ck_assert_str_eq(u, "joules");
        counter_describe("activity", &k, &u);
        ck_assert_str_eq(u, "farads");
        counter_describe("uops_retired", &k, &u);
        ck_assert_int_eq(k, COUNTER_CUMULATIVE);
        ck_assert_ptr_null(u);
}
END_TEST

/* A group directory shaped like the kernel's, with SNC's per-node subdirectory. */
static int make_group(void)
{
        int fd = tmptree_new(NULL);

        tmptree_mkdir(fd, "mon_data");
        tmptree_mkdir(fd, "mon_data/mon_L3_01");
        tmptree_mkdir(fd, "mon_data/mon_L3_00");
        tmptree_mkdir(fd, "mon_data/mon_L3_00/mon_sub_L3_00");
        tmptree_put(fd, "mon_data/mon_L3_00/mon_sub_L3_00/llc_occupancy", "1\n");
        tmptree_put(fd, "mon_data/mon_L3_00/llc_occupancy", "4096\n");
        tmptree_put(fd, "mon_data/mon_L3_00/mbm_total_bytes", "Unavailable\n");
        tmptree_put(fd, "mon_data/mon_L3_01/mbm_total_bytes", "1000\n");
        tmptree_mkdir(fd, "mon_data/mon_PERF_PKG_00");
        tmptree_put(fd, "mon_data/mon_PERF_PKG_00/core_energy", "2.250000\n");
        tmptree_put(fd, "mon_data/mon_PERF_PKG_00/c6_res", "Error\n");
        return fd;
}

START_TEST(test_read_group)
{
        _cleanup_close_ int fd = make_group();
        _cleanup_free_ struct counter_reading *rd = NULL;
        size_t n = 0;

        ck_assert_int_eq(counters_read(fd, false, &rd, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_str_eq(rd[0].domain, "mon_L3_00");
        ck_assert_str_eq(rd[0].name, "llc_occupancy");
        ck_assert_int_eq(rd[0].kind, COUNTER_GAUGE);
        ck_assert_uint_eq(rd[0].value.v, 4096);
        ck_assert_str_eq(rd[1].name, "mbm_total_bytes");
        ck_assert_int_eq(rd[1].state, COUNTER_UNAVAILABLE);
        ck_assert_str_eq(rd[2].domain, "mon_L3_01");
        ck_assert_uint_eq(rd[2].value.v, 1000);
        ck_assert_str_eq(rd[3].domain, "mon_PERF_PKG_00");
        ck_assert_str_eq(rd[3].name, "c6_res");
        ck_assert_int_eq(rd[3].state, COUNTER_ERROR);
        ck_assert_ptr_null(rd[3].unit);
        ck_assert_str_eq(rd[4].name, "core_energy");
        ck_assert_str_eq(rd[4].unit, "joules");
        ck_assert_uint_eq(rd[4].value.v, 2250000);
        ck_assert_uint_eq(rd[4].value.scale, 6);
}
END_TEST

START_TEST(test_read_cumulative_only)
{
        _cleanup_close_ int fd = make_group();
        _cleanup_free_ struct counter_reading *rd = NULL;
        size_t n = 0;

        /* An unreadable gauge is never opened when only cumulative counters are wanted. */
        tmptree_put(fd, "mon_data/mon_L3_00/llc_occupancy", "garbage\n");
        ck_assert_int_eq(counters_read(fd, true, &rd, &n), 0);
        ck_assert_uint_eq(n, 4);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(rd[i].kind, COUNTER_CUMULATIVE);
}
END_TEST

/* A file that does not parse is its counter's reading, "error"; the
 * group's other counters are read as ever. */
START_TEST(test_read_unparsed_costs_one)
{
        _cleanup_close_ int fd = make_group();
        _cleanup_free_ struct counter_reading *rd = NULL;
        char big[200];
        size_t n = 0;

        tmptree_put(fd, "mon_data/mon_L3_01/mbm_local_bytes", "12 bytes\n");
        memset(big, '7', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        tmptree_put(fd, "mon_data/mon_PERF_PKG_00/activity", big); /* longer than any counter */
        ck_assert_int_eq(counters_read(fd, false, &rd, &n), 0);
        ck_assert_uint_eq(n, 7);
        ck_assert_str_eq(rd[2].domain, "mon_L3_01");
        ck_assert_str_eq(rd[2].name, "mbm_local_bytes");
        ck_assert_int_eq(rd[2].state, COUNTER_UNPARSED);
        ck_assert_str_eq(counter_state_to_string(rd[2].state), "error");
        ck_assert_str_eq(rd[3].name, "mbm_total_bytes");
        ck_assert_int_eq(rd[3].state, COUNTER_OK);
        ck_assert_uint_eq(rd[3].value.v, 1000);
        ck_assert_str_eq(rd[4].name, "activity");
        ck_assert_int_eq(rd[4].state, COUNTER_UNPARSED);
        ck_assert_str_eq(rd[5].name, "c6_res");
        ck_assert_int_eq(rd[5].state, COUNTER_ERROR);
        ck_assert_str_eq(rd[6].name, "core_energy");
        ck_assert_int_eq(rd[6].state, COUNTER_OK);
}
END_TEST

START_TEST(test_read_refuses)
{
        _cleanup_close_ int empty = tmptree_new(NULL);
        struct counter_reading *rd = NULL;
        size_t n = 0;

        ck_assert_int_eq(counters_read(empty, false, &rd, &n), -ENOENT);
        ck_assert_int_eq(symlinkat("/etc", empty, "mon_data"), 0);
        ck_assert_int_eq(counters_read(empty, false, &rd, &n), -ENOTDIR); /* not followed */
}
END_TEST

static Suite *counters_suite(void)
{
        Suite *s = suite_create("counters");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_values);
        tcase_add_test(tc, test_parse_refuses);
        tcase_add_test(tc, test_text_states);
        tcase_add_test(tc, test_format_round_trip);
        tcase_add_test(tc, test_arithmetic);
        tcase_add_test(tc, test_describe);
        tcase_add_test(tc, test_read_group);
        tcase_add_test(tc, test_read_cumulative_only);
        tcase_add_test(tc, test_read_unparsed_costs_one);
        tcase_add_test(tc, test_read_refuses);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(counters_suite());
}
