/* SPDX-License-Identifier: Apache-2.0 */
/* The check command: its table of rows, its options and output, and the
 * rows that read the readers' model (check_rows.h). */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_rows.h"
#include "fsutil.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "rdt.h"
#include "settings.h"
#include "text.h"

/* Where CRI-O and Podman look for oci-hooks(5) files by default, and where
 * OpenShift puts them. */
static const char *const default_hooks_dirs[] = {
    "/usr/share/containers/oci/hooks.d",
    "/etc/containers/oci/hooks.d",
};

void check_add(struct checker *k, enum check_row row, enum level level, const char *fix,
               const char *fmt, ...)
{
        struct result res = {.row = row, .level = level}, *a;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&res.message, fmt, ap);
        va_end(ap);
        res.fix = fix ? strdup(fix) : NULL;
        a = n >= 0 && (!fix || res.fix) ? realloc(k->results, (k->n + 1) * sizeof(*a)) : NULL;
        if (!a) {
                if (n >= 0)
                        free(res.message);
                free(res.fix);
                k->oom = true;
                return;
        }
        a[k->n++] = res;
        k->results = a;
}

void check_list_append(char *buf, size_t size, const char *fmt, ...)
{
        size_t len = strlen(buf);
        va_list ap;

        va_start(ap, fmt);
        if (len > 0 && len + 2 < size)
                len += (size_t) snprintf(buf + len, size - len, ", ");
        (void) vsnprintf(buf + len, size - len, fmt, ap);
        va_end(ap);
}

/* Every problem of the file, with what the hook does about it: the checks
 * below then see the config the hook runs with. */
static void check_config(struct checker *k)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};

        if (settings_load(k->ctx->config_path, k->ctx->config_explicit, &k->config, &problems) <
            0) {
                k->oom = true;
                return;
        }
        for (size_t i = 0; i < problems.n; i++) {
                _cleanup_free_ char *fix = NULL;

                if (asprintf(&fix, "correct the file; until then %s",
                             settings_problem_effect(problems.items[i].kind)) < 0)
                        fix = NULL;
                check_add(k, ROW_CONFIG, LEVEL_FAIL, fix, "%s", problems.items[i].text);
        }
        if (problems.n == 0)
                check_add(k, ROW_CONFIG, LEVEL_OK, NULL, "'%s' is valid%s", k->ctx->config_path,
                          access(k->ctx->config_path, F_OK) < 0 ? " (absent: built-in defaults)"
                                                                : "");
}

/* The pod-UID-named groups, listed under the shared lock (what the lock is
 * for: no group made or removed meanwhile); their member files are read
 * after it, so that a writer waits for a listing, not a file per group. */
struct group_names {
        struct group_name {
                /* the group's name, and the pod UID it spells */
                char ctrl[NAME_MAX + 1], mon[POD_UID_LEN + 1], uid[POD_UID_LEN + 1];
        } * items;
        size_t n;
        bool oom;
};

static int list_pod_group(const char *ctrl, const char *mon, void *userdata)
{
        struct group_names *l = userdata;
        struct group_name *grown, *g;

        if (!mon || strlen(ctrl) > NAME_MAX || strlen(mon) > POD_UID_LEN)
                return 0;
        grown = reallocarray(l->items, l->n + 1, sizeof(*l->items));
        if (!grown) {
                l->oom = true;
                return -ENOMEM;
        }
        l->items = grown;
        g = &l->items[l->n];
        if (pod_uid_canonicalise(mon, g->uid) < 0)
                return 0;
        memcpy(g->ctrl, ctrl, strlen(ctrl) + 1);
        memcpy(g->mon, mon, strlen(mon) + 1);
        l->n++;
        return 0;
}

/* The readers' model, opened at the first row that reads it: one read of
 * stateDir for every row. */
static const struct node_view *view(struct checker *k)
{
        if (!k->view_opened) {
                k->view_opened = true;
                k->view_r = node_view_open(&k->view, &k->config);
        }
        return &k->view;
}

/* The model's pods, each with its coverage when covered; NULL where there
 * is no state yet, or stateDir or /proc cannot be read (the state-dir and
 * proc-resctrl rows say so). */
