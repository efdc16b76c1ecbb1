/* SPDX-License-Identifier: Apache-2.0 */
/* The status command: its options, the model gathered, one printer (status_print.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "rdt.h"
#include "statedir.h"
#include "status_print.h"

/* Replaces path atomically, readable by all (node_exporter may run as its own
 * user); the temp name does not end in .prom, so the collector skips it. */
static int write_output(const char *path, const char *text)
{
        _cleanup_free_ char *dir_copy = strdup(path), *name_copy = strdup(path), *tmp = NULL;
        _cleanup_close_ int dir_fd = -EBADF;
        const char *name;

        if (!dir_copy || !name_copy)
                return -ENOMEM;
        name = basename(name_copy);
        if (!name_is_valid(name))
                return -EINVAL;
        if (asprintf(&tmp, ".%s.%d.tmp", name, (int) getpid()) < 0)
                return -ENOMEM;
        dir_fd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        return write_atomic_at(dir_fd, name, tmp, text, strlen(text), 0644);
}

enum format { FORMAT_TABLE, FORMAT_JSON, FORMAT_PROMETHEUS };

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] status [OPTIONS]\n"
               "\n"
               "Lists the pods with state, their groups, members and unmonitored containers\n"
               "(and how long those waiting for an RMID have waited), their counters and\n"
               "coverage, and the node's RMID budget and hook outcomes. Reads only.\n"
               "\n"
               "Options:\n"
               "  -j, --json                one JSON object\n"
               "  -p, --prometheus          the Prometheus text format\n"
               "  -o, --output FILE         with --prometheus: replace FILE atomically (the\n"
               "                            node_exporter textfile collector)\n"
               "  -h, --help                show this help\n");
}

struct status_options {
        enum format format;
        const char *output;
};

static int set_option(int c, const char *arg, void *userdata)
{
        struct status_options *o = userdata;

        if (c == 'j')
                o->format = FORMAT_JSON;
        else if (c == 'p')
                o->format = FORMAT_PROMETHEUS;
        else
                o->output = arg; /* 'o' */
        return 0;
}

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_status_args(int argc, char **argv, struct status_options *o)
{
        static const struct option longopts[] = {
            {"json", no_argument, NULL, 'j'},
            {"prometheus", no_argument, NULL, 'p'},
            {"output", required_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        static const struct command_options options = {
            .shortopts = "+jpo:h", .longopts = longopts, .help = help, .set = set_option};
        int r = command_parse_options(&options, argc, argv, o);

        if (r > 0 && o->output && o->format != FORMAT_PROMETHEUS) {
                log_error("usage: status [--json | --prometheus [--output FILE]] (see --help)");
                return -EINVAL;
        }
        return r;
}

static int emit(const struct node_view *nv, enum format format, const char *output)
{
        _cleanup_free_ char *text = NULL;
        int r;

        if (format == FORMAT_TABLE) {
                status_print_table(nv);
                return 0;
        }
        if (format == FORMAT_JSON)
                return status_print_json(nv) < 0 ? log_error_errno(-ENOMEM, "out of memory") : 0;
        r = status_render_prometheus(nv, &text);
        if (r < 0)
                return log_error_errno(r, "cannot render the metrics");
        if (!output)
                return fputs(text, stdout) < 0 ? -EIO : 0;
        r = write_output(output, text);
        if (r < 0)
                return log_error_errno(r, "cannot write '%s'", output);
        return 0;
}

/* The whole model, each failure logged. */
static int gather(struct node_view *nv, const struct config *config)
{
        _cleanup_close_ int root_fd = -EBADF;
        int r;

        r = node_view_open(nv, config);
        if (r < 0 && nv->proc_fd < 0)
                return log_error_errno(r, "cannot open /proc");
        if (r < 0)
                return log_error_errno(r, "cannot read the state directory '%s'",
                                       config->state_dir);
        r = rdt_open(config->resctrl_path, config->require_resctrl_fs, &root_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open resctrl at '%s'", config->resctrl_path);
        r = node_view_read_resctrl(nv, root_fd);
        if (r < 0)
                return r;
        r = node_view_read_finished(nv);
        if (r == -ENOMEM)
                return log_error_errno(r, "out of memory");
        if (r < 0)
                return log_error_errno(r, "cannot read the final counters in '%s/%s'",
                                       config->state_dir, STATEDIR_FINISHED);
        return 0;
}

int status_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_(node_view_done) struct node_view nv = NODE_VIEW_INIT;
        struct status_options o = {.format = FORMAT_TABLE};
        int r;

        r = parse_status_args(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        /* Not command_setup: the model opens /proc itself (node_view_open). */
        if (config_init(&config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        if (command_load_config(ctx, &config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        if (gather(&nv, &config) < 0 || emit(&nv, o.format, o.output) < 0)
                return COMMAND_FAILED;
        return COMMAND_OK;
}
