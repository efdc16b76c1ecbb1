/* SPDX-License-Identifier: Apache-2.0 */
/* The YAML config parser on untrusted input: either a config whose every value
 * is in range, or an error of one line and the config untouched. */
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
        char *why = NULL;
        int r;

        if (config_init(&c) < 0)
                return 0;
        r = config_parse(&c, (const char *) data, size, "fuzz.yaml", &why);
        if (r < 0) {
                assert(r == -ENOMEM || r == -EFBIG || (r == -EINVAL && fuzz_one_line(why)));
                /* Failure leaves the defaults. */
                assert(strcmp(c.resctrl_path, CONFIG_DEFAULT_RESCTRL_PATH) == 0);
                assert(strcmp(c.state_dir, CONFIG_DEFAULT_STATE_DIR) == 0);
                assert(c.lock_timeout_ms == CONFIG_DEFAULT_LOCK_TIMEOUT_MS);
                free(why);
                return 0;
        }
        assert(!why);
        check_valid(&c);
        return 0;
}
