/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "abmc.h"
#include "cgroup.h"
#include "command.h"
#include "fsutil.h"
#include "intake.h"
#include "kubepods.h"
#include "log.h"
#include "macro.h"
#include "oci.h"
#include "pod_threads.h"
#include "proc.h"
#include "rdt.h"
#include "runstate.h"
#include "settings.h"
#include "members.h"
#include "statedir.h"
#include "watch_state.h"
#include "text.h"
#include "watchdog.h"

/* Where CRI-O and Podman look for oci-hooks(5) files by default, and where
 * OpenShift puts them. */
static const char *const default_hooks_dirs[] = {
    "/usr/share/containers/oci/hooks.d",
    "/etc/containers/oci/hooks.d",
};
#define HOOKS_DIRS_MAX 16
#define HOOK_FILE_MAX ((size_t) 64 * 1024)

enum level { LEVEL_OK, LEVEL_WARN, LEVEL_FAIL };

struct result {
        char *name;
        enum level level;
        char *message;
        char *fix; /* NULL when there is nothing to do */
};

struct checker {
        struct config config;
        int root_fd;
        const char *hooks_dirs[HOOKS_DIRS_MAX];
        size_t n_hooks_dirs;
        const char *only; /* --only: the rows to run and print, comma-separated; NULL: all */
        struct result *results;
        size_t n;
        bool oom;
};

/* Every row's name, for --only. */
static const char *const row_names[] = {
    "config",       "resctrl-mount", "monitoring",   "node-resctrl",  "rmids",          "counters",
    "proc-resctrl", "state-dir",     "state-fs",     "hooks.d",       "other-managers", "coverage",
    "waiting",      "pod-cgroups",   "node-cgroups", "runtime-roots", "watch",
};

/* Does list (comma-separated) hold name? */
static bool list_holds(const char *list, const char *name)
{
        size_t n = strlen(name);

        for (const char *c = list; c; c = strchr(c, ','), c = c ? c + 1 : NULL)
                if (strncmp(c, name, n) == 0 && (c[n] == ',' || c[n] == '\0'))
                        return true;
        return false;
}

/* Is row name to be run and printed? */
static bool wanted(const struct checker *k, const char *name)
{
        return !k->only || list_holds(k->only, name);
}

static const char *level_name(enum level l)
{
        return l == LEVEL_OK ? "ok" : l == LEVEL_WARN ? "warn" : "fail";
}

static void add(struct checker *k, const char *name, enum level level, const char *fix,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Records one check's line; fix may be NULL. */
static void add(struct checker *k, const char *name, enum level level, const char *fix,
                const char *fmt, ...)
{
        struct result res = {.level = level}, *a;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&res.message, fmt, ap);
        va_end(ap);
        res.name = strdup(name);
        res.fix = fix ? strdup(fix) : NULL;
        a = n >= 0 && res.name && (!fix || res.fix) ? realloc(k->results, (k->n + 1) * sizeof(*a))
                                                    : NULL;
        if (!a) {
                if (n >= 0)
                        free(res.message);
                free(res.name);
                free(res.fix);
                k->oom = true;
                return;
        }
        a[k->n++] = res;
        k->results = a;
}

static void list_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends an item, formatted, to the ", "-separated list in buf (size
 * bytes), cut at the end. */
static void list_append(char *buf, size_t size, const char *fmt, ...)
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
static void check_config(struct checker *k, const struct command_ctx *ctx)
{
        _cleanup_(config_problems_done) struct config_problems problems = {0};

        if (settings_load(ctx->config_path, ctx->config_explicit, &k->config, &problems) < 0) {
                k->oom = true;
                return;
        }
        for (size_t i = 0; i < problems.n; i++) {
                _cleanup_free_ char *fix = NULL;

                if (asprintf(&fix, "correct the file; until then %s",
                             settings_problem_effect(problems.items[i].kind)) < 0)
                        fix = NULL;
                add(k, "config", LEVEL_FAIL, fix, "%s", problems.items[i].text);
        }
        if (problems.n == 0)
                add(k, "config", LEVEL_OK, NULL, "'%s' is valid%s", ctx->config_path,
                    access(ctx->config_path, F_OK) < 0 ? " (absent: built-in defaults)" : "");
}

/* The mount (statfs magic) and mon_groups; leaves k->root_fd open when usable. */
static void check_mount(struct checker *k)
{
        const char *path = k->config.resctrl_path;
        _cleanup_free_ char *fix = NULL;
        struct statfs sfs;
        int r;

        if (asprintf(&fix, "mount -t resctrl resctrl %s", path) < 0)
                fix = NULL;
        r = rdt_open(path, false, &k->root_fd);
        if (r == -EOPNOTSUPP) {
                k->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                r = k->root_fd < 0 ? -errno : 0;
        }
        if (r < 0) {
                add(k, "resctrl-mount", LEVEL_FAIL, fix, "cannot open '%s': %s", path,
                    strerror(-r));
                return;
        }
        if (fstatfs(k->root_fd, &sfs) < 0 || sfs.f_type != RDTGROUP_SUPER_MAGIC) {
                if (k->config.require_resctrl_fs)
                        add(k, "resctrl-mount", LEVEL_FAIL, fix, "'%s' is not a resctrl mount",
                            path);
                else
                        add(k, "resctrl-mount", LEVEL_WARN,
                            "set requireResctrlFs: true on a real node",
                            "'%s' is not a resctrl mount; accepted because requireResctrlFs is "
                            "false",
                            path);
                return;
        }
        add(k, "resctrl-mount", LEVEL_OK, NULL, "resctrl is mounted at '%s'", path);
}

/* resctrl as the node's init sees it: pid 1's mounts, which a hostPID
 * container (the DaemonSet) reads without any capability. What tells "the
 * node has no resctrl" from "this process cannot see it" (its container's
 * manifest hides it): the hook, once registered, runs in the node's
 * namespaces, not in this process's. Only in the initial pid namespace is
 * pid 1 the node's init; elsewhere (no hostPID) it is the container's own,
 * and the node's resctrl is unknown: a warning, never a failure, so that
 * nothing this process alone sees passes for the node's condition. */