static const struct node_view *view_pods(struct checker *k, bool covered)
{
        (void) view(k);
        if (k->view_r < 0 || k->view.state_fd < 0)
                return NULL;
        if (covered && !k->view_covered) {
                k->view_covered = true;
                node_view_read_coverage(&k->view, k->root_fd);
        }
        return &k->view;
}

/* A UUID-named group is ours when it is named as the hook names groups and
 * the pod's state file lists it as made by the hook. */
static bool group_is_ours(const struct node_view *nv, const struct group_name *g)
{
        const struct pod_view *pv = node_view_pod(nv, g->uid);

        for (size_t i = 0; pv && strcmp(g->uid, g->mon) == 0 && i < pv->st.n_groups; i++)
                if (strcmp(pv->st.groups[i].ctrl, g->ctrl) == 0)
                        return pv->st.groups[i].owned;
        return false;
}

static void check_other_managers(struct checker *k)
{
        struct group_names l = {0};
        unsigned ours = 0, foreign = 0;
        char examples[256] = "";
        int r;

        {
                _cleanup_(rdt_unlockp) int locked = -EBADF;

                r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
                if (r >= 0) {
                        locked = k->root_fd;
                        r = rdt_groups_foreach(k->root_fd, list_pod_group, &l);
                }
        }
        /* Without stateDir every group is another's: none is recorded. */
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                const struct group_name *g = &l.items[i];
                bool root = strcmp(g->ctrl, "/") == 0;

                /* A group the hook found and uses (owned: false) is another manager's. */
                if (group_is_ours(view(k), g)) {
                        ours++;
                        continue;
                }
                if (++foreign <= 3)
                        check_list_append(examples, sizeof(examples), "%s%smon_groups/%s",
                                          root ? "" : g->ctrl, root ? "" : "/", g->mon);
        }
        free(l.items);
        k->oom |= l.oom;
        if (r < 0)
                check_add(k, ROW_OTHER_MANAGERS, LEVEL_FAIL, NULL, "cannot list the groups: %s",
                          strerror(-r));
        else if (foreign > 0)
                check_add(k, ROW_OTHER_MANAGERS, LEVEL_WARN,
                          "let one manager make pod groups: Kepler's active mode, nri-resctrl-mon "
                          "and goresctrl remove UUID-named groups they did not make",
                          "%u pod-UID-named groups are not this hook's (%s%s); %u are", foreign,
                          examples, foreign > 3 ? ", ..." : "", ours);
        else
                check_add(k, ROW_OTHER_MANAGERS, LEVEL_OK, NULL,
                          "every pod-UID-named group is this hook's (%u)", ours);
}

/* Are all threads of every monitored container in its pod's group? */
static void check_coverage(struct checker *k)
{
        const struct node_view *nv = view_pods(k, true);
        unsigned pods_short = 0;
        char examples[256] = "";

        if (!nv)
                return;
        for (size_t i = 0; i < nv->n_pods; i++) {
                const struct pod_view *pv = &nv->pods[i];

                if (pv->threads_in + pv->threads_elsewhere >= pv->threads)
                        continue; /* gc has nothing to join */
                if (++pods_short <= 3)
                        check_list_append(examples, sizeof(examples), "%s (%s/%s) %u of %u",
                                          pv->uid, pv->st.namespace ? pv->st.namespace : "-",
                                          pv->st.pod_name ? pv->st.pod_name : "-", pv->threads_in,
                                          pv->threads);
        }
        if (pods_short > 0)
                check_add(k, ROW_COVERAGE, LEVEL_WARN,
                          "run gc (resctrl-mon-hook gc): it joins every thread of a container's "
                          "cgroup; threads in another control group or another monitor's group "
                          "stay out",
                          "%u of %u threads of monitored containers are in their pod's groups; %u "
                          "pods short: %s%s",
                          nv->threads_in, nv->threads, pods_short, examples,
                          pods_short > 3 ? ", ..." : "");
        else if (nv->threads_elsewhere > 0)
                check_add(k, ROW_COVERAGE, LEVEL_OK, NULL,
                          "every thread of monitored containers is in its pod's group (%u) but %u, "
                          "which another monitor's group or another control group holds",
                          nv->threads_in, nv->threads_elsewhere);
        else
                check_add(k, ROW_COVERAGE, LEVEL_OK, NULL,
                          "every thread of monitored containers is in its pod's group (%u)",
                          nv->threads);
}

