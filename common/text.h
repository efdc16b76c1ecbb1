/* SPDX-License-Identifier: Apache-2.0 */
/* Outside text (annotations, paths, kernel messages, parser diagnostics) made
 * safe for one log line or one table cell. JSON output needs none of this:
 * jansson escapes every string exactly. */
#pragma once

#include <stddef.h>

/* The longest text a log line or a table cell shows of one string, before escaping. */
#define TEXT_SHOWN_MAX 256u

/* Copies src into dst (dst_size >= 4), every byte outside printable ASCII
 * written as "\xNN", so that no newline, escape sequence or terminal control
 * can reach the reader. Stops at a whole character once dst
 * is full and then ends the text with "..." (dst_size bounds the escaped
 * length). Returns dst. */
char *text_escape(char *dst, size_t dst_size, const char *src);

/* text_escape into a buffer big enough for TEXT_SHOWN_MAX bytes of src. */
#define TEXT_ESCAPED_SIZE (4 * TEXT_SHOWN_MAX + 4)
