/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>

#include "abmc.h"
#include "string_table.h"
#include "tmptree.h"

enum fruit {
        FRUIT_APPLE,
        FRUIT_UNNAMED, /* a gap in the table */
        FRUIT_PEAR,
        _FRUIT_MAX,
};

static const char *const fruit_names[_FRUIT_MAX] = {
    [FRUIT_APPLE] = "apple",
    [FRUIT_PEAR] = "pear",
};
DEFINE_PRIVATE_STRING_TABLE_TO_STRING(fruit_name, fruit_names, enum fruit)
DEFINE_PRIVATE_STRING_TABLE_FROM_STRING(fruit_from_name, fruit_names)

/* Each name of the table; NULL out of it, or for a value it leaves unnamed. */
START_TEST(test_to_string)
{
        ck_assert_str_eq(fruit_name(FRUIT_APPLE), "apple");
        ck_assert_str_eq(fruit_name(FRUIT_PEAR), "pear");
        ck_assert_ptr_null(fruit_name(FRUIT_UNNAMED));
        ck_assert_ptr_null(fruit_name(_FRUIT_MAX));
        ck_assert_ptr_null(fruit_name((enum fruit) - 1));
        ck_assert_ptr_null(fruit_name((enum fruit) 1000000));
}
END_TEST

/* The value of each name; -EINVAL for NULL, a name not in it or one that
 * differs in case. */
START_TEST(test_from_string)
{
        ck_assert_int_eq(fruit_from_name("apple"), FRUIT_APPLE);
        ck_assert_int_eq(fruit_from_name("pear"), FRUIT_PEAR);
        ck_assert_int_eq(fruit_from_name("Pear"), -EINVAL);
        ck_assert_int_eq(fruit_from_name("pea"), -EINVAL);
        ck_assert_int_eq(fruit_from_name(""), -EINVAL);
        ck_assert_int_eq(fruit_from_name(NULL), -EINVAL);
}
END_TEST

/* A table of the project's, past its end. */
START_TEST(test_project_table)
{
        ck_assert_ptr_null(abmc_event_name(ABMC_EVENTS));
        ck_assert_ptr_null(abmc_bandwidth_name((enum abmc_bandwidth)(ABMC_NONE + 1)));
        ck_assert_int_eq(abmc_event_from_name(NULL), -EINVAL);
}
END_TEST

static Suite *string_table_suite(void)
{
        Suite *s = suite_create("string_table");
        TCase *tc = tcase_create("lookup");

        tcase_add_test(tc, test_to_string);
        tcase_add_test(tc, test_from_string);
        tcase_add_test(tc, test_project_table);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(string_table_suite());
}
