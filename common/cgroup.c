/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "fsutil.h"
#include "macro.h"

/* /proc/<pid>/cgroup: a line per hierarchy, each path at most a few KiB. */
#define CGROUP_FILE_MAX ((size_t) 64 * 1024)
/* What it takes on most nodes: a dozen lines of short paths. */
#define CGROUP_FILE_USUAL ((size_t) 4096)
/* mountinfo of a busy node: hundreds of mounts, each a line. */
#define MOUNTINFO_MAX ((size_t) 4 << 20)
#define CGROUP_THREADS_MAX ((size_t) 1 << 20)
/* Ids below PID_MAX_LIMIT take at most 8 bytes a line: a list past the cap is
 * past cgroup_subtree_threads' bound too. */
_Static_assert(CGROUP_THREADS_MAX / 8 > CGROUP_SUBTREE_THREADS, "cap below the bound");

/* The v1 hierarchies that every runtime puts a container in, in order. */
static const char *const v1_controllers[] = {"pids", "cpu", "memory"};

bool cgroup_path_is_valid(const char *path, size_t len)
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

/* How many "/.." lead a path as /proc/<pid>/cgroup or mountinfo print it
 * (what lies outside the reader's cgroup namespace), and where the rest
 * begins: "/../../a/b" is 2 and "/a/b", "/.." is 1 and "". */
static unsigned leading_ups(const char *path, const char **ret_rest)
{
        unsigned n = 0;

        while (strncmp(path, "/..", 3) == 0 && (path[3] == '\0' || path[3] == '/')) {
                path += 3;
                n++;
        }
        *ret_rest = path;
        return n;
}

/* Is path (len bytes) valid as printed: ups, then a valid path or nothing? */
static bool printed_path_is_valid(const char *path, size_t len)
{
        char copy[CGROUP_PATH_MAX];
        const char *rest;

        if (len >= sizeof(copy))
                return false;
        memcpy(copy, path, len);
        copy[len] = '\0';
        return (leading_ups(copy, &rest) > 0 && *rest == '\0') ||
               cgroup_path_is_valid(rest, strlen(rest));
}

/* The path of one hierarchy in a /proc/<pid>/cgroup text: "0::PATH" for v2,
 * "N:CONTROLLERS:PATH" for v1, as printed. 1 when found, 0 when not,
 * -EBADMSG. */
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

                        if (!printed_path_is_valid(c2 + 1, len))
                                return -EBADMSG;
                        memcpy(path, c2 + 1, len);
                        path[len] = '\0';
                        return 1;
                }
                line = *nl ? nl + 1 : nl;
        }
        return 0;
}

/* <proc>/<pid>/cgroup; -ESRCH when pid is gone. Read into CGROUP_FILE_USUAL
 * first: a buffer of CGROUP_FILE_MAX at every read (one per thread that a
 * join checks) costs the heap two brk calls. */
static int read_cgroup_file(int proc_fd, pid_t pid, char **ret)
{
        char file[32];
        int r;

        if (pid <= 0)
                return -EINVAL;
        (void) snprintf(file, sizeof(file), "%d/cgroup", (int) pid);
        r = read_small_file_at(proc_fd, file, CGROUP_FILE_USUAL, ret);
        if (r == -EFBIG)
                r = read_small_file_at(proc_fd, file, CGROUP_FILE_MAX, ret);
        return r == -ENOENT ? -ESRCH : r;
}

/* The printed path in view v's terms, into ret (CGROUP_PATH_MAX): each ".."
 * climbs one component of v->ns_root towards the mount's root. -EXDEV when
 * it climbs past the mount's root, or v is not known. */
static int translate(const struct cgroup_view *v, const char *printed, char *ret)
{
        const char *rest;
        unsigned ups = leading_ups(printed, &rest);
        size_t keep = strcmp(v->ns_root, "/") == 0 ? 0 : strlen(v->ns_root);

        if (!v->known || ups > v->ups)
                return -EXDEV;
        if (strcmp(rest, "/") == 0) /* the namespace's root itself */
                rest = "";
        for (unsigned i = 0; i < ups; i++)
                while (keep > 0 && v->ns_root[--keep] != '/')
                        ;
        if (snprintf(ret, CGROUP_PATH_MAX, "%.*s%s", (int) keep, v->ns_root,
                     (keep > 0 || *rest) ? rest : "/") >= CGROUP_PATH_MAX)
                return -EBADMSG;
        return 0;
}

