/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kubepods.h"
#include "macro.h"
#include "runtime_cgroup.h"

/* How far above a container's cgroup its pod's is looked for: crun's
 * systemd subgroup ("<scope>/container") and delegated cgroups put the
 * init a level or two below the runtime's cgroup. */
#define POD_CGROUP_LEVELS 3

/* The hierarchies a runtime puts a container in, in the order they are tried. */
static const struct {
        enum cgroup_kind kind;
        const char *controller;
} hierarchies[] = {
    {CGROUP_V2, ""},
    {CGROUP_V1, "pids"},
    {CGROUP_V1, "cpu"},
    {CGROUP_V1, "memory"},
};

/* systemd's path of a slice: "a-b-c.slice" is /a.slice/a-b.slice/a-b-c.slice,
 * "-.slice" the root; none is runc's default, system.slice. */
static int slice_path(const char *slice, size_t len, char ret[static CGROUP_PATH_MAX])
{
        size_t out = 0, stem;

        if (len == 0)
                return slice_path("system.slice", strlen("system.slice"), ret);
        if (len == 7 && memcmp(slice, "-.slice", 7) == 0) {
                ret[0] = '\0';
                return 0;
        }
        if (len <= 6 || memcmp(slice + len - 6, ".slice", 6) != 0 || memchr(slice, '/', len))
                return -EINVAL;
        stem = len - 6;
        for (size_t i = 0; i <= stem; i++) {
                if (i < stem && slice[i] != '-')
                        continue;
                if (i == 0 || slice[i - 1] == '-') /* "-a", "a--b", "a-": no empty level */
                        return -EINVAL;
                if (out + i + 8 > CGROUP_PATH_MAX)
                        return -EINVAL;
                out += (size_t) snprintf(ret + out, CGROUP_PATH_MAX - out, "/%.*s.slice", (int) i,
                                         slice);
        }
        return 0;
}

int runtime_cgroup_path(const char *cgroups_path, char ret[static CGROUP_PATH_MAX])
{
        const char *c1 = strchr(cgroups_path, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        char slice[CGROUP_PATH_MAX];
        size_t len;
        int n;

        if (!c1) { /* cgroupfs */
                n = snprintf(ret, CGROUP_PATH_MAX, "%s%s", cgroups_path[0] == '/' ? "" : "/",
                             cgroups_path);
                return n > 0 && n < CGROUP_PATH_MAX && cgroup_path_is_valid(ret, (size_t) n)
                           ? 0
                           : -EINVAL;
        }
        if (!c2 || strchr(c2 + 1, ':') || c2[1] == '\0' ||
            slice_path(cgroups_path, (size_t) (c1 - cgroups_path), slice) < 0)
                return -EINVAL;
        /* runc's unit: the name itself when it is a slice, else a scope */
        len = strlen(c2 + 1);
        if (len > 6 && strcmp(c2 + 1 + len - 6, ".slice") == 0)
                n = snprintf(ret, CGROUP_PATH_MAX, "%s/%s", slice, c2 + 1);
        else
                n = snprintf(ret, CGROUP_PATH_MAX, "%s/%.*s-%s.scope", slice, (int) (c2 - c1 - 1),
                             c1 + 1, c2 + 1);
        return n > 0 && n < CGROUP_PATH_MAX && cgroup_path_is_valid(ret, (size_t) n) ? 0 : -EINVAL;
}

/* Where in path the runtime's cgroup (expected, "/...") ends: path is it, or
 * below it (crun's "<scope>/container"), and either below some root that
 * expected does not name (a nested node). The end of the last such
 * occurrence at component boundaries; 0 when there is none. */
static size_t runtime_part(const char *path, const char *expected)
{
        size_t m = strlen(expected), end = 0;

        for (const char *p = strstr(path, expected); p; p = strstr(p + 1, expected))
                if (p[m] == '\0' || p[m] == '/')
                        end = (size_t) (p - path) + m;
        return end;
}

int runtime_container_cgroup(int proc_fd, const struct cgroup_mounts *m, pid_t pid,
                             const char *expected, struct cgroup_ref *ret, bool *ret_matched)
{
        struct cgroup_ref fallback = {0};
        bool found = false, outside = false;

        *ret_matched = false;
        for (size_t i = 0; i < ELEMENTSOF(hierarchies); i++) {
                struct cgroup_ref cg;
                int r = cgroup_of_pid_in(proc_fd, m, pid, hierarchies[i].kind,
                                         hierarchies[i].controller, &cg);

                outside |= r == -EXDEV;
                if (r == -ENOENT || r == -EXDEV) /* that hierarchy: none, or not seen */
                        continue;
                if (r < 0)
                        return r;
                size_t end = expected ? runtime_part(cg.path, expected) : 0;

                if (end > 0) { /* the runtime's cgroup, whatever it made below it */
                        cg.path[end] = '\0';
                        *ret = cg;
                        *ret_matched = true;
                        return 0;
                }
                if (!found && strcmp(cg.path, "/") != 0 && !cgroup_holds_reader(proc_fd, m, &cg)) {
                        fallback = cg;
                        found = true;
                        if (!expected) /* nothing better to look for */
                                break;
                }
        }
        if (!found)
                return outside ? -EXDEV : -ENOENT;
        *ret = fallback;
        return 0;
}

/* Does the last component of path (without ".slice") end in
 * "pod<spelling>", at its start or after a '-'? */
static bool names_pod(const char *path, const char *spelling)
{
        const char *name = strrchr(path, '/') + 1;
        size_t len = strlen(name), n = strlen(spelling) + 3;

        if (len > 6 && strcmp(name + len - 6, ".slice") == 0)
                len -= 6;
        return len >= n && strncasecmp(name + len - n, "pod", 3) == 0 &&
               strncasecmp(name + len - n + 3, spelling, n - 3) == 0 &&
               (len == n || name[len - n - 1] == '-');
}

int runtime_pod_cgroup(const struct cgroup_ref *cg, const char *uid, struct cgroup_ref *ret)
{
        char spellings[KUBEPODS_UID_SPELLINGS][64];

        if (kubepods_uid_spellings(uid, spellings) < 0)
                return 0;
        *ret = *cg;
        for (int level = 0; level < POD_CGROUP_LEVELS; level++) {
                char *slash = strrchr(ret->path, '/');

                if (!slash || slash == ret->path) /* the root names no pod */
                        return 0;
                *slash = '\0';
                for (int i = 0; i < KUBEPODS_UID_SPELLINGS; i++)
                        if (names_pod(ret->path, spellings[i]))
                                return 1;
        }
        return 0;
}
