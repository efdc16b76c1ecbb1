/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "fsutil.h"
#include "gc.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "outcome.h"
#include "proc.h"
#include "stage.h"
#include "state.h"

/* Exit statuses (documented in the README). */
#define EXIT_OK 0     /* done, deliberately skipped, or failed under failurePolicy: ignore */
#define EXIT_FAILED 1 /* createRuntime failed under failurePolicy: fail */
#define EXIT_USAGE 2  /* bad command line */

/* State JSON with CRI-O's annotation blobs can exceed a pipe buffer (64 KiB);
 * anything near this cap is not a runtime talking. */
#define STATE_MAX_BYTES (4u << 20)
/* Runtimes write the state at once and close the pipe. One that keeps it open
 * must not hold the container start: runc waits forever for a hook that has
 * no "timeout". */
#define STATE_READ_TIMEOUT_MS 2000u

enum stage {
        STAGE_CREATE,
        STAGE_POSTSTOP,
};

struct args {
        enum stage stage;
        const char *stage_name;
        const char *config_path;
        bool config_explicit;
        int log_level;  /* -1: from the config */
        char **command; /* "check", "status" or "gc" and its arguments; NULL for a stage */
        int command_argc;
};

static void help(void)
{
        printf("Usage: resctrl-mon-hook [OPTIONS] STAGE\n"
               "       resctrl-mon-hook [OPTIONS] check [--json] [--hooks-dir DIR]...\n"
               "       resctrl-mon-hook [OPTIONS] status [--json | --prometheus [--output FILE]]\n"
               "       resctrl-mon-hook [OPTIONS] gc [--dry-run] [--json] [--interval SECONDS]\n"
               "\n"
               "OCI runtime hook: puts every container of a Kubernetes pod into one resctrl\n"
               "monitoring group named by the pod UID. The OCI state JSON comes on stdin.\n"
               "\n"
               "Stages:\n"
               "  createRuntime, prestart   create the pod's group and move the container in\n"
               "  poststop                  drop the container; remove the group after the last\n"
               "\n"
               "Commands:\n"
               "  check                     is this node set up right (exit 1 if a check fails)\n"
               "  status                    pods, their groups, members and counters\n"
               "  gc                        clean up after lost poststops and killed runs\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE         configuration (default %s)\n"
               "  -l, --log-level LEVEL     err, warning, info or debug (overrides the config)\n"
               "  -h, --help                show this help\n"
               "  -V, --version             show the version\n",
               HOOK_DEFAULT_CONFIG);
}

static int parse_stage(const char *s, enum stage *ret)
{
        if (strcmp(s, "createRuntime") == 0 || strcmp(s, "prestart") == 0)
                *ret = STAGE_CREATE;
        else if (strcmp(s, "poststop") == 0)
                *ret = STAGE_POSTSTOP;
        else
                return -EINVAL;
        return 0;
}

