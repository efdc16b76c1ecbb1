/* SPDX-License-Identifier: Apache-2.0 */
/* The member-file parser on untrusted input. Whatever it accepts, the
 * formatter writes back, and that text parses to the same text again: load
 * and save agree on what valid state is. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pod_state.h"

#define UID "0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(pod_state_done) struct pod_state st = {0}, again = {0};
        _cleanup_free_ char *text = NULL, *text2 = NULL, *why = NULL;
        int r;

        r = pod_state_parse((const char *) data, size, UID, &st, &why);
        if (r < 0) {
                assert(r == -ENOMEM || (r == -EBADMSG && (!why || fuzz_one_line(why))));
                return 0;
        }
        assert(!why);
        for (size_t i = 0; i < st.n_members; i++)
                assert(st.members[i].monitored == !st.members[i].reason);

        r = pod_state_format(&st, UID, &text);
        assert(r == 0);
        r = pod_state_parse(text, strlen(text), UID, &again, NULL);
        assert(r == 0);
        r = pod_state_format(&again, UID, &text2);
        assert(r == 0);
        assert(strcmp(text, text2) == 0);
        assert(again.n_members == st.n_members && again.n_groups == st.n_groups);
        return 0;
}