static void check_node_resctrl(struct checker *k)
{
        const char *path = k->config.resctrl_path;
        _cleanup_free_ char *type = NULL, *fix = NULL;
        _cleanup_close_ int proc_fd = -EBADF;
        uint64_t pid_ns = 0;
        int r;

        if (asprintf(&fix,
                     "mount -t resctrl resctrl %s on the node (at boot: sys-fs-resctrl.mount)",
                     path) < 0)
                fix = NULL;
        r = proc_open(&proc_fd);
        if (r >= 0)
                r = proc_pid_ns(proc_fd, &pid_ns);
        if (r >= 0 && pid_ns != PROC_PID_NS_INIT_INO) {
                add(k, "node-resctrl", LEVEL_WARN, "run in the host's pid namespace (hostPID)",
                    "pid 1 here is not the node's init (not the host's pid namespace); the "
                    "node's resctrl is unknown");
                return;
        }
        if (r >= 0)
                r = mountinfo_type_at(proc_fd, 1, path, &type);
        if (r < 0)
                /* Not the node's condition: unknown, not failed. */
                add(k, "node-resctrl", LEVEL_WARN, "run in the host's pid namespace (hostPID)",
                    "cannot read /proc/1/mountinfo: %s; the node's resctrl is unknown",
                    strerror(-r));
        else if (r == 0)
                add(k, "node-resctrl", LEVEL_FAIL, fix, "the node has no mount at '%s'", path);
        else if (strcmp(type, "resctrl") == 0)
                add(k, "node-resctrl", LEVEL_OK, NULL, "the node has resctrl mounted at '%s'",
                    path);
        else if (k->config.require_resctrl_fs)
                add(k, "node-resctrl", LEVEL_FAIL, fix, "the node has %s, not resctrl, at '%s'",
                    type, path);
        else
                add(k, "node-resctrl", LEVEL_WARN, "set requireResctrlFs: true on a real node",
                    "the node has %s, not resctrl, at '%s'; accepted because requireResctrlFs is "
                    "false",
                    type, path);
}

/* "L3_MON (llc_occupancy, ...)" for one info/<res>_MON, or NULL when absent. */
static char *describe_mon(int root_fd, const char *res)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *features = NULL;
        char path[64], *out;

        snprintf(path, sizeof(path), "info/%s", res);
        fd = openat(root_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        if (read_small_file_at(fd, "mon_features", 4096, &features) < 0)
                return strdup(res);
        for (char *p = features; *p; p++)
                if (*p == '\n')
                        *p = p[1] ? ',' : '\0';
        return asprintf(&out, "%s (%s)", res, features) < 0 ? NULL : out;
}

/* true when there is monitoring to look at further */
static bool check_monitoring(struct checker *k)
{
        _cleanup_free_ char *l3 = describe_mon(k->root_fd, "L3_MON");
        _cleanup_free_ char *pkg = describe_mon(k->root_fd, "PERF_PKG_MON");
        bool groups = faccessat(k->root_fd, "mon_groups", F_OK, AT_SYMLINK_NOFOLLOW) == 0;

        if ((!l3 && !pkg) || !groups) {
                add(k, "monitoring", LEVEL_FAIL,
                    "use a CPU and kernel with RDT monitoring (cqm_* in /proc/cpuinfo, Intel AET "
                    "since 7.0) and no rdt= option disabling it",
                    "no monitoring at '%s': %s", k->config.resctrl_path,
                    !groups ? "no mon_groups directory" : "no info/L3_MON or info/PERF_PKG_MON");
                return false;
        }
        add(k, "monitoring", LEVEL_OK, NULL, "%s%s%s", l3 ? l3 : "", l3 && pkg ? ", " : "",
            pkg ? pkg : "");
        return true;
}

/* Arm MPAM: each control group its own PMGs; lists every control group's
 * use, and warns for those with none left. */
static void check_rmids_per_ctrl(struct checker *k)
{
        _cleanup_free_ struct rdt_ctrl_usage *use = NULL;
        char list[1024] = "";
        unsigned budget, full = 0;
        size_t n = 0, len = 0;
        int r;

        r = rdt_mon_groups_per_ctrl(k->root_fd, &budget);
        if (r < 0) {
                add(k, "rmids", LEVEL_FAIL, NULL, "cannot read num_rmids and num_closids: %s",
                    strerror(-r));
                return;
        }
        r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
        if (r >= 0) {
                r = rdt_mon_groups_count(k->root_fd, &use, &n);
                rdt_unlock(k->root_fd);
        }
        if (r < 0) {
                add(k, "rmids", LEVEL_FAIL, NULL, "cannot count the groups: %s", strerror(-r));
                return;
        }
        for (size_t i = 0; i < n && len < sizeof(list); i++) {
                char one[NAME_MAX + 96];

                full += use[i].mon_groups >= budget;
                rdt_ctrl_usage_format(&use[i], budget, one, sizeof(one));
                len +=
                    (size_t) snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", one);
        }
        /* The root is where default-class pods run: full, it leaves most
         * pods unmonitored while other control groups have room. */
        add(k, "rmids", full ? LEVEL_WARN : LEVEL_OK,
            full ? "pods of a full control group (the root control group: every pod of the "
                   "default class) start unmonitored and wait for a group there to go: monitor "
                   "fewer of them, or remove groups there that are not needed"
                 : NULL,
            "%u monitoring groups in each control group at most (per control group, as on Arm "
            "MPAM: num_rmids / num_closids, less the control group's own); %s",
            budget, list);
}