/* The live containers waiting for an RMID (gc brings them in). */
static void check_waiting(struct checker *k)
{
        const struct node_view *nv = view_pods(k, false);
        char most_by[POD_UID_LEN + NAME_MAX + 2] = "";
        unsigned waiting = 0;
        uint64_t most = 0; /* seconds, the longest a live container has waited */

        if (!nv)
                return;
        for (size_t i = 0; i < nv->n_pods; i++)
                for (size_t j = 0; j < nv->pods[i].st.n_members; j++) {
                        const struct member *m = &nv->pods[i].st.members[j];
                        uint64_t waited;

                        if (!pod_view_member_waits(&nv->pods[i], j))
                                continue;
                        waited = pod_member_waited_sec(m);
                        if (++waiting == 1 || waited > most) {
                                most = waited;
                                (void) snprintf(most_by, sizeof(most_by), "%s/%s", nv->pods[i].uid,
                                                m->id);
                        }
                }
        if (waiting > 0)
                check_add(k, ROW_WAITING, LEVEL_WARN,
                          "free RMIDs (check's rmids and other-managers) or monitor fewer pods; "
                          "gc brings the oldest in at each pass that finds one free",
                          "%u containers run unmonitored waiting for an RMID, the longest %llu s "
                          "(%s)",
                          waiting, (unsigned long long) most, most_by);
        else
                check_add(k, ROW_WAITING, LEVEL_OK, NULL, "no container waits for an RMID");
}

/* Can every pod's recorded cgroup be seen from here? gc keeps the group of
 * a pod whose cgroup it cannot see, so someone must know. */
static void check_pod_cgroups(struct checker *k)
{
        const struct node_view *nv = view_pods(k, false);
        unsigned unseen = 0;
        char list[256] = "";

        for (size_t i = 0; nv && i < nv->n_pods; i++)
                if (pod_view_cgroup_unseen(nv, &nv->pods[i]) && ++unseen <= 3)
                        check_list_append(list, sizeof(list), "%s", nv->pods[i].uid);
        if (unseen > 0)
                check_add(
                    k, ROW_POD_CGROUPS, LEVEL_FAIL,
                    "run gc and check where the node's cgroup hierarchies are mounted from "
                    "their root, in the host's cgroup namespace; until then gc keeps these "
                    "pods' groups",
                    "%u pods' recorded cgroups cannot be seen from here (gc logs which): %s%s",
                    unseen, list, unseen > 3 ? ", ..." : "");
}

/* Whether a watch runs, by what it says in stateDir, and with process events. */
static void check_watch(struct checker *k)
{
        const struct node_view *nv = view(k);
        /* No stateDir, or no watch.state in it: none runs. */
        int r = k->view_r < 0 && nv->state_fd < 0 ? k->view_r : nv->watch_live;

        if (r < 0 && r != -ENOENT && r != -EBADMSG) {
                check_add(k, ROW_WATCH, LEVEL_FAIL, NULL, "cannot tell whether watch runs: %s",
                          strerror(-r));
                return;
        }
        if (r <= 0)
                check_add(k, ROW_WATCH, LEVEL_WARN,
                          "run resctrl-mon-hook watch (the DaemonSet and "
                          "resctrl-mon-hook-watch.service do)",
                          "no watch runs: processes exec'd into containers join their pod's group "
                          "only when gc runs");
        else if (!nv->watch.events)
                check_add(k, ROW_WATCH, LEVEL_WARN,
                          "run it in the host's pid, user and network namespaces, with "
                          "CAP_NET_ADMIN (Linux before 6.6 wants it)",
                          "watch runs (pid %d) without the kernel's process events: exec'd "
                          "processes join at its gc passes only",
                          (int) nv->watch.pid);
        else
                check_add(k, ROW_WATCH, LEVEL_OK, NULL,
                          "watch runs (pid %d): exec'd processes join at their exec",
                          (int) nv->watch.pid);
}

/* Every row, in the order they run and print. config, resctrl-mount and
 * monitoring run whatever --only says: the others need them. */
