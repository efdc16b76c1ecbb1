/* SPDX-License-Identifier: Apache-2.0 */
/* The cgroup kubelet makes for a pod: the parent of all its containers'
 * cgroups, the sandbox's included, made before the pod's first container
 * and removed when the pod is gone, kept while a container restarts even
 * when no process is left in it. So it says how long a pod lives where its
 * containers' hooks cannot (containerd never hooks the sandbox; CRI-O with
 * drop_infra_ctr runs none). Looked for where kubelet's two cgroup drivers
 * put it, by QoS class:
 *   cgroupfs: kubepods/pod<uid>, kubepods/{burstable,besteffort}/pod<uid>
 *   systemd:  kubepods.slice/kubepods-pod<uid_>.slice,
 *             kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid_>.slice
 * (<uid_>: the UID with '_' for '-'; a static pod's UID is 32 hex digits
 * without dashes, and so is its cgroup's name), in the unified hierarchy,
 * else in v1's pids hierarchy. That table is for pods recorded by versions
 * before 0.3; from 0.3 on createRuntime records the pod's cgroup
 * (runtime_cgroup.h), wherever kubelet put it. Never logs. */
#pragma once

#include "cgroup.h"

enum pod_cgroup {
        POD_CGROUP_GONE,      /* none: the pod is gone, or not a kubelet pod */
        POD_CGROUP_EMPTY,     /* there, with no process in it or below */
        POD_CGROUP_POPULATED, /* there, with a process in it or below */
        POD_CGROUP_UNSEEN,    /* recorded, but neither it nor its parent can be seen from here */
};

/* How kubelet spells pod uid (canonical) in its cgroups' names. */
enum {
        KUBEPODS_UID_DASHED,      /* the UID as it is: cgroupfs' pod<uid> */
        KUBEPODS_UID_UNDERSCORED, /* '_' for '-': systemd's ...-pod<uid_>.slice */
        KUBEPODS_UID_HEX,         /* 32 hex digits: a static pod's, as kubelet was given it */
        KUBEPODS_UID_SPELLINGS,
};

/* Writes the spellings of uid into ret. 0, or -EINVAL for a UID too long. */
int kubepods_uid_spellings(const char *uid, char ret[static KUBEPODS_UID_SPELLINGS][64]);

/* What the recorded cgroup of a pod (ref) is now. Gone only where its parent
 * is there, or where m's view shows the whole hierarchy (cgroup_view.whole):
 * one not mounted here, or a view that does not reach the path, is UNSEEN,
 * never gone. 0; -ELOOP, -ENOTDIR, -EBADMSG and -errno
 * as kubepods_pod_cgroup. */
int kubepods_recorded_cgroup(const struct cgroup_mounts *m, const struct cgroup_ref *ref,
                             enum pod_cgroup *ret);

/* What kubelet's cgroup of pod uid (canonical) is now, from cgroup.events'
 * "populated" (v2) or pids.current (v1); in none of kubelet's layouts, GONE
 * where m shows the unified or the pids hierarchy whole, else UNSEEN.
 * *ret_ref names the cgroup found, or the one that failed. 0; -ELOOP or -ENOTDIR for a symlink or a
 * file in the way (cgroup_open: nothing outside the mount is followed); -EBADMSG when the cgroup's
 * file does not parse; -errno. */
int kubepods_pod_cgroup(const struct cgroup_mounts *m, const char *uid, enum pod_cgroup *ret,
                        struct cgroup_ref *ret_ref);
