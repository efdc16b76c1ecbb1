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

/* pid's cgroup from /proc/<pid>/cgroup: the unified one when pid is not at
 * its root (pure v2, or hybrid with the runtime in the unified tree), else
 * the v1 hierarchy of pids, cpu or memory, the first that lists it below the
 * root. 0; -ESRCH when pid is gone; -ENOENT when it is at the root of every
 * hierarchy; -EBADMSG when the file or a path is not valid. */
int cgroup_of_pid(int proc_fd, pid_t pid, struct cgroup_ref *ret);

/* 1 when a is b or one of its ancestors, 0 when not. */
int cgroup_contains(const struct cgroup_ref *a, const struct cgroup_ref *b);

/* The hierarchies' mounts, from <proc>/self/mountinfo: one read for a whole
 * pass of gc or status. Each fd is -EBADF where that hierarchy is not mounted
 * here from its root. */
struct cgroup_mounts {
        int v2_fd;
        int v1_fd[3];           /* pids, cpu, memory */
        struct cgroup_ref self; /* the reader's own cgroup; path "" when unknown */
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

/* The threads of the container whose init is pid, sorted: its cgroup's,
 * when pid has a cgroup of its own (not the root, none that holds the reader
 * itself); else the init's own threads. *ret_own says which. 0, -ESRCH when
 * pid is gone, -errno. */
int cgroup_container_threads(int proc_fd, const struct cgroup_mounts *m, pid_t pid, pid_t **ret,
                             size_t *ret_n, bool *ret_own);
