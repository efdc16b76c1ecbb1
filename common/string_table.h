/* SPDX-License-Identifier: Apache-2.0 */
/* Names of an enum's values in one table, as systemd's
 * DEFINE_STRING_TABLE_LOOKUP (src/basic/string-table.h):
 *
 *   static const char *const foo_names[_FOO_MAX] = {[FOO_A] = "a", [FOO_B] = "b"};
 *   DEFINE_STRING_TABLE_TO_STRING(foo_name, foo_names, enum foo)
 *   DEFINE_STRING_TABLE_FROM_STRING(foo_from_name, foo_names)
 *
 * define const char *foo_name(enum foo) (NULL for a value out of the table,
 * or one it leaves NULL) and int foo_from_name(const char *) (the value, or
 * -EINVAL for NULL or a name not in the table). The function names are the
 * caller's, so that a table can replace a hand-written lookup without
 * renaming its callers. DEFINE_PRIVATE_* define them static. */
#pragma once

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "macro.h"

/* table[i], or NULL when i is not an index of it. */
static inline const char *string_table_name(const char *const table[], size_t len, long long i)
{
        return i >= 0 && (unsigned long long) i < len ? table[i] : NULL;
}

/* The index of name in table, or -EINVAL (name NULL, or not in it). */
static inline int string_table_index(const char *const table[], size_t len, const char *name)
{
        if (!name)
                return -EINVAL;
        for (size_t i = 0; i < len; i++)
                if (table[i] && strcmp(table[i], name) == 0)
                        return (int) i;
        return -EINVAL;
}

#define DEFINE_STRING_TABLE_TO_STRING_SCOPE(scope, fn, table, type)                                \
        scope const char *fn(type i)                                                               \
        {                                                                                          \
                return string_table_name(table, ELEMENTSOF(table), (long long) i);                 \
        }

#define DEFINE_STRING_TABLE_FROM_STRING_SCOPE(scope, fn, table)                                    \
        scope int fn(const char *name)                                                             \
        {                                                                                          \
                return string_table_index(table, ELEMENTSOF(table), name);                         \
        }

#define DEFINE_STRING_TABLE_TO_STRING(fn, table, type)                                             \
        DEFINE_STRING_TABLE_TO_STRING_SCOPE(, fn, table, type)
#define DEFINE_STRING_TABLE_FROM_STRING(fn, table)                                                 \
        DEFINE_STRING_TABLE_FROM_STRING_SCOPE(, fn, table)
#define DEFINE_PRIVATE_STRING_TABLE_TO_STRING(fn, table, type)                                     \
        DEFINE_STRING_TABLE_TO_STRING_SCOPE(static, fn, table, type)
#define DEFINE_PRIVATE_STRING_TABLE_FROM_STRING(fn, table)                                         \
        DEFINE_STRING_TABLE_FROM_STRING_SCOPE(static, fn, table)
