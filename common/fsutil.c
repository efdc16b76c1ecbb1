/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* Keeps reading to EOF so that the writer (the runtime) never sees EPIPE. */
static int drain(int fd)
{
        char sink[4096];

        for (;;) {
                ssize_t n = read(fd, sink, sizeof(sink));

                if (n == 0)
                        return 0;
                if (n < 0 && errno != EINTR)
                        return -errno;
        }
}

int read_all_fd(int fd, size_t cap, char **ret, size_t *ret_len)
{
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, size = 0;

        for (;;) {
                ssize_t n;

                if (len == size) {
                        size_t want = size ? size * 2 : 16384;
                        char *p;

                        if (size > cap) {
                                int r = drain(fd);
                                return r < 0 ? r : -EFBIG;
                        }
                        p = realloc(buf, want + 1);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        size = want;
                }
                n = read(fd, buf + len, size - len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
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

int64_t now_usec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t now_boottime_sec(void)
{
        struct timespec ts;

        (void) clock_gettime(CLOCK_BOOTTIME, &ts);
        return (int64_t) ts.tv_sec;
}
