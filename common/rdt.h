/* SPDX-License-Identifier: Apache-2.0 */
/* resctrl operations, all relative to the resctrl root directory fd. Never log.
 *
 * A control group is named by its directory name, or "/" for the root (default)
 * group. A monitoring group is <ctrl>/mon_groups/<name>, mon_groups/<name> for
 * the root. Every path is walked one component at a time with openat(2) and
 * O_NOFOLLOW, so a planted symlink never leads outside the resctrl tree. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RDTGROUP_SUPER_MAGIC 0x7655821

/* "/" or a name that can be a control group: name_is_valid() and not one of
 * the root's own entries (info, mon_groups, mon_data). */
bool rdt_ctrl_group_is_valid(const char *ctrl);

/* Opens the resctrl root (O_RDONLY|O_DIRECTORY|O_CLOEXEC). With
 * require_resctrl_fs, refuses a directory whose statfs magic is not
 * RDTGROUP_SUPER_MAGIC with -ENOMEDIUM (not mounted; ENOTSUP would be
 * indistinguishable, it equals EOPNOTSUPP on Linux). Returns -EOPNOTSUPP when
 * the root has no mon_groups directory (no monitoring support). */
int rdt_open(const char *path, bool require_resctrl_fs, int *ret_root_fd);

/* The kernel's cooperative lock for multi-step changes (resctrl.rst, "Locking
 * between applications"): flock(LOCK_EX) on the root fd, retried with LOCK_NB
 * until timeout_ms has passed, then -ETIMEDOUT. Taken at once when it is
 * free; else through a turnstile, flock(LOCK_EX) on info/ held until the
 * root's lock is, so that readers that keep overlapping cannot starve a
 * writer. */
int rdt_lock(int root_fd, unsigned timeout_ms);
/* The same, shared (LOCK_SH), always through the turnstile: for a read that
 * must see no group change midway. Hold it briefly: a writer waits for it. */
int rdt_lock_shared(int root_fd, unsigned timeout_ms);
void rdt_unlock(int root_fd);
/* Does this process hold the lock exclusive (rdt_lock, not let go of since)?
 * For the assert()s of "Caller holds rdt_lock". */
bool rdt_lock_is_held(void);

/* The hold budget: no holder keeps the lock past RDT_HOLD_BUDGET_USEC or
 * RDT_HOLD_BUDGET_WRITES task ids written, whichever comes first. One with
 * more to do (a join of thousands of threads) lets go and takes it again,
 * behind whoever waits (rdt_lock_yield), so that a createRuntime waits for
 * one budget per holder ahead of it, never for a whole pass. A process holds
 * the lock once at most, on its one root fd: the hold is this process's. */
#define RDT_HOLD_BUDGET_USEC 20000
#define RDT_HOLD_BUDGET_WRITES 256
/* Has the hold taken now used up its budget? */
bool rdt_hold_is_spent(void);
/* Lets go of the lock (rdt_lock's, exclusive) and takes it again through
 * the turnstile, so that a writer or reader already waiting goes first.
 * 0, or -errno (-ETIMEDOUT past timeout_ms) with the lock not held. */
int rdt_lock_yield(int root_fd, unsigned timeout_ms);
/* Called at every release with how long the hold lasted, how many task ids
 * it wrote and whether it was shared: for the hook's debug log, which the
 * contention tests read. NULL: nobody is told. */
typedef void (*rdt_hold_observer)(int64_t usec, unsigned writes, bool shared);
void rdt_set_hold_observer(rdt_hold_observer fn);
/* For _cleanup_(rdt_unlockp) on an int that holds the root fd once its lock
 * is taken (negative before, or when taking it failed): the lock is let go
 * of on every way out of the scope, errno kept. */
void rdt_unlockp(const int *locked_root_fd);

/* The control group a task is in, from /proc/<pid>/cpu_resctrl_groups ("res:"
 * line): *ret is "/" or the group name (malloc'd). -ENOENT when the kernel has
 * no such file (no CONFIG_PROC_CPU_RESCTRL, or no resctrl at all) or the task
 * is gone; -ENODATA when the kernel says resctrl is not mounted ("res:" empty);
 * -EBADMSG when the content is malformed. proc_fd is an fd of /proc (tests
 * pass a fake tree). */