/* pid's cgroup in one hierarchy, into ref->path (kind and controller set),
 * in m's view. 1 when listed, 0 when not, -errno. */
static int hierarchy_of(const char *text, const struct cgroup_mounts *m, struct cgroup_ref *ref)
{
        char printed[CGROUP_PATH_MAX];
        int r = find_hierarchy(text, ref->kind, ref->controller, printed);

        if (r <= 0)
                return r;
        r = translate(cgroup_view_of(m, ref), printed, ref->path);
        return r < 0 ? r : 1;
}

int cgroup_of_pid(int proc_fd, const struct cgroup_mounts *m, pid_t pid, struct cgroup_ref *ret)
{
        _cleanup_free_ char *text = NULL;
        struct cgroup_ref ref = {.kind = CGROUP_V2};
        int r;

        r = read_cgroup_file(proc_fd, pid, &text);
        if (r < 0)
                return r;
        r = hierarchy_of(text, m, &ref);
        if (r < 0)
                return r;
        if (r > 0 && strcmp(ref.path, "/") != 0) {
                struct cgroup_ref pids = {.kind = CGROUP_V1, .controller = "pids"};

                /* A hybrid host's runtime that made the container a pids
                 * cgroup of its own but left it in the unified cgroup it
                 * inherited (its daemon's, with every other container's
                 * processes): the pids one is the container's. */
                if (hierarchy_of(text, m, &pids) > 0 && strcmp(pids.path, "/") != 0 &&
                    strcmp(pids.path, ref.path) != 0)
                        ref = pids;
                *ret = ref;
                return 0;
        }
        ref.kind = CGROUP_V1;
        for (size_t i = 0; i < ELEMENTSOF(v1_controllers); i++) {
                (void) snprintf(ref.controller, sizeof(ref.controller), "%s", v1_controllers[i]);
                r = hierarchy_of(text, m, &ref);
                if (r < 0)
                        return r;
                if (r > 0 && strcmp(ref.path, "/") != 0) {
                        *ret = ref;
                        return 0;
                }
        }
        return -ENOENT;
}

