/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "macro.h"
#include "runtime_cgroup.h"

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
 * "-.slice" (or "") the root. */
static int slice_path(const char *slice, size_t len, char ret[static CGROUP_PATH_MAX])
{
        size_t out = 0, stem;

        if (len == 0 || (len == 7 && memcmp(slice, "-.slice", 7) == 0)) {
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
        if (c2 == c1 + 1) /* no prefix */
                n = snprintf(ret, CGROUP_PATH_MAX, "%s/%s.scope", slice, c2 + 1);
        else
                n = snprintf(ret, CGROUP_PATH_MAX, "%s/%.*s-%s.scope", slice, (int) (c2 - c1 - 1),
                             c1 + 1, c2 + 1);
        return n > 0 && n < CGROUP_PATH_MAX && cgroup_path_is_valid(ret, (size_t) n) ? 0 : -EINVAL;
}

/* Is path expected, or does it end in expected at a component boundary? */
static bool path_ends_with(const char *path, const char *expected)
{
        size_t n = strlen(path), m = strlen(expected);

        return n >= m && strcmp(path + n - m, expected) == 0 && (n == m || expected[0] == '/');
}

/* Does cg hold the caller (in the same hierarchy)? Then it is its runtime's,
 * not the container's. Unknown counts as yes: never guess a container's. */
static bool holds_self(int proc_fd, const struct cgroup_ref *cg)
{
        struct cgroup_ref self;

        return cgroup_of_pid_in(proc_fd, getpid(), cg->kind, cg->controller, &self) < 0 ||
               cgroup_contains(cg, &self);
}

int runtime_container_cgroup(int proc_fd, pid_t pid, const char *expected, struct cgroup_ref *ret,
                             bool *ret_matched)
{
        struct cgroup_ref fallback = {0};
        bool found = false;

        *ret_matched = false;
        for (size_t i = 0; i < ELEMENTSOF(hierarchies); i++) {
                struct cgroup_ref cg;
                int r = cgroup_of_pid_in(proc_fd, pid, hierarchies[i].kind,
                                         hierarchies[i].controller, &cg);

                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (expected && path_ends_with(cg.path, expected)) {
                        *ret = cg;
                        *ret_matched = true;
                        return 0;
                }
                if (!found && strcmp(cg.path, "/") != 0 && !holds_self(proc_fd, &cg)) {
                        fallback = cg;
                        found = true;
                        if (!expected) /* nothing better to look for */
                                break;
                }
        }
        if (!found)
                return -ENOENT;
        *ret = fallback;
        return 0;
}

/* Does name end in "pod<spelling>", at its start or after a '-'? */
static bool names_pod(const char *name, size_t len, const char *spelling)
{
        size_t n = strlen(spelling) + 3;

        return len >= n && strncasecmp(name + len - n, "pod", 3) == 0 &&
               strncasecmp(name + len - n + 3, spelling, n - 3) == 0 &&
               (len == n || name[len - n - 1] == '-');
}

int runtime_pod_cgroup(const struct cgroup_ref *cg, const char *uid, struct cgroup_ref *ret)
{
        char underscored[64], hex[64];
        const char *last, *slash = strrchr(cg->path, '/');
        size_t len, h = 0;

        if (!slash || slash == cg->path || strlen(uid) >= sizeof(hex))
                return 0;
        for (const char *c = uid; *c; c++)
                if (*c != '-')
                        hex[h++] = *c;
        hex[h] = '\0';
        (void) snprintf(underscored, sizeof(underscored), "%s", uid);
        for (char *c = strchr(underscored, '-'); c; c = strchr(c, '-'))
                *c = '_';

        *ret = *cg;
        ret->path[slash - cg->path] = '\0';
        last = strrchr(ret->path, '/') + 1;
        len = strlen(last);
        if (len > 6 && strcmp(last + len - 6, ".slice") == 0)
                len -= 6;
        return names_pod(last, len, uid) || names_pod(last, len, underscored) ||
               names_pod(last, len, hex);
}
