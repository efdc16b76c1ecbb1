/* SPDX-License-Identifier: Apache-2.0 */
/* The state of an emulated resctrl filesystem: groups, CLOSIDs, RMIDs (with
 * limbo), the tracked tasks and their counters, and info/last_cmd_status.
 * No FUSE in here; the caller serializes every call with one lock.
 *
 * Functions that stand for a kernel command return 0 (or a byte count) or
 * -errno with the kernel's errno, and leave the kernel's text in the status
 * buffer exactly where the kernel would. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MODEL_STATUS_MAX 512
/* Bits after the binary point of the PERF_PKG energy events (intel_aet.c). */
#define MODEL_FIXED_POINT_BITS 18

struct model_config {
        unsigned num_rmids;
        unsigned num_closids;
        unsigned l3_domains;
        unsigned perf_pkg_domains;
        unsigned limbo_ms;
        bool debug;            /* the debug mount option: mon_hw_id and ctrl_hw_id files */
        unsigned mbm_counters; /* ABMC: assignable counters per L3 domain; 0: none (v6.17-) */
        unsigned mon_groups_per_ctrl; /* Arm MPAM's PMGs: per CTRL_MON group; 0: any */
        unsigned snc_nodes;           /* SNC: mon_sub_L3_* nodes per L3 domain; 0: no SNC */
        bool perf_pkg_by_cpu;         /* AET: a package has data for an RMID once it ran there */
        bool track_forks;             /* new tasks start in their creator's group (forks.h) */
};

struct task;

enum group_type {
        GROUP_CTRL,
        GROUP_MON,
};

enum model_event {
        EVENT_LLC_OCCUPANCY,
        EVENT_MBM_TOTAL_BYTES,
        EVENT_MBM_LOCAL_BYTES,
        EVENT_CORE_ENERGY,
        EVENT_ACTIVITY,
};

struct group {
        uint64_t id; /* never reused: names an open file's group across rmdir */
        enum group_type type;
        char *name;           /* "" for the root */
        struct group *parent; /* a MON group's CTRL_MON group, else NULL */
        struct group *next;   /* all groups, the root first */
        struct group *prev;
        struct group *same_name; /* model.c's indexes */
        struct group *same_id;
        mode_t mode;
        uid_t uid;
        gid_t gid;
        unsigned closid;
        unsigned rmid;
        struct task *tasks; /* the tracked tasks on this RMID, in joining order */
        struct task *last_task;
        unsigned live_tasks; /* how many */
        uint64_t task_usec;  /* integral of live_tasks over time: drives the counters */
        int64_t last_usec;
        /* ABMC: per assignable event and L3 domain ([event * l3_domains + dom]),
         * whether the group holds a counter, and the RMID's count when it got it. */
        bool *assigned;
        uint64_t *assigned_at;
};

/* The events a counter can be assigned to, in mbm_L3_assignments' order. */
enum model_mbm_event {
        MBM_TOTAL,
        MBM_LOCAL,
        MBM_EVENTS,
};

struct model;

int model_new(const struct model_config *cfg, struct model **ret);
void model_free(struct model *m);

const struct model_config *model_config(const struct model *m);
struct group *model_root(struct model *m);
struct group *model_groups(struct model *m);
struct group *model_group_by_id(struct model *m, uint64_t id);
/* A CTRL_MON group by name (the root is not found by name), or a MON group of ctrl. */
struct group *model_find_ctrl(struct model *m, const char *name);
struct group *model_find_mon(struct model *m, const struct group *ctrl, const char *name);

/* Drops the tracked tasks whose thread is gone: by a look in /proc at each,
 * unless exits are reported (then at the exited ones, and at all only after
 * lost events). Call before reading counters or changing membership. */
void model_refresh(struct model *m);

/* Thread tid exited (do_exit()): it leaves its group when it is reaped, as a
 * zombie is listed until then. */
void model_task_exited(struct model *m, pid_t tid);
/* Whether every exit is reported through model_task_exited() from now on. */
void model_exits_reported(struct model *m, bool reported);
/* Some fork or exit reports were lost: the next refresh looks at every task. */
void model_task_events_lost(struct model *m);

