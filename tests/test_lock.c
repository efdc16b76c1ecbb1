/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "lock.h"
#include "macro.h"
#include "tmptree.h"
#include "wait_for.h"

static int dir_fd = -EBADF;

static void setup(void)
{
        dir_fd = tmptree_new(NULL);
}

static void teardown(void)
{
        close(dir_fd);
}

/* A child that holds the lock on its own open of dir_fd/name until killed. */
static pid_t spawn_holder(const char *name, int op)
{
        int ready[2];
        pid_t child;
        char c;

        ck_assert_int_eq(pipe(ready), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                int fd = openat(dir_fd, name, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

                if (fd < 0 || flock(fd, op) < 0 || write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(ready[1]);
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        close(ready[0]);
        return child;
}

static void reap(pid_t child)
{
        kill(child, SIGKILL);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
}

START_TEST(test_lock_fd_uncontended)
{
        _cleanup_close_ int fd = openat(dir_fd, "l", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(lock_fd(fd, LOCK_EX, 0), 0);
        ck_assert_int_eq(lock_fd(fd, LOCK_SH, 0), 0);
        ck_assert_int_eq(lock_fd(-1, LOCK_EX, 10), -EBADF);
}
END_TEST

START_TEST(test_lock_fd_times_out)
{
        _cleanup_close_ int fd = openat(dir_fd, "l", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        pid_t child = spawn_holder("l", LOCK_EX);
        int64_t start = now_usec(), elapsed;

        ck_assert_int_eq(lock_fd(fd, LOCK_EX, 200), -ETIMEDOUT);
        elapsed = now_usec() - start;
        ck_assert_int_ge(elapsed, 200 * 1000);
        ck_assert_int_lt(elapsed, 30 * 1000 * 1000);
        ck_assert_int_eq(lock_fd(fd, LOCK_SH, 0), -ETIMEDOUT);

        /* The holder's death releases its lock, whatever it was doing. */
        reap(child);
        ck_assert_int_eq(lock_fd(fd, LOCK_EX, 10000), 0);
}
END_TEST

START_TEST(test_lock_fd_shared)
{
        _cleanup_close_ int fd = openat(dir_fd, "l", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        pid_t child = spawn_holder("l", LOCK_SH);

        ck_assert_int_eq(lock_fd(fd, LOCK_SH, 0), 0);
        ck_assert_int_eq(lock_fd(fd, LOCK_EX, 50), -ETIMEDOUT);
        reap(child);
}
END_TEST

/* A guarded lock is let go of at the end of its scope, the fd kept open; a
 * guard of a lock not taken lets go of nothing. */
START_TEST(test_unlockp_lets_go_at_scope_end)
{
        _cleanup_close_ int fd = openat(dir_fd, "l", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        _cleanup_close_ int other = openat(dir_fd, "l", O_RDWR | O_CLOEXEC);

        ck_assert_int_ge(other, 0);
        {
                _cleanup_(lock_fd_unlockp) int locked = -EBADF;

                ck_assert_int_eq(lock_fd(fd, LOCK_EX, 0), 0);
                locked = fd;
                ck_assert_int_eq(lock_fd(other, LOCK_EX, 0), -ETIMEDOUT);
        }
        ck_assert_int_ge(fcntl(fd, F_GETFD), 0);
        ck_assert_int_eq(lock_fd(other, LOCK_EX, 0), 0);
        {
                _cleanup_(lock_fd_unlockp) int locked = lock_fd(fd, LOCK_EX, 0);

                ck_assert_int_eq(locked, -ETIMEDOUT);
        }
        ck_assert_int_eq(lock_fd(fd, LOCK_EX, 0), -ETIMEDOUT);
}
END_TEST

START_TEST(test_acquire_creates)
{
        int fd = -EBADF, other = -EBADF;
        struct stat st, st_fd;

        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 1000, &fd), 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        ck_assert_int_eq(fstatat(dir_fd, "pod.lock", &st, AT_SYMLINK_NOFOLLOW), 0);
        ck_assert_int_eq(fstat(fd, &st_fd), 0);
        ck_assert(S_ISREG(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0600);
        ck_assert_uint_eq(st.st_ino, st_fd.st_ino);

        /* Held: another open file description cannot take it. */
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 50, &other), -ETIMEDOUT);
        ck_assert_int_eq(other, -EBADF);

        lock_file_release_and_unlink(dir_fd, "pod.lock", fd);
        ck_assert_int_eq(fstatat(dir_fd, "pod.lock", &st, AT_SYMLINK_NOFOLLOW), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 0, &other), 0);
        close(other);
}
END_TEST

START_TEST(test_acquire_times_out)
{
        pid_t child = spawn_holder("pod.lock", LOCK_EX);
        int fd = -EBADF;

        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 100, &fd), -ETIMEDOUT);
        ck_assert_int_eq(fd, -EBADF);
        reap(child);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 10000, &fd), 0);
        close(fd);
}
END_TEST