int rdt_task_ctrl_group(int proc_fd, pid_t pid, char **ret);

/* Both groups of thread tid from /proc/<tid>/cpu_resctrl_groups (every thread
 * has /proc/<tid>/): *ret_ctrl as rdt_task_ctrl_group gives it, *ret_mon the
 * monitoring group's name, NULL when the thread is in the control group's own
 * (the "mon:" line is empty); both malloc'd. Errors as rdt_task_ctrl_group. */
int rdt_task_mon_group(int proc_fd, pid_t tid, char **ret_ctrl, char **ret_mon);

/* mkdir <ctrl>/mon_groups/<name>, mode 0755. 1 when created, 0 when it already
 * existed, -errno otherwise (-ENOENT when the control group is missing; -ENOSPC
 * or -EBUSY when the kernel is out of RMIDs, with *reterr_status set to
 * info/last_cmd_status when reterr_status is not NULL). Caller holds rdt_lock. */
int rdt_mon_group_create(int root_fd, const char *ctrl, const char *name, char **reterr_status);

/* Moves every thread of process pid (each entry of /proc/<pid>/task, one id per
 * write(2), since kernels before 6.7 take one id per write) into the group's
 * tasks. A thread that exits meanwhile (ESRCH) is skipped; pid itself failing
 * is an error: -ESRCH (process gone), -EINVAL (the task is in another control
 * group: "Can't move task to different control group"), each with
 * *reterr_status. Caller holds rdt_lock. */
int rdt_mon_group_add_process(int root_fd, int proc_fd, const char *ctrl, const char *name,
                              pid_t pid, char **reterr_status);

/* The ids the group's tasks file lists, sorted (pid_list_parse). -ENOENT when
 * the group does not exist, -EFBIG past 1 MiB of ids. */
int rdt_mon_group_tasks(int root_fd, const char *ctrl, const char *name, pid_t **ret,
                        size_t *ret_n);

/* The ids listed by every monitoring group of control group ctrl but the one
 * named except (NULL for none), sorted, no id twice: the threads that other
 * monitors (pqos, another tool) placed, never to be taken from them. *ret
 * malloc'd (NULL when none). A group removed meanwhile is skipped. -ENOENT
 * when the control group does not exist, -EFBIG past 1 MiB of ids in a group. */
int rdt_ctrl_mon_tasks(int root_fd, const char *ctrl, const char *except, pid_t **ret,
                       size_t *ret_n);

/* Writes tid into the control group's own tasks file, which puts it in the
 * control group's default monitoring group: the undo of a write that moved
 * the wrong thread. -ESRCH when the thread is gone, -EINVAL when the kernel
 * refuses it, -ENOENT when the control group does not exist. Caller holds
 * rdt_lock. */
int rdt_ctrl_add_task(int root_fd, const char *ctrl, pid_t tid);

/* The group's tasks file, opened for rdt_tasks_write (O_WRONLY): one open
 * for every thread a pass writes. -ENOENT when the group does not exist. */
int rdt_mon_group_open_tasks(int root_fd, const char *ctrl, const char *name, int *ret_fd);

/* Writes task id into an open tasks file, one id per write(2) (kernels before
 * 6.7 take one). 0; -ESRCH when the task is gone; -EINVAL when the kernel
 * keeps it in another control group ("Can't move task to different control
 * group") or id is not > 0; -errno. Caller holds rdt_lock. */
int rdt_tasks_write(int tasks_fd, pid_t id);

/* 1 when the group's tasks file lists no running task, 0 when it lists some,
 * -errno (-ENOENT when the group does not exist). Zombies do not count: the
 * kernel lists an exited process until its parent reaps it, which a slow
 * reaper can delay past poststop. */
int rdt_mon_group_is_empty(int root_fd, int proc_fd, const char *ctrl, const char *name);

/* 1 when the group's tasks file lists pid, 0 when not, -errno (-ENOENT when
 * the group does not exist, -EFBIG past 1 MiB of ids). */
int rdt_mon_group_has_task(int root_fd, const char *ctrl, const char *name, pid_t pid);

