/* SPDX-License-Identifier: Apache-2.0 */
/* The hook's YAML configuration (libyaml), every key optional. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "rdt.h"

enum failure_policy {
        FAILURE_POLICY_IGNORE, /* log and exit 0: monitoring never blocks a pod */
        FAILURE_POLICY_FAIL, /* exit non-zero at createRuntime: the runtime refuses the container */
};

enum runtime_monitoring {
        RUNTIME_MONITORING_SKIP, /* linux.intelRdt.enableMonitoring set: leave it to the runtime */
        RUNTIME_MONITORING_OVERRIDE, /* move it into the pod group anyway */
};

struct string_list {
        char **items;
        size_t n;
};

struct string_map {
        char **keys;
        char **values;
        size_t n;
};

struct config {
        char *resctrl_path;
        char *state_dir;
        bool require_resctrl_fs;
        struct string_list namespaces;
        struct string_list exclude_namespaces;
        struct string_map label_selector;
        struct string_map annotation_selector;
        struct string_list runtime_roots; /* runc's and crun's --root dirs, for adopt */
        enum failure_policy failure_policy;
        enum runtime_monitoring runtime_monitoring;
        unsigned lock_timeout_ms;
        unsigned remove_delay_sec;     /* keep an emptied group this long for the pod's next one */
        unsigned empty_pod_linger_sec; /* ... and while kubelet's pod cgroup, empty, stays */
        unsigned final_counters_sec; /* keep a removed group's last counts this long (finished.h) */
        unsigned mbm_events; /* with ABMC: the bandwidth events a pod's group keeps counters for */
        enum rmid_budget rmid_budget;
        int log_level; /* syslog priority: LOG_ERR, LOG_WARNING, LOG_INFO or LOG_DEBUG */
        bool log_syslog;
        bool log_stderr;
};

#define CONFIG_DEFAULT_RESCTRL_PATH "/sys/fs/resctrl"
#define CONFIG_DEFAULT_STATE_DIR "/run/resctrl-mon-hook"
#define CONFIG_DEFAULT_LOCK_TIMEOUT_MS 2000u
/* Twice kubelet's longest CrashLoopBackOff (5 min) between a container's restarts. */
#define CONFIG_DEFAULT_EMPTY_POD_LINGER_SEC 600u
/* Long enough for any scrape interval, and for a missed scrape or two. */
#define CONFIG_DEFAULT_FINAL_COUNTERS_SEC 3600u

/* Fills *c with the built-in defaults (documented in config/config.yaml). */
int config_init(struct config *c);
void config_done(struct config *c);

/* What a config file held that the hook could not use. The policy, so that
 * a ConfigMap rolled out before its binary, or a typo, never stops cleanup:
 *  - an unknown key (a newer binary's, or a typo) is skipped;
 *  - a key whose value is wrong (type, range, a second copy) keeps the value
 *    it had, the built-in default;
 *  - a syntax error ends the reading: the keys before it are used, the rest
 *    keep their defaults; the same for a file that is no mapping at all.
 * Everything else in the file is used. A config is incomplete when what it
 * says is not fully known: a syntax error, a file that cannot be read, or a
 * bad resctrlPath or stateDir (where the hook writes). Then createRuntime
 * makes nothing (a group made where the operator does not look would leak),
 * while poststop and gc go on with what was read. */
enum config_problem_kind {
        CONFIG_PROBLEM_UNKNOWN_KEY,
        CONFIG_PROBLEM_BAD_VALUE,
        CONFIG_PROBLEM_INCOMPLETE,
};

struct config_problem {
        enum config_problem_kind kind;
        char *text; /* "FILE:LINE: key 'KEY': what is wrong", as the file has it */
};

struct config_problems {
        struct config_problem *items;
        size_t n;
};

/* Appends one problem (l may be NULL: nothing is kept). 0 or -ENOMEM. */
int config_problems_add(struct config_problems *l, enum config_problem_kind kind, const char *fmt,
                        ...) __attribute__((format(printf, 3, 4)));
bool config_problems_have(const struct config_problems *l, enum config_problem_kind kind);
void config_problems_done(struct config_problems *l);

/* Loads a YAML file over the values already in *c, as the policy above says,
 * appending what it could not use to *problems (may be NULL). 0 when the file
 * was read, problems or not; -ENOENT if it does not exist; other -errno if it
 * cannot be read (or is over 1 MiB), *c untouched. Aliases, anchors and tags
 * are refused (no alias bombs, no retyped values). */
int config_load(struct config *c, const char *path, struct config_problems *problems);

/* Same, from memory; name is used in the problems' text. */
int config_parse(struct config *c, const char *yaml, size_t len, const char *name,
                 struct config_problems *problems);

/* "err"/"error", "warn"/"warning", "info", "debug" to a syslog priority; -EINVAL otherwise. */
int log_level_from_string(const char *s);