static void check_rmids(struct checker *k)
{
        unsigned budget, used = 0;
        int r;

        if (rdt_budget_rule(k->config.rmid_budget) == RMID_BUDGET_CTRL_GROUP) {
                check_rmids_per_ctrl(k);
                return;
        }
        r = rdt_rmid_budget(k->root_fd, &budget);
        if (r < 0) {
                add(k, "rmids", LEVEL_FAIL, NULL, "cannot read num_rmids: %s", strerror(-r));
                return;
        }
        r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
        if (r >= 0) {
                r = rdt_groups_count(k->root_fd, &used);
                rdt_unlock(k->root_fd);
        }
        if (r < 0) {
                add(k, "rmids", LEVEL_FAIL, NULL, "cannot count the groups: %s", strerror(-r));
                return;
        }
        add(k, "rmids", used >= budget ? LEVEL_WARN : LEVEL_OK,
            used >= budget ? "monitor fewer pods (namespaces, labelSelector) or remove groups "
                             "that are not needed; new pods start unmonitored"
                           : NULL,
            "%u groups at most (for the node: the smaller num_rmids, less the root's), %u in use, "
            "%u free; "
            "RMIDs freed lately wait in limbo until their cache lines age out (mkdir then fails "
            "with EBUSY)",
            budget, used, used >= budget ? 0 : budget - used);
}

struct starving {
        int root_fd;
        unsigned mask, groups, starving;
};

static int count_starving(const char *ctrl, const char *mon, void *userdata)
{
        struct starving *st = userdata;
        struct abmc_assignments a;

        if (!mon || abmc_group_assignments(st->root_fd, ctrl, mon, &a) < 0)
                return 0;
        st->groups++;
        st->starving += abmc_bandwidth(&a, st->mask) != ABMC_FULL;
        return 0;
}

/* With ABMC: the mode, the counters per domain, and whether monitoring
 * groups wait for counters while none is free. */
static void check_counters(struct checker *k)
{
        struct starving st = {.root_fd = k->root_fd, .mask = k->config.mbm_events};
        struct abmc_counts total, available;
        char budget[512] = "";
        size_t len = 0;
        bool none_free = false;
        int r;

        r = abmc_active(k->root_fd);
        if (r == 0)
                return; /* every group counts bandwidth without counters */
        if (r >= 0)
                r = abmc_counters(k->root_fd, &total, &available);
        if (r < 0) {
                add(k, "counters", LEVEL_WARN, "report it: the hook leaves the counters alone",
                    "cannot understand the bandwidth counters in info/L3_MON: %s", strerror(-r));
                return;
        }
        for (size_t i = 0; i < total.n && len < sizeof(budget); i++) {
                unsigned left = i < available.n ? available.counts[i] : 0;

                none_free |= left == 0;
                len += (size_t) snprintf(budget + len, sizeof(budget) - len,
                                         "%sdomain %u %u of %u free", i ? ", " : "", total.ids[i],
                                         left, total.counts[i]);
        }
        /* Without the lock: a read of every group's assignments would hold
         * it for as long as there are groups. A count, not a decision: a
         * group made or removed meanwhile moves it by one. */
        (void) rdt_groups_foreach(k->root_fd, count_starving, &st);
        add(k, "counters", none_free && st.starving > 0 ? LEVEL_WARN : LEVEL_OK,
            "fewer bandwidth events per group (mbmEvents: [mbm_total_bytes]) or fewer monitored "
            "pods; gc hands counters to waiting groups as they free up",
            "mbm_event mode (bandwidth needs a counter per group): %s; %u of %u monitoring groups "
            "lack some of mbmEvents",
            budget, st.starving, st.groups);
}

static void check_proc(struct checker *k)
{
        _cleanup_close_ int proc_fd = -EBADF;
        _cleanup_free_ char *ctrl = NULL;
        int r;

        r = proc_open(&proc_fd);
        if (r >= 0)
                r = rdt_task_ctrl_group(proc_fd, getpid(), &ctrl);
        if (r >= 0)
                add(k, "proc-resctrl", LEVEL_OK, NULL,
                    "/proc/<pid>/cpu_resctrl_groups works (this process is in %s)", ctrl);
        else
                add(k, "proc-resctrl", LEVEL_WARN,
                    "fine when runtimes set linux.intelRdt.closID for every container placed in "
                    "a control group; otherwise use a kernel with CONFIG_PROC_CPU_RESCTRL",
                    "/proc/<pid>/cpu_resctrl_groups %s: the hook takes the control group from "
                    "config.json's linux.intelRdt.closID",
                    r == -ENODATA ? "says resctrl is not mounted" : "is missing");
}

