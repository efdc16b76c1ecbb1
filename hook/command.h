/* SPDX-License-Identifier: Apache-2.0 */
/* The operator's commands: check (is this node set up right), status (pods,
 * groups, members, counters; as a table, JSON or Prometheus text) and gc
 * (hook/gc.h); and the exit statuses of every run of the hook. */
#pragma once

#include <getopt.h>
#include <stdbool.h>

#include "config.h"

/* The hook's exit statuses, of a stage run and of a command (documented in
 * the man page and docs/operations.md):
 *  - COMMAND_OK: done; for a stage run also skipped on purpose, or failed
 *    under failurePolicy: ignore;
 *  - COMMAND_FAILED: createRuntime failed under failurePolicy: fail; check:
 *    a check failed; status, gc: cannot do what they must;
 *  - COMMAND_USAGE: a bad command line of a command. Never a stage run's: a
 *    runtime would refuse the container for a typo in hooks.d. */
#define COMMAND_OK 0
#define COMMAND_FAILED 1
#define COMMAND_USAGE 2

struct command_ctx {
        const char *config_path;
        bool config_explicit;
        int log_level; /* -1: warnings and errors */
};

/* Sets up logging to stderr and loads the config as the hook does, logging
 * its problems (settings.h). 0, or -ENOMEM. */
int command_load_config(const struct command_ctx *ctx, struct config *c);

/* What gc, watch and adopt start with: config_init and command_load_config
 * into c, then /proc opened into *ret_proc_fd. 0, or -errno (logged). */
int command_setup(const struct command_ctx *ctx, struct config *c, int *ret_proc_fd);

/* A command's command line: options only, no arguments. */
struct command_options {
        const char *shortopts; /* getopt_long's, "h" among them */
        const struct option *longopts;
        void (*help)(void);
        /* Takes an option other than -h into userdata: 0, or -EINVAL (logged).
         * NULL when -h is the only option. */
        int (*set)(int c, const char *arg, void *userdata);
};

/* getopt_long's '?' (main sets opterr 0): logs the option it could not take,
 * unknown or without its value. -EINVAL. */
int command_bad_option(char **argv);

/* Reads argv's options after argv[0], the command's name, as o says: 1 to
 * run, 0 after --help (printed), -EINVAL on misuse (an argument is logged). */
int command_parse_options(const struct command_options *o, int argc, char **argv, void *userdata);

/* argv[0] is the command's name; options follow. Return an exit status. */
int check_main(const struct command_ctx *ctx, int argc, char **argv);
int status_main(const struct command_ctx *ctx, int argc, char **argv);
int adopt_main(const struct command_ctx *ctx, int argc, char **argv);