/* rmdir of the group; a group that is already gone (ENOENT) counts as removed.
 * Note the kernel moves any remaining tasks to the parent: callers check
 * rdt_mon_group_is_empty first, under rdt_lock. */
int rdt_mon_group_remove(int root_fd, const char *ctrl, const char *name);

/* 1 when <ctrl>/mon_groups/<name> exists, 0 when not, -errno. */
int rdt_mon_group_exists(int root_fd, const char *ctrl, const char *name);

/* Opens <ctrl>/mon_groups/<name> (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC)
 * into *ret_fd; -ENOENT when it does not exist. */
int rdt_mon_group_open(int root_fd, const char *ctrl, const char *name, int *ret_fd);

/* Calls fn(ctrl, mon, userdata) for every group that holds an RMID besides the
 * root's own: each CTRL_MON group (mon NULL) and each MON group (ctrl "/" for
 * the root's mon_groups), whoever made them. Stops at fn's first negative
 * return and returns it; 0 or -errno otherwise. Read-only: take rdt_lock
 * (LOCK_SH) around it for a consistent count. */
typedef int (*rdt_group_fn)(const char *ctrl, const char *mon, void *userdata);
int rdt_groups_foreach(int root_fd, rdt_group_fn fn, void *userdata);

/* How many groups rdt_groups_foreach visits: the RMIDs in use besides the root's. */
int rdt_groups_count(int root_fd, unsigned *ret);

/* Reads info/<sub>/<file> (info/<file> when sub is NULL) without following
 * symlinks: *ret malloc'd. -ENOENT when there is no such file. */
int rdt_read_info_file(int root_fd, const char *sub, const char *file, char **ret);

/* Where the hardware limits monitoring groups. */
enum rmid_budget {
        RMID_BUDGET_AUTO,       /* per control group on Arm (MPAM), the node's elsewhere */
        RMID_BUDGET_NODE,       /* one RMID space for the node (x86 RDT, AMD PQoS) */
        RMID_BUDGET_CTRL_GROUP, /* a PMG space in each control group (Arm MPAM) */
};

/* How many monitoring groups the system can have in all: the smallest
 * num_rmids of info/L3_MON and info/PERF_PKG_MON (whichever exist), minus the
 * root's RMID 0. -ENOENT when neither exists. For log messages. */
int rdt_rmid_budget(int root_fd, unsigned *ret);

/* Where Arm MPAM limits them instead: each control group has PMGs of its
 * own, and num_rmids is their count times the PARTIDs' (num_closids); a
 * control group's own monitoring takes one PMG, so it can have
 * num_rmids / num_closids - 1 monitoring groups (num_closids the smallest
 * of info's resources). -ENOENT without info/L3_MON or a num_closids. */
int rdt_mon_groups_per_ctrl(int root_fd, unsigned *ret);

/* RMID_BUDGET_AUTO resolved for this machine: per control group on arm64,
 * where resctrl is MPAM; the node's elsewhere. */
enum rmid_budget rdt_budget_rule(enum rmid_budget configured);

/* A control group's monitoring groups (rdt_mon_groups_count). */
struct rdt_ctrl_usage {
        char name[NAME_MAX + 1]; /* "/" for the root */
        unsigned mon_groups;
        unsigned pod_groups; /* of those, the ones is_pod_group took for a pod's */
};

/* Every control group, the root first, with its monitoring groups, whoever
 * made them (*ret malloc'd); is_pod_group tells a pod's group by its name
 * (pod_uid_is_canonical, oci.h). Read-only: take rdt_lock (LOCK_SH) around
 * it. */
int rdt_mon_groups_count(int root_fd, bool (*is_pod_group)(const char *mon),
                         struct rdt_ctrl_usage **ret, size_t *ret_n);

/* A control group's use for one line, where each has per_ctrl monitoring
 * groups at most: "the root control group 3 in use (full: 2 pods' groups,
 * 1 other)", "gold 1 in use". Truncated to size. */
void rdt_ctrl_usage_format(const struct rdt_ctrl_usage *u, unsigned per_ctrl, char *buf,
                           size_t size);
