/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "tmptree.h"

#define MIB (1024 * 1024)

/* A child that writes n bytes of 'a' into a pipe and, with keep_open, then
 * holds its end open until killed. Exits 0 only if every write succeeded. */
static pid_t spawn_writer(size_t n, bool keep_open, int *ret_read_fd)
{
        int p[2];
        pid_t child;

        ck_assert_int_eq(pipe(p), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                static char chunk[65536];

                close(p[0]);
                signal(SIGPIPE, SIG_DFL);
                memset(chunk, 'a', sizeof(chunk));
                while (n > 0) {
                        size_t k = n < sizeof(chunk) ? n : sizeof(chunk);

                        if (write_all(p[1], chunk, k) < 0)
                                _exit(1);
                        n -= k;
                }
                if (keep_open)
                        pause();
                _exit(0);
        }
        close(p[1]);
        *ret_read_fd = p[0];
        return child;
}

static int wait_exit_status(pid_t child)
{
        int status;

        ck_assert_int_eq(waitpid(child, &status, 0), child);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

START_TEST(test_read_exactly_cap)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(100000, false, &fd);
        size_t len = 0;

        ck_assert_int_eq(read_all_fd(fd, 100000, &buf, &len), 0);
        ck_assert_uint_eq(len, 100000);
        ck_assert_int_eq(buf[len], '\0');
        ck_assert_int_eq(wait_exit_status(child), 0);
        close(fd);
}
END_TEST

START_TEST(test_read_one_over_cap)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(100001, false, &fd);

        ck_assert_int_eq(read_all_fd(fd, 100000, &buf, NULL), -EFBIG);
        ck_assert_ptr_null(buf);
        ck_assert_int_eq(wait_exit_status(child), 0);
        close(fd);
}
END_TEST

/* 20 MiB against a 4 MiB cap: refused, and the writer finishes without EPIPE. */
START_TEST(test_read_drains_large_input)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(20 * MIB, false, &fd);

        ck_assert_int_eq(read_all_fd_until(fd, 4 * MIB, now_usec() + 60 * 1000000LL, &buf, NULL),
                         -EFBIG);
        ck_assert_int_eq(wait_exit_status(child), 0);
        close(fd);
}
END_TEST

/* A writer that never closes: given up on at the deadline, not hung. */
START_TEST(test_read_deadline)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(10, true, &fd);
        int64_t start = now_usec();

        ck_assert_int_eq(read_all_fd_until(fd, 4096, start + 200 * 1000, &buf, NULL), -ETIMEDOUT);
        ck_assert_int_ge(now_usec() - start, 200 * 1000);
        ck_assert_int_lt(now_usec() - start, 30 * 1000000LL);
        kill(child, SIGKILL);
        (void) wait_exit_status(child);
        close(fd);
}
END_TEST

/* The deadline also bounds draining input that is too large. */
START_TEST(test_read_deadline_while_draining)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(2 * MIB, true, &fd);

        ck_assert_int_eq(read_all_fd_until(fd, 4096, now_usec() + 200 * 1000, &buf, NULL),
                         -ETIMEDOUT);
        kill(child, SIGKILL);
        (void) wait_exit_status(child);
        close(fd);
}
END_TEST

/* A directory stream of its own; a symlink is never followed. */
/* Milliseconds and now_usec() microseconds: a deadline after ms, and the
 * whole milliseconds left before one, never more than there are. */
START_TEST(test_deadline_ms)
{
        int64_t before, deadline, left;

        ck_assert_int_eq(usec_after_ms(5, 2), 2005);
        ck_assert_int_eq(usec_after_ms(0, 4000000000u), 4000000000000LL);
        before = now_usec();
        deadline = deadline_after_ms(1000);
        left = deadline_left_ms(deadline);
        /* All but what passed since, however long the machine took. */
        ck_assert_int_le(left, 1000);
        ck_assert_int_ge(left, 1000 - (now_usec() - before) / 1000 - 1);
        ck_assert_uint_eq(deadline_left_ms(now_usec() + 999), 0);
        ck_assert_uint_eq(deadline_left_ms(now_usec() - 5000), 0);
}
END_TEST

START_TEST(test_opendir_at)
{
        const char *path;
        int top = tmptree_new(&path), entries = 0;
        struct dirent *de;
        DIR *d = NULL;

        tmptree_mkdir(top, "dir");
        tmptree_put(top, "dir/a", "");
        ck_assert_int_eq(symlinkat("dir", top, "link"), 0);

        ck_assert_int_eq(opendir_at(top, "dir", &d), 0);
        while ((de = readdir(d)))
                entries += strcmp(de->d_name, "a") == 0;
        ck_assert_int_eq(entries, 1);
        closedir(d);
        ck_assert_int_eq(opendir_at(top, ".", &d), 0);
        closedir(d);
        /* O_DIRECTORY|O_NOFOLLOW on a symlink: ENOTDIR, never its target. */
        ck_assert_int_eq(opendir_at(top, "link", &d), -ENOTDIR);
        ck_assert_int_eq(opendir_at(top, "missing", &d), -ENOENT);
        ck_assert_int_eq(opendir_at(top, "dir/a", &d), -ENOTDIR);
        close(top);
}
END_TEST

START_TEST(test_read_empty)
{
        _cleanup_free_ char *buf = NULL;
        int fd = -EBADF;
        pid_t child = spawn_writer(0, false, &fd);
        size_t len = 1;

        ck_assert_int_eq(read_all_fd_until(fd, 4096, now_usec() + 10 * 1000000LL, &buf, &len), 0);
        ck_assert_uint_eq(len, 0);
        ck_assert_str_eq(buf, "");
        ck_assert_int_eq(wait_exit_status(child), 0);
        close(fd);
}
END_TEST

/* Closing keeps the errno a caller is about to report, even when close fails
 * (an fd that is not open). */
START_TEST(test_close_keeps_errno)
{
        int fd = 1000;

        ck_assert_int_eq(fcntl(fd, F_GETFD), -1);
        errno = EXDEV;
        ck_assert_int_eq(safe_close(fd), -EBADF);
        ck_assert_int_eq(errno, EXDEV);
        closep(&fd);
        ck_assert_int_eq(errno, EXDEV);
}
END_TEST

static Suite *fsutil_suite(void)
{
        Suite *s = suite_create("fsutil");
        TCase *tc = tcase_create("read_all_fd");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_read_exactly_cap);
        tcase_add_test(tc, test_read_one_over_cap);
        tcase_add_test(tc, test_read_drains_large_input);
        tcase_add_test(tc, test_read_deadline);
        tcase_add_test(tc, test_read_deadline_while_draining);
        tcase_add_test(tc, test_read_empty);
        tcase_add_test(tc, test_opendir_at);
        tcase_add_test(tc, test_deadline_ms);
        tcase_add_test(tc, test_close_keeps_errno);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(fsutil_suite());
}
