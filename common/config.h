/* SPDX-License-Identifier: Apache-2.0 */
/* The hook's YAML configuration (libyaml), every key optional. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

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
        enum failure_policy failure_policy;
        enum runtime_monitoring runtime_monitoring;
        unsigned lock_timeout_ms;
        unsigned remove_delay_sec; /* keep an emptied group this long for the pod's next one */
        int log_level; /* syslog priority: LOG_ERR, LOG_WARNING, LOG_INFO or LOG_DEBUG */
        bool log_syslog;
        bool log_stderr;
};

#define CONFIG_DEFAULT_RESCTRL_PATH "/sys/fs/resctrl"
#define CONFIG_DEFAULT_STATE_DIR "/run/resctrl-mon-hook"
#define CONFIG_DEFAULT_LOCK_TIMEOUT_MS 2000u

/* Fills *c with the built-in defaults (documented in config/config.yaml). */
int config_init(struct config *c);
void config_done(struct config *c);

/* Loads a YAML file over the values already in *c. 0 on success; -ENOENT if the
 * file does not exist; other -errno if it cannot be read (or is over 1 MiB);
 * -EINVAL for malformed YAML, unknown keys or wrong types, with *reterr set to
 * one malloc'd line "FILE:LINE: key 'KEY': what is wrong". Aliases are refused
 * (no alias bombs). On failure *c keeps its defaults. */
int config_load(struct config *c, const char *path, char **reterr);

/* Same, from memory; name is used in error messages. */
int config_parse(struct config *c, const char *yaml, size_t len, const char *name, char **reterr);

/* "err"/"error", "warn"/"warning", "info", "debug" to a syslog priority; -EINVAL otherwise. */
int log_level_from_string(const char *s);