static void check_state_dir(struct checker *k)
{
        const char *path = k->config.state_dir;
        _cleanup_free_ char *fix = NULL;
        struct stat st;

        if (lstat(path, &st) < 0) {
                if (errno == ENOENT)
                        add(k, "state-dir", LEVEL_OK, NULL,
                            "'%s' does not exist yet; the hook creates it (0700)", path);
                else
                        add(k, "state-dir", LEVEL_FAIL, NULL, "cannot stat '%s': %m", path);
                return;
        }
        if (asprintf(&fix, "chown %u '%s' && chmod 0700 '%s'", (unsigned) geteuid(), path, path) <
            0)
                fix = NULL;
        if (!S_ISDIR(st.st_mode))
                add(k, "state-dir", LEVEL_FAIL, "remove it; the hook creates the directory",
                    "'%s' is not a directory (a symlink is refused too)", path);
        else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
                add(k, "state-dir", LEVEL_FAIL, fix,
                    "'%s' is owned by uid %u with mode %04o: the hook refuses it (whoever can "
                    "write there can forge which groups are its own)",
                    path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        else
                add(k, "state-dir", LEVEL_OK, NULL, "'%s' is owned by uid %u, mode %04o", path,
                    (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
}

/* Whether a watch runs, by what it says in stateDir, and with process events. */
static void check_watch(struct checker *k)
{
        _cleanup_close_ int state_fd = -EBADF, proc_fd = -EBADF;
        struct watch_state ws;
        int r = statedir_open(k->config.state_dir, false, &state_fd);

        if (r >= 0)
                r = watch_state_load(state_fd, &ws);
        if (r >= 0)
                r = proc_open(&proc_fd);
        if (r >= 0)
                r = watch_state_is_live(proc_fd, &ws);
        if (r < 0 && r != -ENOENT && r != -EBADMSG) {
                add(k, "watch", LEVEL_FAIL, NULL, "cannot tell whether watch runs: %s",
                    strerror(-r));
                return;
        }
        if (r <= 0)
                add(k, "watch", LEVEL_WARN,
                    "run resctrl-mon-hook watch (the DaemonSet and resctrl-mon-hook-watch.service "
                    "do)",
                    "no watch runs: processes exec'd into containers join their pod's group only "
                    "when gc runs");
        else if (!ws.events)
                add(k, "watch", LEVEL_WARN,
                    "run it in the host's pid, user and network namespaces, with CAP_NET_ADMIN "
                    "(Linux before 6.6 wants it)",
                    "watch runs (pid %d) without the kernel's process events: exec'd processes "
                    "join at its gc passes only",
                    (int) ws.pid);
        else
                add(k, "watch", LEVEL_OK, NULL,
                    "watch runs (pid %d): exec'd processes join at their exec", (int) ws.pid);
}

struct hooks_seen {
        size_t files;
        bool create, poststop;
};

/* Room for a pod's files: a member file of some hundred containers, its
 * temp file, and their inodes. */
#define STATE_ROOM_KIB 1024ull
#define STATE_ROOM_INODES 64u

/* The file system under stateDir: writable, with room for a pod's files,
 * and on tmpfs, where state goes with the boot whose processes it names. */
static void check_state_fs(struct checker *k)
{
        const char *path = k->config.state_dir;
        struct statvfs vfs;
        struct statfs sfs;
        unsigned long long kib, inodes;
        char inodes_text[24] = "unlimited";

        if (statvfs(path, &vfs) < 0 || statfs(path, &sfs) < 0) {
                if (errno != ENOENT) /* not made yet: state-dir says so */
                        add(k, "state-fs", LEVEL_FAIL, NULL, "cannot statfs '%s': %m", path);
                return;
        }
        kib = (unsigned long long) vfs.f_bavail * vfs.f_frsize / 1024;
        inodes = vfs.f_files > 0 ? (unsigned long long) vfs.f_favail : ULLONG_MAX; /* no limit */
        if (inodes != ULLONG_MAX)
                (void) snprintf(inodes_text, sizeof(inodes_text), "%llu", inodes);
        if (vfs.f_flag & ST_RDONLY)
                add(k, "state-fs", LEVEL_FAIL,
                    "mount it read-write (the DaemonSet's stateDir hostPath is never readOnly)",
                    "'%s' is on a read-only file system: createRuntime cannot record containers, "
                    "poststop and gc cannot remove the groups of pods that end",
                    path);
        else if (kib < STATE_ROOM_KIB || inodes < STATE_ROOM_INODES)
                add(k, "state-fs", LEVEL_FAIL, "free space and inodes on it",
                    "'%s' is full (%llu KiB free, %s inodes): createRuntime cannot record "
                    "containers, poststop and gc cannot remove the groups of pods that end",
                    path, kib, inodes_text);
        else if (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC)
                add(k, "state-fs", LEVEL_WARN, "put stateDir on tmpfs, under /run",
                    "'%s' is not on tmpfs: its state outlives a reboot (the hook empties a pod's "
                    "state of an earlier boot, by boot_id)",
                    path);
        else
                add(k, "state-fs", LEVEL_OK, NULL, "'%s' is on tmpfs, writable, %llu KiB free",
                    path, kib);
}

static void note_stages(json_t *stages, struct hooks_seen *seen)
{
        size_t i;
        json_t *v;

        json_array_foreach(stages, i, v) {
                const char *st = json_string_value(v);

                if (st && (strcmp(st, "createRuntime") == 0 || strcmp(st, "prestart") == 0))
                        seen->create = true;
                else if (st && strcmp(st, "poststop") == 0)
                        seen->poststop = true;
        }
}

/* What a run does besides waiting (reading /proc, mkdir, the tasks writes,
 * two saves) takes milliseconds, and its watchdog ends it
 * WATCHDOG_AFTER_DEADLINE_MS past its deadline at the latest; this leaves
 * room for that, and for the process's start and exit on a busy node. */
#define HOOK_WORK_MARGIN_MS 1000u
_Static_assert(HOOK_WORK_MARGIN_MS >= 2 * WATCHDOG_AFTER_DEADLINE_MS,
               "the watchdog must end a run well within the hooks.d timeout check wants");

/* The runtime kills a hook at hook.timeout, which fails the container
 * whatever failurePolicy says: the run's deadline (lockTimeoutMs) must end
 * well before it. */
static void check_hook_timeout(struct checker *k, const char *dir, const char *name,
                               const json_t *timeout)
{
        json_int_t ms;

        if (!json_is_integer(timeout))
                return;
        ms = json_integer_value(timeout) * 1000;
        if (ms >= (json_int_t) k->config.lock_timeout_ms + HOOK_WORK_MARGIN_MS)
                return;
        add(k, "hooks.d", LEVEL_FAIL,
            "lower lockTimeoutMs, or raise the file's timeout: a runtime that kills the hook "
            "refuses the container even under failurePolicy: ignore",
            "%s/%s: timeout %" JSON_INTEGER_FORMAT " s leaves less than %u ms after "
            "lockTimeoutMs (%u ms)",
            dir, name, json_integer_value(timeout), HOOK_WORK_MARGIN_MS, k->config.lock_timeout_ms);
}

/* One oci-hooks(5) file: is it ours, and does its hook.path exist? */
static void check_hook_file(struct checker *k, int dir_fd, const char *dir, const char *name,
                            struct hooks_seen *seen)
{
        _cleanup_free_ char *text = NULL;
        json_auto_t *root = NULL;
        const char *path, *base;

        if (read_small_file_at(dir_fd, name, HOOK_FILE_MAX, &text) < 0)
                return;
        root = json_loads(text, 0, NULL);
        path = json_string_value(json_object_get(json_object_get(root, "hook"), "path"));
        base = path ? strrchr(path, '/') : NULL;
        if (!path || strcmp(base ? base + 1 : path, "resctrl-mon-hook") != 0)
                return; /* another tool's hook */

        seen->files++;
        note_stages(json_object_get(root, "stages"), seen);
        check_hook_timeout(k, dir, name, json_object_get(json_object_get(root, "hook"), "timeout"));
        if (access(path, X_OK) < 0)
                add(k, "hooks.d", LEVEL_FAIL,
                    "install the hook at that path, or correct hook.path in the file",
                    "%s/%s points at '%s', which %s: CRI-O and Podman skip such a hook", dir, name,
                    path, errno == ENOENT ? "does not exist" : "is not executable");
        else
                add(k, "hooks.d", LEVEL_OK, NULL, "%s/%s runs '%s'", dir, name, path);
}

static void check_hooks_dirs(struct checker *k)
{
        struct hooks_seen seen = {0};

        for (size_t i = 0; i < k->n_hooks_dirs; i++) {
                _cleanup_(closedirp) DIR *d = opendir(k->hooks_dirs[i]);
                struct dirent *de;
                size_t len;

                while (d && (de = readdir(d))) {
                        len = strlen(de->d_name);
                        if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
                                check_hook_file(k, dirfd(d), k->hooks_dirs[i], de->d_name, &seen);
                }
        }
        if (seen.files == 0)
                add(k, "hooks.d", LEVEL_WARN,
                    "cmake --install installs both files; containerd needs NRI's hook-injector "
                    "or a base_runtime_spec instead (see docs/operations.md)",
                    "no oci-hooks file for resctrl-mon-hook in %s%s%s", k->hooks_dirs[0],
                    k->n_hooks_dirs > 1 ? " or " : "", k->n_hooks_dirs > 1 ? k->hooks_dirs[1] : "");
        else if (!seen.create || !seen.poststop)
                add(k, "hooks.d", LEVEL_WARN, "register both stages, one file each",
                    "no hooks.d file registers %s: %s", !seen.create ? "createRuntime" : "poststop",
                    !seen.create ? "no pod gets a group" : "groups outlive their pods");
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

/* A UUID-named group is ours when it is named as the hook names groups and
 * the pod's state file lists it as made by the hook. */
static bool group_is_ours(int state_fd, const struct group_name *g)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        const struct group *rec;

        return state_fd >= 0 && strcmp(g->uid, g->mon) == 0 &&
               pod_state_load(state_fd, g->uid, &st, NULL) >= 0 &&
               (rec = pod_state_find_group(&st, g->ctrl)) && rec->owned;
}

static void check_other_managers(struct checker *k)
{
        _cleanup_close_ int state_fd = -EBADF;
        struct group_names l = {0};
        unsigned ours = 0, foreign = 0;
        char examples[256] = "";
        int r;

        if (statedir_open(k->config.state_dir, false, &state_fd) < 0)
                state_fd = -EBADF; /* every group is another's then: none is recorded */
        r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
        if (r >= 0) {
                r = rdt_groups_foreach(k->root_fd, list_pod_group, &l);
                rdt_unlock(k->root_fd);
        }
        for (size_t i = 0; r >= 0 && i < l.n; i++) {
                const struct group_name *g = &l.items[i];
                bool root = strcmp(g->ctrl, "/") == 0;

                /* A group the hook found and uses (owned: false) is another manager's. */
                if (group_is_ours(state_fd, g)) {
                        ours++;
                        continue;
                }
                if (++foreign <= 3)
                        list_append(examples, sizeof(examples), "%s%smon_groups/%s",
                                    root ? "" : g->ctrl, root ? "" : "/", g->mon);
        }
        free(l.items);
        k->oom |= l.oom;
        if (r < 0)
                add(k, "other-managers", LEVEL_FAIL, NULL, "cannot list the groups: %s",
                    strerror(-r));
        else if (foreign > 0)
                add(k, "other-managers", LEVEL_WARN,
                    "let one manager make pod groups: Kepler's active mode, nri-resctrl-mon and "
                    "goresctrl remove UUID-named groups they did not make",
                    "%u pod-UID-named groups are not this hook's (%s%s); %u are", foreign, examples,
                    foreign > 3 ? ", ..." : "", ours);
        else
                add(k, "other-managers", LEVEL_OK, NULL,
                    "every pod-UID-named group is this hook's (%u)", ours);
}

/* Messages quote paths and the config file: one line each, whatever they hold. */
struct coverage {
        int proc_fd;
        char boot_id[BOOT_ID_LEN + 1]; /* this boot's; "" when unknown */
        uint64_t pid_ns;               /* this process's; 0 when unknown */
        const struct cgroup_mounts *mounts;
        unsigned threads, in, elsewhere, pods_short, pods_unseen, waiting;
        uint64_t waited_most; /* seconds, the longest a live container has waited for an RMID */
        char examples[256], unseen[256], waited_most_by[POD_UID_LEN + NAME_MAX + 2];
};

/* The pod's live containers waiting for an RMID (gc brings them in). */
static void count_waiting(const struct pod_state *st, const char *uid, struct coverage *c)
{
        for (size_t i = 0; i < st->n_members; i++) {
                const struct member *m = &st->members[i];
                const char *why;
                uint64_t waited;

                if (!pod_member_is_waiting(m) || pod_member_is_live(c->proc_fd, m, &why) != 1)
                        continue;
                waited = pod_member_waited_sec(m);
                if (++c->waiting == 1 || waited > c->waited_most) {
                        c->waited_most = waited;
                        snprintf(c->waited_most_by, sizeof(c->waited_most_by), "%s/%s", uid, m->id);
                }
        }
}

/* Can the pod's recorded cgroup be seen from here? gc keeps the group of a
 * pod whose cgroup it cannot see, so someone must know. */
static void look_at_pod_cgroup(const struct pod_state *st, const char *uid, struct coverage *c)
{
        enum pod_cgroup state;

        if (!st->has_pod_cgroup ||
            (kubepods_recorded_cgroup(c->mounts, &st->pod_cgroup, &state) >= 0 &&
             state != POD_CGROUP_UNSEEN))
                return;
        if (++c->pods_unseen <= 3)
                list_append(c->unseen, sizeof(c->unseen), "%s", uid);
}

/* One pod's part of the node's coverage. */
static void cover_pod(struct checker *k, int state_fd, const char *uid, struct coverage *c)
{
        _cleanup_(pod_state_done) struct pod_state st = {0};
        struct pod_coverage cover;
        int r;

        /* State of an earlier boot names nothing that runs: gc removes it.
         * Containers left for gc and watch (intake.h) count as waiting. */
        r = pod_state_load(state_fd, uid, &st, NULL);
        if ((r >= 0 || r == -ENOENT) && intake_view(state_fd, uid, c->pid_ns, c->boot_id, &st) > 0)
                r = 0;
        if (r < 0 || pod_state_of_other_boot(&st, c->boot_id, c->pid_ns))
                return;
        look_at_pod_cgroup(&st, uid, c);
        count_waiting(&st, uid, c);
        pod_coverage(c->proc_fd, k->root_fd, c->mounts, uid, &st, &cover);
        c->threads += cover.threads;
        c->in += cover.in;
        c->elsewhere += cover.elsewhere;
        if (cover.in + cover.elsewhere >= cover.threads) /* gc has nothing to join */
                return;
        if (++c->pods_short <= 3)
                list_append(c->examples, sizeof(c->examples), "%s (%s/%s) %u of %u", uid,
                            st.namespace ? st.namespace : "-", st.pod_name ? st.pod_name : "-",
                            cover.in, cover.threads);
}

/* Are all threads of every monitored container in its pod's group, and can
 * every pod's recorded cgroup be seen? */
static void check_coverage(struct checker *k)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts mounts = CGROUP_MOUNTS_INIT;
        _cleanup_close_ int proc_fd = -EBADF, state_fd = -EBADF;
        _cleanup_free_ struct statedir_pod *pods = NULL;
        struct coverage c = {.mounts = &mounts};
        size_t n = 0;

        /* No state yet, or one said by the state-dir and proc checks. */
        if (statedir_open(k->config.state_dir, false, &state_fd) < 0 || proc_open(&proc_fd) < 0 ||
            statedir_scan(state_fd, &pods, &n) < 0)
                return;
        c.proc_fd = proc_fd;
        if (proc_boot_id(proc_fd, c.boot_id) < 0)
                c.boot_id[0] = '\0';
        if (proc_pid_ns(proc_fd, &c.pid_ns) < 0)
                c.pid_ns = 0;
        (void) cgroup_mounts_open(proc_fd, &mounts);
        for (size_t i = 0; i < n; i++) {
                if (pods[i].members || pods[i].intake)
                        cover_pod(k, state_fd, pods[i].uid, &c);
        }
        if (c.pods_short > 0)
                add(k, "coverage", LEVEL_WARN,
                    "run gc (resctrl-mon-hook gc): it joins every thread of a container's cgroup; "
                    "threads in another control group or another monitor's group stay out",
                    "%u of %u threads of monitored containers are in their pod's groups; %u pods "
                    "short: %s%s",
                    c.in, c.threads, c.pods_short, c.examples, c.pods_short > 3 ? ", ..." : "");
        else if (c.elsewhere > 0)
                add(k, "coverage", LEVEL_OK, NULL,
                    "every thread of monitored containers is in its pod's group (%u) but %u, "
                    "which another monitor's group or another control group holds",
                    c.in, c.elsewhere);
        else
                add(k, "coverage", LEVEL_OK, NULL,
                    "every thread of monitored containers is in its pod's group (%u)", c.threads);
        if (c.waiting > 0)
                add(k, "waiting", LEVEL_WARN,
                    "free RMIDs (check's rmids and other-managers) or monitor fewer pods; gc "
                    "brings "
                    "the oldest in at each pass that finds one free",
                    "%u containers run unmonitored waiting for an RMID, the longest %llu s (%s)",
                    c.waiting, (unsigned long long) c.waited_most, c.waited_most_by);
        else
                add(k, "waiting", LEVEL_OK, NULL, "no container waits for an RMID");
        if (c.pods_unseen > 0)
                add(k, "pod-cgroups", LEVEL_FAIL,
                    "run gc and check where the node's cgroup hierarchies are mounted from their "
                    "root, in the host's cgroup namespace; until then gc keeps these pods' groups",
                    "%u pods' recorded cgroups cannot be seen from here (gc logs which): %s%s",
                    c.pods_unseen, c.unseen, c.pods_unseen > 3 ? ", ..." : "");
}

/* What to do where gc cannot see the node's cgroups. */
#define NODE_CGROUPS_FIX                                                                           \
        "mount the node's /sys/fs/cgroup (read-only) at /sys/fs/cgroup, as "                       \
        "deploy/base/daemonset.yaml does; gc keeps the groups of pods whose cgroups it cannot see"

/* Is name a kubelet's top cgroup: kubepods, kubepods.slice, or one below a
 * --cgroup-root (kubelet-kubepods.slice)? */
static bool names_kubepods(const char *name)
{
        size_t n = strlen(name);

        return strcmp(name, "kubepods") == 0 || strcmp(name, "kubepods.slice") == 0 ||
               (n > 15 && strcmp(name + n - 15, "-kubepods.slice") == 0);
}

/* A kubelet's top cgroup at most two levels below dir_fd: its path into
 * ret ("/kubepods.slice", "/kubelet/kubepods"). */
static bool find_kubepods(int dir_fd, int levels, const char *above, char *ret, size_t size)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(dir_fd, ".", &d) < 0)
                return false;
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                char path[2 * NAME_MAX + 3];

                if (!name_is_valid(de->d_name) || de->d_type != DT_DIR)
                        continue;
                (void) snprintf(path, sizeof(path), "%s/%s", above, de->d_name);
                if (names_kubepods(de->d_name)) {
                        (void) snprintf(ret, size, "%s", path);
                        return true;
                }
                fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (levels > 1 && fd >= 0 && find_kubepods(fd, levels - 1, path, ret, size))
                        return true;
        }
        return false;
}

