/* SPDX-License-Identifier: Apache-2.0 */
/* check's rows, shared by its files: check.c (the table of rows, the
 * command, the rows that read the readers' model: other-managers, coverage,
 * waiting, pod-cgroups, watch), check_resctrl.c (resctrl, here and as the
 * node's init sees it) and check_node.c (stateDir, hooks.d, cgroups and the
 * runtimes' roots as this process sees them). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "command.h"
#include "config.h"
#include "node_view.h"

/* check's rows, in the order they run and print. */
enum check_row {
        ROW_CONFIG,
        ROW_RESCTRL_MOUNT,
        ROW_MONITORING,
        ROW_NODE_RESCTRL,
        ROW_RMIDS,
        ROW_COUNTERS,
        ROW_PROC_RESCTRL,
        ROW_STATE_DIR,
        ROW_STATE_FS,
        ROW_HOOKS_D,
        ROW_OTHER_MANAGERS,
        ROW_COVERAGE,
        ROW_WAITING,
        ROW_POD_CGROUPS,
        ROW_NODE_CGROUPS,
        ROW_RUNTIME_ROOTS,
        ROW_WATCH,
        _ROW_MAX,
};

enum level { LEVEL_OK, LEVEL_WARN, LEVEL_FAIL };

struct result {
        enum check_row row;
        enum level level;
        char *message;
        char *fix; /* NULL when there is nothing to do */
};

#define HOOKS_DIRS_MAX 16

struct checker {
        const struct command_ctx *ctx;
        struct config config;
        int root_fd; /* resctrl's root, when check_mount could open it */
        bool monitoring;
        const char *hooks_dirs[HOOKS_DIRS_MAX];
        size_t n_hooks_dirs;
        unsigned only;                   /* --only: a bit per row to run and print; 0: all */
        bool node_cgroups_done, kubelet; /* check_node_cgroups ran; it saw kubelet's pods */
        struct node_view view;           /* the readers' model, opened at first use */
        int view_r;                      /* what node_view_open said */
        bool view_opened, view_covered;
        struct result *results;
        size_t n;
        bool oom;
};

/* Records one row's line; fix may be NULL. */
void check_add(struct checker *k, enum check_row row, enum level level, const char *fix,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Appends an item, formatted, to the ", "-separated list in buf (size
 * bytes), cut at the end. */
void check_list_append(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* check_resctrl.c. check_mount leaves k->root_fd open when usable;
 * check_monitoring sets k->monitoring. */
void check_mount(struct checker *k);
void check_monitoring(struct checker *k);
void check_node_resctrl(struct checker *k);
void check_rmids(struct checker *k);
void check_counters(struct checker *k);
void check_proc(struct checker *k);

/* check_node.c. check_runtime_roots runs check_node_cgroups first where
 * --only left it out (its rows are not printed then). */
void check_state_dir(struct checker *k);
void check_state_fs(struct checker *k);
void check_hooks_dirs(struct checker *k);
void check_node_cgroups(struct checker *k);
void check_runtime_roots(struct checker *k);
