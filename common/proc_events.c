/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "proc_events.h"

/* Bursts of execs (a shell loop, a build) on a busy node: room for many. */
#define PROC_EVENTS_RCVBUF (4 << 20)

/* Where an event's kind lies in a datagram: after the netlink and the
 * connector headers. */
#define PROC_EVENTS_WHAT_OFFSET (NLMSG_HDRLEN + sizeof(struct cn_msg))

/* A BPF word load reads network byte order, the kernel writes host order:
 * the constants are compared as loaded. A datagram too short for the load
 * is dropped. */
int proc_events_filter(int fd)
{
        struct sock_filter code[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, PROC_EVENTS_WHAT_OFFSET),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_EXEC), 1, 0),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(PROC_EVENT_NONE), 0, 1),
            BPF_STMT(BPF_RET | BPF_K, 0xffffffff),
            BPF_STMT(BPF_RET | BPF_K, 0),
        };
        struct sock_fprog prog = {.len = ELEMENTSOF(code), .filter = code};

        return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0 ? -errno : 0;
}

/* op (PROC_CN_MCAST_LISTEN or _IGNORE), as one netlink message: a header, a
 * cn_msg, the op. The kernel answers with ack + 1. */
static int subscribe(int fd, enum proc_cn_mcast_op op, uint32_t ack)
{
        enum { PAYLOAD = sizeof(struct cn_msg) + sizeof(enum proc_cn_mcast_op) };
        char buf[NLMSG_SPACE(PAYLOAD)] __attribute__((aligned(NLMSG_ALIGNTO))) = {0};
        struct nlmsghdr *nl = (struct nlmsghdr *) buf;
        struct cn_msg *cn = NLMSG_DATA(nl);

        nl->nlmsg_len = NLMSG_LENGTH(PAYLOAD);
        nl->nlmsg_type = NLMSG_DONE;
        nl->nlmsg_pid = (uint32_t) getpid();
        cn->id = (struct cb_id){.idx = CN_IDX_PROC, .val = CN_VAL_PROC};
        cn->ack = ack;
        cn->len = sizeof(op);
        memcpy(cn->data, &op, sizeof(op));
        return send(fd, buf, nl->nlmsg_len, 0) == (ssize_t) nl->nlmsg_len ? 0 : -errno;
}

/* The event of one netlink message, or -EBADMSG for one this code does not
 * expect: not a connector message of the proc connector's, too short for
 * the event it says it is, or an exec of no process. */
static int event_of(const struct nlmsghdr *nl, struct proc_event *ret, uint32_t *ret_ack)
{
        const struct cn_msg *cn = (const void *) ((const char *) nl + NLMSG_HDRLEN);
        size_t head = offsetof(struct proc_event, event_data);

        if (nl->nlmsg_type != NLMSG_DONE || nl->nlmsg_len < NLMSG_LENGTH(sizeof(*cn)) ||
            nl->nlmsg_len - NLMSG_LENGTH(sizeof(*cn)) < cn->len || cn->id.idx != CN_IDX_PROC ||
            cn->id.val != CN_VAL_PROC || cn->len < head)
                return -EBADMSG;
        *ret = (struct proc_event){0};
        /* cn_msg is 20 bytes: the event after it is not aligned. */
        memcpy(ret, cn->data, cn->len < sizeof(*ret) ? cn->len : sizeof(*ret));
        if (ret->what == PROC_EVENT_EXEC && (cn->len < head + sizeof(ret->event_data.exec) ||
                                             ret->event_data.exec.process_tgid <= 0))
                return -EBADMSG;
        if (ret->what == PROC_EVENT_NONE && cn->len < head + sizeof(ret->event_data.ack))
                return -EBADMSG;
        *ret_ack = cn->ack;
        return 0;
}

/* The message at *off of a datagram of len bytes, *off moved past it; NULL
 * at the end, *ret_cut telling whether bytes were left that make no
 * message. */
static const struct nlmsghdr *next_message(const char *buf, size_t len, size_t *off, bool *ret_cut)
{
        const struct nlmsghdr *nl = (const void *) (buf + *off);
        size_t left = len - *off;

        *ret_cut = false;
        if (left == 0)
                return NULL;
        if (left < sizeof(*nl) || nl->nlmsg_len < sizeof(*nl) || nl->nlmsg_len > left) {
                *ret_cut = true;
                return NULL;
        }
        *off += NLMSG_ALIGN(nl->nlmsg_len) < left ? NLMSG_ALIGN(nl->nlmsg_len) : left;
        return nl;
}