/* Can gc see kubelet's pod cgroups from here, in each hierarchy it records
 * containers in that is mounted (unified, pids): mounted from its root, or
 * at least with kubelet's tree in it, this process's cgroup namespace placed
 * in it, and read-only where it lies above that namespace (a container's
 * view of the node)? True when kubelet's tree is seen. */
static bool check_node_cgroups(struct checker *k)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        _cleanup_close_ int proc_fd = -EBADF;
        const struct cgroup_view *views[] = {&m.v2, &m.v1[0]};
        static const char *const names[] = {"unified", "pids"};
        char kubepods[2 * NAME_MAX + 3] = "", here[2 * NAME_MAX + 3], seen[64] = "";
        const char *kube_in = NULL;
        bool bad = false;

        if (proc_open(&proc_fd) < 0 || cgroup_mounts_open(proc_fd, &m) < 0) {
                add(k, "node-cgroups", LEVEL_FAIL, NULL, "cannot read /proc/self/mountinfo: %m");
                return false;
        }
        for (size_t i = 0; i < ELEMENTSOF(views); i++) {
                const struct cgroup_view *v = views[i];
                struct statvfs vfs;
                bool kube;

                if (v->fd < 0)
                        continue;
                list_append(seen, sizeof(seen), "%s", names[i]);
                if (!v->known) {
                        add(k, "node-cgroups", LEVEL_FAIL, NODE_CGROUPS_FIX,
                            "this process's cgroup is not found in the %s hierarchy's mount, %u "
                            "levels above its cgroup namespace: the cgroups of other namespaces "
                            "cannot be placed",
                            names[i], v->ups);
                        bad = true;
                        continue;
                }
                /* Above this process's own namespace, in a container: the
                 * node's tree, which gc only reads; writable, it hands the
                 * container every cgroup of the node. */
                if (v->ups > 0 && fstatvfs(v->fd, &vfs) == 0 && !(vfs.f_flag & ST_RDONLY)) {
                        add(k, "node-cgroups", LEVEL_FAIL,
                            "mount it read-only (readOnly: true in deploy/base/daemonset.yaml)",
                            "the node's %s hierarchy is mounted read-write here; gc needs it "
                            "read-only",
                            names[i]);
                        bad = true;
                }
                kube = find_kubepods(v->fd, 2, "", here, sizeof(here));
                if (kube && !kube_in) {
                        memcpy(kubepods, here, sizeof(kubepods));
                        kube_in = names[i];
                }
                if (!kube && !v->whole && !bad) {
                        add(k, "node-cgroups", LEVEL_FAIL, NODE_CGROUPS_FIX,
                            "the %s hierarchy is seen only from %s, this process's cgroup "
                            "namespace: kubelet's pod cgroups are not there",
                            names[i], v->ns_root);
                        bad = true;
                }
        }
        if (!seen[0])
                add(k, "node-cgroups", LEVEL_FAIL, NODE_CGROUPS_FIX,
                    "neither the unified nor the pids cgroup hierarchy is mounted here");
        else if (!bad)
                add(k, "node-cgroups", LEVEL_OK, NULL, "gc sees the %s hierarchies%s%s%s%s", seen,
                    kube_in ? "; kubelet's pod cgroups at " : "", kubepods, kube_in ? " of " : "",
                    kube_in ? kube_in : "");
        return kube_in != NULL;
}