int cgroup_of_pid_in(int proc_fd, const struct cgroup_mounts *m, pid_t pid, enum cgroup_kind kind,
                     const char *controller, struct cgroup_ref *ret)
{
        _cleanup_free_ char *text = NULL;
        struct cgroup_ref ref = {.kind = kind};
        int r;

        if (kind == CGROUP_V1) {
                if (!controller || !controller[0] || strlen(controller) >= sizeof(ref.controller))
                        return -EINVAL;
                (void) snprintf(ref.controller, sizeof(ref.controller), "%s", controller);
        }
        r = read_cgroup_file(proc_fd, pid, &text);
        if (r < 0)
                return r;
        r = hierarchy_of(text, m, &ref);
        if (r < 0)
                return r;
        if (r == 0)
                return -ENOENT;
        *ret = ref;
        return 0;
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

int cgroup_task_is_under(int proc_fd, const struct cgroup_mounts *m, pid_t tid,
                         const struct cgroup_ref *ancestor)
{
        struct cgroup_ref cg;
        int r;

        r = cgroup_of_pid_in(proc_fd, m, tid, ancestor->kind, ancestor->controller, &cg);
        if (r == -ENOENT) /* a hierarchy this kernel lacks holds no thread */
                return 0;
        if (r == -EXDEV && cgroup_view_of(m, ancestor)->known) /* outside what ancestor is in */
                return 0;
        if (r < 0)
                return r;
        return cgroup_contains(ancestor, &cg);
}

const char *cgroup_hierarchy_name(const struct cgroup_ref *ref)
{
        return ref->kind == CGROUP_V2 ? "unified" : ref->controller;
}

int cgroup_hierarchy_parse(const char *name, struct cgroup_ref *ret)
{
        if (strcmp(name, "unified") == 0) {
                ret->kind = CGROUP_V2;
                ret->controller[0] = '\0';
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(v1_controllers); i++)
                if (strcmp(name, v1_controllers[i]) == 0) {
                        ret->kind = CGROUP_V1;
                        (void) snprintf(ret->controller, sizeof(ret->controller), "%s", name);
                        return 0;
                }
        return -EINVAL;
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

/* Opens path ("/" or "/a/b") below top, each component with O_NOFOLLOW. */
static int open_below(int top, const char *path, int *ret_fd)
{
        _cleanup_close_ int fd = -EBADF;
        char copy[CGROUP_PATH_MAX], *save = NULL;

        fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        (void) snprintf(copy, sizeof(copy), "%s", path);
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (next < 0)
                        return -errno;
                closep(&fd);
                fd = next;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* One line of mountinfo ("ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS] - TYPE
 * SOURCE SUPER"), split in place. */
struct mount_line {
        unsigned long id, parent;
        char *root, *point, *type, *super;
};

static bool split_mount_line(char *line, struct mount_line *ret)
{
        char *fields[5], *dash, *save = NULL;
        size_t n = 0;

        dash = strstr(line, " - ");
        if (!dash)
                return false;
        *dash = '\0';
        for (char *f = strtok_r(line, " ", &save); f && n < ELEMENTSOF(fields);
             f = strtok_r(NULL, " ", &save))
                fields[n++] = f;
        ret->type = strtok_r(dash + 3, " ", &save);
        (void) strtok_r(NULL, " ", &save); /* source */
        ret->super = strtok_r(NULL, " ", &save);
        if (n < 5 || !ret->type)
                return false;
        unescape(fields[3]);
        unescape(fields[4]);
        ret->id = strtoul(fields[0], NULL, 10);
        ret->parent = strtoul(fields[1], NULL, 10);
        ret->root = fields[3];
        ret->point = fields[4];
        return true;
}

/* <proc>/<file> (a mountinfo) read whole into *ret_text and split into
 * *ret_lines, which point into it: both the caller's to free. 0 or -errno. */
static int read_mount_lines(int proc_fd, const char *file, char **ret_text,
                            struct mount_line **ret_lines, size_t *ret_n)
{
        _cleanup_free_ struct mount_line *lines = NULL;
        _cleanup_free_ char *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0, room = 0;
        char *save = NULL;
        int r;

        fd = openat(proc_fd, file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_all_fd(fd, MOUNTINFO_MAX, &text, NULL);
        if (r < 0)
                return r;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                if (n == room) {
                        struct mount_line *more =
                            reallocarray(lines, room ? room * 2 : 64, sizeof(*lines));

                        if (!more)
                                return -ENOMEM;
                        lines = more;
                        room = room ? room * 2 : 64;
                }
                if (split_mount_line(line, &lines[n]))
                        n++;
        }
        *ret_text = TAKE_PTR(text);
        *ret_lines = TAKE_PTR(lines);
        *ret_n = n;
        return 0;
}

/* Which hierarchy a cgroup mount shows: the index in v1_controllers, -1 for
 * v2, -2 for none of those. */
static int hierarchy_index(const struct mount_line *l)
{
        if (strcmp(l->type, "cgroup2") == 0)
                return -1;
        for (size_t i = 0;
             strcmp(l->type, "cgroup") == 0 && l->super && i < ELEMENTSOF(v1_controllers); i++)
                if (list_has(l->super, strlen(l->super), v1_controllers[i]))
                        return (int) i;
        return -2;
}

/* Is upper the mount point lower or one of its ancestors? A later mount
 * there hides lower: what opening lower's path reaches is not lower's. */
static bool covers(const char *upper, const char *lower)
{
        size_t n = strlen(upper);

        return strcmp(upper, "/") == 0 ||
               (strncmp(upper, lower, n) == 0 && (lower[n] == '\0' || lower[n] == '/'));
}

/* The mount that path reaches from lines[at] (a mount at or above it, on
 * top of its mount point): the child of it at or above path nearest to it,
 * again and again. A child on the same mount point is mounted over it; a
 * child between it and path hides what lies below. lines is in the order
 * mountinfo lists them, which is not the order they were mounted in. */
static const struct mount_line *reach(const struct mount_line *lines, size_t n, size_t at,
                                      const char *path)
{
        for (size_t hops = 0; hops < n; hops++) {
                const struct mount_line *next = NULL;

                for (size_t i = 0; i < n; i++)
                        if (i != at && lines[i].parent == lines[at].id &&
                            covers(lines[i].point, path) &&
                            (!next || strlen(lines[i].point) < strlen(next->point)))
                                next = &lines[i];
                if (!next)
                        break;
                at = (size_t) (next - lines);
        }
        return &lines[at];
}

int mountinfo_type_at(int proc_fd, pid_t pid, const char *path, char **ret_type)
{
        _cleanup_free_ struct mount_line *lines = NULL;
        _cleanup_free_ char *text = NULL;
        char file[32], want[PATH_MAX];
        const struct mount_line *m;
        size_t len = strlen(path), n = 0, root = SIZE_MAX;
        int r;

        while (len > 1 && path[len - 1] == '/')
                len--; /* mountinfo prints no trailing slash */
        if (len >= sizeof(want))
                return -ENAMETOOLONG;
        memcpy(want, path, len);
        want[len] = '\0';
        (void) snprintf(file, sizeof(file), "%d/mountinfo", (int) pid);
        r = read_mount_lines(proc_fd, file, &text, &lines, &n);
        if (r < 0)
                return r;
        /* From the bottom of what is mounted at pid's root: a mount at "/"
         * whose parent is no mount at "/" too. */
        for (size_t i = 0; i < n && root == SIZE_MAX; i++) {
                bool over = false;

                if (strcmp(lines[i].point, "/") != 0)
                        continue;
                for (size_t j = 0; j < n; j++)
                        over |= j != i && lines[j].id == lines[i].parent &&
                                strcmp(lines[j].point, "/") == 0;
                if (!over)
                        root = i;
        }
        if (root == SIZE_MAX)
                return 0;
        m = reach(lines, n, root, want);
        if (strcmp(m->point, want) != 0)
                return 0;
        *ret_type = strdup(m->type);
        return *ret_type ? 1 : -ENOMEM;
}

/* A search for the reader's namespace root: the directory below the mount
 * whose cgroup self lists the reader's thread (cgroup.threads, tasks: a
 * threaded cgroup lists no processes). */
struct ns_search {
        const char *self; /* the reader's cgroup below its namespace's root, "/" or "/a/b" */
        enum cgroup_kind kind;
        pid_t tid;
        unsigned left; /* directories still to be opened */
        char path[CGROUP_PATH_MAX];
};

static int holds_reader(int dir_fd, const struct ns_search *s)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ pid_t *tids = NULL;
        size_t n = 0;

        if (open_below(dir_fd, s->self, &fd) < 0 || cgroup_threads(fd, s->kind, &tids, &n) < 0)
                return 0;
        return pid_list_has(tids, n, s->tid);
}

/* Walks depth levels of cgroups below dir_fd (s->path, len bytes, names it)
 * for it. 1 with s->path set, 0 when not found, -E2BIG past the bound,
 * -errno. */
static int find_ns_root(struct ns_search *s, int dir_fd, size_t len, unsigned depth)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        if (depth == 0)
                return holds_reader(dir_fd, s);
        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): opendir_at set d */
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                size_t n = strlen(de->d_name);

                if (!name_is_valid(de->d_name) ||
                    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                        continue;
                if (s->left == 0)
                        return -E2BIG;
                s->left--;
                fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0 || len + 1 + n >= sizeof(s->path))
                        continue; /* a file, a symlink, removed meanwhile, or too deep */
                s->path[len] = '/';
                memcpy(s->path + len + 1, de->d_name, n + 1);
                r = find_ns_root(s, fd, len + 1 + n, depth - 1);
                if (r != 0)
                        return r;
                s->path[len] = '\0';
        }
        return 0;
}

