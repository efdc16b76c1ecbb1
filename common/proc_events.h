/* SPDX-License-Identifier: Apache-2.0 */
/* The kernel's process events, from the netlink proc connector: which
 * process just exec'd. A socket filter passes only exec events (and the
 * answer to the subscription), so unrelated forks and exits never wake the
 * reader. The kernel takes a subscription only from a process in the
 * initial user, pid and network namespaces, and before Linux 6.6 only with
 * CAP_NET_ADMIN; its events name processes by their pids in the initial pid
 * namespace. Never log. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* Opens a connector socket and subscribes it, waiting up to answer_ms for
 * the kernel's answer. 0 with *ret_fd (non-blocking); -EPROTONOSUPPORT
 * where there is no connector (another network namespace, no
 * CONFIG_PROC_EVENTS); -EPERM without CAP_NET_ADMIN; -ETIMEDOUT when the
 * kernel does not answer, which it does not for a subscriber in another
 * pid or user namespace; -errno. */
int proc_events_open(unsigned answer_ms, int *ret_fd);

/* Attaches the socket filter to fd: exec events and the subscription's
 * answer (PROC_EVENT_NONE) pass, the rest is dropped before it is queued.
 * 0 or -errno. */
int proc_events_filter(int fd);

/* Unsubscribes (kernels before 6.6 count subscribers, and make events while
 * any is left) and closes fd; nothing for fd < 0. */
void proc_events_close(int fd);

/* What proc_events_read found in one datagram. */
struct proc_events_batch {
        pid_t exec[64]; /* the processes (thread group ids) that exec'd */
        size_t n_exec;
        unsigned malformed; /* messages of a size or kind it does not expect: skipped */
};

/* The events of one datagram of len bytes (buf aligned to NLMSG_ALIGNTO). */
void proc_events_parse(const void *buf, size_t len, struct proc_events_batch *ret);

/* Reads one datagram without waiting. 1 with *ret filled; 0 when none is
 * queued; -ENOBUFS when the socket overflowed and events were lost (the
 * socket stays usable); -ECONNRESET when the socket is no longer usable
 * (reopen it); -errno. Datagrams not sent by the kernel are skipped. */
int proc_events_read(int fd, struct proc_events_batch *ret);
