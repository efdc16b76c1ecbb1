/* SPDX-License-Identifier: Apache-2.0 */
/* How often each hook stage ended with each result since boot (stateDir is
 * on tmpfs): one file per (stage, result), <stateDir>/outcome.<stage>.<result>,
 * whose size is the count. Counting is one O_APPEND write of one byte: the
 * kernel serialises appends, so concurrent hooks never lose a count and no
 * lock is taken. A million runs cost a megabyte of tmpfs. Never log. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "statedir.h"

#define OUTCOME_NAME_MAX 32 /* of a stage or a result */

struct outcome {
        char stage[OUTCOME_NAME_MAX + 1];
        char result[OUTCOME_NAME_MAX + 1]; /* spaces of the hook's outcome made '_' */
        uint64_t count;
};

/* Counts one run. stage and result are the hook's own words ("createRuntime",
 * "runtime monitors it"); a space becomes '_'. -EINVAL for a word of other
 * characters than [A-Za-z0-9_ -] or too long; -errno from the write. */
int outcome_count(int state_dir_fd, const char *stage, const char *result);

/* outcome_count in two steps, for a count made in a signal handler: the
 * counter's file name, into name (-EINVAL as outcome_count), and the count
 * of that file, which is async-signal-safe. */
#define OUTCOME_FILE_NAME_SIZE (sizeof(STATEDIR_OUTCOME_PREFIX) + 2 * (size_t) OUTCOME_NAME_MAX + 1)
int outcome_file_name(const char *stage, const char *result,
                      char name[static OUTCOME_FILE_NAME_SIZE]);
int outcome_count_file(int state_dir_fd, const char *name);

/* Every count in stateDir, sorted by stage then result (*ret malloc'd).
 * Files of other names are ignored. 0 or -errno. */
int outcome_read_all(int state_dir_fd, struct outcome **ret, size_t *ret_n);
