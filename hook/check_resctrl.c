/* SPDX-License-Identifier: Apache-2.0 */
/* check's rows of resctrl: its mount, its monitoring, here and as the
 * node's init sees it, the RMID budget, the bandwidth counters,
 * cpu_resctrl_groups (check_rows.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "abmc.h"
#include "cgroup.h"
#include "check_rows.h"
#include "fsutil.h"
#include "macro.h"
#include "oci.h"
#include "proc.h"
#include "rdt.h"

/* The mount (statfs magic) and mon_groups; leaves k->root_fd open when usable. */
void check_mount(struct checker *k)
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
                check_add(k, ROW_RESCTRL_MOUNT, LEVEL_FAIL, fix, "cannot open '%s': %s", path,
                          strerror(-r));
                return;
        }
        if (fstatfs(k->root_fd, &sfs) < 0 || sfs.f_type != RDTGROUP_SUPER_MAGIC) {
                if (k->config.require_resctrl_fs)
                        check_add(k, ROW_RESCTRL_MOUNT, LEVEL_FAIL, fix,
                                  "'%s' is not a resctrl mount", path);
                else
                        check_add(
                            k, ROW_RESCTRL_MOUNT, LEVEL_WARN,
                            "set requireResctrlFs: true on a real node",
                            "'%s' is not a resctrl mount; accepted because requireResctrlFs is "
                            "false",
                            path);
                return;
        }
        check_add(k, ROW_RESCTRL_MOUNT, LEVEL_OK, NULL, "resctrl is mounted at '%s'", path);
}

/* resctrl as the node's init sees it: pid 1's mounts, which a hostPID
 * container (the DaemonSet) reads without any capability. What tells "the
 * node has no resctrl" from "this process cannot see it" (its container's
 * manifest hides it): the hook, once registered, runs in the node's
 * namespaces, not in this process's. Only in the initial pid namespace is
 * pid 1 the node's init; elsewhere (no hostPID) it is the container's own,
 * and the node's resctrl is unknown: a warning, never a failure, so that
 * nothing this process alone sees passes for the node's condition. */
