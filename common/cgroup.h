/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup a process runs in, and the threads in it: a container's
 * cgroup holds every process of the container, whoever forked it (a
 * runtime's exec included), which resctrl's inheritance cannot see. Never
 * log.
 *
 * Paths are relative to the hierarchy's mount, as /proc/<pid>/cgroup gives
 * them, and trusted only when valid: absolute, no "." or ".." component (a
 * cgroup namespace shows "/.." for what lies outside it), no control
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

/* pid's cgroup from /proc/<pid>/cgroup: the unified one when pid is not at
 * its root (pure v2, or hybrid with the runtime in the unified tree), else
 * the v1 hierarchy of pids, cpu or memory, the first that lists it below the
 * root. 0; -ESRCH when pid is gone; -ENOENT when it is at the root of every
 * hierarchy; -EBADMSG when the file or a path is not valid. */
int cgroup_of_pid(int proc_fd, pid_t pid, struct cgroup_ref *ret);

/* pid's cgroup in one hierarchy: the unified one (controller "" or NULL) or
 * the v1 one whose controller list holds controller; "/" when pid is at its
 * root. 0; -ESRCH when pid is gone; -ENOENT when the file lists no such
 * hierarchy; -EBADMSG when the file or the path is not valid. */
int cgroup_of_pid_in(int proc_fd, pid_t pid, enum cgroup_kind kind, const char *controller,
                     struct cgroup_ref *ret);

/* 1 when a is b or one of its ancestors, 0 when not. */
int cgroup_contains(const struct cgroup_ref *a, const struct cgroup_ref *b);

/* 1 when thread tid's cgroup in ancestor's hierarchy is ancestor or below it,
 * 0 when not (or when tid's file lists no such hierarchy). tid need not lead
 * its thread group: <proc>/<tid>/ exists for every thread. -ESRCH when tid is
 * gone; -EBADMSG when the file does not parse. */
int cgroup_task_is_under(int proc_fd, pid_t tid, const struct cgroup_ref *ancestor);

/* The hierarchies' mounts, from <proc>/self/mountinfo: one read for a whole
 * pass of gc or status. Each fd is -EBADF where that hierarchy is not mounted
 * here from its root. */
struct cgroup_mounts {
        int v2_fd;
        int v1_fd[3];           /* pids, cpu, memory */
        struct cgroup_ref self; /* the reader's own cgroup; path "" when unknown */
        bool host_ns; /* the reader is in the initial cgroup namespace: every path is seen whole */
};

#define CGROUP_MOUNTS_INIT                                                                         \
        {                                                                                          \
                .v2_fd = -EBADF, .v1_fd = { -EBADF, -EBADF, -EBADF }                               \
        }

/* 0 (some fds may be -EBADF), or -errno when mountinfo cannot be read. */
int cgroup_mounts_open(int proc_fd, struct cgroup_mounts *ret);
void cgroup_mounts_close(struct cgroup_mounts *m);

/* Opens ref's directory (O_RDONLY|O_DIRECTORY|O_CLOEXEC) below its
 * hierarchy's mount, each component with O_NOFOLLOW. -ENOENT when the
 * hierarchy is not mounted here or the cgroup is gone; -ELOOP/-ENOTDIR for
 * a symlink; -EINVAL for a path that is not valid. */
int cgroup_open(const struct cgroup_mounts *m, const struct cgroup_ref *ref, int *ret_fd);

/* The threads in the cgroup of dir_fd (cgroup.threads on v2, tasks on v1),
 * sorted (pid_list_parse): *ret malloc'd. 0 or -errno (-EFBIG past 1 MiB). */
int cgroup_threads(int dir_fd, enum cgroup_kind kind, pid_t **ret, size_t *ret_n);

/* The bounds of cgroup_subtree_threads: levels below ref, threads in all. */
#define CGROUP_SUBTREE_DEPTH 8
#define CGROUP_SUBTREE_THREADS 100000

/* The threads of ref and of every cgroup below it (systemd in a container and
 * Docker-in-Docker fork into sub-cgroups; cgroup.threads and tasks are not
 * recursive), sorted, no id twice: *ret malloc'd (NULL when none). Every
 * directory is opened with O_NOFOLLOW; a symlink or a file is no cgroup. At
 * most CGROUP_SUBTREE_DEPTH levels below ref and CGROUP_SUBTREE_THREADS ids,
 * ref's first (a cgroup listing past 1 MiB is past the bound, none of its
 * ids taken): *ret_cut says whether either bound left some out. A cgroup
 * below ref that is removed meanwhile is skipped. 0; -ENOENT when ref is gone
 * or its hierarchy is not mounted here; -errno. */
int cgroup_subtree_threads(const struct cgroup_mounts *m, const struct cgroup_ref *ref, pid_t **ret,
                           size_t *ret_n, bool *ret_cut);

/* The threads of the container whose init is pid, sorted: its cgroup's,
 * when pid has a cgroup of its own (not the root, none that holds the reader
 * itself, and the reader's is known); else the init's own threads. *ret_own says which. 0, -ESRCH
 * when pid is gone, -errno. */
int cgroup_container_threads(int proc_fd, const struct cgroup_mounts *m, pid_t pid, pid_t **ret,
                             size_t *ret_n, bool *ret_own);
