/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "fsutil.h"
#include "lock.h"
#include "macro.h"

/* Polls rather than blocking so that the wait stays bounded whatever the
 * inherited signal mask; sleeps from 1 ms growing to 10 ms. */
int lock_fd_until(int fd, int op, int64_t deadline)
{
        long sleep_ms = 1;

        for (;;) {
                if (flock(fd, op | LOCK_NB) == 0)
                        return 0;
                if (errno == EINTR)
                        continue;
                if (errno != EWOULDBLOCK)
                        return -errno;
                if (now_usec() >= deadline)
                        return -ETIMEDOUT;
                (void) nanosleep(&(struct timespec){.tv_nsec = sleep_ms * 1000 * 1000}, NULL);
                if (sleep_ms < 10)
                        sleep_ms = sleep_ms * 2 > 10 ? 10 : sleep_ms * 2;
        }
}

int lock_fd(int fd, int op, unsigned timeout_ms)
{
        return lock_fd_until(fd, op, deadline_after_ms(timeout_ms));
}

void lock_fd_unlockp(const int *locked_fd)
{
        if (*locked_fd >= 0) {
                int saved_errno = errno;

                (void) flock(*locked_fd, LOCK_UN);
                errno = saved_errno;
        }
}

int lock_file_acquire(int dir_fd, const char *name, unsigned timeout_ms, int *ret_fd)
{
        int64_t deadline = deadline_after_ms(timeout_ms);

        assert(dir_fd >= 0 && ret_fd);
        if (!name_is_valid(name))
                return -EINVAL;

        for (;;) {
                _cleanup_close_ int fd = -EBADF;
                struct stat st_fd, st_name;
                int r;

                fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
                if (fd < 0)
                        return -errno;
                r = lock_fd_until(fd, LOCK_EX, deadline);
                if (r < 0)
                        return r;
                if (fstat(fd, &st_fd) < 0)
                        return -errno;

                /* The previous holder may have unlinked the file before letting
                 * go: a lock on an inode that is no longer linked guards nothing. */
                if (fstatat(dir_fd, name, &st_name, AT_SYMLINK_NOFOLLOW) == 0) {
                        if (st_name.st_dev == st_fd.st_dev && st_name.st_ino == st_fd.st_ino) {
                                *ret_fd = TAKE_FD(fd);
                                return 0;
                        }
                } else if (errno != ENOENT)
                        return -errno;

                if (now_usec() >= deadline)
                        return -ETIMEDOUT;
        }
}

void lock_file_release_and_unlink(int dir_fd, const char *name, int fd)
{
        /* Unlink while still holding the lock, so that no one locks the old
         * inode believing it is current. */
        (void) unlinkat(dir_fd, name, 0);
        if (fd >= 0)
                (void) close(fd);
}
