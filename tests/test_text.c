/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <string.h>

#include "macro.h"
#include "text.h"
#include "tmptree.h"

START_TEST(test_plain)
{
        char buf[64];

        ck_assert_str_eq(text_escape(buf, sizeof(buf), "pod-1 default/web"), "pod-1 default/web");
        ck_assert_str_eq(text_escape(buf, sizeof(buf), ""), "");
}
END_TEST

/* Newlines, escape sequences, DEL and non-ASCII bytes. */
START_TEST(test_controls)
{
        char buf[128];

        ck_assert_str_eq(text_escape(buf, sizeof(buf), "a\nresctrl-mon-hook: FORGED"),
                         "a\\x0aresctrl-mon-hook: FORGED");
        ck_assert_str_eq(text_escape(buf, sizeof(buf), "\x1b[31mred\x7f"), "\\x1b[31mred\\x7f");
        ck_assert_str_eq(text_escape(buf, sizeof(buf),
                                     "\xc2\x9b"
                                     "2J"),
                         "\\xc2\\x9b2J");
        ck_assert_str_eq(text_escape(buf, sizeof(buf), "\r\t"), "\\x0d\\x09");
}
END_TEST

/* Cut at a whole character, marked, never past the buffer. */
START_TEST(test_cut)
{
        char buf[12], big[TEXT_ESCAPED_SIZE];
        char long_text[4096];

        ck_assert_str_eq(text_escape(buf, sizeof(buf), "0123456789a"), "0123456789a");
        ck_assert_str_eq(text_escape(buf, sizeof(buf), "0123456789ab"), "01234567...");
        ck_assert_str_eq(text_escape(buf, sizeof(buf), "0123456\n89"), "0123456...");
        ck_assert_str_eq(text_escape(buf, 5, "\n\n"), "...");
        memset(long_text, '\n', sizeof(long_text) - 1);
        long_text[sizeof(long_text) - 1] = '\0';
        text_escape(big, sizeof(big), long_text);
        ck_assert_uint_lt(strlen(big), sizeof(big));
        ck_assert_str_eq(big + strlen(big) - 3, "...");
        ck_assert_ptr_null(strchr(big, '\n'));
}
END_TEST

static Suite *text_suite(void)
{
        Suite *s = suite_create("text");
        TCase *tc = tcase_create("escape");

        tcase_add_test(tc, test_plain);
        tcase_add_test(tc, test_controls);
        tcase_add_test(tc, test_cut);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(text_suite());
}
