/* SPDX-License-Identifier: Apache-2.0 */
/* The parser of a finished pod's final counters (finished.h) on untrusted
 * input. Whatever it accepts, the formatter writes back, and that text parses
 * to the same text again. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "finished.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_(finished_pod_done) struct finished_pod f = {0}, again = {0};
        _cleanup_free_ char *text = NULL, *text2 = NULL, *why = NULL;
        int r;

        r = finished_parse((const char *) data, size, &f, &why);
        if (r < 0) {
                assert(r == -ENOMEM || (r == -EBADMSG && (!why || fuzz_one_line(why))));
                return 0;
        }
        assert(!why);
        r = finished_format(&f, &text);
        assert(r == 0);
        r = finished_parse(text, strlen(text), &again, NULL);
        assert(r == 0);
        r = finished_format(&again, &text2);
        assert(r == 0);
        assert(strcmp(text, text2) == 0);
        assert(again.n_rd == f.n_rd && again.group.n_baseline == f.group.n_baseline);
        return 0;
}