/* 1 to go on, 0 to exit successfully (--help, --version), -EINVAL on misuse. */
static int parse_args(int argc, char **argv, struct args *a)
{
        static const struct option options[] = {
            {"config", required_argument, NULL, 'c'},
            {"log-level", required_argument, NULL, 'l'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {0},
        };
        int c;

        *a = (struct args){.config_path = HOOK_DEFAULT_CONFIG, .log_level = -1};
        /* "+": stop at the first non-option, so that a command's options are its own. */
        while ((c = getopt_long(argc, argv, "+c:l:hV", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a->config_path = optarg;
                        a->config_explicit = true;
                        break;
                case 'l':
                        a->log_level = log_level_from_string(optarg);
                        if (a->log_level < 0) {
                                log_error("unknown log level '%s'", optarg);
                                return -EINVAL;
                        }
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("resctrl-mon-hook %s\n", HOOK_VERSION);
                        return 0;
                default:
                        return -EINVAL;
                }
        }
        if (optind < argc &&
            (strcmp(argv[optind], "check") == 0 || strcmp(argv[optind], "status") == 0 ||
             strcmp(argv[optind], "gc") == 0)) {
                a->command = argv + optind;
                a->command_argc = argc - optind;
                return 1;
        }
        if (optind != argc - 1) {
                log_error("expected exactly one STAGE argument (see --help)");
                return -EINVAL;
        }
        a->stage_name = argv[optind];
        if (parse_stage(a->stage_name, &a->stage) < 0) {
                log_error("unknown stage '%s' (createRuntime, prestart or poststop)",
                          a->stage_name);
                return -EINVAL;
        }
        return 1;
}

/* A missing default config means built-in defaults; a missing --config is an error. */
static int load_config(const struct args *a, struct config *c)
{
        _cleanup_free_ char *why = NULL;
        int r;

        r = config_load(c, a->config_path, &why);
        if (r == -ENOENT && !a->config_explicit)
                return 0;
        if (r == -EINVAL) {
                log_error("%s", why);
                return r;
        }
        if (r < 0)
                return log_error_errno(r, "cannot read config '%s'", a->config_path);
        return 0;
}

/* Turns what was read from stdin into a parsed state, logging what was wrong. */
static int parse_state(int read_result, const char *buf, size_t len, struct oci_state *ret)
{
        _cleanup_free_ char *why = NULL;
        int r;

        if (read_result == -EFBIG)
                return log_error_errno(read_result, "state on stdin is larger than %u bytes",
                                       STATE_MAX_BYTES);
        if (read_result == -ETIMEDOUT)
                return log_error_errno(read_result, "no end of the state on stdin within %u ms",
                                       STATE_READ_TIMEOUT_MS);
        if (read_result < 0)
                return log_error_errno(read_result, "cannot read the state from stdin");

        r = oci_state_parse(buf, len, ret, &why);
        if (r < 0) {
                log_error("%s", why); /* names what was wrong; errno would add nothing */
                return r;
        }
        return 0;
}

/* 1 for a pod's container, 0 for anything else (not ours), -EINVAL for a
 * malformed UID, which never reaches a path. */
static int identify(const struct oci_state *state, struct pod_identity *ret)
{
        int r = oci_pod_identity(state, ret);

        if (r == -EINVAL)
                log_error("pod UID annotation is not a 36-character dashed or 32-character hex "
                          "UID; refused");
        return r;
}

static int run_stage(const struct args *a, const struct config *c, const struct oci_state *state,
                     const struct pod_identity *pod, const char **ret_outcome)
{
        _cleanup_close_ int proc_fd = -EBADF;
        struct hook_ctx ctx;
        int r;

        r = proc_open(&proc_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open /proc");

        ctx = (struct hook_ctx){.config = c, .state = state, .pod = pod, .proc_fd = proc_fd};
        if (a->stage == STAGE_CREATE)
                return stage_create(&ctx, ret_outcome);
        return stage_poststop(&ctx, ret_outcome);
}

/* Counts the run's outcome for status; a failure costs the count only. */
static void count_outcome(const struct config *c, const struct args *a, int r, const char *outcome)
{
        _cleanup_close_ int fd = -EBADF;
        int q;

        /* Counting never creates the state directory: a refused run changes nothing. */
        if (access(c->state_dir, F_OK) < 0)
                return;
        q = state_dir_open(c->state_dir, &fd);
        if (q >= 0)
                q = outcome_count(fd, a->stage == STAGE_CREATE ? "createRuntime" : "poststop",
                                  r < 0 ? "error" : outcome);
        if (q < 0)
                log_debug("cannot count the outcome: %s", strerror(-q));
}

/* A command run by hand or by a timer: it reads no stdin, logs to stderr
 * (the journal or the container log), and fails when it cannot run. */
static int run_command(const struct args *a)
{
        const struct command_ctx ctx = {
            .config_path = a->config_path,
            .config_explicit = a->config_explicit,
            .log_level = a->log_level,
        };

        log_set_context(a->command[0], NULL);
        if (strcmp(a->command[0], "check") == 0)
                return check_main(&ctx, a->command_argc, a->command);
        if (strcmp(a->command[0], "gc") == 0)
                return gc_main(&ctx, a->command_argc, a->command);
        return status_main(&ctx, a->command_argc, a->command);
}

int main(int argc, char **argv)
{
        int64_t start = now_usec();
        _cleanup_(config_done) struct config config = {0};
        _cleanup_(oci_state_done) struct oci_state state = {0};
        _cleanup_free_ char *input = NULL;
        struct pod_identity pod = {.uid = "-"};
        const char *outcome = "error";
        size_t len = 0;
        struct args a;
        int r, read_result;

        log_setup(LOG_INFO, true, true);
        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? EXIT_USAGE : EXIT_OK;
        if (a.command)
                return run_command(&a);
        log_set_context(a.stage_name, NULL);

        /* Read stdin before anything can fail: a runtime writing the state must
         * never block or see EPIPE because the hook left early. */
        read_result =
            read_all_fd_until(STDIN_FILENO, STATE_MAX_BYTES,
                              start + (int64_t) STATE_READ_TIMEOUT_MS * 1000, &input, &len);

        if (config_init(&config) < 0) {
                log_error("out of memory");
                return EXIT_OK;
        }
        /* Without a valid config the operator has not chosen to fail: fail open. */
        if (load_config(&a, &config) < 0)
                return EXIT_OK;
        log_setup(a.log_level >= 0 ? a.log_level : config.log_level, config.log_syslog,
                  config.log_stderr);

        r = parse_state(read_result, input, len, &state);
        if (r >= 0) {
                log_set_context(a.stage_name, state.id);
                r = identify(&state, &pod);
                if (r == 0)
                        return EXIT_OK; /* not a pod's container: not ours, silently */
        }
        if (r > 0)
                r = run_stage(&a, &config, &state, &pod, &outcome);

        log_full_errno(LOG_INFO, 0, "pod=%s namespace=%s outcome=%s elapsed_us=%lld", pod.uid,
                       pod.namespace ? pod.namespace : "-", outcome,
                       (long long) (now_usec() - start));
        count_outcome(&config, &a, r, outcome);

        if (r < 0 && a.stage == STAGE_CREATE && config.failure_policy == FAILURE_POLICY_FAIL)
                return EXIT_FAILED;
        return EXIT_OK;
}
