/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup a runtime made for a container, read when the runtime has just
 * made it (createRuntime: the init is paused in it), and the pod's cgroup
 * above it. Facts recorded then, instead of guesses made later: the cgroup
 * holds every process of the container, whoever forks it, and kubelet's pod
 * cgroup says how long the pod lives, wherever kubelet put it (any driver,
 * any --cgroup-root, a static pod's UID). Never logs. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup.h"

/* linux.cgroupsPath of config.json as a path below a hierarchy's root:
 * cgroupfs' "/a/b/c" as it is ("a/b" relative to the runtime's cgroup: "/a/b",
 * matched as a suffix); the systemd driver's "<slice>:<prefix>:<name>" as
 * runc makes it: the slice's path (each '-' of its name a level down:
 * kubepods-burstable-pod<uid_>.slice is
 * /kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice;
 * none is system.slice) with the unit below it, "<prefix>-<name>.scope", or
 * the name itself when it ends in ".slice". 0, or -EINVAL for a text that is
 * neither. */
int runtime_cgroup_path(const char *cgroups_path, char ret[static CGROUP_PATH_MAX]);

/* The cgroup the runtime made for the container whose init is pid: among
 * pid's hierarchies (unified, then the v1 pids, cpu, memory ones), the one
 * whose path is expected (runtime_cgroup_path) or below it, ending in it at
 * component boundaries (a nested node's root above it), cut to where
 * expected ends (crun's systemd driver puts the init in "<scope>/container":
 * the scope is the container's), when expected is not NULL; else the first
 * whose path is not the root and does not hold the caller (a hook runs in
 * its runtime's cgroup: a runtime that left the container in the cgroup it
 * inherited, as runc's cgroupfs driver does in the unified tree of a hybrid
 * host, made none there). Paths in m's views. *ret_matched says whether
 * expected matched. A hierarchy the views cannot place pid's cgroup in is
 * passed over. 0; -ENOENT when there is none; -EXDEV when there is none
 * but some hierarchy could not be placed; -ESRCH when pid is gone;
 * -EBADMSG. */
int runtime_container_cgroup(int proc_fd, const struct cgroup_mounts *m, pid_t pid,
                             const char *expected, struct cgroup_ref *ret, bool *ret_matched);

/* The pod's cgroup: the nearest of cg's ancestors (at most 3 levels up) whose
 * name names pod uid (canonical) as kubelet spells it under either driver:
 * "pod<uid>", "<parent>-pod<uid_>.slice" (<uid_>: '_' for '-'), or a static
 * pod's 32 hex digits. 1 with *ret; 0 when none does. */
int runtime_pod_cgroup(const struct cgroup_ref *cg, const char *uid, struct cgroup_ref *ret);