/* The cgroups a search for the namespace's root opens at most: a node's
 * containers, several times over. */
#define NS_SEARCH_MAX 100000

/* Where view v's namespace root lies below its mount: the directory v->ups
 * levels down that holds the reader's own cgroup (self_printed, as
 * /proc/self/cgroup prints it) with the reader in it. Sets v->known and
 * v->ns_root when found. */
static void locate_ns_root(struct cgroup_view *v, enum cgroup_kind kind, const char *self_printed)
{
        struct ns_search s = {
            .self = self_printed, .kind = kind, .tid = getpid(), .left = NS_SEARCH_MAX};
        const char *rest;

        if (leading_ups(self_printed, &rest) > 0) /* the reader left its namespace's root */
                return;
        if (find_ns_root(&s, v->fd, 0, v->ups) == 1) {
                memcpy(v->ns_root, s.path, sizeof(v->ns_root));
                v->known = true;
        }
}

/* Does v's mount show its hierarchy from the root? Only the root lacks v2's
 * cgroup.type and has v1's release_agent. */
static bool shows_root(const struct cgroup_view *v, bool v1)
{
        return v1 ? faccessat(v->fd, "release_agent", F_OK, AT_SYMLINK_NOFOLLOW) == 0
                  : faccessat(v->fd, "cgroup.type", F_OK, AT_SYMLINK_NOFOLLOW) < 0 &&
                        errno == ENOENT;
}