void check_node_resctrl(struct checker *k)
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
                check_add(k, ROW_NODE_RESCTRL, LEVEL_WARN,
                          "run in the host's pid namespace (hostPID)",
                          "pid 1 here is not the node's init (not the host's pid namespace); the "
                          "node's resctrl is unknown");
                return;
        }
        if (r >= 0)
                r = mountinfo_type_at(proc_fd, 1, path, &type);
        if (r < 0)
                /* Not the node's condition: unknown, not failed. */
                check_add(k, ROW_NODE_RESCTRL, LEVEL_WARN,
                          "run in the host's pid namespace (hostPID)",
                          "cannot read /proc/1/mountinfo: %s; the node's resctrl is unknown",
                          strerror(-r));
        else if (r == 0)
                check_add(k, ROW_NODE_RESCTRL, LEVEL_FAIL, fix, "the node has no mount at '%s'",
                          path);
        else if (strcmp(type, "resctrl") == 0)
                check_add(k, ROW_NODE_RESCTRL, LEVEL_OK, NULL,
                          "the node has resctrl mounted at '%s'", path);
        else if (k->config.require_resctrl_fs)
                check_add(k, ROW_NODE_RESCTRL, LEVEL_FAIL, fix,
                          "the node has %s, not resctrl, at '%s'", type, path);
        else
                check_add(
                    k, ROW_NODE_RESCTRL, LEVEL_WARN, "set requireResctrlFs: true on a real node",
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

/* Is there monitoring to look at further: k->monitoring. */
void check_monitoring(struct checker *k)
{
        _cleanup_free_ char *l3 = NULL, *pkg = NULL;
        bool groups;

        if (k->root_fd < 0)
                return; /* resctrl-mount says why */
        l3 = describe_mon(k->root_fd, "L3_MON");
        pkg = describe_mon(k->root_fd, "PERF_PKG_MON");
        groups = faccessat(k->root_fd, "mon_groups", F_OK, AT_SYMLINK_NOFOLLOW) == 0;

        if ((!l3 && !pkg) || !groups) {
                check_add(
                    k, ROW_MONITORING, LEVEL_FAIL,
                    "use a CPU and kernel with RDT monitoring (cqm_* in /proc/cpuinfo, Intel AET "
                    "since 7.0) and no rdt= option disabling it",
                    "no monitoring at '%s': %s", k->config.resctrl_path,
                    !groups ? "no mon_groups directory" : "no info/L3_MON or info/PERF_PKG_MON");
                return;
        }
        check_add(k, ROW_MONITORING, LEVEL_OK, NULL, "%s%s%s", l3 ? l3 : "", l3 && pkg ? ", " : "",
                  pkg ? pkg : "");
        k->monitoring = true;
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
                check_add(k, ROW_RMIDS, LEVEL_FAIL, NULL,
                          "cannot read num_rmids and num_closids: %s", strerror(-r));
                return;
        }
        {
                _cleanup_(rdt_unlockp) int locked = -EBADF;

                r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
                if (r >= 0) {
                        locked = k->root_fd;
                        r = rdt_mon_groups_count(k->root_fd, pod_uid_is_canonical, &use, &n);
                }
        }
        if (r < 0) {
                check_add(k, ROW_RMIDS, LEVEL_FAIL, NULL, "cannot count the groups: %s",
                          strerror(-r));
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
        check_add(
            k, ROW_RMIDS, full ? LEVEL_WARN : LEVEL_OK,
            full ? "pods of a full control group (the root control group: every pod of the "
                   "default class) start unmonitored and wait for a group there to go: monitor "
                   "fewer of them, or remove groups there that are not needed"
                 : NULL,
            "%u monitoring groups in each control group at most (per control group, as on Arm "
            "MPAM: num_rmids / num_closids, less the control group's own); %s",
            budget, list);
}

void check_rmids(struct checker *k)
{
        unsigned budget, used = 0;
        int r;

        if (rdt_budget_rule(k->config.rmid_budget) == RMID_BUDGET_CTRL_GROUP) {
                check_rmids_per_ctrl(k);
                return;
        }
        r = rdt_rmid_budget(k->root_fd, &budget);
        if (r < 0) {
                check_add(k, ROW_RMIDS, LEVEL_FAIL, NULL, "cannot read num_rmids: %s",
                          strerror(-r));
                return;
        }
        {
                _cleanup_(rdt_unlockp) int locked = -EBADF;

                r = rdt_lock_shared(k->root_fd, k->config.lock_timeout_ms);
                if (r >= 0) {
                        locked = k->root_fd;
                        r = rdt_groups_count(k->root_fd, &used);
                }
        }
        if (r < 0) {
                check_add(k, ROW_RMIDS, LEVEL_FAIL, NULL, "cannot count the groups: %s",
                          strerror(-r));
                return;
        }
        check_add(
            k, ROW_RMIDS, used >= budget ? LEVEL_WARN : LEVEL_OK,
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
void check_counters(struct checker *k)
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
                check_add(
                    k, ROW_COUNTERS, LEVEL_WARN, "report it: the hook leaves the counters alone",
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
        check_add(
            k, ROW_COUNTERS, none_free && st.starving > 0 ? LEVEL_WARN : LEVEL_OK,
            "fewer bandwidth events per group (mbmEvents: [mbm_total_bytes]) or fewer monitored "
            "pods; gc hands counters to waiting groups as they free up",
            "mbm_event mode (bandwidth needs a counter per group): %s; %u of %u monitoring groups "
            "lack some of mbmEvents",
            budget, st.starving, st.groups);
}

void check_proc(struct checker *k)
{
        _cleanup_close_ int proc_fd = -EBADF;
        _cleanup_free_ char *ctrl = NULL;
        int r;

        r = proc_open(&proc_fd);
        if (r >= 0)
                r = rdt_task_ctrl_group(proc_fd, getpid(), &ctrl);
        if (r >= 0)
                check_add(k, ROW_PROC_RESCTRL, LEVEL_OK, NULL,
                          "/proc/<pid>/cpu_resctrl_groups works (this process is in %s)", ctrl);
        else
                check_add(
                    k, ROW_PROC_RESCTRL, LEVEL_WARN,
                    "fine when runtimes set linux.intelRdt.closID for every container placed in "
                    "a control group; otherwise use a kernel with CONFIG_PROC_CPU_RESCTRL",
                    "/proc/<pid>/cpu_resctrl_groups %s: the hook takes the control group from "
                    "config.json's linux.intelRdt.closID",
                    r == -ENODATA ? "says resctrl is not mounted" : "is missing");
}
