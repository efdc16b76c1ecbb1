/* SPDX-License-Identifier: Apache-2.0 */
/* The ABMC texts on untrusted input (a kernel newer or stranger than ours):
 * mbm_assign_mode, num_mbm_cntrs / available_mbm_cntrs and
 * mbm_L3_assignments. Each parser accepts or says -EBADMSG (-E2BIG past the
 * domains it keeps), never more domains than it has room for. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "abmc.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *text = malloc(size + 1);
        struct abmc_assignments a;
        struct abmc_counts c;
        bool on;
        int r;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';

        r = abmc_parse_mode(text, &on);
        assert(r == 0 || r == -EBADMSG);

        r = abmc_parse_counts(text, &c);
        assert(r == 0 || r == -EBADMSG || r == -E2BIG);
        assert(r < 0 || (c.n >= 1 && c.n <= ABMC_DOMAINS_MAX));

        r = abmc_parse_assignments(text, &a);
        assert(r == 0 || r == -EBADMSG || r == -E2BIG || r == -ENOMEM);
        if (r == 0) {
                enum abmc_bandwidth b = abmc_bandwidth(&a, ABMC_ALL_EVENTS);

                assert(a.n >= 1 && a.n <= ABMC_DOMAINS_MAX);
                assert(a.listed[ABMC_TOTAL] || a.listed[ABMC_LOCAL]);
                assert(b == ABMC_FULL || b == ABMC_PARTIAL || b == ABMC_NONE);
        }
        return 0;
}
