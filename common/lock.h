/* SPDX-License-Identifier: Apache-2.0 */
/* flock(2) with a deadline. flock locks belong to the open file description,
 * so a SIGKILLed holder releases them at once. */
#pragma once

#include <stdint.h>

/* flock(fd, op | LOCK_NB) retried until it succeeds or timeout_ms has passed
 * (CLOCK_MONOTONIC): 0, -ETIMEDOUT or -errno. A polling loop rather than
 * SIGALRM, because the hook inherits a signal mask it does not control. */
int lock_fd(int fd, int op, unsigned timeout_ms);

/* The same until deadline, a now_usec() time: two waits that share one. */
int lock_fd_until(int fd, int op, int64_t deadline);

/* For _cleanup_(lock_fd_unlockp) on an int that holds the fd once its lock
 * is taken (negative before, or when taking it failed): the lock, not the
 * fd, is let go of on every way out of the scope, errno kept. */
void lock_fd_unlockp(const int *locked_fd);

/* Takes an exclusive lock on dir_fd/name, creating it (0600, O_NOFOLLOW,
 * O_CLOEXEC) if needed. Robust to the file being unlinked by its previous
 * holder (who removes a pod's lock file when the pod's state goes): after
 * locking, the fd's inode must still be the one the name points to, else the
 * lock is dropped and taken again on the new file. 0 and *ret_fd, or -errno
 * (-ETIMEDOUT). */
int lock_file_acquire(int dir_fd, const char *name, unsigned timeout_ms, int *ret_fd);

/* Unlinks dir_fd/name and then closes fd, which must hold the lock on it: a
 * waiter that then gets the lock sees the name gone and retries. */
void lock_file_release_and_unlink(int dir_fd, const char *name, int fd);
