/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "outcome.h"
#include "tmptree.h"

START_TEST(test_count_and_read)
{
        _cleanup_close_ int fd = tmptree_new(NULL);
        _cleanup_free_ struct outcome *o = NULL;
        size_t n = 0;

        ck_assert_int_eq(outcome_count(fd, "poststop", "group removed"), 0);
        ck_assert_int_eq(outcome_count(fd, "createRuntime", "monitored"), 0);
        ck_assert_int_eq(outcome_count(fd, "createRuntime", "monitored"), 0);
        ck_assert_int_eq(outcome_count(fd, "createRuntime", "runtime monitors it"), 0);
        tmptree_put(fd, "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b.members", "{}");
        tmptree_put(fd, "outcome.bad", "xx");
        ck_assert_int_eq(outcome_read_all(fd, &o, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(o[0].stage, "createRuntime");
        ck_assert_str_eq(o[0].result, "monitored");
        ck_assert_uint_eq(o[0].count, 2);
        ck_assert_str_eq(o[1].result, "runtime_monitors_it");
        ck_assert_uint_eq(o[1].count, 1);
        ck_assert_str_eq(o[2].stage, "poststop");
        ck_assert_str_eq(o[2].result, "group_removed");
}
END_TEST

START_TEST(test_refuses_unsafe_words)
{
        _cleanup_close_ int fd = tmptree_new(NULL);

        ck_assert_int_eq(outcome_count(fd, "create/../x", "monitored"), -EINVAL);
        ck_assert_int_eq(outcome_count(fd, "createRuntime", "a.b"), -EINVAL);
        ck_assert_int_eq(outcome_count(fd, "", "x"), -EINVAL);
        ck_assert_int_eq(outcome_count(fd, "createRuntime", "0123456789012345678901234567890123"),
                         -EINVAL);
        ck_assert_int_eq(tmptree_count(fd, "."), 0);
}
END_TEST

/* Appends by concurrent processes are never lost. */
START_TEST(test_concurrent)
{
        _cleanup_close_ int fd = tmptree_new(NULL);
        _cleanup_free_ struct outcome *o = NULL;
        size_t n = 0;

        for (int i = 0; i < 8; i++)
                if (fork() == 0) {
                        for (int j = 0; j < 250; j++)
                                if (outcome_count(fd, "createRuntime", "monitored") < 0)
                                        _exit(1);
                        _exit(0);
                }
        for (int i = 0; i < 8; i++) {
                int status;

                ck_assert_int_ge(wait(&status), 0);
                ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        }
        ck_assert_int_eq(outcome_read_all(fd, &o, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(o[0].count, 2000);
}
END_TEST

static Suite *outcome_suite(void)
{
        Suite *s = suite_create("outcome");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_count_and_read);
        tcase_add_test(tc, test_refuses_unsafe_words);
        tcase_add_test(tc, test_concurrent);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(outcome_suite());
}
