/* SPDX-License-Identifier: Apache-2.0 */
/* The unit suites' waits for an event, as tests/lib/wait.sh's wait_for: by
 * condition, bounded by the clock (a count of looks grows with each look's
 * time), failing the test with what did not happen. The bound is that
 * file's too. */
#pragma once

#include <check.h>
#include <time.h>

#include "fsutil.h"

/* WAIT_PROCESS: a process started by the test gets where it is going (into a
 * state, through its exit, to a file it opens or writes), the emulator
 * answers (typically well under 1 s). */
#define WAIT_PROCESS_MS 10000

/* Looks at cond every millisecond until it is true; fails the test saying
 * "WHAT did not happen within MS ms" once ms have passed by the clock. */
#define WAIT_FOR(ms, what, cond)                                                                   \
        do {                                                                                       \
                const int64_t _wait_until = deadline_after_ms(ms);                                 \
                while (!(cond)) {                                                                  \
                        ck_assert_msg(now_usec() < _wait_until, "%s did not happen within %u ms",  \
                                      (what), (unsigned) (ms));                                    \
                        (void) nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);        \
                }                                                                                  \
        } while (0)
