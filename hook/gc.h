/* SPDX-License-Identifier: Apache-2.0 */
/* gc: reconciles stateDir and resctrl with the processes that still run. */
#pragma once

#include <stdint.h>

#include "command.h"

/* argv[0] is "gc", followed by its options (--dry-run, --json, --interval);
 * the config is loaded as for the other commands.
 * Returns the exit status: 0 when it ran (whatever it found), 1 when it could
 * not (resctrl or stateDir unusable, state of another pid namespace), 2 on
 * a usage error. */
int gc_main(const struct command_ctx *ctx, int argc, char **argv);

/* One pass as gc without options runs it, its actions printed as lines:
 * what watch runs at each interval. *ret_joined: the threads it put into
 * their pods' groups (join-tasks). 0 or -errno (logged). */
int gc_pass_once(const struct config *c, int proc_fd, unsigned *ret_joined);

/* One pod's part of a pass, now: its intake records taken in, its members
 * and groups seen to, those waiting brought in; every wait within deadline
 * (now_usec() time). For watch, when a createRuntime left a container
 * waiting for the locks. *ret_joined as gc_pass_once. 0; -EBUSY when a lock
 * was not had in time (try again soon); -errno (logged). */
int gc_pod_now(const struct config *c, int proc_fd, const char *uid, int64_t deadline,
               unsigned *ret_joined);

/* --interval's SECONDS: a decimal number in [1, GC_INTERVAL_MAX]. 0, or
 * -EINVAL (logged). */
#define GC_INTERVAL_MAX 86400u
int gc_parse_interval(const char *s, unsigned *ret);
