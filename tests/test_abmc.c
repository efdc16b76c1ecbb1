/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>

#include "abmc.h"
#include "macro.h"
#include "tmptree.h"

START_TEST(test_mode)
{
        bool on = false;

        ck_assert_int_eq(abmc_parse_mode("[mbm_event]\ndefault\n", &on), 0);
        ck_assert(on);
        ck_assert_int_eq(abmc_parse_mode("mbm_event\n[default]\n", &on), 0);
        ck_assert(!on);
        for (const char *const *bad =
                 (const char *const[]){"", "mbm_event\ndefault\n", "[mbm_event]\n[default]\n",
                                       "[mbm_event]", "[newmode]\ndefault\n", "[]\n", NULL};
             *bad; bad++)
                ck_assert_msg(abmc_parse_mode(*bad, &on) == -EBADMSG, "'%s' accepted", *bad);
}
END_TEST

START_TEST(test_counts)
{
        struct abmc_counts c;

        ck_assert_int_eq(abmc_parse_counts("0=32;1=30\n", &c), 0);
        ck_assert_uint_eq(c.n, 2);
        ck_assert_uint_eq(c.ids[1], 1);
        ck_assert_uint_eq(c.counts[0], 32);
        ck_assert_uint_eq(c.counts[1], 30);
        ck_assert_int_eq(abmc_parse_counts("7=0\n", &c), 0);
        ck_assert_uint_eq(c.ids[0], 7);
        for (const char *const *bad =
                 (const char *const[]){"", "\n", "0=32", "0=32;\n", "0=\n", "=32\n", "0=-1\n",
                                       "0=32;1\n", "0=3 2\n", "0=1\n1=2\n", "a=1\n", "0=1x\n",
                                       "0=99999999999\n", NULL};
             *bad; bad++)
                ck_assert_msg(abmc_parse_counts(*bad, &c) == -EBADMSG, "'%s' accepted", *bad);
}
END_TEST

START_TEST(test_counts_too_many)
{
        char text[4096] = "";
        size_t len = 0;
        struct abmc_counts c;

        for (int i = 0; i <= ABMC_DOMAINS_MAX; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%s%d=1", i ? ";" : "", i);
        text[len++] = '\n';
        ck_assert_int_eq(abmc_parse_counts(text, &c), -E2BIG);
}
END_TEST

START_TEST(test_assignments)
{
        struct abmc_assignments a;

        ck_assert_int_eq(abmc_parse_assignments("mbm_total_bytes:0=e;1=_\n"
                                                "mbm_local_bytes:0=_;1=_\n",
                                                &a),
                         0);
        ck_assert_uint_eq(a.n, 2);
        ck_assert(a.assigned[ABMC_TOTAL][0] && !a.assigned[ABMC_TOTAL][1]);
        ck_assert(a.listed[ABMC_LOCAL]);
        ck_assert_int_eq(abmc_bandwidth(&a, ABMC_ALL_EVENTS), ABMC_PARTIAL);
        ck_assert_int_eq(abmc_bandwidth(&a, 1U << ABMC_LOCAL), ABMC_NONE);
        ck_assert_int_eq(abmc_bandwidth(&a, 0), ABMC_FULL);

        /* A newer kernel's event is skipped; one without mbm_local_bytes
         * (rdt=!mbmlocal) counts fully with what it has. */
        ck_assert_int_eq(abmc_parse_assignments("mbm_total_bytes:0=e\nmbm_new:0=_\n", &a), 0);
        ck_assert(!a.listed[ABMC_LOCAL]);
        ck_assert_int_eq(abmc_bandwidth(&a, ABMC_ALL_EVENTS), ABMC_FULL);

        for (const char *const *bad =
                 (const char *const[]){
                     "", "mbm_total_bytes:0=e", "mbm_total_bytes:0=x\n", "mbm_total_bytes:0=ee\n",
                     "mbm_total_bytes\n", "mbm_total_bytes:\n",
                     "mbm_total_bytes:0=e\nmbm_total_bytes:0=e\n",
                     "mbm_total_bytes:0=e\nmbm_local_bytes:1=e\n",
                     "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=e\n", "mbm_new:0=e\n", NULL};
             *bad; bad++)
                ck_assert_msg(abmc_parse_assignments(*bad, &a) == -EBADMSG, "'%s' accepted", *bad);
}
END_TEST

START_TEST(test_names)
{
        ck_assert_int_eq(abmc_event_from_name("mbm_local_bytes"), ABMC_LOCAL);
        ck_assert_int_eq(abmc_event_from_name("llc_occupancy"), -EINVAL);
        ck_assert_str_eq(abmc_event_name(ABMC_TOTAL), "mbm_total_bytes");
        ck_assert_str_eq(abmc_bandwidth_name(ABMC_PARTIAL), "partial");
}
END_TEST

static Suite *abmc_suite(void)
{
        Suite *s = suite_create("abmc");
        TCase *tc = tcase_create("abmc");

        tcase_add_test(tc, test_mode);
        tcase_add_test(tc, test_counts);
        tcase_add_test(tc, test_counts_too_many);
        tcase_add_test(tc, test_assignments);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(abmc_suite());
}
