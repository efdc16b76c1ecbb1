/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fsutil.h"
#include "kubepods.h"
#include "macro.h"

/* cgroup.events is two short lines; pids.current one number. */
#define POD_CGROUP_FILE_MAX 4096

/* Where each driver puts pod <uid>, by QoS class (Guaranteed, Burstable,
 * BestEffort): <parent>/<prefix><uid><suffix>, systemd's slices with '_'
 * for '-' in the UID. */
static const struct {
        const char *parent, *prefix, *suffix;
        bool underscores;
} layouts[] = {
    {"/kubepods", "pod", "", false},
    {"/kubepods/burstable", "pod", "", false},
    {"/kubepods/besteffort", "pod", "", false},
    {"/kubepods.slice", "kubepods-pod", ".slice", true},
    {"/kubepods.slice/kubepods-burstable.slice", "kubepods-burstable-pod", ".slice", true},
    {"/kubepods.slice/kubepods-besteffort.slice", "kubepods-besteffort-pod", ".slice", true},
};

/* How deep below a v1 pod cgroup without pids.current processes are looked
 * for: kubelet's container cgroups, crun's subgroup, a container's own. */
#define POD_CGROUP_V1_DEPTH 8

/* 1 when the v1 cgroup at dir_fd, or one at most depth levels below it,
 * holds a process; 0 when none does; -errno. A cgroup removed meanwhile
 * below it holds none. */
static int holds_process(int dir_fd, int depth)
{
        _cleanup_close_ int fd = openat(dir_fd, "cgroup.procs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        ssize_t n;
        char c;
        int r;

        if (fd < 0)
                return -errno;
        n = read(fd, &c, 1);
        if (n != 0)
                return n > 0 ? 1 : -errno;
        if (depth == 0)
                return 0;
        r = opendir_at(dir_fd, ".", &d);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                _cleanup_close_ int sub = -EBADF;

                if (de->d_type != DT_DIR || !name_is_valid(de->d_name))
                        continue;
                sub = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                r = sub < 0 ? -errno : holds_process(sub, depth - 1);
                if (r != 0 && r != -ENOENT)
                        return r;
        }
        return 0;
}

/* "populated 0|1" of cgroup.events (v2); pids.current > 0 (v1), or a
 * process in it or below it where the hierarchy has no pids controller
 * (a pod cgroup recorded in cpu or memory). */
static int read_populated(int dir_fd, enum cgroup_kind kind, enum pod_cgroup *ret)
{
        _cleanup_free_ char *text = NULL;
        unsigned long long n;
        const char *p;
        char *end;
        int r;

        r = read_small_file_at(dir_fd, kind == CGROUP_V2 ? "cgroup.events" : "pids.current",
                               POD_CGROUP_FILE_MAX, &text);
        if (r == -ENOENT && kind == CGROUP_V1) {
                r = holds_process(dir_fd, POD_CGROUP_V1_DEPTH);
                if (r >= 0)
                        *ret = r ? POD_CGROUP_POPULATED : POD_CGROUP_EMPTY;
                return r < 0 ? r : 0;
        }
        if (r < 0)
                return r;
        if (kind == CGROUP_V2) {
                p = strncmp(text, "populated ", 10) == 0 ? text : strstr(text, "\npopulated ");
                if (!p)
                        return -EBADMSG;
                p += p == text ? 10 : 11;
                if ((p[0] != '0' && p[0] != '1') || p[1] != '\n')
                        return -EBADMSG;
                *ret = p[0] == '1' ? POD_CGROUP_POPULATED : POD_CGROUP_EMPTY;
                return 0;
        }
        if (text[0] < '0' || text[0] > '9')
                return -EBADMSG;
        errno = 0;
        n = strtoull(text, &end, 10);
        if (errno != 0 || strcmp(end, "\n") != 0)
                return -EBADMSG;
        *ret = n > 0 ? POD_CGROUP_POPULATED : POD_CGROUP_EMPTY;
        return 0;
}