/* The view of hierarchy index (hierarchy_index) from mounts lines[0..n]:
 * the mount not hidden by a later one whose root lies highest above the
 * namespace's root, the first of those. Without one, what /proc prints is
 * taken as it is only in the initial cgroup namespace (initial_ns). */
static void open_view(const struct mount_line *lines, size_t n, int index, const char *self_text,
                      bool initial_ns, struct cgroup_view *ret)
{
        char self_printed[CGROUP_PATH_MAX];
        const struct mount_line *best = NULL;
        unsigned best_ups = 0;
        const char *rest;

        for (size_t i = 0; i < n; i++) {
                unsigned ups = leading_ups(lines[i].root, &rest);
                bool hidden = false;

                if (hierarchy_index(&lines[i]) != index || (*rest && strcmp(rest, "/") != 0))
                        continue; /* another hierarchy, or a mount of a cgroup below the root */
                for (size_t j = i + 1; j < n && !hidden; j++)
                        hidden = covers(lines[j].point, lines[i].point);
                if (!hidden && (!best || ups > best_ups)) {
                        best = &lines[i];
                        best_ups = ups;
                }
        }
        ret->known = initial_ns;
        if (!best)
                return;
        ret->fd = open(best->point, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ret->fd < 0)
                return;
        ret->ups = best_ups;
        ret->known = best_ups == 0;
        if (!ret->known &&
            find_hierarchy(self_text, index < 0 ? CGROUP_V2 : CGROUP_V1,
                           index < 0 ? NULL : v1_controllers[index], self_printed) == 1)
                locate_ns_root(ret, index < 0 ? CGROUP_V2 : CGROUP_V1, self_printed);
        ret->whole = ret->known && shows_root(ret, index >= 0);
}

/* The inode of the initial cgroup namespace, the same on every boot
 * (PROC_CGROUP_INIT_INO, include/linux/proc_ns.h). */
#define CGROUP_NS_INIT_INO 0xEFFFFFFBU

bool cgroup_in_initial_ns(int proc_fd)
{
        struct stat st;

        return fstatat(proc_fd, "self/ns/cgroup", &st, 0) == 0 && st.st_ino == CGROUP_NS_INIT_INO;
}

void cgroup_mounts_as_printed(struct cgroup_mounts *m)
{
        *m = (struct cgroup_mounts) CGROUP_MOUNTS_INIT;
        m->v2.known = true;
        for (size_t i = 0; i < ELEMENTSOF(m->v1); i++)
                m->v1[i].known = true;
}

int cgroup_mounts_open(int proc_fd, struct cgroup_mounts *ret)
{
        struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        _cleanup_free_ struct mount_line *lines = NULL;
        _cleanup_free_ char *text = NULL, *self_text = NULL;
        size_t n = 0;
        bool initial_ns;
        int r;

        r = read_mount_lines(proc_fd, "self/mountinfo", &text, &lines, &n);
        if (r < 0)
                return r;
        if (read_cgroup_file(proc_fd, getpid(), &self_text) < 0)
                self_text = NULL;
        initial_ns = cgroup_in_initial_ns(proc_fd);
        open_view(lines, n, -1, self_text ? self_text : "", initial_ns, &m.v2);
        for (size_t i = 0; i < ELEMENTSOF(m.v1); i++)
                open_view(lines, n, (int) i, self_text ? self_text : "", initial_ns, &m.v1[i]);
        *ret = m;
        return 0;
}

