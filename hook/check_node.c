/* SPDX-License-Identifier: Apache-2.0 */
/* check's rows of what this process sees of the node: stateDir and its
 * file system, the hooks.d files, the cgroup hierarchies, the runtimes'
 * roots (check_rows.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "check_rows.h"
#include "fsutil.h"
#include "macro.h"
#include "proc.h"
#include "runstate.h"
#include "watchdog.h"

#define HOOK_FILE_MAX ((size_t) 64 * 1024)

void check_state_dir(struct checker *k)
{
        const char *path = k->config.state_dir;
        _cleanup_free_ char *fix = NULL;
        struct stat st;

        if (lstat(path, &st) < 0) {
                if (errno == ENOENT)
                        check_add(k, ROW_STATE_DIR, LEVEL_OK, NULL,
                                  "'%s' does not exist yet; the hook creates it (0700)", path);
                else
                        check_add(k, ROW_STATE_DIR, LEVEL_FAIL, NULL, "cannot stat '%s': %m", path);
                return;
        }
        if (asprintf(&fix, "chown %u '%s' && chmod 0700 '%s'", (unsigned) geteuid(), path, path) <
            0)
                fix = NULL;
        if (!S_ISDIR(st.st_mode))
                check_add(k, ROW_STATE_DIR, LEVEL_FAIL, "remove it; the hook creates the directory",
                          "'%s' is not a directory (a symlink is refused too)", path);
        else if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
                check_add(
                    k, ROW_STATE_DIR, LEVEL_FAIL, fix,
                    "'%s' is owned by uid %u with mode %04o: the hook refuses it (whoever can "
                    "write there can forge which groups are its own)",
                    path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
        else
                check_add(k, ROW_STATE_DIR, LEVEL_OK, NULL, "'%s' is owned by uid %u, mode %04o",
                          path, (unsigned) st.st_uid, (unsigned) (st.st_mode & 07777));
}

struct hooks_seen {
        size_t files;
        bool create, poststop;
};

/* Room for a pod's files: a member file of some hundred containers, its
 * temp file, and their inodes. */
#define STATE_ROOM_KIB 1024ull
#define STATE_ROOM_INODES 64u

/* The file system under stateDir: writable, with room for a pod's files,
 * and on tmpfs, where state goes with the boot whose processes it names. */
void check_state_fs(struct checker *k)
{
        const char *path = k->config.state_dir;
        struct statvfs vfs;
        struct statfs sfs;
        unsigned long long kib, inodes;
        char inodes_text[24] = "unlimited";

        if (statvfs(path, &vfs) < 0 || statfs(path, &sfs) < 0) {
                if (errno != ENOENT) /* not made yet: state-dir says so */
                        check_add(k, ROW_STATE_FS, LEVEL_FAIL, NULL, "cannot statfs '%s': %m",
                                  path);
                return;
        }
        kib = (unsigned long long) vfs.f_bavail * vfs.f_frsize / 1024;
        inodes = vfs.f_files > 0 ? (unsigned long long) vfs.f_favail : ULLONG_MAX; /* no limit */
        if (inodes != ULLONG_MAX)
                (void) snprintf(inodes_text, sizeof(inodes_text), "%llu", inodes);
        if (vfs.f_flag & ST_RDONLY)
                check_add(
                    k, ROW_STATE_FS, LEVEL_FAIL,
                    "mount it read-write (the DaemonSet's stateDir hostPath is never readOnly)",
                    "'%s' is on a read-only file system: createRuntime cannot record containers, "
                    "poststop and gc cannot remove the groups of pods that end",
                    path);
        else if (kib < STATE_ROOM_KIB || inodes < STATE_ROOM_INODES)
                check_add(k, ROW_STATE_FS, LEVEL_FAIL, "free space and inodes on it",
                          "'%s' is full (%llu KiB free, %s inodes): createRuntime cannot record "
                          "containers, poststop and gc cannot remove the groups of pods that end",
                          path, kib, inodes_text);
        else if (sfs.f_type != TMPFS_MAGIC && sfs.f_type != RAMFS_MAGIC)
                check_add(
                    k, ROW_STATE_FS, LEVEL_WARN, "put stateDir on tmpfs, under /run",
                    "'%s' is not on tmpfs: its state outlives a reboot (the hook empties a pod's "
                    "state of an earlier boot, by boot_id)",
                    path);
        else
                check_add(k, ROW_STATE_FS, LEVEL_OK, NULL,
                          "'%s' is on tmpfs, writable, %llu KiB free", path, kib);
}