const char *model_status(const struct model *m);
void model_status_clear(struct model *m);
void model_status_printf(struct model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* mkdir in the root: a CTRL_MON group. Clears the status first. */
int model_mkdir_ctrl(struct model *m, const char *name, mode_t mode, uid_t uid, gid_t gid,
                     struct group **ret);
/* mkdir in ctrl's mon_groups: a MON group. Clears the status first. */
int model_mkdir_mon(struct model *m, struct group *ctrl, const char *name, mode_t mode, uid_t uid,
                    gid_t gid, struct group **ret);
/* rmdir of a group other than the root: tasks move to the parent, RMIDs and
 * the CLOSID are freed (RMIDs through limbo). */
void model_rmdir(struct model *m, struct group *g);
/* rename(2) of MON group g to new_ctrl/mon_groups/new_name (rdtgroup_rename()). */
int model_rename_mon(struct model *m, struct group *g, struct group *new_ctrl,
                     const char *new_name);

/* One write(2) of buf to g's tasks (the caller enforces kernfs' 4096-byte
 * limit). Returns len or -errno. caller_tid stands for "0". */
ssize_t model_tasks_write(struct model *m, struct group *g, const char *buf, size_t len,
                          pid_t caller_tid);
/* g's tasks file content (malloc'd): after dropping its tasks that are gone. */
int model_tasks_read(struct model *m, struct group *g, char **ret);

/* The kernel created thread tid of process tgid (copy_process()): it starts
 * in the group of the thread that created it, which copy_process() copies
 * CLOSID and RMID from. creator is the thread that forked a new process
 * (tid == tgid); a new thread's creator is not known from the outside, so
 * a tracked thread of its process stands in, the leader first. A thread that
 * a tasks write has placed already, or that started before its creator
 * joined its group, is left as it is. */
void model_task_created(struct model *m, pid_t creator, pid_t tid, pid_t tgid);

/* An event counter of g: its own RMID, plus its MON groups' for a CTRL_MON
 * group. Fixed-point events are raw values with MODEL_FIXED_POINT_BITS. */
uint64_t model_event_value(struct model *m, struct group *g, enum model_event ev);

/* Event ev of g on PERF_PKG package pkg. With cfg.perf_pkg_by_cpu, -ENODATA
 * ("Unavailable", intel_aet.c) while neither g's RMID nor, for a CTRL_MON
 * group, one of its MON groups' has run on a CPU of pkg (CPU c is in package
 * c mod perf_pkg_domains); else model_event_value(). */
int model_pkg_event_value(struct model *m, struct group *g, enum model_event ev, unsigned pkg,
                          uint64_t *ret);

/* ABMC ("mbm_event" mode, v6.18+), when cfg.mbm_counters > 0. A group gets a
 * counter per event and domain at mkdir while mbm_assign_on_mkdir is 1, each
 * event stopping at the first domain with none left (its message in the
 * status, the mkdir still succeeding); rmdir frees them. The root holds its
 * own. An event without a counter reads "Unassigned"; one assigned counts
 * from zero. */
bool model_abmc(const struct model *m);
unsigned model_mbm_available(const struct model *m, unsigned dom);
bool model_mbm_on_mkdir(const struct model *m);
/* "0" or "1" (a trailing newline allowed); -EINVAL otherwise. */
int model_mbm_on_mkdir_set(struct model *m, const char *buf);
/* mbm_L3_assignments: "mbm_total_bytes:0=e;1=_\n..." (malloc'd). */
int model_assignments_read(struct model *m, const struct group *g, char **ret);
/* One write of "<event>:<domain>=<e|_>[;<domain>=<e|_>...]", '*' for every
 * domain, a trailing newline allowed. len, or -EINVAL (bad text), -ENOSPC (no
 * counter left in a domain: the ones before it are assigned), with the
 * kernel's status. */
ssize_t model_assignments_write(struct model *m, struct group *g, const char *buf, size_t len);
/* Event ev of g in L3 domain dom as counted by its counters: -ENOENT when no
 * counter is assigned (a CTRL_MON group: neither to it nor to any of its MON
 * groups). Without ABMC: model_event_value(). */
int model_mbm_value(struct model *m, struct group *g, enum model_mbm_event ev, unsigned dom,
                    uint64_t *ret);

int model_max_threshold_set(struct model *m, const char *buf);
unsigned model_max_threshold(const struct model *m);

/* print_event_value() of fs/resctrl/ctrlmondata.c: "<int>.<frac>\n" with
 * ceil(bits * log10(2)) zero-padded decimals, rounded to nearest. bits <= 27. */
int model_format_fixed_point(uint64_t raw, unsigned bits, char *buf, size_t size);
