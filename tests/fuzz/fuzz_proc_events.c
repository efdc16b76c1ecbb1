/* SPDX-License-Identifier: Apache-2.0 */
/* The proc connector's datagrams on untrusted input (a kernel newer than
 * ours, a message cut short): every message is an exec of a process, the
 * subscription's answer, another event, or counted as malformed; never more
 * execs than the batch holds, never one of no process. */
#include <assert.h>
#include <linux/netlink.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "proc_events.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct proc_events_batch b;

        if (size > sizeof(buf))
                return 0;
        memcpy(buf, data, size);
        proc_events_parse(buf, size, &b);
        assert(b.n_exec <= sizeof(b.exec) / sizeof(b.exec[0]));
        for (size_t i = 0; i < b.n_exec; i++)
                assert(b.exec[i] > 0);
        return 0;
}