static void note_stages(json_t *stages, struct hooks_seen *seen)
{
        size_t i;
        json_t *v;

        json_array_foreach(stages, i, v) {
                const char *st = json_string_value(v);

                if (st && (strcmp(st, "createRuntime") == 0 || strcmp(st, "prestart") == 0))
                        seen->create = true;
                else if (st && strcmp(st, "poststop") == 0)
                        seen->poststop = true;
        }
}

/* What a run does besides waiting (reading /proc, mkdir, the tasks writes,
 * two saves) takes milliseconds, and its watchdog ends it
 * WATCHDOG_AFTER_DEADLINE_MS past its deadline at the latest; this leaves
 * room for that, and for the process's start and exit on a busy node. */
#define HOOK_WORK_MARGIN_MS 1000u
_Static_assert(HOOK_WORK_MARGIN_MS >= 2 * WATCHDOG_AFTER_DEADLINE_MS,
               "the watchdog must end a run well within the hooks.d timeout check wants");

/* The runtime kills a hook at hook.timeout, which fails the container
 * whatever failurePolicy says: the run's deadline (lockTimeoutMs) must end
 * well before it. */
static void check_hook_timeout(struct checker *k, const char *dir, const char *name,
                               const json_t *timeout)
{
        json_int_t ms;

        if (!json_is_integer(timeout))
                return;
        ms = json_integer_value(timeout) * 1000;
        if (ms >= (json_int_t) k->config.lock_timeout_ms + HOOK_WORK_MARGIN_MS)
                return;
        check_add(k, ROW_HOOKS_D, LEVEL_FAIL,
                  "lower lockTimeoutMs, or raise the file's timeout: a runtime that kills the hook "
                  "refuses the container even under failurePolicy: ignore",
                  "%s/%s: timeout %" JSON_INTEGER_FORMAT " s leaves less than %u ms after "
                  "lockTimeoutMs (%u ms)",
                  dir, name, json_integer_value(timeout), HOOK_WORK_MARGIN_MS,
                  k->config.lock_timeout_ms);
}

/* One oci-hooks(5) file: is it ours, and does its hook.path exist? */
static void check_hook_file(struct checker *k, int dir_fd, const char *dir, const char *name,
                            struct hooks_seen *seen)
{
        _cleanup_free_ char *text = NULL;
        json_auto_t *root = NULL;
        const char *path, *base;

        if (read_small_file_at(dir_fd, name, HOOK_FILE_MAX, &text) < 0)
                return;
        root = json_loads(text, 0, NULL);
        path = json_string_value(json_object_get(json_object_get(root, "hook"), "path"));
        base = path ? strrchr(path, '/') : NULL;
        if (!path || strcmp(base ? base + 1 : path, "resctrl-mon-hook") != 0)
                return; /* another tool's hook */

        seen->files++;
        note_stages(json_object_get(root, "stages"), seen);
        check_hook_timeout(k, dir, name, json_object_get(json_object_get(root, "hook"), "timeout"));
        if (access(path, X_OK) < 0)
                check_add(k, ROW_HOOKS_D, LEVEL_FAIL,
                          "install the hook at that path, or correct hook.path in the file",
                          "%s/%s points at '%s', which %s: CRI-O and Podman skip such a hook", dir,
                          name, path, errno == ENOENT ? "does not exist" : "is not executable");
        else
                check_add(k, ROW_HOOKS_D, LEVEL_OK, NULL, "%s/%s runs '%s'", dir, name, path);
}

void check_hooks_dirs(struct checker *k)
{
        struct hooks_seen seen = {0};

        for (size_t i = 0; i < k->n_hooks_dirs; i++) {
                _cleanup_(closedirp) DIR *d = opendir(k->hooks_dirs[i]);
                struct dirent *de;
                size_t len;

                while (d && (de = readdir(d))) {
                        len = strlen(de->d_name);
                        if (len > 5 && strcmp(de->d_name + len - 5, ".json") == 0)
                                check_hook_file(k, dirfd(d), k->hooks_dirs[i], de->d_name, &seen);
                }
        }
        if (seen.files == 0)
                check_add(
                    k, ROW_HOOKS_D, LEVEL_WARN,
                    "cmake --install installs both files; containerd needs NRI's hook-injector "
                    "or a base_runtime_spec instead (see docs/operations.md)",
                    "no oci-hooks file for resctrl-mon-hook in %s%s%s", k->hooks_dirs[0],
                    k->n_hooks_dirs > 1 ? " or " : "", k->n_hooks_dirs > 1 ? k->hooks_dirs[1] : "");
        else if (!seen.create || !seen.poststop)
                check_add(k, ROW_HOOKS_D, LEVEL_WARN, "register both stages, one file each",
                          "no hooks.d file registers %s: %s",
                          !seen.create ? "createRuntime" : "poststop",
                          !seen.create ? "no pod gets a group" : "groups outlive their pods");
}

