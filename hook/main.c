/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "command.h"
#include "config.h"
#include "fsutil.h"
#include "gc.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "outcome.h"
#include "pod_state.h"
#include "proc.h"
#include "rdt.h"
#include "settings.h"
#include "stage.h"
#include "statedir.h"
#include "watch.h"
#include "watchdog.h"

/* State JSON with CRI-O's annotation blobs can exceed a pipe buffer (64 KiB);
 * anything near this cap is not a runtime talking. */
#define STATE_MAX_BYTES (4u << 20)

enum stage {
        STAGE_CREATE,
        STAGE_POSTSTOP,
};

struct args {
        enum stage stage;
        const char *stage_name; /* NULL when the command line names no known stage */
        const char *config_path;
        bool config_explicit;
        int log_level;                 /* -1: from the config */
        const struct command *command; /* NULL for a stage */
        char **command_argv;           /* the command's name and its arguments */
        int command_argc;
        bool usage_error; /* a stage run with a bad command line: logged, does nothing */
};

/* The commands, a row each, in the order --help lists them: a new command
 * is a new row (and its hook/<name>.c, which tests/test_man.sh reads). */
static const struct command {
        const char *name;
        int (*run)(const struct command_ctx *ctx, int argc, char **argv);
        const char *arguments;   /* after the name in its usage line, each after a space */
        const char *description; /* its line under "Commands:" */
} commands[] = {
    {"check", check_main, " [--json] [--hooks-dir DIR]... [--only NAMES]",
     "is this node set up right (exit 1 if a check fails)"},
    {"status", status_main, " [--json | --prometheus [--output FILE]]",
     "pods, their groups, members and counters"},
    {"gc", gc_main, " [--dry-run] [--json] [--interval SECONDS]",
     "clean up after lost poststops and killed runs"},
    {"adopt", adopt_main, "", "give running containers of pods their groups"},
    {"watch", watch_main, " [--interval SECONDS] [--metrics-listen ADDR:PORT [--web-config FILE]]",
     "gc every interval; exec'd processes joined at once"},
};

static const struct command *find_command(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                if (strcmp(commands[i].name, name) == 0)
                        return &commands[i];
        return NULL;
}

