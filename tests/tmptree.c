/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "tmptree.h"

static char top[PATH_MAX];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) remove(path);
        return 0;
}

int tmptree_run(Suite *s)
{
        SRunner *sr = srunner_create(s);
        const char *base = getenv("TMPDIR");
        int failed;

        snprintf(top, sizeof(top), "%s/rmh-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(top)) {
                perror("mkdtemp");
                return 1;
        }
        /* Tests that drop privileges still need to reach their own trees. */
        (void) chmod(top, 0755);

        srunner_set_fork_status(sr, CK_FORK);
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);

        (void) nftw(top, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return failed == 0 ? 0 : 1;
}

int tmptree_new(const char **ret_path)
{
        static char path[PATH_MAX + 16];
        int fd;

        snprintf(path, sizeof(path), "%s/t-XXXXXX", top);
        ck_assert_ptr_nonnull(mkdtemp(path));
        ck_assert_int_eq(chmod(path, 0755), 0);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        if (ret_path)
                *ret_path = path;
        return fd;
}

void tmptree_put(int dir_fd, const char *path, const char *text)
{
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "create %s: %m", path);
        ck_assert_int_eq(write_all(fd, text, strlen(text)), 0);
}

void tmptree_mkdir(int dir_fd, const char *path)
{
        ck_assert_msg(mkdirat(dir_fd, path, 0755) == 0, "mkdir %s: %m", path);
}

char *tmptree_get(int dir_fd, const char *path)
{
        _cleanup_close_ int fd = -EBADF;
        char *buf = NULL;

        fd = openat(dir_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        ck_assert_int_eq(read_all_fd(fd, 64 * 1024 * 1024, &buf, NULL), 0);
        return buf;
}

int tmptree_count(int dir_fd, const char *path)
{
        struct dirent *de;
        int fd, n = 0;
        DIR *d;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -1;
        d = fdopendir(fd);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}
