/* SPDX-License-Identifier: Apache-2.0 */
/* watch: gc's passes at every interval, and between them each process that
 * a runtime execs into a monitored container (kubectl exec, exec probes)
 * joined to its pod's group within milliseconds of its exec. */
#pragma once

#include "command.h"

/* argv[0] is "watch", followed by its options (--interval). Runs until
 * killed. Returns the exit status: 1 when it cannot start (no /proc), 2 on
 * a usage error, 0 for --help. */
int watch_main(const struct command_ctx *ctx, int argc, char **argv);
