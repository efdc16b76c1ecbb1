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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A reason fit for one log line: present, non-empty, no control characters. */
static inline bool fuzz_one_line(const char *s)
{
        if (!s || !*s)
                return false;
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return false;
        return true;
}