/* Reads one datagram (flags: MSG_DONTWAIT or 0) into buf; its length, 0
 * for one not from the kernel, or -errno. */
static ssize_t receive(int fd, void *buf, size_t size, int flags)
{
        struct sockaddr_nl from;
        socklen_t len = sizeof(from);
        ssize_t n = recvfrom(fd, buf, size, flags, (struct sockaddr *) &from, &len);

        if (n < 0)
                return -errno;
        if (len != sizeof(from) || from.nl_family != AF_NETLINK || from.nl_pid != 0)
                return 0;
        return n;
}

/* Waits up to answer_ms for the kernel's answer to the subscription: 0, or
 * the error it answers with. */
static int await_answer(int fd, uint32_t ack, unsigned answer_ms)
{
        char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
        int64_t deadline = deadline_after_ms(answer_ms);
        bool cut;

        for (;;) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int64_t left = deadline - now_usec();
                ssize_t n;

                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) ((left + 999) / 1000)) < 0 && errno != EINTR)
                        return -errno;
                n = receive(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == -EAGAIN || n == -EINTR || n == -ENOBUFS)
                        continue;
                if (n < 0)
                        return (int) n;
                for (size_t off = 0;;) {
                        const struct nlmsghdr *nl = next_message(buf, (size_t) n, &off, &cut);
                        struct proc_event ev;
                        uint32_t answer;

                        if (!nl)
                                break;
                        /* The answer carries ack + 1 (cn_proc_ack). */
                        if (event_of(nl, &ev, &answer) == 0 && ev.what == PROC_EVENT_NONE &&
                            answer == ack + 1)
                                return -(int) ev.event_data.ack.err;
                }
        }
}

int proc_events_open(unsigned answer_ms, int *ret_fd)
{
        struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
        _cleanup_close_ int fd = -EBADF;
        int size = PROC_EVENTS_RCVBUF, r;
        uint32_t ack = (uint32_t) getpid();

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
        if (fd < 0)
                return -errno;
        /* Past rmem_max needs CAP_NET_ADMIN, which a subscriber has. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        r = proc_events_filter(fd);
        if (r < 0)
                return r;
        if (bind(fd, (struct sockaddr *) &addr, sizeof(addr)) < 0)
                return -errno;
        r = subscribe(fd, PROC_CN_MCAST_LISTEN, ack);
        if (r == -ECONNREFUSED) /* no connector in this network namespace */
                return -EPROTONOSUPPORT;
        if (r < 0)
                return r;
        r = await_answer(fd, ack, answer_ms);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

void proc_events_close(int fd)
{
        if (fd < 0)
                return;
        (void) subscribe(fd, PROC_CN_MCAST_IGNORE, 0);
        (void) close(fd);
}

void proc_events_parse(const void *buf, size_t len, struct proc_events_batch *ret)
{
        bool cut = false;

        *ret = (struct proc_events_batch){0};
        for (size_t off = 0;;) {
                const struct nlmsghdr *nl = next_message(buf, len, &off, &cut);
                struct proc_event ev;
                uint32_t ack;

                if (!nl)
                        break;
                if (event_of(nl, &ev, &ack) < 0) {
                        ret->malformed++;
                        continue;
                }
                if (ev.what == PROC_EVENT_EXEC && ret->n_exec < ELEMENTSOF(ret->exec))
                        ret->exec[ret->n_exec++] = ev.event_data.exec.process_tgid;
        }
        ret->malformed += cut;
}

int proc_events_read(int fd, struct proc_events_batch *ret)
{
        char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t n;

        *ret = (struct proc_events_batch){0};
        do
                n = receive(fd, buf, sizeof(buf), MSG_DONTWAIT);
        while (n == -EINTR);
        if (n == -EAGAIN)
                return 0;
        if (n == -ENOBUFS)
                return -ENOBUFS;
        if (n < 0)
                return n == -EBADF || n == -ENOTSOCK ? (int) n : -ECONNRESET;
        proc_events_parse(buf, (size_t) n, ret);
        return 1;
}
