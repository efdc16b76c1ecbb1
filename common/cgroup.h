/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup a process runs in, and the threads in it: a container's
 * cgroup holds every process of the container, whoever forked it (a
 * runtime's exec included), which resctrl's inheritance cannot see. Never
 * log.
 *
 * Paths are relative to the hierarchy's mount (struct cgroup_view), and
 * trusted only when valid: absolute, no "." or ".." component, no control
 * characters, at most CGROUP_PATH_MAX bytes; every component is opened with
 * O_NOFOLLOW below the mount, so no symlink leads anywhere else. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define CGROUP_PATH_MAX 1024

enum cgroup_kind {
        CGROUP_V2, /* the unified hierarchy: cgroup.threads */
        CGROUP_V1, /* a controller's hierarchy: tasks */
};

struct cgroup_ref {
        enum cgroup_kind kind;
        char controller[16];        /* v1: the hierarchy's controller; "" for v2 */
        char path[CGROUP_PATH_MAX]; /* "/" or "/kubepods.slice/.../cri-containerd-<id>.scope" */
};

/* Is path a valid cgroup path (len bytes, not NUL-terminated): absolute, no
 * empty, "." or ".." component, no control characters, shorter than
 * CGROUP_PATH_MAX? */
bool cgroup_path_is_valid(const char *path, size_t len);

/* "unified" for v2, else the v1 controller: how a hierarchy is named in
 * the member file. */
const char *cgroup_hierarchy_name(const struct cgroup_ref *ref);
/* The reverse, into ret->kind and ret->controller: -EINVAL for a name that is
 * none of "unified", "pids", "cpu", "memory". */
int cgroup_hierarchy_parse(const char *name, struct cgroup_ref *ret);

/* One hierarchy as this process sees it: the mount that shows the most of it
 * (mountinfo gives its root as this process's cgroup namespace root, "/", or
 * as an ancestor of it, "/../.."), and where that namespace root lies below
 * the mount. Every cgroup_ref path is relative to the mount: what the hook
 * recorded on the node (through the node's /sys/fs/cgroup) is what a reader
 * in a container with a cgroup namespace of its own opens through the node's
 * tree mounted there. /proc/<pid>/cgroup gives paths relative to the
 * reader's namespace root ("/../../kubepods/pod1/c1"): they are translated
 * lexically through ns_root. */
struct cgroup_view {
        int fd;       /* the mount's directory; -EBADF where the hierarchy is not mounted here */
        unsigned ups; /* the mount's root lies this many levels above the namespace's */
        bool known;   /* ns_root is known: ups is 0, or the reader's cgroup was found below */
        bool whole;   /* the mount shows the hierarchy from its root: what is not there is gone */
        char ns_root[CGROUP_PATH_MAX]; /* the namespace's root below the mount: "/" at ups 0 */
};

/* The hierarchies' views, from <proc>/self/mountinfo: one read for a whole
 * pass of gc or status. */
struct cgroup_mounts {
        struct cgroup_view v2, v1[3]; /* v1: pids, cpu, memory */
};

#define CGROUP_VIEW_INIT                                                                           \
        {                                                                                          \
                .fd = -EBADF, .known = false, .ns_root = "/"                                       \
        }
#define CGROUP_MOUNTS_INIT                                                                         \
        {                                                                                          \
                .v2 = CGROUP_VIEW_INIT,                                                            \
                .v1 = { CGROUP_VIEW_INIT,                                                          \
                        CGROUP_VIEW_INIT,                                                          \
                        CGROUP_VIEW_INIT }                                                         \
        }

/* 0 (some views may not be mounted), or -errno when mountinfo cannot be
 * read. A view whose namespace root is not found below its mount is not
 * known: nothing it shows is translated. Neither is one not mounted here,
 * but in the initial cgroup namespace, whose paths are the node's. */
int cgroup_mounts_open(int proc_fd, struct cgroup_mounts *ret);

/* Is this process in the initial cgroup namespace? Unknown: no. */
bool cgroup_in_initial_ns(int proc_fd);

/* The type of the file system mounted at path (absolute, taken as written:
 * no symlink followed) in pid's mount namespace, as <proc>/<pid>/mountinfo
 * shows it from pid's root: the mount path reaches there, by the mounts'
 * parents (the top one of those mounted over each other; none when a mount
 * between the root and path hides it). 1 with *ret_type (malloc'd), 0 when
 * nothing is mounted at path, -errno when the file cannot be read. */
int mountinfo_type_at(int proc_fd, pid_t pid, const char *path, char **ret_type);

/* Views with nothing mounted that take /proc's paths as they are: what a
 * reader in the initial cgroup namespace needs to read /proc alone, without
 * mountinfo (createRuntime's record). */
void cgroup_mounts_as_printed(struct cgroup_mounts *m);
void cgroup_mounts_close(struct cgroup_mounts *m);

/* The view of ref's hierarchy in m. */
const struct cgroup_view *cgroup_view_of(const struct cgroup_mounts *m,
                                         const struct cgroup_ref *ref);

/* pid's cgroup from /proc/<pid>/cgroup, in m's views: the unified one when
 * pid is not at its root (pure v2, or hybrid with the runtime in the unified
 * tree) and the pids one, if any, is not elsewhere below its root (hybrid
 * with the runtime in v1 alone), else the v1 hierarchy of pids, cpu or
 * memory, the first that lists it below the root. 0; -ESRCH when pid is
 * gone; -ENOENT when it is at the root of every hierarchy; -EXDEV when its
 * cgroup lies outside the view, or the view cannot translate it (not
 * known); -EBADMSG when the file or a path is not valid. */
int cgroup_of_pid(int proc_fd, const struct cgroup_mounts *m, pid_t pid, struct cgroup_ref *ret);

/* Does cg hold the caller, in cg's own hierarchy? Then it is a runtime's or
 * a daemon's, not a container's. Unknown counts as yes: never guess a
 * container's. */
bool cgroup_holds_reader(int proc_fd, const struct cgroup_mounts *m, const struct cgroup_ref *cg);

/* pid's cgroup in one hierarchy: the unified one (controller "" or NULL) or
 * the v1 one whose controller list holds controller (pids, cpu or memory:
 * m has no view of another's, whose paths are -EXDEV); "/" when pid is at
 * its root. 0; -ESRCH when pid is gone; -ENOENT when the file lists no such
 * hierarchy; -EXDEV and -EBADMSG as cgroup_of_pid. */
int cgroup_of_pid_in(int proc_fd, const struct cgroup_mounts *m, pid_t pid, enum cgroup_kind kind,
                     const char *controller, struct cgroup_ref *ret);

/* 1 when a is b or one of its ancestors, 0 when not. */
int cgroup_contains(const struct cgroup_ref *a, const struct cgroup_ref *b);

/* 1 when thread tid's cgroup in ancestor's hierarchy is ancestor or below it,
 * 0 when not (or when tid's file lists no such hierarchy, or its cgroup lies
 * outside the view). tid need not lead its thread group: <proc>/<tid>/
 * exists for every thread. -ESRCH when tid is gone; -EXDEV when the view
 * cannot translate; -EBADMSG when the file does not parse. */
int cgroup_task_is_under(int proc_fd, const struct cgroup_mounts *m, pid_t tid,
                         const struct cgroup_ref *ancestor);

/* Opens ref's directory (O_RDONLY|O_DIRECTORY|O_CLOEXEC) below its
 * hierarchy's mount, each component with O_NOFOLLOW. -ENOENT when the
 * hierarchy is not mounted here or the cgroup is gone; -ELOOP/-ENOTDIR for
 * a symlink; -EINVAL for a path that is not valid. */
int cgroup_open(const struct cgroup_mounts *m, const struct cgroup_ref *ref, int *ret_fd);

/* The threads in the cgroup of dir_fd (cgroup.threads on v2, tasks on v1),
 * sorted (pid_list_parse): *ret malloc'd. 0 or -errno (-EFBIG past 1 MiB). */
int cgroup_threads(int dir_fd, enum cgroup_kind kind, pid_t **ret, size_t *ret_n);

/* The bounds of cgroup_subtree_threads: levels below ref, threads in all,
 * cgroups below ref in all (a walk costs some 40 us a cgroup, under the
 * resctrl lock in gc). */
#define CGROUP_SUBTREE_DEPTH 8
#define CGROUP_SUBTREE_THREADS 100000
#define CGROUP_SUBTREE_CGROUPS 1000

/* The threads of ref and of every cgroup below it (systemd in a container and
 * Docker-in-Docker fork into sub-cgroups; cgroup.threads and tasks are not
 * recursive), sorted, no id twice: *ret malloc'd (NULL when none). Every
 * directory is opened with O_NOFOLLOW; a symlink or a file is no cgroup. At
 * most CGROUP_SUBTREE_DEPTH levels and CGROUP_SUBTREE_CGROUPS cgroups below
 * ref and CGROUP_SUBTREE_THREADS ids, ref's first (a cgroup listing past
 * 1 MiB is past the bound, none of its ids taken): *ret_cut says whether a
 * bound left some out. A cgroup
 * below ref that is removed meanwhile is skipped. 0; -ENOENT when ref is gone
 * or its hierarchy is not mounted here; -errno. */
int cgroup_subtree_threads(const struct cgroup_mounts *m, const struct cgroup_ref *ref, pid_t **ret,
                           size_t *ret_n, bool *ret_cut);

/* The threads of the container whose init is pid, sorted: its cgroup's,
 * when pid has a cgroup of its own (not the root, none that holds the reader
 * itself, and the reader's is known), which *ret_cgroup then names (unless
 * NULL); else the init's own threads. *ret_own says which. 0, -ESRCH when
 * pid is gone, -errno. */
int cgroup_container_threads(int proc_fd, const struct cgroup_mounts *m, pid_t pid, pid_t **ret,
                             size_t *ret_n, bool *ret_own, struct cgroup_ref *ret_cgroup);
