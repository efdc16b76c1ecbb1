/* SPDX-License-Identifier: Apache-2.0 */
/* Per-pod state in stateDir: <uid>.members, the pod's refcount file, written
 * atomically (temp file, fsync, rename, fsync of the directory) so that a
 * SIGKILL at any instruction leaves either the old or the new file. Callers
 * hold the pod lock (<uid>.lock) around load, change and save.
 *
 * The file is JSON:
 * {"version":1,"uid":"...","namespace":"...","pod":"...","pid_ns":4026531836,
 *  "groups":[{"ctrl":"/","owned":true,"emptied_at":1234,
 *             "baseline":{"mon_L3_00/mbm_total_bytes":"1234"}}],
 *  "members":[{"id":"...","ctrl":"/","pid":123,"start_time":456,
 *              "monitored":true,"reason":null}]}
 * From 0.3 on, a member records "cgroup":{"hierarchy":"unified","path":"/..."}
 * (the cgroup its runtime made for it, read at createRuntime; "hierarchy"
 * is "unified" or the v1 controller, "pids", "cpu" or "memory"), and the
 * pod "pod_cgroup": the same object for kubelet's cgroup of the pod (the
 * nearest above its containers' that names the pod). Absent (or null): not
 * recorded, by an older version or for a container not below such a cgroup.
 * From 0.3 on, a group records "created_ms": when the hook made or adopted
 * it, in Unix milliseconds (for its final counters, finished.h, which it
 * tells apart by it). 0.2 drops it
 * when it saves the file: the group's creation is unknown then.
 * From 0.3 on, the pod records "boot_id", the boot its file was last
 * written in (proc_boot_id): state of an earlier boot (stateDir not on
 * tmpfs) names processes and groups that are gone. Absent: not recorded.
 * "pid_ns", "emptied_at", "created_ms", "baseline", "cgroup", "pod_cgroup" and "boot_id" are
 * optional. A group is listed from just before the hook mkdirs it until it is removed, so a group
 * in resctrl named by a pod UID but absent from every state file was never the hook's. "baseline"
 * (omitted when empty) holds the cumulative counters of the group as they read when the hook
 * started using it, keyed
 * "<mon_data domain>/<event>", valued the kernel's text ("1234",
 * "1.500000"): a reused RMID can carry counts of its previous group.
 * From 0.3 on, "baseline_pending" (omitted when empty) lists the keys of
 * the cumulative counters that were not readable then (Unavailable: AET's
 * packages where the RMID has no data yet; Error; a text that does not
 * parse): the first value one of them reads under the pod lock becomes its
 * baseline, and its key leaves the list. 0.2 drops the list when it saves:
 * those counters then stay without a baseline, as they were before.
 *
 * Other versions of the hook read the same files (a rolling upgrade, a
 * rollback): a key this binary does not know is ignored, and a save keeps
 * only the keys it knows. So a newer version may add keys but never change
 * what the known ones mean: read alone, they must still lead an older binary
 * to do what is safe. "version" changes only for a format that is not. */
#pragma once

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "counters.h"
#include "proc.h"

#define STATE_VERSION 1

struct member {
        char *id;                 /* container id */
        char *ctrl;               /* control group it runs in ("/" = root) */
        int pid;                  /* init pid in the hook's pid namespace */
        uint64_t start_time;      /* /proc/<pid>/stat starttime, against pid reuse */
        bool monitored;           /* false: recorded but not in the group */
        char *reason;             /* why not monitored ("out of RMIDs", ...); NULL when monitored */
        bool has_cgroup;          /* cgroup was recorded at createRuntime */
        struct cgroup_ref cgroup; /* the cgroup its runtime made for it */
};

struct baseline {
        char *key; /* "<domain>/<event>": "mon_L3_00/mbm_total_bytes" */
        struct counter_value value;
};

/* At most this many baseline entries per group (a group has a few dozen counters). */
#define STATE_BASELINE_MAX COUNTERS_MAX

struct group {
        char *ctrl;          /* control group; the monitoring group is <ctrl>/mon_groups/<uid> */
        bool owned;          /* the hook created it; false when it found one it did not make */
        bool emptied;        /* its last member left and it lingers (removeDelaySeconds) */
        uint64_t emptied_at; /* when, in CLOCK_BOOTTIME seconds; meaningful iff emptied */
        int64_t created_ms;  /* when the hook made or adopted it, Unix ms; 0: not recorded */
        struct baseline *baseline; /* counters when the hook started using it */
        size_t n_baseline;
        char **pending; /* keys of counters not readable then: their first value is theirs */
        size_t n_pending;
};

struct pod_state {
        char *namespace; /* may be NULL */
        char *pod_name;  /* may be NULL */
        uint64_t pid_ns; /* inode of the pid namespace the pids are in; 0: not recorded */
        char boot_id[BOOT_ID_LEN + 1]; /* the boot it was written in; "": not recorded */
        bool has_pod_cgroup;           /* pod_cgroup was recorded at createRuntime */
        struct cgroup_ref pod_cgroup;  /* kubelet's cgroup of the pod */
        struct member *members;
        size_t n_members;
        struct group *groups;
        size_t n_groups;
};

