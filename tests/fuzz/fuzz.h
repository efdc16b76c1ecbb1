/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the libFuzzer targets; the replay driver (fuzz_replay.c) calls the
 * same entry point on the files of a corpus, without libFuzzer. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A reason fit for one log line: present and non-empty, and once escaped as
 * every printed string is (text.h), printable ASCII only and within bounds. */
static inline bool fuzz_one_line(const char *s)
{
        char safe[TEXT_ESCAPED_SIZE];

        if (!s || !*s)
                return false;
        text_escape(safe, sizeof(safe), s);
        if (strlen(safe) >= sizeof(safe))
                return false;
        for (const char *p = safe; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        return false;
        return true;
}
