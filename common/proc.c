/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "fsutil.h"
#include "macro.h"
#include "proc.h"

/* /proc/<pid>/stat is a few hundred bytes: 52 numeric fields and a short comm. */
#define PROC_STAT_MAX 4096

int proc_open(int *ret_fd)
{
        int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* Reads <dir_fd>/<path> (a process's stat) and points *ret_fields at field 3
 * (state). comm (field 2) may hold spaces and ')', so fields are counted
 * from the last ')'. */
static int read_stat_at(int dir_fd, const char *path, char **ret_buf, const char **ret_fields)
{
        _cleanup_free_ char *buf = NULL;
        char *p;
        int r;

        r = read_small_file_at(dir_fd, path, PROC_STAT_MAX, &buf);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;

        p = strrchr(buf, ')');
        if (!p || p[1] != ' ' || p[2] == '\0')
                return -EBADMSG;
        *ret_fields = p + 2;
        *ret_buf = TAKE_PTR(buf);
        return 0;
}

static int read_stat(int proc_fd, pid_t pid, char **ret_buf, const char **ret_fields)
{
        char path[32];

        if (pid <= 0)
                return -EINVAL;
        snprintf(path, sizeof(path), "%d/stat", (int) pid);
        return read_stat_at(proc_fd, path, ret_buf, ret_fields);
}

int proc_start_time(int proc_fd, pid_t pid, uint64_t *ret)
{
        return proc_start_time_running(proc_fd, pid, ret, NULL);
}

/* Whether the process runs, by its stat fields from field 3 (state, at p)
 * on. A zombie leader whose other threads run (its main thread called
 * pthread_exit) does: num_threads (field 20) counts them with it, while a
 * zombie that is all that is left counts 1. X never does. */
static bool stat_says_running(const char *p)
{
        if (*p == 'X')
                return false;
        if (*p != 'Z')
                return true;
        for (unsigned i = 0; i < 17 && p; i++) {
                p = strchr(p, ' ');
                p = p ? p + 1 : NULL;
        }
        return p && strtoul(p, NULL, 10) > 1;
}

/* Field 22 (starttime) and whether the process runs (stat_says_running). */
static int parse_start_time(const char *p, uint64_t *ret, bool *ret_running)
{
        unsigned long long v;
        char *end;

        if (ret_running)
                *ret_running = stat_says_running(p);

        /* Field 22 follows the 19th space after field 3. */
        for (unsigned i = 0; i < 19; i++) {
                p = strchr(p, ' ');
                if (!p)
                        return -EBADMSG;
                p++;
        }
        if (!isdigit((unsigned char) *p))
                return -EBADMSG;
        errno = 0;
        v = strtoull(p, &end, 10);
        if (errno != 0 || (*end != ' ' && *end != '\n' && *end != '\0'))
                return -EBADMSG;

        *ret = (uint64_t) v;
        return 0;
}

int proc_start_time_running(int proc_fd, pid_t pid, uint64_t *ret, bool *ret_running)
{
        _cleanup_free_ char *buf = NULL;
        const char *p;
        int r = read_stat(proc_fd, pid, &buf, &p);

        return r < 0 ? r : parse_start_time(p, ret, ret_running);
}

int proc_is_running(int proc_fd, pid_t pid)
{
        _cleanup_free_ char *buf = NULL;
        const char *p;
        int r;

        r = read_stat(proc_fd, pid, &buf, &p);
        if (r == -ESRCH)
                return 0;
        if (r < 0)
                return r;
        return stat_says_running(p);
}

int proc_pid_ns(int proc_fd, uint64_t *ret)
{
        struct stat st;

        /* Follows "self" and the ns/pid magic link to the namespace's nsfs inode. */
        if (fstatat(proc_fd, "self/ns/pid", &st, 0) < 0)
                return -errno;
        *ret = (uint64_t) st.st_ino;
        return 0;
}

bool boot_id_is_valid(const char *s)
{
        for (size_t i = 0; i < BOOT_ID_LEN; i++) {
                bool dash = i == 8 || i == 13 || i == 18 || i == 23;

                if (dash ? s[i] != '-'
                         : !((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
                        return false;
        }
        return s[BOOT_ID_LEN] == '\0';
}

int proc_boot_id(int proc_fd, char ret[static BOOT_ID_LEN + 1])
{
        _cleanup_close_ int fd = openat(proc_fd, "sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
        char buf[BOOT_ID_LEN + 2];
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return -errno;
        if (n != BOOT_ID_LEN + 1 || buf[BOOT_ID_LEN] != '\n')
                return -EBADMSG;
        buf[BOOT_ID_LEN] = '\0';
        if (!boot_id_is_valid(buf))
                return -EBADMSG;
        memcpy(ret, buf, BOOT_ID_LEN + 1);
        return 0;
}

int proc_pin(int proc_fd, pid_t id, int *ret_fd)
{
        char path[16];
        int fd;

        if (id <= 0)
                return -EINVAL;
        (void) snprintf(path, sizeof(path), "%d", (int) id);
        fd = openat(proc_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : -errno;
        *ret_fd = fd;
        return 0;
}

int proc_pinned_start_time(int pin_fd, uint64_t *ret, bool *ret_running)
{
        _cleanup_free_ char *buf = NULL;
        const char *p;
        int r = read_stat_at(pin_fd, "stat", &buf, &p);

        return r < 0 ? r : parse_start_time(p, ret, ret_running);
}

int proc_pin_holds(int pin_fd)
{
        if (faccessat(pin_fd, "stat", F_OK, 0) == 0)
                return 1;
        return errno == ENOENT || errno == ESRCH ? 0 : -errno;
}