/* Loads <uid>.members. 0 on success; -ENOENT when the pod has no state;
 * -EBADMSG when the file is not valid state (reason in *reterr when non-NULL).
 * Readers without the pod lock (status, check) may call it too: it never
 * touches the temp file, and save replaces the file by rename. */
int pod_state_load(int dir_fd, const char *uid, struct pod_state *ret, char **reterr);

/* Removes <uid>.members.tmp, the leftover of a save killed before its rename.
 * 1 when there was one, 0 when not, -errno. Caller holds the pod lock: the
 * temp file of a live save is that save's own. */
int pod_state_remove_temp(int dir_fd, const char *uid);

/* Writes <uid>.members atomically. */
int pod_state_save(int dir_fd, const char *uid, const struct pod_state *s);

/* Removes <uid>.members (ENOENT counts as done). */
int pod_state_remove(int dir_fd, const char *uid);

void pod_state_done(struct pod_state *s);

/* Lookups return NULL when absent. Pointers stay valid until the next add/drop. */
struct member *pod_state_find_member(struct pod_state *s, const char *id);
struct group *pod_state_find_group(struct pod_state *s, const char *ctrl);

/* Adds copies of the strings; 0 or -ENOMEM. reason may be NULL. */
int pod_state_add_member(struct pod_state *s, const char *id, const char *ctrl, int pid,
                         uint64_t start_time, bool monitored, const char *reason);
/* Adds a copy of member m, recorded cgroup included. 0 or -ENOMEM. */
int pod_state_copy_member(struct pod_state *s, const struct member *m);
int pod_state_add_group(struct pod_state *s, const char *ctrl, bool owned);

/* Drops and frees the entry; a no-op when absent. */
void pod_state_drop_member(struct pod_state *s, const char *id);
void pod_state_drop_group(struct pod_state *s, const char *ctrl);

/* Sets (replaces) the baseline of "<domain>/<event>" in g. 0, -EINVAL for a
 * key that is not two valid names joined by '/' with the domain starting
 * "mon_", -E2BIG past STATE_BASELINE_MAX entries, -ENOMEM. */
int pod_state_group_set_baseline(struct group *g, const char *key, const struct counter_value *v);
/* Forgets every baseline of g, and every key pending one (its group was
 * re-created: a new RMID). */
void pod_state_group_clear_baseline(struct group *g);
/* Notes that key's counter was not readable when g's baseline was taken:
 * its first readable value is to become its baseline. A key with a
 * baseline, or pending already, is left as it is. 0, -EINVAL (a key
 * pod_state_group_set_baseline refuses), -E2BIG, -ENOMEM. Setting key's
 * baseline takes it off the list. */
int pod_state_group_add_pending(struct group *g, const char *key);
/* NULL when g has no baseline for key. */
const struct counter_value *pod_state_group_baseline(const struct group *g, const char *key);
/* g's baseline as the member file holds it: {"<domain>/<event>": "<the
 * kernel's text>"}, exact whatever the scale; NULL on ENOMEM. */
json_t *pod_state_baseline_to_json(const struct group *g);
/* Adds such an object's entries to g's baseline. 0; -EBADMSG with *reterr
 * (when non-NULL) naming what is wrong, after "<what>: "; -ENOMEM. */
int pod_state_baseline_from_json(json_t *o, const char *what, struct group *g, char **reterr);

/* Do s's pids mean anything in pid namespace pid_ns (proc_pid_ns; 0 when
 * it cannot be read)? Yes where s names none (written before pid_ns was
 * recorded) or the same one; no where they differ, and where ours is
 * unknown: a pid of an unknown namespace is never acted on. */
bool pod_state_pids_are_ours(const struct pod_state *s, uint64_t pid_ns);

/* Was s written in another boot than boot_id ("": unknown)? Its processes
 * and groups are gone. Only where both are known and its pids are the
 * reader's (pod_state_pids_are_ours): a reader in a container
 * whose /proc shows a boot of its own (gVisor) must not take the host's
 * state for an earlier boot's. */
bool pod_state_of_other_boot(const struct pod_state *s, const char *boot_id, uint64_t pid_ns);

/* Sets namespace and pod name (copies; NULL allowed). 0 or -ENOMEM. */
int pod_state_set_pod(struct pod_state *s, const char *namespace, const char *pod_name);

/* Serialise to / parse from a NUL-terminated JSON text (*ret malloc'd). The
 * parser validates every field (names, ctrl groups, pid range) as load does;
 * exposed for tests and the fuzzer. */
int pod_state_format(const struct pod_state *s, const char *uid, char **ret);
int pod_state_parse(const char *text, size_t len, const char *uid, struct pod_state *ret,
                    char **reterr);
