/* SPDX-License-Identifier: Apache-2.0 */
/* The YAML config parser on untrusted input: a config whose every value is
 * in range, whatever the file held, and problems that each make one line. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "config.h"
#include "fuzz.h"

static void check_valid(const struct config *c)
{
        assert(c->resctrl_path && c->resctrl_path[0] == '/');
        assert(c->state_dir && c->state_dir[0] == '/');
        assert(c->lock_timeout_ms <= 600000);
        assert(c->log_level == LOG_ERR || c->log_level == LOG_WARNING || c->log_level == LOG_INFO ||
               c->log_level == LOG_DEBUG);
        assert(c->failure_policy == FAILURE_POLICY_IGNORE ||
               c->failure_policy == FAILURE_POLICY_FAIL);
        for (size_t i = 0; i < c->namespaces.n; i++)
                assert(c->namespaces.items[i]);
        for (size_t i = 0; i < c->label_selector.n; i++)
                assert(c->label_selector.keys[i] && c->label_selector.values[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(config_done) struct config c = {0};
        _cleanup_(config_problems_done) struct config_problems problems = {0};
        int r;

        if (config_init(&c) < 0)
                return 0;
        r = config_parse(&c, (const char *) data, size, "fuzz.yaml", &problems);
        assert(r == 0 || r == -ENOMEM || r == -EFBIG);
        for (size_t i = 0; i < problems.n; i++)
                assert(fuzz_one_line(problems.items[i].text));
        /* Whatever the file held, what was used of it is valid. */
        check_valid(&c);
        return 0;
}
