/* SPDX-License-Identifier: Apache-2.0 */
/* The unit suites' waits for an event, as tests/lib/wait.sh's wait_for: by
 * condition, bounded by the clock (a count of looks grows with each look's
 * time), failing the test with what did not happen. The bounds are that
 * file's too. */
#pragma once

#include <check.h>
#include <stdlib.h>
#include <time.h>

#include "fsutil.h"

/* The bound NAME of tests/lib/wait.sh, in milliseconds: seconds from the
 * environment, as there, else default_sec. */
static inline unsigned wait_bound_ms(const char *name, unsigned default_sec)
{
        const char *v = getenv(name);
        unsigned long sec = v ? strtoul(v, NULL, 10) : 0;

        return (unsigned) (sec > 0 && sec < 24 * 3600 ? sec : default_sec) * 1000;
}

/* A process started by the test gets where it is going (into a state,
 * through its exit, to a file it opens or writes), the emulator answers
 * (typically well under 1 s). */
#define WAIT_PROCESS_MS wait_bound_ms("WAIT_PROCESS", 10)
/* A daemon is up or gone: the emulator's mount (typically 1 to 3 s). */
#define WAIT_DAEMON_MS wait_bound_ms("WAIT_DAEMON", 30)

/* Looks at cond every 10 ms until it is true; fails the test saying
 * "WHAT did not happen within MS ms" once ms have passed by the clock. */
#define WAIT_FOR(ms, what, cond)                                                                   \
        do {                                                                                       \
                const unsigned _wait_ms = (ms);                                                    \
                const int64_t _wait_until = deadline_after_ms(_wait_ms);                           \
                while (!(cond)) {                                                                  \
                        ck_assert_msg(now_usec() < _wait_until, "%s did not happen within %u ms",  \
                                      (what), _wait_ms);                                           \
                        (void) nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);   \
                }                                                                                  \
        } while (0)
