/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "outcome.h"
#include "statedir.h"

/* Copies word into out with ' ' made '_'; false for anything unsafe in a name. */
static bool slug(const char *word, char out[static OUTCOME_NAME_MAX + 1])
{
        size_t n = strlen(word);

        if (n == 0 || n > OUTCOME_NAME_MAX)
                return false;
        for (size_t i = 0; i <= n; i++) {
                char c = word[i];

                if (c == ' ')
                        c = '_';
                else if (c != '\0' && c != '_' && c != '-' && !(c >= '0' && c <= '9') &&
                         !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z'))
                        return false;
                out[i] = c;
        }
        return true;
}

int outcome_file_name(const char *stage, const char *result,
                      char name[static OUTCOME_FILE_NAME_SIZE])
{
        char s[OUTCOME_NAME_MAX + 1], r[OUTCOME_NAME_MAX + 1];

        if (!slug(stage, s) || !slug(result, r))
                return -EINVAL;
        snprintf(name, OUTCOME_FILE_NAME_SIZE, STATEDIR_OUTCOME_PREFIX "%s.%s", s, r);
        return 0;
}

int outcome_count_file(int state_dir_fd, const char *name)
{
        int fd, r = 0;
        ssize_t n;

        fd = openat(state_dir_fd, name, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                    0600);
        if (fd < 0)
                return -errno;
        do
                n = write(fd, "+", 1);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                r = -errno;
        else if (n != 1)
                r = -EIO;
        (void) close(fd);
        return r;
}

int outcome_count(int state_dir_fd, const char *stage, const char *result)
{
        char name[OUTCOME_FILE_NAME_SIZE];
        int r = outcome_file_name(stage, result, name);

        return r < 0 ? r : outcome_count_file(state_dir_fd, name);
}

/* "outcome.<stage>.<result>" into o; false for any other name. */
static bool parse_name(const char *name, struct outcome *o)
{
        const char *stage = name + strlen(STATEDIR_OUTCOME_PREFIX), *dot;
        char s[OUTCOME_NAME_MAX + 1];

        if (!startswith(name, STATEDIR_OUTCOME_PREFIX))
                return false;
        dot = strchr(stage, '.');
        if (!dot || (size_t) (dot - stage) > OUTCOME_NAME_MAX)
                return false;
        snprintf(s, sizeof(s), "%.*s", (int) (dot - stage), stage);
        return slug(s, o->stage) && strcmp(s, o->stage) == 0 && slug(dot + 1, o->result) &&
               strcmp(dot + 1, o->result) == 0;
}

static int outcome_compare(const void *a, const void *b)
{
        const struct outcome *x = a, *y = b;
        int c = strcmp(x->stage, y->stage);

        return c != 0 ? c : strcmp(x->result, y->result);
}

int outcome_read_all(int state_dir_fd, struct outcome **ret, size_t *ret_n)
{
        _cleanup_free_ struct outcome *items = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        size_t n = 0;
        int r;

        r = opendir_at(state_dir_fd, ".", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                struct outcome o = {0}, *a;
                struct stat st;

                if (!parse_name(de->d_name, &o) ||
                    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                    !S_ISREG(st.st_mode))
                        continue;
                o.count = (uint64_t) st.st_size;
                a = realloc(items, (n + 1) * sizeof(*a));
                if (!a)
                        return -ENOMEM;
                a[n++] = o;
                items = a;
        }
        if (errno != 0)
                return -errno;
        if (n > 0)
                qsort(items, n, sizeof(*items), outcome_compare);
        *ret = TAKE_PTR(items);
        *ret_n = n;
        return 0;
}
