/* SPDX-License-Identifier: Apache-2.0 */
/* The proc connector's datagrams as the kernel sends them, and cut short or
 * of other senders. The subscription itself, on the real kernel: the
 * integration suite of watch (tests/integration/test_watch.sh). */
#include <check.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proc_events.h"
#include "tmptree.h"

static char buf[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
static size_t len;

/* Appends one netlink message of a proc event; cn_len 0: the event's size. */
static void put(enum what what, pid_t pid, __u32 idx, size_t cn_len)
{
        struct nlmsghdr *nl = (struct nlmsghdr *) (buf + len);
        struct cn_msg *cn = NLMSG_DATA(nl);
        struct proc_event ev = {.what = what};

        if (what == PROC_EVENT_EXEC)
                ev.event_data.exec = (struct exec_proc_event){pid, pid};
        cn->id = (struct cb_id){.idx = idx, .val = CN_VAL_PROC};
        cn->len = (__u16) (cn_len ? cn_len : sizeof(ev));
        memcpy(cn->data, &ev, sizeof(ev));
        nl->nlmsg_len = NLMSG_LENGTH(sizeof(*cn) + sizeof(ev));
        nl->nlmsg_type = NLMSG_DONE;
        len += NLMSG_ALIGN(nl->nlmsg_len);
}

static void setup(void)
{
        memset(buf, 0, sizeof(buf));
        len = 0;
}

START_TEST(test_exec)
{
        struct proc_events_batch b;

        put(PROC_EVENT_EXEC, 4242, CN_IDX_PROC, 0);
        put(PROC_EVENT_EXEC, 77, CN_IDX_PROC, 0);
        proc_events_parse(buf, len, &b);
        ck_assert_uint_eq(b.n_exec, 2);
        ck_assert_int_eq(b.exec[0], 4242);
        ck_assert_int_eq(b.exec[1], 77);
        ck_assert_uint_eq(b.malformed, 0);
}
END_TEST

/* The subscription's answer and a fork (were the filter to let one by). */
START_TEST(test_other_events)
{
        struct proc_events_batch b;

        put(PROC_EVENT_NONE, 0, CN_IDX_PROC, 0);
        put(PROC_EVENT_FORK, 0, CN_IDX_PROC, 0);
        proc_events_parse(buf, len, &b);
        ck_assert_uint_eq(b.n_exec, 0);
        ck_assert_uint_eq(b.malformed, 0);
}
END_TEST

START_TEST(test_malformed)
{
        struct proc_events_batch b;

        put(PROC_EVENT_EXEC, 4242, CN_IDX_PROC, 20);  /* too short for an exec */
        put(PROC_EVENT_EXEC, 0, CN_IDX_PROC, 0);      /* an exec of no process */
        put(PROC_EVENT_EXEC, 4242, 7, 0);             /* another connector's */
        put(PROC_EVENT_EXEC, 4242, CN_IDX_PROC, 400); /* longer than its message */
        put(PROC_EVENT_EXEC, 55, CN_IDX_PROC, 0);
        proc_events_parse(buf, len, &b);
        ck_assert_uint_eq(b.n_exec, 1);
        ck_assert_int_eq(b.exec[0], 55);
        ck_assert_uint_eq(b.malformed, 4);

        /* A datagram cut in its first message: nothing of it is taken. */
        proc_events_parse(buf, 30, &b);
        ck_assert_uint_eq(b.n_exec, 0);
        ck_assert_uint_eq(b.malformed, 1);
}
END_TEST

/* The socket filter, on a datagram socket pair: what the kernel would queue
 * for the reader. */
START_TEST(test_filter)
{
        int sv[2];
        char got[4096] __attribute__((aligned(NLMSG_ALIGNTO)));
        struct proc_events_batch b;
        enum what kinds[] = {PROC_EVENT_FORK, PROC_EVENT_EXEC, PROC_EVENT_EXIT, PROC_EVENT_NONE,
                             PROC_EVENT_COMM};
        ssize_t n;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, sv), 0);
        ck_assert_int_eq(proc_events_filter(sv[1]), 0);
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                setup();
                put(kinds[i], 100 + (pid_t) i, CN_IDX_PROC, 0);
                ck_assert_int_eq(send(sv[0], buf, len, 0), (ssize_t) len);
        }
        ck_assert_int_eq(send(sv[0], buf, 20, 0), 20); /* too short to say what it is */

        n = recv(sv[1], got, sizeof(got), 0); /* the exec */
        ck_assert_int_gt(n, 0);
        proc_events_parse(got, (size_t) n, &b);
        ck_assert_uint_eq(b.n_exec, 1);
        ck_assert_int_eq(b.exec[0], 101);
        n = recv(sv[1], got, sizeof(got), 0); /* the answer */
        ck_assert_int_gt(n, 0);
        proc_events_parse(got, (size_t) n, &b);
        ck_assert_uint_eq(b.n_exec, 0);
        ck_assert_uint_eq(b.malformed, 0);
        ck_assert_int_eq(recv(sv[1], got, sizeof(got), 0), -1); /* nothing else */
        ck_assert_int_eq(errno, EAGAIN);
        close(sv[0]);
        close(sv[1]);
}
END_TEST

static Suite *proc_events_suite(void)
{
        Suite *s = suite_create("proc_events");
        TCase *tc = tcase_create("parse");

        tcase_add_checked_fixture(tc, setup, NULL);
        tcase_add_test(tc, test_exec);
        tcase_add_test(tc, test_other_events);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_filter);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(proc_events_suite());
}