/* Can adopt read the runtimes' records of running containers? Only a
 * runtime root that is there counts. Where kubelet's pods run (pods_run),
 * some root must hold a container's record: a DaemonSet's hostPath makes an
 * empty directory where the node keeps none, and its own container is one
 * of kubelet's pods. */
static void check_runtime_roots(struct checker *k, bool pods_run)
{
        const struct string_list *roots = &k->config.runtime_roots;
        char seen[512] = "", all[512] = "";
        bool bad = false;
        int records = 0, readable = 0;

        for (size_t i = 0; i < roots->n; i++) {
                _cleanup_close_ int fd = -EBADF;
                const char *root = roots->items[i];
                int r = runstate_open_root(root, &fd);

                list_append(all, sizeof(all), "%s", root);
                if (r == -ENOENT)
                        continue;
                bad |= r < 0;
                if (r == -EPERM)
                        add(k, "runtime-roots", LEVEL_FAIL,
                            "give it to root, writable by root alone",
                            "runtime root '%s' is not "
                            "root's own directory: adopt does not read it",
                            root);
                else if (r == -ELOOP || r == -ENOTDIR)
                        add(k, "runtime-roots", LEVEL_FAIL,
                            "name or mount the runtime's own directory (runtimeRoots)",
                            "runtime root '%s' is a symlink or not a directory: adopt does not "
                            "follow it",
                            root);
                else if (r < 0)
                        add(k, "runtime-roots", LEVEL_FAIL, NULL,
                            "cannot open runtime root '%s': %s", root, strerror(-r));
                else {
                        int with_bundle = 0, n = runstate_count(fd, &with_bundle);

                        if (n < 0) /* a root it cannot list holds none adopt can read */
                                n = with_bundle = 0;
                        records += n;
                        readable += with_bundle;
                        list_append(seen, sizeof(seen), "%s (%d containers, %d readable)", root, n,
                                    with_bundle);
                }
        }
        if (bad)
                return;
        if (pods_run && records == 0)
                add(k, "runtime-roots", LEVEL_FAIL,
                    "mount the runtimes' roots read-only, as deploy/base/daemonset.yaml does, or "
                    "name them in runtimeRoots",
                    "kubelet's pods run, but no runtime root here holds a container (%s): adopt "
                    "cannot see the containers that started before the hook",
                    seen[0] ? seen : all);
        else if (pods_run && readable == 0)
                add(k, "runtime-roots", LEVEL_FAIL,
                    "mount the runtimes' bundle directories read-only, as "
                    "deploy/base/daemonset.yaml does",
                    "no container record here is one adopt can read, with its bundle (%s): adopt "
                    "takes none of the containers that started before the hook",
                    seen);
        else if (seen[0])
                add(k, "runtime-roots", LEVEL_OK, NULL, "adopt reads %s", seen);
        else
                add(k, "runtime-roots", LEVEL_OK, NULL,
                    "no runtime root is here (%s), and no kubelet's pods run", all);
}

