/* SPDX-License-Identifier: Apache-2.0 */
/* The config as every stage and command reads it (config.h says what is used
 * of a file with problems). */
#pragma once

#include <stdbool.h>

#include "config.h"

/* Loads path over the defaults in *c. A missing file is no problem when it is
 * the default path (built-in defaults); a missing --config file, or one that
 * cannot be read, is recorded in *problems as incomplete, and *c keeps its
 * defaults. 0, or -ENOMEM. */
int settings_load(const char *path, bool explicit, struct config *c,
                  struct config_problems *problems);

/* What the hook does about a problem of this kind, in a few words. */
const char *settings_problem_effect(enum config_problem_kind kind);

/* Logs each problem once: an unknown key as a warning, the rest as errors. */
void settings_log_problems(const struct config_problems *problems);
