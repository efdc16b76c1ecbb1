/* SPDX-License-Identifier: Apache-2.0 */
/* What every command starts with: its options, logging, the config, /proc. */
#include <errno.h>
#include <getopt.h>

#include "command.h"
#include "log.h"
#include "macro.h"
#include "proc.h"
#include "settings.h"

int command_load_config(const struct command_ctx *ctx, struct config *c)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        int r;

        log_setup(ctx->log_level >= 0 ? ctx->log_level : LOG_WARNING, false, true);
        r = settings_load(ctx->config_path, ctx->config_explicit, c, &problems);
        if (r < 0)
                return r;
        settings_log_problems(&problems);
        return 0;
}

int command_bad_option(char **argv)
{
        log_error("unknown option or missing argument '%s' (see %s --help)", argv[optind - 1],
                  argv[0]);
        return -EINVAL;
}

int command_parse_options(const struct command_options *o, int argc, char **argv, void *userdata)
{
        int c;

        optind = 0; /* GNU getopt: start over on this argv */
        while ((c = getopt_long(argc, argv, o->shortopts, o->longopts, NULL)) >= 0) {
                if (c == 'h') {
                        o->help();
                        return 0;
                }
                if (c == '?')
                        return command_bad_option(argv);
                if (o->set(c, optarg, userdata) < 0)
                        return -EINVAL;
        }
        if (optind != argc) {
                log_error("unexpected argument '%s' (see %s --help)", argv[optind], argv[0]);
                return -EINVAL;
        }
        return 1;
}

int command_setup(const struct command_ctx *ctx, struct config *c, int *ret_proc_fd)
{
        int r;

        if (config_init(c) < 0 || command_load_config(ctx, c) < 0)
                return log_error_errno(-ENOMEM, "out of memory");
        r = proc_open(ret_proc_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open /proc");
        return 0;
}
