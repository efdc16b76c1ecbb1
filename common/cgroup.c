/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fsutil.h"
#include "macro.h"

/* /proc/<pid>/cgroup: a line per hierarchy, each path at most a few KiB. */
#define CGROUP_FILE_MAX ((size_t) 64 * 1024)
/* mountinfo of a busy node: hundreds of mounts, each a line. */
#define MOUNTINFO_MAX ((size_t) 4 << 20)
#define CGROUP_THREADS_MAX ((size_t) 1 << 20)

/* The v1 hierarchies that every runtime puts a container in, in order. */
static const char *const v1_controllers[] = {"pids", "cpu", "memory"};

static bool path_is_valid(const char *path, size_t len)
{
        if (len == 0 || len >= CGROUP_PATH_MAX || path[0] != '/')
                return false;
        for (const char *c = path + 1, *end = path + len; c < end;) {
                const char *slash = memchr(c, '/', (size_t) (end - c));
                size_t n = (size_t) ((slash ? slash : end) - c);

                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (n == 0 && slash) /* "//": no empty components */
                        return false;
                c += n + 1;
        }
        for (size_t i = 0; i < len; i++)
                if ((unsigned char) path[i] < 0x20 || path[i] == 0x7f)
                        return false;
        return true;
}

/* Does the comma-separated list hold name? */
static bool list_has(const char *list, size_t len, const char *name)
{
        size_t n = strlen(name);

        for (const char *c = list, *end = list + len; c < end;) {
                const char *comma = memchr(c, ',', (size_t) (end - c));
                size_t item = (size_t) ((comma ? comma : end) - c);

                if (item == n && memcmp(c, name, n) == 0)
                        return true;
                c += item + 1;
        }
        return false;
}

/* The path of one hierarchy in a /proc/<pid>/cgroup text: "0::PATH" for v2,
 * "N:CONTROLLERS:PATH" for v1. 1 when found, 0 when not, -EBADMSG. */
static int find_hierarchy(const char *text, enum cgroup_kind kind, const char *controller,
                          char path[static CGROUP_PATH_MAX])
{
        for (const char *line = text; *line;) {
                const char *nl = strchrnul(line, '\n');
                const char *c1 = memchr(line, ':', (size_t) (nl - line));
                const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t) (nl - c1 - 1)) : NULL;
                bool match;

                if (!c2)
                        return -EBADMSG;
                if (kind == CGROUP_V2)
                        match = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
                else
                        match = list_has(c1 + 1, (size_t) (c2 - c1 - 1), controller);
                if (match) {
                        size_t len = (size_t) (nl - c2 - 1);

                        if (!path_is_valid(c2 + 1, len))
                                return -EBADMSG;
                        memcpy(path, c2 + 1, len);
                        path[len] = '\0';
                        return 1;
                }
                line = *nl ? nl + 1 : nl;
        }
        return 0;
}

int cgroup_of_pid(int proc_fd, pid_t pid, struct cgroup_ref *ret)
{
        _cleanup_free_ char *text = NULL;
        struct cgroup_ref ref = {.kind = CGROUP_V2};
        char file[32];
        int r;

        if (pid <= 0)
                return -EINVAL;
        (void) snprintf(file, sizeof(file), "%d/cgroup", (int) pid);
        r = read_small_file_at(proc_fd, file, CGROUP_FILE_MAX, &text);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        r = find_hierarchy(text, CGROUP_V2, NULL, ref.path);
        if (r < 0)
                return r;
        if (r > 0 && strcmp(ref.path, "/") != 0) {
                *ret = ref;
                return 0;
        }
        ref.kind = CGROUP_V1;
        for (size_t i = 0; i < ELEMENTSOF(v1_controllers); i++) {
                r = find_hierarchy(text, CGROUP_V1, v1_controllers[i], ref.path);
                if (r < 0)
                        return r;
                if (r > 0 && strcmp(ref.path, "/") != 0) {
                        (void) snprintf(ref.controller, sizeof(ref.controller), "%s",
                                        v1_controllers[i]);
                        *ret = ref;
                        return 0;
                }
        }
        return -ENOENT;
}

int cgroup_contains(const struct cgroup_ref *a, const struct cgroup_ref *b)
{
        size_t n = strlen(a->path);

        if (a->kind != b->kind || strcmp(a->controller, b->controller) != 0)
                return 0;
        if (strcmp(a->path, "/") == 0)
                return 1;
        return strncmp(a->path, b->path, n) == 0 && (b->path[n] == '\0' || b->path[n] == '/');
}

/* mountinfo's octal escapes (\040 for a space) undone in place. */
static void unescape(char *s)
{
        char *out = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
                    s[3] >= '0' && s[3] <= '7') {
                        *out++ = (char) ((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else {
                        *out++ = *s;
                }
        }
        *out = '\0';
}

/* Is this mountinfo line ("ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE
 * SOURCE SUPER") ref's hierarchy, shown from its root? Then its mount point. */
static bool mount_is_hierarchy(char *line, const struct cgroup_ref *ref, char **ret_point)
{
        char *fields[6], *dash, *type, *super, *save = NULL;
        size_t n = 0;

        dash = strstr(line, " - ");
        if (!dash)
                return false;
        *dash = '\0';
        for (char *f = strtok_r(line, " ", &save); f && n < ELEMENTSOF(fields);
             f = strtok_r(NULL, " ", &save))
                fields[n++] = f;
        type = strtok_r(dash + 3, " ", &save);
        (void) strtok_r(NULL, " ", &save); /* source */
        super = strtok_r(NULL, " ", &save);
        if (n < 5 || !type || strcmp(fields[3], "/") != 0)
                return false;
        if (ref->kind == CGROUP_V2 ? strcmp(type, "cgroup2") != 0
                                   : strcmp(type, "cgroup") != 0 || !super ||
                                         !list_has(super, strlen(super), ref->controller))
                return false;
        unescape(fields[4]);
        *ret_point = fields[4];
        return true;
}

static int open_mount(int proc_fd, const struct cgroup_ref *ref, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        char *save = NULL;

        fd = openat(proc_fd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (read_all_fd(fd, MOUNTINFO_MAX, &text, NULL) < 0)
                return -EBADMSG;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *point;
                int dir;

                if (!mount_is_hierarchy(line, ref, &point))
                        continue;
                dir = open(point, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (dir < 0)
                        return -errno;
                *ret_fd = dir;
                return 0;
        }
        return -ENOENT;
}

int cgroup_open(int proc_fd, const struct cgroup_ref *ref, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        char path[CGROUP_PATH_MAX], *save = NULL;
        int r;

        if (!path_is_valid(ref->path, strlen(ref->path)))
                return -EINVAL;
        r = open_mount(proc_fd, ref, &fd);
        if (r < 0)
                return r;
        (void) snprintf(path, sizeof(path), "%s", ref->path);
        for (char *c = strtok_r(path, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (next < 0)
                        return -errno;
                closep(&fd);
                fd = next;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int cgroup_threads(int dir_fd, enum cgroup_kind kind, pid_t **ret, size_t *ret_n)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *text = NULL;
        int r;

        fd = openat(dir_fd, kind == CGROUP_V2 ? "cgroup.threads" : "tasks",
                    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_all_fd(fd, CGROUP_THREADS_MAX, &text, NULL);
        if (r < 0)
                return r;
        return pid_list_parse(text, ret, ret_n);
}