static void help(void)
{
        printf("Usage: resctrl-mon-hook [OPTIONS] STAGE\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                printf("       resctrl-mon-hook [OPTIONS] %s%s\n", commands[i].name,
                       commands[i].arguments);
        printf("\n"
               "OCI runtime hook: puts every container of a Kubernetes pod into one resctrl\n"
               "monitoring group named by the pod UID. The OCI state JSON comes on stdin.\n"
               "\n"
               "Stages:\n"
               "  createRuntime, prestart   create the pod's group and move the container in\n"
               "  poststop                  drop the container; remove the group after the last\n"
               "\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(commands); i++)
                printf("  %-24s  %s\n", commands[i].name, commands[i].description);
        printf("\n"
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

/* Logs the first thing wrong with a stage run's command line. */
static void usage_error(struct args *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void usage_error(struct args *a, const char *fmt, ...)
{
        char msg[256];
        va_list ap;

        if (a->usage_error)
                return;
        a->usage_error = true;
        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        log_error("%s (see --help); nothing done", msg);
}

/* What follows the options, from argv[first]: a command, whose options
 * are its own, or a stage. bad is the first thing wrong with the options
 * (NULL when nothing is), reported here, where it is known which of the
 * two it was for. Returns as parse_args does. */
static int parse_operands(int argc, char **argv, int first, const char *bad, struct args *a)
{
        if (first < argc)
                a->command = find_command(argv[first]);
        if (a->command) {
                if (bad) {
                        log_error("%s (see --help)", bad);
                        return -EINVAL;
                }
                a->command_argv = argv + first;
                a->command_argc = argc - first;
                return 1;
        }
        if (first < argc && parse_stage(argv[first], &a->stage) >= 0)
                a->stage_name = argv[first];
        if (bad)
                usage_error(a, "%s", bad);
        else if (first == argc)
                usage_error(a, "no STAGE argument");
        else if (!a->stage_name)
                usage_error(a, "unknown stage '%s' (createRuntime, prestart or poststop)",
                            argv[first]);
        else if (first != argc - 1)
                usage_error(a, "unexpected argument '%s' after the stage", argv[first + 1]);
        return 1;
}

/* 1 to go on, 0 to exit successfully (--help, --version), -EINVAL when a
 * command (check, status, gc, ...) is misused. A stage run's misuse sets
 * a->usage_error instead: it is the runtime that runs it. */
static int parse_args(int argc, char **argv, struct args *a)
{
        static const struct option options[] = {
            {"config", required_argument, NULL, 'c'},
            {"log-level", required_argument, NULL, 'l'},
            {"help", no_argument, NULL, 'h'},
            {"version", no_argument, NULL, 'V'},
            {0},
        };
        _cleanup_free_ char *bad = NULL;
        int c, level;

        *a = (struct args){.config_path = HOOK_DEFAULT_CONFIG, .log_level = -1};
        opterr = 0; /* errors are logged here, once, where the runtime keeps them */
        /* "+": stop at the first non-option, so that a command's options are its own. */
        while ((c = getopt_long(argc, argv, "+c:l:hV", options, NULL)) >= 0) {
                switch (c) {
                case 'c':
                        a->config_path = optarg;
                        a->config_explicit = true;
                        break;
                case 'l':
                        level = log_level_from_string(optarg);
                        if (level >= 0)
                                a->log_level = level;
                        else if (!bad && asprintf(&bad, "unknown log level '%s'", optarg) < 0)
                                bad = NULL;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("resctrl-mon-hook %s\n", HOOK_VERSION);
                        return 0;
                default:
                        if (!bad && asprintf(&bad, "unknown option or missing argument '%s'",
                                             argv[optind - 1]) < 0)
                                bad = NULL;
                        break;
                }
        }
        return parse_operands(argc, argv, optind, bad, a);
}

/* Turns what was read from stdin into a parsed state, logging what was wrong. */
static int parse_state(int read_result, const char *buf, size_t len, unsigned waited_ms,
                       struct oci_state *ret)
{
        _cleanup_free_ char *why = NULL;
        int r;

        if (read_result == -EFBIG)
                return log_error_errno(read_result, "state on stdin is larger than %u bytes",
                                       STATE_MAX_BYTES);
        if (read_result == -ETIMEDOUT)
                return log_error_errno(read_result, "no end of the state on stdin within %u ms",
                                       waited_ms);
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
                     const struct pod_identity *pod, int64_t deadline,
                     enum hook_outcome *ret_outcome)
{
        _cleanup_close_ int proc_fd = -EBADF;
        struct hook_ctx ctx;
        int r;

        r = proc_open(&proc_fd);
        if (r < 0)
                return log_error_errno(r, "cannot open /proc");

        ctx = (struct hook_ctx){
            .config = c, .state = state, .pod = pod, .proc_fd = proc_fd, .deadline = deadline};
        if (a->stage == STAGE_CREATE)
                return stage_create(&ctx, ret_outcome);
        return stage_poststop(&ctx, ret_outcome);
}

/* Counts the run's outcome, and whether its config had problems, for
 * status; a failure costs the count only. */
static void count_outcome(const struct config *c, const struct args *a,
                          const struct config_problems *problems, int r, enum hook_outcome outcome)
{
        _cleanup_close_ int fd = -EBADF;
        int q;

        /* Counting never creates the state directory: a refused run changes nothing. */
        if (access(c->state_dir, F_OK) < 0)
                return;
        q = statedir_open(c->state_dir, true, &fd);
        if (q >= 0 && a->usage_error)
                q = outcome_count(fd, "usage", "error");
        else if (q >= 0)
                q = outcome_count(fd, a->stage == STAGE_CREATE ? "createRuntime" : "poststop",
                                  hook_outcome_name(r < 0 ? OUTCOME_ERROR : outcome));
        if (q >= 0 && problems->n > 0)
                q = outcome_count(fd, "config",
                                  config_problems_have(problems, CONFIG_PROBLEM_BAD_VALUE) ||
                                          config_problems_have(problems, CONFIG_PROBLEM_INCOMPLETE)
                                      ? "error"
                                      : "unknown key");
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

        log_set_context(a->command->name, NULL);
        return a->command->run(&ctx, a->command_argc, a->command_argv);
}

/* The state, who it is for, and what to do: 0 when the run ends here
 * (*ret_outcome says why, or nothing for a container that is not a pod's),
 * 1 to run the stage, -errno (logged). */
static int prepare(const struct args *a, const struct config_problems *problems, int read_result,
                   const char *input, size_t len, unsigned waited_ms, struct oci_state *state,
                   struct pod_identity *pod, enum hook_outcome *ret_outcome)
{
        int r;

        if (a->usage_error)
                return -EINVAL;
        r = parse_state(read_result, input, len, waited_ms, state);
        if (r < 0)
                return r;
        log_set_context(a->stage_name, state->id);
        r = identify(state, pod);
        if (r == 0)
                *ret_outcome = OUTCOME_NOT_OURS; /* silently */
        if (r <= 0)
                return r;
        if (a->stage == STAGE_CREATE && config_problems_have(problems, CONFIG_PROBLEM_INCOMPLETE)) {
                *ret_outcome = OUTCOME_CONFIG_ERROR; /* logged with the problem */
                return 0;
        }
        return 1;
}

/* The run's exit status, r its result: failure only for a createRuntime
 * that failed under failurePolicy fail. An incomplete config's
 * failurePolicy is not known to be the operator's. */
static int exit_status(const struct args *a, const struct config *c,
                       const struct config_problems *problems, int r)
{
        if (r < 0 && a->stage_name && a->stage == STAGE_CREATE &&
            c->failure_policy == FAILURE_POLICY_FAIL &&
            !config_problems_have(problems, CONFIG_PROBLEM_INCOMPLETE))
                return COMMAND_FAILED;
        return COMMAND_OK;
}

/* Every hold of the resctrl lock, for the debug log: the contention tests
 * measure the hold budget (rdt.h) by these lines. */
static void log_hold(int64_t usec, unsigned writes, bool shared)
{
        log_debug("resctrl lock held %lld us (%s, %u task ids written)", (long long) usec,
                  shared ? "shared" : "exclusive", writes);
}

/* The config a stage runs with, and the logging it asks for; its problems
 * logged first. -ENOMEM (logged): the stage does nothing, and fails nothing. */
static int load_config(const struct args *a, struct config *config,
                       struct config_problems *problems)
{
        if (config_init(config) < 0 ||
            settings_load(a->config_path, a->config_explicit, config, problems) < 0) {
                log_error("out of memory");
                return -ENOMEM;
        }
        /* Before the file's own log settings, which may be what is wrong. */
        settings_log_problems(problems);
        log_setup(a->log_level >= 0 ? a->log_level : config->log_level, config->log_syslog,
                  config->log_stderr);
        return 0;
}

/* The watchdog (watchdog.h) ends a run still going at the deadline, with
 * the exit status of one that failed so. A stage run with a bad command
 * line does nothing and needs none. Without it (logged) the run goes on:
 * each of its waits has the deadline too. */
static void arm_watchdog(const struct args *a, const struct config *c,
                         const struct config_problems *problems, int64_t deadline)
{
        int r;

        if (a->usage_error)
                return;
        r = watchdog_arm(deadline, exit_status(a, c, problems, -ETIME), a->stage_name,
                         c->state_dir);
        if (r < 0)
                log_warning_errno(r, "cannot arm the watchdog; the run relies on its deadline");
}

int main(int argc, char **argv)
{
        int64_t start = now_usec(), deadline;
        _cleanup_(config_done) struct config config = {0};
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        _cleanup_(oci_state_done) struct oci_state state = {0};
        _cleanup_free_ char *input = NULL;
        struct pod_identity pod = {.uid = "-"};
        enum hook_outcome outcome = OUTCOME_ERROR;
        size_t len = 0;
        struct args a;
        int r, read_result;

        /* Groups are for every reader (Kepler, status run by another user)
         * whatever umask a runtime or a systemd unit gives: 0755, as mkdir
         * asks. Private files are created with private modes of their own. */
        (void) umask(0022);
        log_setup(LOG_INFO, true, true);
        rdt_set_hold_observer(log_hold);
        r = parse_args(argc, argv, &a);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        if (a.command)
                return run_command(&a);
        log_set_context(a.stage_name, NULL);

        if (load_config(&a, &config, &problems) < 0)
                return COMMAND_OK;
        /* One deadline for everything the run waits for (stdin, the pod lock,
         * the resctrl lock), below the runtime's timeout: a runtime that kills
         * a hook fails the container whatever failurePolicy says. */
        deadline = usec_after_ms(start, config.lock_timeout_ms);
        arm_watchdog(&a, &config, &problems, deadline);

        /* Read stdin before anything can fail: a runtime writing the state must
         * never block or see EPIPE because the hook left early. */
        read_result = read_all_fd_until(STDIN_FILENO, STATE_MAX_BYTES, deadline, &input, &len);

        r = prepare(&a, &problems, read_result, input, len, config.lock_timeout_ms, &state, &pod,
                    &outcome);
        if (r == 0 && outcome == OUTCOME_NOT_OURS)
                return COMMAND_OK;
        if (r > 0)
                r = run_stage(&a, &config, &state, &pod, deadline, &outcome);

        watchdog_disarm();
        if (!a.usage_error)
                log_full_errno(LOG_INFO, 0, "pod=%s namespace=%s outcome=%s elapsed_us=%lld",
                               pod.uid, pod.namespace ? pod.namespace : "-",
                               hook_outcome_name(r < 0 ? OUTCOME_ERROR : outcome),
                               (long long) (now_usec() - start));
        count_outcome(&config, &a, &problems, r, outcome);
        return exit_status(&a, &config, &problems, r);
}
