/* SPDX-License-Identifier: Apache-2.0 */
/* gc: reconciles stateDir and resctrl with the processes that still run. */
#pragma once

#include "command.h"

/* argv[0] is "gc", followed by its options (--dry-run, --json, --interval);
 * the config is loaded as for the other commands.
 * Returns the exit status: 0 when it ran (whatever it found), 1 when it could
 * not (resctrl or stateDir unusable, state of another pid namespace), 2 on
 * a usage error. */
int gc_main(const struct command_ctx *ctx, int argc, char **argv);