/* What to do where gc cannot see the node's cgroups. */
#define NODE_CGROUPS_FIX                                                                           \
        "mount the node's /sys/fs/cgroup (read-only) at /sys/fs/cgroup, as "                       \
        "deploy/base/daemonset.yaml does; gc keeps the groups of pods whose cgroups it cannot see"

/* Is name a kubelet's top cgroup: kubepods, kubepods.slice, or one below a
 * --cgroup-root (kubelet-kubepods.slice)? */
static bool names_kubepods(const char *name)
{
        size_t n = strlen(name);

        return strcmp(name, "kubepods") == 0 || strcmp(name, "kubepods.slice") == 0 ||
               (n > 15 && strcmp(name + n - 15, "-kubepods.slice") == 0);
}

/* A kubelet's top cgroup at most two levels below dir_fd: its path into
 * ret ("/kubepods.slice", "/kubelet/kubepods"). */
static bool find_kubepods(int dir_fd, int levels, const char *above, char *ret, size_t size)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;

        if (opendir_at(dir_fd, ".", &d) < 0)
                return false;
        while ((de = readdir(d))) {
                _cleanup_close_ int fd = -EBADF;
                char path[2 * NAME_MAX + 3];

                if (!name_is_valid(de->d_name) || de->d_type != DT_DIR)
                        continue;
                /* Two levels of names always fit; a path cut short would
                 * name another cgroup, so one that does not fit is skipped. */
                if (snprintf(path, sizeof(path), "%s/%s", above, de->d_name) >= (int) sizeof(path))
                        continue;
                if (names_kubepods(de->d_name)) {
                        (void) snprintf(ret, size, "%s", path);
                        return true;
                }
                fd = openat(dir_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (levels > 1 && fd >= 0 && find_kubepods(fd, levels - 1, path, ret, size))
                        return true;
        }
        return false;
}

/* This process's cgroup not found in the hierarchy's mount: the cgroups of
 * other namespaces cannot be placed there (its row added). */
static bool view_unplaced(struct checker *k, const struct cgroup_view *v, const char *name)
{
        if (v->known)
                return false;
        check_add(k, ROW_NODE_CGROUPS, LEVEL_FAIL, NODE_CGROUPS_FIX,
                  "this process's cgroup is not found in the %s hierarchy's mount, %u levels "
                  "above its cgroup namespace: the cgroups of other namespaces cannot be placed",
                  name, v->ups);
        return true;
}

/* Above this process's own namespace, in a container: the node's tree,
 * which gc only reads; writable, it hands the container every cgroup of
 * the node (its row added). */
static bool view_writable(struct checker *k, const struct cgroup_view *v, const char *name)
{
        struct statvfs vfs;

        if (v->ups == 0 || fstatvfs(v->fd, &vfs) < 0 || (vfs.f_flag & ST_RDONLY))
                return false;
        check_add(k, ROW_NODE_CGROUPS, LEVEL_FAIL,
                  "mount it read-only (readOnly: true in deploy/base/daemonset.yaml)",
                  "the node's %s hierarchy is mounted read-write here; gc needs it read-only",
                  name);
        return true;
}

/* Can gc see kubelet's pod cgroups from here, in each hierarchy it records
 * containers in that is mounted (unified, pids): mounted from its root, or
 * at least with kubelet's tree in it, this process's cgroup namespace placed
 * in it, and read-only where it lies above that namespace (a container's
 * view of the node)? k->kubelet when kubelet's tree is seen. */
void check_node_cgroups(struct checker *k)
{
        _cleanup_(cgroup_mounts_close) struct cgroup_mounts m = CGROUP_MOUNTS_INIT;
        _cleanup_close_ int proc_fd = -EBADF;
        const struct cgroup_view *views[] = {&m.v2, &m.v1[0]};
        static const char *const names[] = {"unified", "pids"};
        char kubepods[2 * NAME_MAX + 3] = "", here[2 * NAME_MAX + 3], seen[64] = "";
        const char *kube_in = NULL;
        bool bad = false;

        k->node_cgroups_done = true;
        if (proc_open(&proc_fd) < 0 || cgroup_mounts_open(proc_fd, &m) < 0) {
                check_add(k, ROW_NODE_CGROUPS, LEVEL_FAIL, NULL,
                          "cannot read /proc/self/mountinfo: %m");
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(views); i++) {
                const struct cgroup_view *v = views[i];
                bool kube;

                if (v->fd < 0)
                        continue;
                check_list_append(seen, sizeof(seen), "%s", names[i]);
                if (view_unplaced(k, v, names[i])) {
                        bad = true;
                        continue;
                }
                bad |= view_writable(k, v, names[i]);
                kube = find_kubepods(v->fd, 2, "", here, sizeof(here));
                if (kube && !kube_in) {
                        memcpy(kubepods, here, sizeof(kubepods));
                        kube_in = names[i];
                }
                if (!kube && !v->whole && !bad) {
                        check_add(k, ROW_NODE_CGROUPS, LEVEL_FAIL, NODE_CGROUPS_FIX,
                                  "the %s hierarchy is seen only from %s, this process's cgroup "
                                  "namespace: kubelet's pod cgroups are not there",
                                  names[i], v->ns_root);
                        bad = true;
                }
        }
        if (!seen[0])
                check_add(k, ROW_NODE_CGROUPS, LEVEL_FAIL, NODE_CGROUPS_FIX,
                          "neither the unified nor the pids cgroup hierarchy is mounted here");
        else if (!bad)
                check_add(k, ROW_NODE_CGROUPS, LEVEL_OK, NULL, "gc sees the %s hierarchies%s%s%s%s",
                          seen, kube_in ? "; kubelet's pod cgroups at " : "", kubepods,
                          kube_in ? " of " : "", kube_in ? kube_in : "");
        k->kubelet = kube_in != NULL;
}

