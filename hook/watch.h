/* SPDX-License-Identifier: Apache-2.0 */
/* watch: gc's passes at every interval, and between them each process that
 * a runtime execs into a monitored container (kubectl exec, exec probes)
 * joined to its pod's group within milliseconds of its exec. */
#pragma once

#include "command.h"

/* argv[0] is "watch", followed by its options (--interval, and
 * --metrics-listen with --web-config: hook/metrics_http.h). Runs until
 * killed. Returns the exit status: 1 when it cannot start (no /proc, the
 * address in use), 2 on a usage error (a bad --web-config too), 0 for
 * --help. */
int watch_main(const struct command_ctx *ctx, int argc, char **argv);
