/* SPDX-License-Identifier: Apache-2.0 */
/* gc: reconciles stateDir and resctrl with the processes that still run. */
#pragma once

#include "command.h"

/* In stateDir: its mtime is when the last gc pass finished (status exports
 * it, so that an alert sees gc stop). Other versions ignore it. */
#define GC_LAST_PASS_FILE "gc.last-pass"

/* argv[0] is "gc", followed by its options (--dry-run, --json, --interval);
 * the config is loaded as for the other commands.
 * Returns the exit status: 0 when it ran (whatever it found), 1 when it could
 * not (resctrl or stateDir unusable, state of another pid namespace), 2 on
 * a usage error. */
int gc_main(const struct command_ctx *ctx, int argc, char **argv);
