/* SPDX-License-Identifier: Apache-2.0 */
/* Every enum with a name table has a name for each of its values, distinct
 * from the others', and where a name is read back, the value it came from:
 * a value added to an enum without its name fails here, not as a NULL in
 * an output (as systemd's test-tables does for its tables). */
#include <check.h>
#include <string.h>

#include "abmc.h"
#include "pod.h"
#include "stage.h"
#include "tmptree.h"

/* names[0..n) are all there and all different. */
static void assert_complete(const char *what, const char *const *names, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                ck_assert_msg(names[i] && names[i][0], "%s %zu has no name", what, i);
                for (size_t j = 0; j < i; j++)
                        ck_assert_msg(strcmp(names[i], names[j]) != 0, "%s %zu and %zu: '%s'", what,
                                      j, i, names[i]);
        }
}

START_TEST(test_hook_outcomes)
{
        const char *names[_OUTCOME_MAX];

        /* Not a pod's container: neither logged nor counted, no name. */
        ck_assert_ptr_null(hook_outcome_name(OUTCOME_NOT_OURS));
        for (int i = OUTCOME_NOT_OURS + 1; i < _OUTCOME_MAX; i++)
                names[i] = hook_outcome_name((enum hook_outcome) i);
        assert_complete("hook outcome", names + 1, _OUTCOME_MAX - 1);
        ck_assert_ptr_null(hook_outcome_name(_OUTCOME_MAX));
}
END_TEST

START_TEST(test_unmonitored)
{
        const char *texts[_UNMONITORED_MAX], *codes[_UNMONITORED_MAX];

        for (int i = 0; i < _UNMONITORED_MAX; i++) {
                texts[i] = unmonitored_text((enum unmonitored) i);
                codes[i] = unmonitored_code((enum unmonitored) i);
        }
        /* A reason of another version: no text of its own. */
        ck_assert_str_eq(texts[UNMONITORED_OTHER], "");
        assert_complete("unmonitored text", texts, UNMONITORED_OTHER);
        assert_complete("unmonitored code", codes, _UNMONITORED_MAX);
        ck_assert_ptr_null(unmonitored_text(_UNMONITORED_MAX));
        ck_assert_ptr_null(unmonitored_code(_UNMONITORED_MAX));
}
END_TEST

START_TEST(test_abmc)
{
        const char *events[ABMC_EVENTS], *bandwidth[ABMC_NONE + 1];

        for (int i = 0; i < ABMC_EVENTS; i++) {
                events[i] = abmc_event_name((enum abmc_event) i);
                ck_assert_int_eq(abmc_event_from_name(events[i]), i);
        }
        assert_complete("ABMC event", events, ABMC_EVENTS);
        ck_assert_ptr_null(abmc_event_name(ABMC_EVENTS));
        for (int i = 0; i <= ABMC_NONE; i++)
                bandwidth[i] = abmc_bandwidth_name((enum abmc_bandwidth) i);
        assert_complete("ABMC bandwidth", bandwidth, ABMC_NONE + 1);
}
END_TEST

static Suite *tables_suite(void)
{
        Suite *s = suite_create("tables");
        TCase *tc = tcase_create("tables");

        tcase_add_test(tc, test_hook_outcomes);
        tcase_add_test(tc, test_unmonitored);
        tcase_add_test(tc, test_abmc);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(tables_suite());
}
