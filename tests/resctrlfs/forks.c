/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "forks.h"
#include "macro.h"

/* Forks come in bursts (a shell pipeline, a thread pool): room for many. */
#define FORK_WATCH_RCVBUF (8 << 20)

struct fork_watch {
        struct model *m;
        pthread_mutex_t *lock;
        int fd;
        int stop_fd; /* an eventfd: readable once fork_watch_stop wants the thread gone */
        bool failed; /* the socket failed: exits are looked for in /proc again */
        pthread_t thread;
};

/* PROC_CN_MCAST_LISTEN, as one netlink message: a header, a cn_msg, the op. */
static int subscribe(int fd)
{
        enum { PAYLOAD = sizeof(struct cn_msg) + sizeof(enum proc_cn_mcast_op) };
        char buf[NLMSG_SPACE(PAYLOAD)] __attribute__((aligned(NLMSG_ALIGNTO))) = {0};
        struct nlmsghdr *nl = (struct nlmsghdr *) buf;
        struct cn_msg *cn = NLMSG_DATA(nl);
        enum proc_cn_mcast_op op = PROC_CN_MCAST_LISTEN;

        nl->nlmsg_len = NLMSG_LENGTH(PAYLOAD);
        nl->nlmsg_type = NLMSG_DONE;
        cn->id = (struct cb_id){.idx = CN_IDX_PROC, .val = CN_VAL_PROC};
        cn->len = sizeof(op);
        memcpy(cn->data, &op, sizeof(op));
        return send(fd, buf, nl->nlmsg_len, 0) == (ssize_t) nl->nlmsg_len ? 0 : -errno;
}

static void handle(struct fork_watch *w, const struct proc_event *ev)
{
        if (ev->what == PROC_EVENT_EXIT)
                model_task_exited(w->m, ev->event_data.exit.process_pid);
        else if (ev->what == PROC_EVENT_FORK && model_config(w->m)->track_forks)
                model_task_created(w->m, ev->event_data.fork.parent_pid,
                                   ev->event_data.fork.child_pid, ev->event_data.fork.child_tgid);
}

/* Applies every event queued on the socket, under the lock: 0 once none is
 * left, -errno when the socket failed. Only ever called under the lock, so
 * that two readers never apply one task's events out of order. */
static int drain(struct fork_watch *w)
{
        char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));

        for (;;) {
                ssize_t n = recv(w->fd, buf, sizeof(buf), MSG_DONTWAIT);

                if (n < 0 && errno == ENOBUFS) {
                        /* The socket overflowed: some new tasks stay where
                         * the kernel would not have left them, and the
                         * exited ones are looked for in /proc once. */
                        fprintf(stderr, "resctrlfs: task events lost (ENOBUFS)\n");
                        model_task_events_lost(w->m);
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n <= 0)
                        return n < 0 ? -errno : -EPIPE;
                for (struct nlmsghdr *nl = (struct nlmsghdr *) buf; NLMSG_OK(nl, (size_t) n);
                     nl = NLMSG_NEXT(nl, n)) {
                        const struct cn_msg *cn = NLMSG_DATA(nl);
                        struct proc_event ev;

                        if (nl->nlmsg_type != NLMSG_DONE || cn->id.idx != CN_IDX_PROC ||
                            cn->len < sizeof(ev))
                                continue;
                        /* cn_msg is 20 bytes: the event after it is not aligned. */
                        memcpy(&ev, cn->data, sizeof(ev));
                        handle(w, &ev);
                }
        }
}

static void stop_reporting(struct fork_watch *w, int error)
{
        fprintf(stderr, "resctrlfs: task events stopped: %s\n", strerror(-error));
        model_exits_reported(w->m, false);
        w->failed = true;
}

void fork_watch_catch_up(struct fork_watch *w)
{
        int r;

        if (!w || w->failed)
                return;
        r = drain(w);
        if (r < 0)
                stop_reporting(w, r);
}

static void *watch(void *userdata)
{
        struct fork_watch *w = userdata;

        for (;;) {
                struct pollfd fds[] = {{.fd = w->fd, .events = POLLIN},
                                       {.fd = w->stop_fd, .events = POLLIN}};
                bool failed;

                if (poll(fds, 2, -1) < 0 && errno != EINTR) {
                        int r = -errno;

                        (void) pthread_mutex_lock(w->lock);
                        stop_reporting(w, r);
                        (void) pthread_mutex_unlock(w->lock);
                        return NULL;
                }
                if (fds[1].revents) /* stopped: the model goes next */
                        return NULL;
                if (!fds[0].revents)
                        continue;
                (void) pthread_mutex_lock(w->lock);
                fork_watch_catch_up(w);
                failed = w->failed;
                (void) pthread_mutex_unlock(w->lock);
                if (failed)
                        return NULL;
        }
}

int fork_watch_open(int *ret_fd)
{
        struct sockaddr_nl addr = {.nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC};
        _cleanup_close_ int fd = -EBADF;
        int size = FORK_WATCH_RCVBUF, r;

        fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_CONNECTOR);
        if (fd < 0)
                return -errno;
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
        if (bind(fd, (struct sockaddr *) &addr, sizeof(addr)) < 0)
                return -errno;
        r = subscribe(fd);
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int fork_watch_start(int fd, struct model *m, pthread_mutex_t *lock, struct fork_watch **ret)
{
        struct fork_watch *w = malloc(sizeof(*w));
        int r;

        if (!w) {
                close(fd);
                return -ENOMEM;
        }
        *w = (struct fork_watch){.m = m, .lock = lock, .fd = fd};
        /* Before the thread, which turns it off again if its socket fails. */
        (void) pthread_mutex_lock(lock);
        model_exits_reported(m, true);
        (void) pthread_mutex_unlock(lock);
        w->stop_fd = eventfd(0, EFD_CLOEXEC);
        r = w->stop_fd < 0 ? -errno : -pthread_create(&w->thread, NULL, watch, w);
        if (r < 0) {
                (void) pthread_mutex_lock(lock);
                model_exits_reported(m, false);
                (void) pthread_mutex_unlock(lock);
                if (w->stop_fd >= 0)
                        close(w->stop_fd);
                close(fd);
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

void fork_watch_stop(struct fork_watch *w)
{
        uint64_t one = 1;

        if (!w)
                return;
        if (write(w->stop_fd, &one, sizeof(one)) == (ssize_t) sizeof(one))
                (void) pthread_join(w->thread, NULL);
        close(w->stop_fd);
        close(w->fd);
        free(w);
}