/* One runtime root: its containers, and those with a bundle adopt can
 * read, counted and listed in seen (size bytes). True when it is there and
 * cannot be read (its row added). */
static bool look_at_root(struct checker *k, const char *root, char *seen, size_t size, int *records,
                         int *readable)
{
        _cleanup_close_ int fd = -EBADF;
        int with_bundle = 0, n, r = runstate_open_root(root, &fd);

        if (r == -ENOENT)
                return false;
        if (r == -EPERM)
                check_add(
                    k, ROW_RUNTIME_ROOTS, LEVEL_FAIL, "give it to root, writable by root alone",
                    "runtime root '%s' is not root's own directory: adopt does not read it", root);
        else if (r == -ELOOP || r == -ENOTDIR)
                check_add(k, ROW_RUNTIME_ROOTS, LEVEL_FAIL,
                          "name or mount the runtime's own directory (runtimeRoots)",
                          "runtime root '%s' is a symlink or not a directory: adopt does not "
                          "follow it",
                          root);
        else if (r < 0)
                check_add(k, ROW_RUNTIME_ROOTS, LEVEL_FAIL, NULL,
                          "cannot open runtime root '%s': %s", root, strerror(-r));
        if (r < 0)
                return true;
        n = runstate_count(fd, &with_bundle);
        if (n < 0) /* a root it cannot list holds none adopt can read */
                n = with_bundle = 0;
        *records += n;
        *readable += with_bundle;
        check_list_append(seen, size, "%s (%d containers, %d readable)", root, n, with_bundle);
        return false;
}

/* Can adopt read the runtimes' records of running containers? Only a
 * runtime root that is there counts. Where kubelet's pods run (pods_run),
 * some root must hold a container's record: a DaemonSet's hostPath makes an
 * empty directory where the node keeps none, and its own container is one
 * of kubelet's pods. */
void check_runtime_roots(struct checker *k)
{
        const struct string_list *roots = &k->config.runtime_roots;
        char seen[512] = "", all[512] = "";
        bool bad = false;
        int records = 0, readable = 0;
        bool pods_run;

        if (!k->node_cgroups_done)
                check_node_cgroups(k);
        pods_run = k->kubelet;
        for (size_t i = 0; i < roots->n; i++) {
                check_list_append(all, sizeof(all), "%s", roots->items[i]);
                bad |= look_at_root(k, roots->items[i], seen, sizeof(seen), &records, &readable);
        }
        if (bad)
                return;
        if (pods_run && records == 0)
                check_add(
                    k, ROW_RUNTIME_ROOTS, LEVEL_FAIL,
                    "mount the runtimes' roots read-only, as deploy/base/daemonset.yaml does, or "
                    "name them in runtimeRoots",
                    "kubelet's pods run, but no runtime root here holds a container (%s): adopt "
                    "cannot see the containers that started before the hook",
                    seen[0] ? seen : all);
        else if (pods_run && readable == 0)
                check_add(
                    k, ROW_RUNTIME_ROOTS, LEVEL_FAIL,
                    "mount the runtimes' bundle directories read-only, as "
                    "deploy/base/daemonset.yaml does",
                    "no container record here is one adopt can read, with its bundle (%s): adopt "
                    "takes none of the containers that started before the hook",
                    seen);
        else if (seen[0])
                check_add(k, ROW_RUNTIME_ROOTS, LEVEL_OK, NULL, "adopt reads %s", seen);
        else
                check_add(k, ROW_RUNTIME_ROOTS, LEVEL_OK, NULL,
                          "no runtime root is here (%s), and no kubelet's pods run", all);
}