static void print_text(const struct checker *k)
{
        for (size_t i = 0; i < k->n; i++) {
                const struct result *res = &k->results[i];
                char safe[4 * 1024];

                printf("%-5s %-15s %s\n", level_name(res->level), res->name,
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

                if (json_array_append_new(checks,
                                          json_pack("{s:s, s:s, s:s, s:s?}", "check", res->name,
                                                    "result", level_name(res->level), "message",
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

/* 1 to run, 0 for --help, -EINVAL on misuse (logged). */
static int parse_check_args(struct checker *k, int argc, char **argv, bool *ret_json)
{
        static const struct option options[] = {
            {"json", no_argument, NULL, 'j'},
            {"hooks-dir", required_argument, NULL, 'd'},
            {"only", required_argument, NULL, 'o'},
            {"help", no_argument, NULL, 'h'},
            {0},
        };
        int c;

        optind = 0;
        while ((c = getopt_long(argc, argv, "+jd:o:h", options, NULL)) >= 0) {
                if (c == 'h') {
                        help();
                        return 0;
                }
                if (c == 'j')
                        *ret_json = true;
                else if (c == 'd' && k->n_hooks_dirs < HOOKS_DIRS_MAX)
                        k->hooks_dirs[k->n_hooks_dirs++] = optarg;
                else if (c == 'o')
                        k->only = optarg;
                else if (c == 'd')
                        return log_error_errno(-EINVAL, "check: more than %d --hooks-dir",
                                               HOOKS_DIRS_MAX);
                else
                        return command_bad_option(argv);
        }
        for (const char *item = k->only; item;
             item = strchr(item, ','), item = item ? item + 1 : NULL) {
                size_t n = strcspn(item, ",");
                bool known = false;

                for (size_t i = 0; i < ELEMENTSOF(row_names); i++)
                        known |= strlen(row_names[i]) == n && strncmp(item, row_names[i], n) == 0;
                if (!known) {
                        log_error("check --only: no check is named '%.*s'", (int) n, item);
                        return -EINVAL;
                }
        }
        if (optind != argc) {
                log_error("check takes no arguments but options (see --help)");
                return -EINVAL;
        }
        for (size_t i = 0; k->n_hooks_dirs == 0 && i < ELEMENTSOF(default_hooks_dirs); i++)
                k->hooks_dirs[i] = default_hooks_dirs[i];
        if (k->n_hooks_dirs == 0)
                k->n_hooks_dirs = ELEMENTSOF(default_hooks_dirs);
        return 1;
}

static void result_done(struct result *res)
{
        free(res->name);
        free(res->message);
        free(res->fix);
}

/* Only the rows --only names are printed and judged. */
static void drop_unwanted(struct checker *k)
{
        size_t kept = 0;

        for (size_t i = 0; i < k->n; i++) {
                if (wanted(k, k->results[i].name))
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
        config_done(&k->config);
}

int check_main(const struct command_ctx *ctx, int argc, char **argv)
{
        _cleanup_(checker_done) struct checker k = {.root_fd = -EBADF};
        bool json = false, failed = false, monitoring = false;
        int r;

        r = parse_check_args(&k, argc, argv, &json);
        if (r <= 0)
                return r < 0 ? COMMAND_USAGE : COMMAND_OK;
        if (config_init(&k.config) < 0) {
                log_error("out of memory");
                return COMMAND_FAILED;
        }

        /* The config and the mount always: the others need them. */
        check_config(&k, ctx);
        check_mount(&k);
        if (k.root_fd >= 0)
                monitoring = check_monitoring(&k);
        if (wanted(&k, "node-resctrl"))
                check_node_resctrl(&k);
        if (monitoring && wanted(&k, "rmids"))
                check_rmids(&k);
        if (monitoring && wanted(&k, "counters"))
                check_counters(&k);
        if (wanted(&k, "proc-resctrl"))
                check_proc(&k);
        if (wanted(&k, "state-dir"))
                check_state_dir(&k);
        if (wanted(&k, "state-fs"))
                check_state_fs(&k);
        if (wanted(&k, "hooks.d"))
                check_hooks_dirs(&k);
        if (monitoring && wanted(&k, "other-managers"))
                check_other_managers(&k);
        if (monitoring &&
            (wanted(&k, "coverage") || wanted(&k, "waiting") || wanted(&k, "pod-cgroups")))
                check_coverage(&k);
        if (wanted(&k, "node-cgroups") || wanted(&k, "runtime-roots")) {
                bool kubelet = check_node_cgroups(&k);

                if (wanted(&k, "runtime-roots"))
                        check_runtime_roots(&k, kubelet);
        }
        if (wanted(&k, "watch"))
                check_watch(&k);
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