void cgroup_mounts_close(struct cgroup_mounts *m)
{
        closep(&m->v2.fd);
        for (size_t i = 0; i < ELEMENTSOF(m->v1); i++)
                closep(&m->v1[i].fd);
        *m = (struct cgroup_mounts) CGROUP_MOUNTS_INIT;
}

const struct cgroup_view *cgroup_view_of(const struct cgroup_mounts *m,
                                         const struct cgroup_ref *ref)
{
        static const struct cgroup_view none = CGROUP_VIEW_INIT;

        if (ref->kind == CGROUP_V2)
                return &m->v2;
        for (size_t i = 0; i < ELEMENTSOF(v1_controllers); i++)
                if (strcmp(ref->controller, v1_controllers[i]) == 0)
                        return &m->v1[i];
        return &none;
}

int cgroup_open(const struct cgroup_mounts *m, const struct cgroup_ref *ref, int *ret_fd)
{
        int top = cgroup_view_of(m, ref)->fd;

        if (!cgroup_path_is_valid(ref->path, strlen(ref->path)))
                return -EINVAL;
        if (top < 0)
                return -ENOENT;
        return open_below(top, ref->path, ret_fd);
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

/* *ids and add, both sorted, merged into *ids: sorted, no id twice. */
static int pid_list_merge(pid_t **ids, size_t *n, const pid_t *add, size_t n_add)
{
        pid_t *out;
        size_t i = 0, j = 0, k = 0;

        if (n_add == 0)
                return 0;
        out = reallocarray(NULL, *n + n_add, sizeof(*out));
        if (!out)
                return -ENOMEM;
        while (i < *n || j < n_add) {
                pid_t id = j == n_add || (i < *n && (*ids)[i] <= add[j]) ? (*ids)[i++] : add[j++];

                if (k == 0 || out[k - 1] != id)
                        out[k++] = id;
        }
        free(*ids);
        *ids = out;
        *n = k;
        return 0;
}

/* What cgroup_subtree_threads has found so far. */
struct subtree {
        enum cgroup_kind kind;
        pid_t *ids;
        size_t n;
        unsigned cgroups; /* walked */
        bool cut;
};

/* Adds the threads of dir_fd, depth levels below ref, then those of each
 * cgroup below it. 0; 1 when the thread bound stopped the walk; -errno. */
static int subtree_walk(struct subtree *s, int dir_fd, unsigned depth);

/* Walks the cgroup directory entry de of dir_fd, depth levels below ref,
 * if it is one. 0; 1 when the thread bound stopped the walk; -errno. */
static int subtree_child(struct subtree *s, int dir_fd, const struct dirent64 *de, unsigned depth)
{
        _cleanup_close_ int fd = -EBADF;
        int r;

        /* "." and "..", and the control files: kernfs gives every entry its
         * type, so only a cgroup costs an open. */
        if (!name_is_valid(de->d_name) || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
                return 0;
        fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && (errno == ENOTDIR || errno == ELOOP || errno == ENOENT))
                return 0; /* a file, a symlink, or removed meanwhile */
        if (fd < 0)
                return -errno;
        if (depth > CGROUP_SUBTREE_DEPTH) { /* left out, its siblings not */
                s->cut = true;
                return 0;
        }
        if (++s->cgroups > CGROUP_SUBTREE_CGROUPS) { /* and those after it */
                s->cut = true;
                return 1;
        }
        r = subtree_walk(s, fd, depth);
        /* Removed meanwhile: gone, or kernfs's ENODEV for a read after rmdir. */
        return r == -ENOENT || r == -ENODEV ? 0 : r;
}

/* Adds the threads of dir_fd, depth levels below ref, then those of each
 * cgroup below it. Its entries are read with getdents64(2) on dir_fd itself:
 * two calls where a DIR stream would cost five more; none for a cgroup with
 * no cgroup below it, as most containers' are: kernfs counts a directory's
 * links, 2 (its entry and its ".") and one more for each child's "..". 0; 1
 * when a bound stopped the walk; -errno. */
static int subtree_walk(struct subtree *s, int dir_fd, unsigned depth)
{
        _cleanup_free_ pid_t *ids = NULL;
        size_t n = 0, room = CGROUP_SUBTREE_THREADS - s->n;
        char buf[4096] __attribute__((aligned(8)));
        struct stat st;
        ssize_t got;
        int r;

        r = cgroup_threads(dir_fd, s->kind, &ids, &n);
        if (r == -EFBIG) { /* past 1 MiB of ids: past the thread bound on its own */
                s->cut = true;
                return 1;
        }
        if (r < 0)
                return r;
        r = pid_list_merge(&s->ids, &s->n, ids, n < room ? n : room);
        if (r < 0)
                return r;
        if (n > room) { /* the cgroups nearer ref keep their threads */
                s->cut = true;
                return 1;
        }
        /* Exactly 2: a filesystem that does not count (1, as btrfs says) is walked. */
        if (fstat(dir_fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink == 2)
                return 0;
        while ((got = getdents64(dir_fd, buf, sizeof(buf))) > 0)
                for (ssize_t off = 0; off < got;) {
                        const struct dirent64 *de = (const struct dirent64 *) (buf + off);

                        off += de->d_reclen;
                        r = subtree_child(s, dir_fd, de, depth + 1);
                        if (r != 0)
                                return r;
                }
        return got < 0 ? -errno : 0;
}

int cgroup_subtree_threads(const struct cgroup_mounts *m, const struct cgroup_ref *ref, pid_t **ret,
                           size_t *ret_n, bool *ret_cut)
{
        _cleanup_close_ int fd = -EBADF;
        struct subtree s = {.kind = ref->kind};
        int r;

        r = cgroup_open(m, ref, &fd);
        if (r >= 0)
                r = subtree_walk(&s, fd, 0);
        if (r < 0) {
                free(s.ids);
                return r == -ENODEV ? -ENOENT : r;
        }
        *ret = s.ids;
        *ret_n = s.n;
        *ret_cut = s.cut;
        return 0;
}

/* The threads of process pid, from <proc>/<pid>/task, sorted. */
static int process_threads(int proc_fd, pid_t pid, pid_t **ret, size_t *ret_n)
{
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ char *text = NULL;
        char path[32];
        size_t len = 0;
        FILE *f;
        struct dirent *de;
        int r;

        (void) snprintf(path, sizeof(path), "%d/task", (int) pid);
        r = opendir_at(proc_fd, path, &d);
        if (r < 0)
                return r == -ENOENT ? -ESRCH : r;
        f = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): opendir_at set d */
        while ((de = readdir(d)))
                fprintf(f, "%s\n", de->d_name);
        if (fclose(f) != 0)
                return -ENOMEM;
        return pid_list_parse(text, ret, ret_n);
}

bool cgroup_holds_reader(int proc_fd, const struct cgroup_mounts *m, const struct cgroup_ref *cg)
{
        struct cgroup_ref self;

        return cgroup_of_pid_in(proc_fd, m, getpid(), cg->kind, cg->controller, &self) < 0 ||
               cgroup_contains(cg, &self);
}

int cgroup_container_threads(int proc_fd, const struct cgroup_mounts *m, pid_t pid, pid_t **ret,
                             size_t *ret_n, bool *ret_own, struct cgroup_ref *ret_cgroup)
{
        _cleanup_close_ int dir_fd = -EBADF;
        struct cgroup_ref cg;
        int r;

        r = cgroup_of_pid(proc_fd, m, pid, &cg);
        if (r == -ESRCH)
                return r;
        /* At the root, or in a cgroup that holds the reader, or may (the
         * reader's own is unknown): a system's, not a container's. Its init
         * is the container. */
        if (r == -ENOENT || (r >= 0 && cgroup_holds_reader(proc_fd, m, &cg))) {
                *ret_own = false;
                return process_threads(proc_fd, pid, ret, ret_n);
        }
        if (r < 0)
                return r;
        r = cgroup_open(m, &cg, &dir_fd);
        if (r < 0)
                return r;
        *ret_own = true;
        if (ret_cgroup)
                *ret_cgroup = cg;
        return cgroup_threads(dir_fd, cg.kind, ret, ret_n);
}
