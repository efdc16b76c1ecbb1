/* SPDX-License-Identifier: Apache-2.0 */
/* adopt: the containers that run but were never seen by createRuntime (they
 * started before the hook was installed) get their pod's group and are
 * recorded as createRuntime would have, and the threads of their cgroup
 * join it as gc joins threads: each pinned, and only from its control
 * group's default monitoring group. What another monitor placed (pqos, an
 * NRI plugin) stays where it is; a container whose init it placed is
 * recorded unmonitored, saying so. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "command.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "pod.h"
#include "pod_threads.h"
#include "proc.h"
#include "runstate.h"
#include "stage.h"

struct adopter {
        const struct config *config;
        int proc_fd;
        struct cgroup_mounts cgroups;
        unsigned seen, adopted;
};

/* After createRuntime's work: the rest of the container's threads. */
static void join_container(struct adopter *a, const struct pod_identity *pod, const char *id)
{
        struct pod_env e = POD_ENV_INIT;
        struct pod_session s = {.lock_fd = -EBADF};
        _cleanup_free_ pid_t *in = NULL;
        const struct member *m;
        unsigned joined = 0, elsewhere = 0;
        size_t n_in = 0;

        if (pod_env_open(a->config, a->proc_fd, &e) < 0)
                return;
        if (pod_session_lock(&e, pod->uid, a->config->lock_timeout_ms, &s) >= 0 &&
            pod_session_load(&s, NULL) >= 0 && (m = pod_state_find_member(&s.st, id)) &&
            m->monitored && pod_threads_group_tasks(e.root_fd, m->ctrl, pod->uid, &in, &n_in) >= 0)
                (void) pod_member_join_cgroup(&s, &a->cgroups, m, in, n_in, &joined, &elsewhere);
        (void) pod_session_close(&s);
        pod_env_close(&e);
        if (joined + elsewhere > 0)
                log_info("container %s of pod %s: %u more threads joined, %u in another "
                         "monitoring or control group",
                         id, pod->uid, joined, elsewhere);
}

/* Whether a container's init runs as its runtime recorded it (start time):
 * by the rule gc drops members by, a zombie's is not. */
static bool init_runs(const struct adopter *a, pid_t pid, uint64_t start)
{
        const char *why_not;

        return pod_member_is_live(a->proc_fd, &(struct member){.pid = pid, .start_time = start},
                                  &why_not) == 1;
}

/* One container under a runtime's root: what createRuntime would have done,
 * if it is a live pod's container and not recorded yet. */
static void adopt_container(struct adopter *a, int root_fd, const char *root, const char *id)
{
        _cleanup_(oci_state_done) struct oci_state state = {0};
        _cleanup_free_ char *json = NULL, *why = NULL;
        struct pod_identity pod = {.uid = "-"};
        enum hook_outcome outcome = OUTCOME_ERROR;
        struct hook_ctx ctx;
        uint64_t start;
        int r;

        r = runstate_read(root_fd, id, &json, &start, &why);
        if (r == -ENOENT)
                return; /* not a container's directory */
        log_set_context("adopt", id);
        if (r < 0) {
                log_error("%s/%s", root, why ? why : strerror(-r));
                return;
        }
        a->seen++;
        r = oci_state_parse(json, strlen(json), &state, &why);
        if (r < 0) {
                log_error("%s/%s: %s", root, id, why);
                return;
        }
        /* A stopped container, or its pid reused since: nothing runs to adopt. */
        if (!init_runs(a, state.pid, start))
                return;
        /* A live container whose bundle is gone: its record is not to be trusted. */
        if (state.bundle && access(state.bundle, F_OK) < 0) {
                log_error("%s/%s: bundle '%s' does not exist; not adopted", root, id, state.bundle);
                return;
        }
        r = oci_pod_identity(&state, &pod);
        if (r <= 0) {
                if (r < 0)
                        log_error("pod UID annotation is not a 36-character dashed or 32-character "
                                  "hex UID; refused");
                return;
        }
        if (pod.sandbox) { /* no hook ever runs for a pod's sandbox: no member */
                log_debug("pod %s: the pod's sandbox; not a container to adopt", pod.uid);
                return;
        }
        ctx = (struct hook_ctx){.config = a->config,
                                .state = &state,
                                .pod = &pod,
                                .proc_fd = a->proc_fd,
                                .deadline = deadline_after_ms(a->config->lock_timeout_ms),
                                .cgroups = &a->cgroups,
                                .running_since = start};
        r = stage_create(&ctx, &outcome);
        if (r < 0)
                outcome = OUTCOME_ERROR;
        if (outcome == OUTCOME_MONITORED) {
                a->adopted++;
                join_container(a, &pod, id);
        }
        log_info("pod=%s namespace=%s outcome=%s", pod.uid, pod.namespace ? pod.namespace : "-",
                 hook_outcome_name(outcome));
}

/* A runtime's --root: root's own directory, no symlink, or nothing is read. */
static void adopt_root(struct adopter *a, const char *root)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        log_set_context("adopt", NULL);
        r = runstate_open_root(root, &fd);
        if (r == -EPERM)
                log_error("runtime root '%s' is not root's own directory; not read", root);
        else if (r < 0 && r != -ENOENT) /* ENOENT: that runtime is not used here */
                log_error_errno(r, "cannot open runtime root '%s'", root);
        if (r < 0)
                return;
        if (opendir_at(fd, ".", &d) < 0) {
                log_error("cannot list runtime root '%s'", root);
                return;
        }
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        adopt_container(a, fd, root, de->d_name);
}

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] adopt\n"
               "\n"
               "Gives running containers that createRuntime never saw (they started before\n"
               "the hook was installed) their pod's group, as createRuntime would have, with\n"
               "every thread of their cgroup that no other monitor placed in a group of its\n"
               "own. Reads the runtimes' state under runtimeRoots.\n"
               "Idempotent and safe beside running hooks and gc. Run it once after installing.\n"
               "\n"
               "Options:\n"
               "  -h, --help                show this help\n");
}

int adopt_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(config_done) struct config config = {0};
        _cleanup_close_ int proc_fd = -EBADF;
        struct adopter a = {.config = &config, .cgroups = CGROUP_MOUNTS_INIT};
        static const struct option options[] = {
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        static const struct command_options adopt_options = {
            .shortopts = "h", .longopts = options, .help = help};
        int r = command_parse_options(&adopt_options, argc, argv, NULL);

        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        if (command_setup(ctx, &config, &proc_fd) < 0)
                return COMMAND_FAILED;
        a.proc_fd = proc_fd;
        (void) cgroup_mounts_open(proc_fd, &a.cgroups);
        for (size_t i = 0; i < config.runtime_roots.n; i++)
                adopt_root(&a, config.runtime_roots.items[i]);
        cgroup_mounts_close(&a.cgroups);
        printf("adopt: %u containers seen, %u adopted\n", a.seen, a.adopted);
        return COMMAND_OK;
}
