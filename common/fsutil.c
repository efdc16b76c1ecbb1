/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"

int write_all(int fd, const void *buf, size_t len)
{
        const char *p = buf;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (n == 0)
                        return -EIO;
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int write_atomic_at(int dir_fd, const char *name, const char *tmp, const char *data, size_t len,
                    mode_t mode)
{
        _cleanup_close_ int fd = -EBADF;
        int r;

        (void) unlinkat(dir_fd, tmp, 0); /* leftover from a SIGKILLed run */
        fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (fd < 0)
                return -errno;

        r = write_all(fd, data, len);
        if (r == 0 && fsync(fd) < 0)
                r = -errno;
        if (r == 0 && renameat(dir_fd, tmp, dir_fd, name) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlinkat(dir_fd, tmp, 0);
                return r;
        }

        /* Makes the rename durable; dir_fd is O_RDONLY, not O_PATH, for this. */
        return fsync(dir_fd) < 0 ? -errno : 0;
}

/* Waits until fd has data or EOF, or the deadline (now_usec() scale) passes.
 * Without a deadline (INT64_MAX) it returns at once and read(2) may block. */
static int wait_readable(int fd, int64_t deadline)
{
        if (deadline == INT64_MAX)
                return 0;
        for (;;) {
                int64_t left_ms = (deadline - now_usec() + 999) / 1000;
                int n;

                if (left_ms <= 0)
                        return -ETIMEDOUT;
                n = poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1,
                         left_ms > INT_MAX ? INT_MAX : (int) left_ms);
                if (n > 0)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return -errno;
        }
}

static ssize_t read_until(int fd, void *buf, size_t size, int64_t deadline)
{
        for (;;) {
                int r = wait_readable(fd, deadline);
                ssize_t n;

                if (r < 0)
                        return r;
                n = read(fd, buf, size);
                if (n >= 0)
                        return n;
                if (errno != EINTR)
                        return -errno;
        }
}

/* Keeps reading to EOF so that the writer (the runtime) never sees EPIPE. */
static int drain(int fd, int64_t deadline)
{
        char sink[65536];

        for (;;) {
                ssize_t n = read_until(fd, sink, sizeof(sink), deadline);

                if (n <= 0)
                        return (int) n;
        }
}

int read_all_fd_until(int fd, size_t cap, int64_t deadline, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        assert(ret);
        for (;;) {
                ssize_t n;

                if (len == size) {
                        /* Room for one byte more than cap tells input that is too large. */
                        size_t want = size ? size * 2 : 16384;
                        char *p;

                        if (size > cap) {
                                int r = drain(fd, deadline);
                                return r < 0 ? r : -EFBIG;
                        }
                        if (want > cap + 1)
                                want = cap + 1;
                        p = realloc(buf, want + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        size = want;
                }
                n = read_until(fd, buf + len, size - len, deadline);
                if (n < 0)
                        return (int) n;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        if (len > cap)
                return -EFBIG;

        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int read_all_fd(int fd, size_t cap, char **ret, size_t *ret_len)
{
        return read_all_fd_until(fd, cap, INT64_MAX, ret, ret_len);
}

int read_file_at(int dir_fd, const char *name, size_t cap, char **ret, size_t *ret_len)
{
        _cleanup_close_ int fd =
            openat(dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        return read_all_fd(fd, cap, ret, ret_len);
}

int read_small_file_at(int dir_fd, const char *path, size_t cap, char **ret)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        ssize_t n;

        fd = openat(dir_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;

        /* One byte more than allowed tells a file that is too large. */
        buf = malloc(cap + 2);
        if (!buf)
                return -ENOMEM;
        do
                n = read(fd, buf, cap + 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n > cap)
                return -EFBIG;

        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

int opendir_at(int dir_fd, const char *path, DIR **ret)
{
        _cleanup_close_ int fd = -EBADF;
        DIR *d;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        TAKE_FD(fd);
        *ret = d;
        return 0;
}

bool name_is_valid(const char *name)
{
        if (!name || name[0] == '\0' || strlen(name) > NAME_MAX)
                return false;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                return false;
        for (const unsigned char *p = (const unsigned char *) name; *p; p++)
                if (*p == '/' || *p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

int parse_pid(const char *s, const char *end, pid_t *ret)
{
        long v = 0;

        if (s == end || (*s == '0' && end - s > 1))
                return -EINVAL;
        for (; s < end; s++) {
                if (*s < '0' || *s > '9')
                        return -EINVAL;
                v = v * 10 + (*s - '0');
                if (v > INT_MAX)
                        return -ERANGE;
        }
        if (v == 0)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

bool next_pid_line(const char **p, pid_t *ret)
{
        const char *end;

        if (!*p || **p == '\0')
                return false;
        end = strchrnul(*p, '\n');
        if (parse_pid(*p, end, ret) < 0)
                *ret = 0;
        *p = *end ? end + 1 : end;
        return true;
}

static int pid_compare(const void *a, const void *b)
{
        pid_t x = *(const pid_t *) a, y = *(const pid_t *) b;

        return (x > y) - (x < y);
}

int pid_list_parse(const char *text, pid_t **ret, size_t *ret_n)
{
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 0, cap = 0;
        pid_t id;

        for (const char *p = text; next_pid_line(&p, &id);) {
                if (id == 0)
                        continue;
                if (n == cap) {
                        pid_t *a = reallocarray(ids, cap ? cap * 2 : 64, sizeof(*a));

                        if (!a)
                                return -ENOMEM;
                        ids = a;
                        cap = cap ? cap * 2 : 64;
                }
                ids[n++] = id;
        }
        if (n > 0)
                qsort(ids, n, sizeof(*ids), pid_compare);
        *ret = TAKE_PTR(ids);
        *ret_n = n;
        return 0;
}

bool pid_list_has(const pid_t *ids, size_t n, pid_t id)
{
        return n > 0 && bsearch(&id, ids, n, sizeof(*ids), pid_compare);
}

int64_t now_usec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t now_unix_ms(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t usec_after_ms(int64_t t, unsigned ms)
{
        return t + (int64_t) ms * 1000;
}

int64_t deadline_after_ms(unsigned ms)
{
        return usec_after_ms(now_usec(), ms);
}

unsigned deadline_left_ms(int64_t deadline)
{
        int64_t left = (deadline - now_usec()) / 1000;

        return left > 0 ? (unsigned) left : 0;
}

int64_t now_boottime_sec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (int64_t) ts.tv_sec;
}
