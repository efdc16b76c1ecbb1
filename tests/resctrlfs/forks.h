/* SPDX-License-Identifier: Apache-2.0 */
/* Fork inheritance as the kernel does it: a new task starts in its creator's
 * group; and exits, so that the model drops a gone task without looking for
 * it in /proc at every access. The emulator learns of both from the kernel's
 * proc connector (netlink, CONFIG_PROC_EVENTS, root), which reports every
 * fork, clone and exit as it happens, with the thread that forked. */
#pragma once

#include <pthread.h>

#include "model.h"

/* Subscribes to task events: the socket in *ret_fd. 0, or -errno when the
 * kernel offers no proc connector here. Before any fork of the emulator's
 * own (daemonizing), so that a failure can still fail the mount. */
int fork_watch_open(int *ret_fd);

struct fork_watch;

/* Starts a thread that places each new task in the model (model_task_created,
 * with track_forks) and drops each exited one (model_task_exited), under
 * lock, reading the socket (taken over): *ret, for fork_watch_stop. After
 * daemonizing: threads do not survive a fork. 0 or -errno. */
int fork_watch_start(int fd, struct model *m, pthread_mutex_t *lock, struct fork_watch **ret);

/* Applies, under lock, the events the kernel has queued so far, so that an
 * access sees what happened before it. A fork is reported before fork()
 * returns; an exit just after the parent is woken (do_exit(): exit_notify(),
 * then proc_exit_connector()), so a read right after waitpid() may, rarely,
 * still count the child: a tasks file looks in /proc. NULL: nothing to do. */
void fork_watch_catch_up(struct fork_watch *w);

/* Ends the thread and waits for it, before the model goes: a thread still
 * reading events would use it after it is freed. NULL: nothing to stop. */
void fork_watch_stop(struct fork_watch *w);
