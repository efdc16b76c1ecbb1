/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <string.h>

#include "log.h"
#include "settings.h"

int settings_load(const char *path, bool explicit, struct config *c,
                  struct config_problems *problems)
{
        int r = config_load(c, path, problems);

        if (r == -ENOENT && !explicit)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return config_problems_add(problems, CONFIG_PROBLEM_INCOMPLETE,
                                           "cannot read config '%s': %s", path, strerror(-r));
        return 0;
}

const char *settings_problem_effect(enum config_problem_kind kind)
{
        switch (kind) {
        case CONFIG_PROBLEM_UNKNOWN_KEY:
                return "the key is skipped; the rest of the file is used";
        case CONFIG_PROBLEM_BAD_VALUE:
                return "the key keeps its built-in default; the rest of the file is used";
        case CONFIG_PROBLEM_INCOMPLETE:
                break;
        }
        return "createRuntime leaves new containers unmonitored; poststop and gc go on with "
               "what was read, and built-in defaults for the rest";
}

void settings_log_problems(const struct config_problems *problems)
{
        for (size_t i = 0; i < problems->n; i++) {
                const struct config_problem *p = &problems->items[i];

                (void) log_full_errno(p->kind == CONFIG_PROBLEM_UNKNOWN_KEY ? LOG_WARNING : LOG_ERR,
                                      0, "%s (%s)", p->text, settings_problem_effect(p->kind));
        }
}
