/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "statedir.h"
#include "string_table.h"

static const char *const suffixes[] = {
    [STATEDIR_MEMBERS] = ".members",
    [STATEDIR_MEMBERS_TMP] = ".members.tmp",
    [STATEDIR_LOCK] = ".lock",
};
DEFINE_PRIVATE_STRING_TABLE_TO_STRING(statedir_suffix, suffixes, enum statedir_file)

/* A directory, no symlink; for a writer (create), owned by it and
 * writable by no one else. */
static int open_trusted(int dir_fd, const char *path, bool create, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (create && (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH))))
                return -EPERM;

        *ret_fd = TAKE_FD(fd);
        return 0;
}

int statedir_open(const char *path, bool create, int *ret_fd)
{
        size_t len = path ? strlen(path) : 0;

        assert(ret_fd);
        if (len == 0 || (len > 1 && path[len - 1] == '/'))
                return -EINVAL;
        if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
                return -errno;

        return open_trusted(AT_FDCWD, path, create, ret_fd);
}

int statedir_open_finished(int state_fd, bool create, int *ret_fd)
{
        assert(state_fd >= 0 && ret_fd);
        if (create && mkdirat(state_fd, STATEDIR_FINISHED, 0700) < 0 && errno != EEXIST)
                return -errno;
        return open_trusted(state_fd, STATEDIR_FINISHED, create, ret_fd);
}

int statedir_name(const char *uid, enum statedir_file kind, char buf[static STATEDIR_NAME_SIZE])
{
        const char *suffix = statedir_suffix(kind);

        if (!suffix || !name_is_valid(uid) || strlen(uid) > POD_UID_LEN)
                return -EINVAL;
        (void) snprintf(buf, STATEDIR_NAME_SIZE, "%s%s", uid, suffix);
        return 0;
}

/* FNV-1a: a control group's name (up to NAME_MAX bytes) in a file name. */
static uint64_t ctrl_hash(const char *ctrl)
{
        uint64_t h = UINT64_C(14695981039346656037);

        for (const unsigned char *p = (const unsigned char *) ctrl; *p; p++)
                h = (h ^ *p) * UINT64_C(1099511628211);
        return h;
}

void statedir_freed_name(const char *ctrl, char buf[static STATEDIR_FREED_NAME_SIZE])
{
        (void) snprintf(buf, STATEDIR_FREED_NAME_SIZE, "%s%016" PRIx64, STATEDIR_FREED_PREFIX,
                        ctrl_hash(ctrl));
}

bool statedir_is_freed_name(const char *name)
{
        const char *hex = name + strlen(STATEDIR_FREED_PREFIX);

        return startswith(name, STATEDIR_FREED_PREFIX) && strlen(hex) == 16 &&
               strspn(hex, "0123456789abcdef") == 16;
}

int statedir_mark_freed(int state_fd, const char *ctrl)
{
        char name[STATEDIR_FREED_NAME_SIZE];
        _cleanup_close_ int fd = -EBADF;

        statedir_freed_name(ctrl, name);
        fd = openat(state_fd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
        if (fd < 0)
                return -errno;
        return futimens(fd, NULL) < 0 ? -errno : 0;
}

int statedir_freed_age_ms(int state_fd, const char *ctrl, int64_t *ret)
{
        char name[STATEDIR_FREED_NAME_SIZE];
        struct stat st;
        int64_t at;

        statedir_freed_name(ctrl, name);
        if (fstatat(state_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -ENOENT;
        at = (int64_t) st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        if (at > now_unix_ms())
                return -ERANGE;
        *ret = now_unix_ms() - at;
        return 0;
}

/* name starts with a canonical pod UID. */
static bool starts_with_uid(const char *name, char uid[static POD_UID_LEN + 1])
{
        if (strlen(name) <= POD_UID_LEN)
                return false;
        memcpy(uid, name, POD_UID_LEN);
        uid[POD_UID_LEN] = '\0';
        return pod_uid_is_canonical(uid);
}

bool statedir_parse_intake_name(const char *name, char uid[static POD_UID_LEN + 1])
{
        return starts_with_uid(name, uid) &&
               startswith(name + POD_UID_LEN, STATEDIR_INTAKE_INFIX) &&
               name[POD_UID_LEN + strlen(STATEDIR_INTAKE_INFIX)] != '\0';
}

bool statedir_parse_name(const char *name, char uid[static POD_UID_LEN + 1],
                         enum statedir_file *ret_kind)
{
        if (!starts_with_uid(name, uid))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                if (strcmp(name + POD_UID_LEN, suffixes[i]) == 0) {
                        *ret_kind = (enum statedir_file) i;
                        return true;
                }
        }
        return false;
}

static struct statedir_pod *pod_for(struct statedir_pod **pods, size_t *n, const char *uid)
{
        struct statedir_pod *a;

        for (size_t i = 0; i < *n; i++)
                if (strcmp((*pods)[i].uid, uid) == 0)
                        return &(*pods)[i];
        a = realloc(*pods, (*n + 1) * sizeof(*a));
        if (!a)
                return NULL;
        *pods = a;
        a[*n] = (struct statedir_pod){0};
        memcpy(a[*n].uid, uid, POD_UID_LEN + 1);
        return &a[(*n)++];
}

static int pod_compare(const void *a, const void *b)
{
        return strcmp(((const struct statedir_pod *) a)->uid,
                      ((const struct statedir_pod *) b)->uid);
}

int statedir_scan(int dir_fd, struct statedir_pod **ret, size_t *ret_n)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ struct statedir_pod *pods = NULL;
        size_t n = 0;
        struct dirent *de;
        int r;

        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                char uid[POD_UID_LEN + 1];
                enum statedir_file kind;
                bool intake = statedir_parse_intake_name(de->d_name, uid);
                struct statedir_pod *p;

                if (!intake && !statedir_parse_name(de->d_name, uid, &kind))
                        continue;
                p = pod_for(&pods, &n, uid);
                if (!p)
                        return -ENOMEM;
                if (intake) {
                        p->intake = true;
                        continue;
                }
                p->members |= kind == STATEDIR_MEMBERS;
                p->temp |= kind == STATEDIR_MEMBERS_TMP;
                p->lock |= kind == STATEDIR_LOCK;
        }
        if (errno != 0)
                return -errno;
        if (n > 1) /* qsort wants an array, even of nothing */
                qsort(pods, n, sizeof(*pods), pod_compare);
        *ret = TAKE_PTR(pods);
        *ret_n = n;
        return 0;
}