/* 0 with *ret when the cgroup at ref is there, -ENOENT when not, -errno. */
static int look_at(const struct cgroup_mounts *m, const struct cgroup_ref *ref,
                   enum pod_cgroup *ret)
{
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(m, ref, &fd);

        return r < 0 ? r : read_populated(fd, ref->kind, ret);
}

/* 1 when the cgroup at ref can be opened, 0 when not (-ENOENT), -errno. */
static int can_open(const struct cgroup_mounts *m, const struct cgroup_ref *ref)
{
        _cleanup_close_ int fd = -EBADF;
        int r = cgroup_open(m, ref, &fd);

        return r == -ENOENT ? 0 : r < 0 ? r : 1;
}

int kubepods_recorded_cgroup(const struct cgroup_mounts *m, const struct cgroup_ref *ref,
                             enum pod_cgroup *ret)
{
        struct cgroup_ref parent = *ref, root = *ref;
        char *slash = strrchr(parent.path, '/');
        int r = look_at(m, ref, ret);

        if (r != -ENOENT || !slash)
                return r;
        slash[slash == parent.path] = '\0'; /* "/pod1" has the root "/" above it */
        strcpy(root.path, "/");
        /* Gone where its parent is there, or where the view shows its
         * whole hierarchy: a kubelet that removed its whole tree. */
        r = can_open(m, &parent);
        if (r == 0 && cgroup_view_of(m, ref)->whole)
                r = can_open(m, &root);
        if (r < 0)
                return r;
        *ret = r ? POD_CGROUP_GONE : POD_CGROUP_UNSEEN;
        return 0;
}

int kubepods_uid_spellings(const char *uid, char ret[static KUBEPODS_UID_SPELLINGS][64])
{
        size_t n = 0;

        if (strlen(uid) >= 64)
                return -EINVAL;
        memcpy(ret[KUBEPODS_UID_DASHED], uid, strlen(uid) + 1);
        memcpy(ret[KUBEPODS_UID_UNDERSCORED], uid, strlen(uid) + 1);
        for (char *c = strchr(ret[KUBEPODS_UID_UNDERSCORED], '-'); c; c = strchr(c, '-'))
                *c = '_';
        for (const char *c = uid; *c; c++)
                if (*c != '-')
                        ret[KUBEPODS_UID_HEX][n++] = *c;
        ret[KUBEPODS_UID_HEX][n] = '\0';
        return 0;
}

int kubepods_pod_cgroup(const struct cgroup_mounts *m, const char *uid, enum pod_cgroup *ret,
                        struct cgroup_ref *ret_ref)
{
        const struct cgroup_ref hierarchies[] = {
            {.kind = CGROUP_V2},
            {.kind = CGROUP_V1, .controller = "pids"},
        };
        char spellings[KUBEPODS_UID_SPELLINGS][64];

        if (kubepods_uid_spellings(uid, spellings) < 0)
                return -EINVAL;
        for (size_t h = 0; h < ELEMENTSOF(hierarchies); h++)
                for (size_t i = 0; i < ELEMENTSOF(layouts); i++)
                        for (int raw = 0; raw < 2; raw++) {
                                const char *spelling =
                                    spellings[raw                      ? KUBEPODS_UID_HEX
                                              : layouts[i].underscores ? KUBEPODS_UID_UNDERSCORED
                                                                       : KUBEPODS_UID_DASHED];
                                int r;

                                *ret_ref = hierarchies[h];
                                (void) snprintf(ret_ref->path, sizeof(ret_ref->path), "%s/%s%s%s",
                                                layouts[i].parent, layouts[i].prefix, spelling,
                                                layouts[i].suffix);
                                r = look_at(m, ret_ref, ret);
                                if (r != -ENOENT)
                                        return r;
                        }
        /* In no layout: gone where a whole hierarchy is seen, else unseen. */
        *ret = m->v2.whole || m->v1[0].whole ? POD_CGROUP_GONE : POD_CGROUP_UNSEEN;
        return 0;
}