static const struct row {
        const char *name;
        void (*fn)(struct checker *k);
        enum check_row id;
        bool needs_monitoring; /* runs only where resctrl has monitoring */
} rows[_ROW_MAX] = {
    /* name, fn, id, needs_monitoring */
    [ROW_CONFIG] = {"config", check_config, ROW_CONFIG, false},
    [ROW_RESCTRL_MOUNT] = {"resctrl-mount", check_mount, ROW_RESCTRL_MOUNT, false},
    [ROW_MONITORING] = {"monitoring", check_monitoring, ROW_MONITORING, false},
    [ROW_NODE_RESCTRL] = {"node-resctrl", check_node_resctrl, ROW_NODE_RESCTRL, false},
    [ROW_RMIDS] = {"rmids", check_rmids, ROW_RMIDS, true},
    [ROW_COUNTERS] = {"counters", check_counters, ROW_COUNTERS, true},
    [ROW_PROC_RESCTRL] = {"proc-resctrl", check_proc, ROW_PROC_RESCTRL, false},
    [ROW_STATE_DIR] = {"state-dir", check_state_dir, ROW_STATE_DIR, false},
    [ROW_STATE_FS] = {"state-fs", check_state_fs, ROW_STATE_FS, false},
    [ROW_HOOKS_D] = {"hooks.d", check_hooks_dirs, ROW_HOOKS_D, false},
    [ROW_OTHER_MANAGERS] = {"other-managers", check_other_managers, ROW_OTHER_MANAGERS, true},
    [ROW_COVERAGE] = {"coverage", check_coverage, ROW_COVERAGE, true},
    [ROW_WAITING] = {"waiting", check_waiting, ROW_WAITING, true},
    [ROW_POD_CGROUPS] = {"pod-cgroups", check_pod_cgroups, ROW_POD_CGROUPS, true},
    [ROW_NODE_CGROUPS] = {"node-cgroups", check_node_cgroups, ROW_NODE_CGROUPS, false},
    [ROW_RUNTIME_ROOTS] = {"runtime-roots", check_runtime_roots, ROW_RUNTIME_ROOTS, false},
    [ROW_WATCH] = {"watch", check_watch, ROW_WATCH, false},
};

/* --only is a mask of rows, a bit each. */
_Static_assert(_ROW_MAX <= 32, "check's rows fit an unsigned mask");

/* Is the row to be run and printed? */
static bool wanted(const struct checker *k, enum check_row row)
{
        return k->only == 0 || (k->only & (1U << row));
}

static const char *level_name(enum level l)
{
        return l == LEVEL_OK ? "ok" : l == LEVEL_WARN ? "warn" : "fail";
}

static void print_text(const struct checker *k)
{
        for (size_t i = 0; i < k->n; i++) {
                const struct result *res = &k->results[i];
                char safe[4 * 1024];

                printf("%-5s %-15s %s\n", level_name(res->level), rows[res->row].name,
                       text_escape(safe, sizeof(safe), res->message));
                if (res->fix && res->level != LEVEL_OK)
                        printf("%-5s %-15s fix: %s\n", "", "",
                               text_escape(safe, sizeof(safe), res->fix));
        }
}

static int print_json(const struct checker *k, bool failed)
{
        json_auto_t *checks = json_array(), *root = NULL;
        _cleanup_free_ char *text = NULL;

        for (size_t i = 0; checks && i < k->n; i++) {
                const struct result *res = &k->results[i];

                if (json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s?}", "check",
                                                            rows[res->row].name, "result",
                                                            level_name(res->level), "message",
                                                            res->message, "fix", res->fix)) < 0)
                        return -ENOMEM;
        }
        root = checks ? json_pack("{s:b, s:O}", "ok", !failed, "checks", checks) : NULL;
        text = root ? json_dumps(root, JSON_INDENT(2)) : NULL;
        if (!text)
                return -ENOMEM;
        puts(text);
        return 0;
}