START_TEST(test_acquire_refuses)
{
        int fd = -EBADF;
        char *s;

        tmptree_put(dir_fd, "target", "keep");
        ck_assert_int_eq(symlinkat("target", dir_fd, "pod.lock"), 0);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 10, &fd), -ELOOP);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "../x", 10, &fd), -EINVAL);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "", 10, &fd), -EINVAL);
        ck_assert_int_eq(fd, -EBADF);
        s = tmptree_get(dir_fd, "target");
        ck_assert_str_eq(s, "keep");
        free(s);
}
END_TEST

/* Has process pid the file of st open (one of /proc/PID/fd)? */
static bool has_open(pid_t pid, const struct stat *st)
{
        char path[64];
        struct dirent *de;
        bool found = false;
        DIR *d;

        (void) snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return false;
        while (!found && (de = readdir(d))) {
                struct stat open;

                found = fstatat(dirfd(d), de->d_name, &open, 0) == 0 && open.st_dev == st->st_dev &&
                        open.st_ino == st->st_ino;
        }
        closedir(d);
        return found;
}

/* A waiter blocked on the old inode while the holder unlinks it must not end
 * up holding a lock on a file nobody else can find. */
START_TEST(test_release_and_unlink_with_waiter)
{
        int fd = -EBADF, other = -EBADF, status, ready[2];
        struct stat old;
        pid_t child;
        char c;

        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 1000, &fd), 0);
        ck_assert_int_eq(fstat(fd, &old), 0);
        ck_assert_int_eq(pipe(ready), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                struct stat st_fd, st_name;
                int r, mine = -EBADF;

                close(fd); /* the parent's lock, shared through fork */
                if (write(ready[1], "x", 1) != 1)
                        _exit(10);
                r = lock_file_acquire(dir_fd, "pod.lock", 30000, &mine);
                if (r < 0)
                        _exit(11);
                if (fstat(mine, &st_fd) < 0 ||
                    fstatat(dir_fd, "pod.lock", &st_name, AT_SYMLINK_NOFOLLOW) < 0)
                        _exit(12);
                if (st_fd.st_ino != st_name.st_ino || st_fd.st_nlink != 1)
                        _exit(13);
                if (write(ready[1], "y", 1) != 1)
                        _exit(14);
                pause();
                _exit(0);
        }
        close(ready[1]);
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        /* The child has the old file open (the parent's fd it closed): it
         * waits on the inode about to be unlinked. */
        WAIT_FOR(WAIT_PROCESS_MS, "the waiter opening the old file", has_open(child, &old));
        lock_file_release_and_unlink(dir_fd, "pod.lock", fd);

        if (read(ready[0], &c, 1) != 1) {
                ck_assert_int_eq(waitpid(child, &status, 0), child);
                ck_abort_msg("waiter failed with status %d", WEXITSTATUS(status));
        }
        /* The waiter holds the lock on the file that is linked now. */
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 50, &other), -ETIMEDOUT);
        reap(child);
        ck_assert_int_eq(lock_file_acquire(dir_fd, "pod.lock", 10000, &other), 0);
        close(other);
}
END_TEST

static Suite *lock_suite(void)
{
        Suite *s = suite_create("lock");
        TCase *tc = tcase_create("lock");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_lock_fd_uncontended);
        tcase_add_test(tc, test_lock_fd_times_out);
        tcase_add_test(tc, test_lock_fd_shared);
        tcase_add_test(tc, test_unlockp_lets_go_at_scope_end);
        tcase_add_test(tc, test_acquire_creates);
        tcase_add_test(tc, test_acquire_times_out);
        tcase_add_test(tc, test_acquire_refuses);
        tcase_add_test(tc, test_release_and_unlink_with_waiter);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(lock_suite());
}