static void help(void)
{
        printf("Usage: resctrl-mon-hook [--config FILE] [--log-level LEVEL] check [OPTIONS]\n"
               "\n"
               "Checks that this node can run the hook: the config, the resctrl mount and its\n"
               "monitoring, here and as the node's init sees it, the RMID budget, the state\n"
               "directory, the hooks.d files, other managers' groups, coverage and waiting\n"
               "containers, and what gc and adopt see of the node. One line per check, ok,\n"
               "warn or fail, with the fix.\n"
               "\n"
               "Options:\n"
               "  -j, --json                one JSON object\n"
               "  -d, --hooks-dir DIR       read hooks.d files from DIR (again for more)\n"
               "  -o, --only NAMES          run and judge only these checks (comma-separated)\n"
               "  -h, --help                show this help\n");
}

/* --only's list into k->only: -EINVAL (logged) for a name of no row. */
static int set_only(struct checker *k, const char *list)
{
        for (const char *item = list; item;
             item = strchr(item, ','), item = item ? item + 1 : NULL) {
                size_t n = strcspn(item, ",");
                unsigned bit = 0;

                for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                        if (strlen(rows[i].name) == n && strncmp(item, rows[i].name, n) == 0)
                                bit = 1U << rows[i].id;
                if (!bit) {
                        log_error("check --only: no check is named '%.*s'", (int) n, item);
                        return -EINVAL;
                }
                k->only |= bit;
        }
        return 0;
}

struct check_options {
        struct checker *k;
        bool json;
};

static int set_option(int c, const char *arg, void *userdata)
{
        struct check_options *o = userdata;
        struct checker *k = o->k;

        if (c == 'j')
                o->json = true;
        else if (c == 'o')
                return set_only(k, arg);
        else if (k->n_hooks_dirs < HOOKS_DIRS_MAX) /* 'd' */
                k->hooks_dirs[k->n_hooks_dirs++] = arg;
        else
                return log_error_errno(-EINVAL, "check: more than %d --hooks-dir", HOOKS_DIRS_MAX);
        return 0;
}

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_check_args(struct checker *k, int argc, char **argv, bool *ret_json)
{
        static const struct option longopts[] = {
            {"json", no_argument, NULL, 'j'},
            {"hooks-dir", required_argument, NULL, 'd'},
            {"only", required_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        static const struct command_options options = {
            .shortopts = "+jd:o:h", .longopts = longopts, .help = help, .set = set_option};
        struct check_options o = {.k = k};
        int r = command_parse_options(&options, argc, argv, &o);

        if (r <= 0)
                return r;
        *ret_json = o.json;
        for (size_t i = 0; k->n_hooks_dirs == 0 && i < ELEMENTSOF(default_hooks_dirs); i++)
                k->hooks_dirs[i] = default_hooks_dirs[i];
        if (k->n_hooks_dirs == 0)
                k->n_hooks_dirs = ELEMENTSOF(default_hooks_dirs);
        return 1;
}

static void result_done(struct result *res)
{
        free(res->message);
        free(res->fix);
}

/* Only the rows --only names are printed and judged. */
static void drop_unwanted(struct checker *k)
{
        size_t kept = 0;

        for (size_t i = 0; i < k->n; i++) {
                if (wanted(k, k->results[i].row))
                        k->results[kept++] = k->results[i];
                else
                        result_done(&k->results[i]);
        }
        k->n = kept;
}

static void checker_done(struct checker *k)
{
        for (size_t i = 0; i < k->n; i++)
                result_done(&k->results[i]);
        free(k->results);
        closep(&k->root_fd);
        node_view_done(&k->view);
        config_done(&k->config);
}

int check_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(checker_done) struct checker k = {
            .ctx = ctx, .root_fd = -EBADF, .view = NODE_VIEW_INIT};
        bool json = false, failed = false;
        int r;

        r = parse_check_args(&k, argc, argv, &json);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        /* Not command_setup: the config row loads the config, its problems
         * rows of their own rather than log lines, and the model opens /proc. */
        if (config_init(&k.config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                if ((rows[i].id <= ROW_MONITORING || wanted(&k, rows[i].id)) &&
                    (!rows[i].needs_monitoring || k.monitoring))
                        rows[i].fn(&k);
        drop_unwanted(&k);
        for (size_t i = 0; i < k.n; i++)
                failed = failed || k.results[i].level == LEVEL_FAIL;
        if (k.oom || (json && print_json(&k, failed) < 0)) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }
        if (!json)
                print_text(&k);
        return failed ? COMMAND_FAILED : COMMAND_OK;
}
