/* SPDX-License-Identifier: Apache-2.0 */
#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/vfs.h>

#include "fsutil.h"
#include "lock.h"
#include "macro.h"
#include "proc.h"
#include "rdt.h"

/* The kernfs files read in one go here are small: last_cmd_status is a
 * 512-byte buffer, num_rmids and cpu_resctrl_groups are two short lines. */
#define RDT_SMALL_FILE_MAX 4096
/* tasks is one id per line; past this many bytes a group is certainly not empty. */
#define RDT_TASKS_MAX ((size_t) 1 << 20)

bool rdt_ctrl_group_is_valid(const char *ctrl)
{
        static const char *const reserved[] = {"info", "mon_groups", "mon_data"};

        if (!ctrl)
                return false;
        if (strcmp(ctrl, "/") == 0)
                return true;
        if (!name_is_valid(ctrl))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(reserved); i++)
                if (strcmp(ctrl, reserved[i]) == 0)
                        return false;
        return true;
}

static int open_dir_at(int dir_fd, const char *name, int *ret_fd)
{
        int fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* <ctrl>/name (flags, O_NOFOLLOW and O_CLOEXEC added), or the root's own
 * for "/": opened from root_fd itself, never through an open of "." (an
 * opendir of the root that gc would pay twice at every pod). Validates
 * ctrl first. */
static int open_in_ctrl_group(int root_fd, const char *ctrl, const char *name, int flags,
                              int *ret_fd)
{
        _cleanup_close_ int ctrl_fd = -EBADF;
        int r, fd;

        if (!rdt_ctrl_group_is_valid(ctrl))
                return -EINVAL;
        if (strcmp(ctrl, "/") != 0) {
                r = open_dir_at(root_fd, ctrl, &ctrl_fd);
                if (r < 0)
                        return r;
        }
        fd = openat(ctrl_fd >= 0 ? ctrl_fd : root_fd, name, flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* <ctrl>/mon_groups, or the root's own mon_groups for "/". Validates ctrl first. */
static int open_mon_groups(int root_fd, const char *ctrl, int *ret_fd)
{
        return open_in_ctrl_group(root_fd, ctrl, "mon_groups", O_RDONLY | O_DIRECTORY, ret_fd);
}

/* The mon_groups directory a group named name would live in; validates both names. */
static int open_group_parent(int root_fd, const char *ctrl, const char *name, int *ret_fd)
{
        if (!name_is_valid(name))
                return -EINVAL;
        return open_mon_groups(root_fd, ctrl, ret_fd);
}

int rdt_mon_group_open(int root_fd, const char *ctrl, const char *name, int *ret_fd)
{
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        r = open_group_parent(root_fd, ctrl, name, &dir_fd);
        if (r < 0)
                return r;
        return open_dir_at(dir_fd, name, ret_fd);
}

int rdt_read_info_file(int root_fd, const char *sub, const char *file, char **ret)
{
        _cleanup_close_ int info_fd = -EBADF, sub_fd = -EBADF;
        int r;

        r = open_dir_at(root_fd, "info", &info_fd);
        if (r < 0)
                return r;
        if (sub) {
                r = open_dir_at(info_fd, sub, &sub_fd);
                if (r < 0)
                        return r;
        }
        return read_small_file_at(sub ? sub_fd : info_fd, file, RDT_SMALL_FILE_MAX, ret);
}

/* The kernel appends one line per message within a command ("No task 12\nError
 * while processing task 12\n"): hand back a single line, joined with "; ". */
static void read_last_cmd_status(int root_fd, char **reterr_status)
{
        _cleanup_free_ char *buf = NULL;
        size_t n_lines = 0, len;
        char *out, *p;

        if (!reterr_status || rdt_read_info_file(root_fd, NULL, "last_cmd_status", &buf) < 0)
                return;

        len = strlen(buf);
        while (len > 0 && buf[len - 1] == '\n')
                buf[--len] = '\0';
        for (p = buf; (p = strchr(p, '\n')); p++)
                n_lines++;

        out = malloc(len + n_lines + 1);
        if (!out)
                return;
        p = out;
        for (const char *s = buf; *s; s++) {
                if (*s == '\n') {
                        *p++ = ';';
                        *p++ = ' ';
                } else
                        *p++ = *s;
        }
        *p = '\0';
        *reterr_status = out;
}

int rdt_open(const char *path, bool require_resctrl_fs, int *ret_root_fd)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        assert(path && ret_root_fd);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;

        if (require_resctrl_fs) {
                struct statfs sfs;

                if (fstatfs(fd, &sfs) < 0)
                        return -errno;
                if (sfs.f_type != RDTGROUP_SUPER_MAGIC)
                        return -ENOMEDIUM;
        }

        /* mon_groups/ exists only when the kernel can monitor. */
        if (fstatat(fd, "mon_groups", &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? -EOPNOTSUPP : -errno;
        if (!S_ISDIR(st.st_mode))
                return -EOPNOTSUPP;

        *ret_root_fd = TAKE_FD(fd);
        return 0;
}

/* Takes op (LOCK_EX for a change, LOCK_SH for a read) on the root through
 * the turnstile: flock(LOCK_EX) on info/, held only until the root's lock
 * is. A writer that holds it while it waits for readers to finish keeps new
 * readers out, so overlapping readers can never starve it: it waits for
 * those already in, at most. Both waits share one deadline. */
static int lock_through_turnstile(int root_fd, int op, unsigned timeout_ms)
{
        _cleanup_close_ int turnstile = -EBADF;
        int64_t deadline = deadline_after_ms(timeout_ms);
        int r;

        turnstile = openat(root_fd, "info", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (turnstile < 0)
                return -errno;
        r = lock_fd_until(turnstile, LOCK_EX, deadline);
        return r < 0 ? r : lock_fd_until(root_fd, op, deadline);
}

/* This process's hold of the lock (rdt.h: one at a time). */
static struct {
        int64_t since;   /* now_usec() when taken; 0 while not held */
        unsigned writes; /* task ids written since */
        bool shared;
} hold;
static rdt_hold_observer hold_observer;

static void hold_begin(bool shared)
{
        hold.since = now_usec();
        hold.writes = 0;
        hold.shared = shared;
}

void rdt_set_hold_observer(rdt_hold_observer fn)
{
        hold_observer = fn;
}

bool rdt_lock_is_held(void)
{
        return hold.since != 0 && !hold.shared;
}

bool rdt_hold_is_spent(void)
{
        return hold.since != 0 && (hold.writes >= RDT_HOLD_BUDGET_WRITES ||
                                   now_usec() - hold.since >= RDT_HOLD_BUDGET_USEC);
}

int rdt_lock(int root_fd, unsigned timeout_ms)
{
        int r;

        /* Free at once: there is no one to wait for, and no reader to keep
         * out meanwhile. Only a writer that waits needs the turnstile, whose
         * open is round trips on a FUSE resctrl, at every createRuntime and
         * at every pod of a gc pass. A reader never skips it: one that did
         * could slip in while a writer waits for those already in. */
        if (flock(root_fd, LOCK_EX | LOCK_NB) == 0)
                r = 0;
        else if (errno != EWOULDBLOCK && errno != EINTR)
                return -errno;
        else
                r = lock_through_turnstile(root_fd, LOCK_EX, timeout_ms);
        if (r >= 0)
                hold_begin(false);
        return r;
}

int rdt_lock_shared(int root_fd, unsigned timeout_ms)
{
        int r = lock_through_turnstile(root_fd, LOCK_SH, timeout_ms);

        if (r >= 0)
                hold_begin(true);
        return r;
}

void rdt_unlock(int root_fd)
{
        (void) flock(root_fd, LOCK_UN);
        if (hold.since != 0 && hold_observer)
                hold_observer(now_usec() - hold.since, hold.writes, hold.shared);
        hold.since = 0;
}

int rdt_lock_yield(int root_fd, unsigned timeout_ms)
{
        int r;

        rdt_unlock(root_fd);
        /* Never the free-at-once path of rdt_lock: a writer waiting holds
         * the turnstile until it has the root's lock, so this waits for it
         * to take its turn. */
        r = lock_through_turnstile(root_fd, LOCK_EX, timeout_ms);
        if (r >= 0)
                hold_begin(false);
        return r;
}

void rdt_unlockp(const int *locked_root_fd)
{
        if (*locked_root_fd >= 0) {
                int saved_errno = errno;

                rdt_unlock(*locked_root_fd);
                errno = saved_errno;
        }
}

int rdt_task_mon_group(int proc_fd, pid_t tid, char **ret_ctrl, char **ret_mon)
{
        _cleanup_free_ char *buf = NULL, *ctrl = NULL, *mon = NULL;
        char path[32], *nl, *m;
        int r;

        if (tid <= 0)
                return -EINVAL;
        snprintf(path, sizeof(path), "%d/cpu_resctrl_groups", (int) tid);
        r = read_small_file_at(proc_fd, path, RDT_SMALL_FILE_MAX, &buf);
        if (r == -ESRCH)
                return -ENOENT;
        if (r < 0)
                return r;

        /* "res:<ctrl>\nmon:<mon>\n": plain names, "/" for the root group, mon
         * empty in the control group's own monitoring group. */
        if (strncmp(buf, "res:", 4) != 0)
                return -EBADMSG;
        nl = strchr(buf + 4, '\n');
        if (!nl || strncmp(nl + 1, "mon:", 4) != 0)
                return -EBADMSG;
        *nl = '\0';
        m = nl + 5;
        *strchrnul(m, '\n') = '\0';
        if (buf[4] == '\0')
                return -ENODATA; /* resctrl is not mounted */
        if (!rdt_ctrl_group_is_valid(buf + 4) || (m[0] && !name_is_valid(m)))
                return -EBADMSG;

        ctrl = strdup(buf + 4);
        mon = m[0] ? strdup(m) : NULL;
        if (!ctrl || (m[0] && !mon))
                return -ENOMEM;
        *ret_ctrl = TAKE_PTR(ctrl);
        *ret_mon = TAKE_PTR(mon);
        return 0;
}

int rdt_task_ctrl_group(int proc_fd, pid_t pid, char **ret)
{
        _cleanup_free_ char *mon = NULL;

        return rdt_task_mon_group(proc_fd, pid, ret, &mon);
}

int rdt_mon_group_create(int root_fd, const char *ctrl, const char *name, char **reterr_status)
{
        _cleanup_close_ int dir_fd = -EBADF, group_fd = -EBADF;
        int r;

        assert(rdt_lock_is_held());
        r = open_group_parent(root_fd, ctrl, name, &dir_fd);
        if (r < 0) /* only mkdir's own ENOSPC and EBUSY say the RMIDs ran out */
                return r == -ENOSPC || r == -EBUSY ? -EIO : r;

        if (mkdirat(dir_fd, name, 0755) == 0)
                return 1;
        r = -errno;
        if (r == -EEXIST) {
                /* Only a directory counts as the group; a planted symlink is refused. */
                r = open_dir_at(dir_fd, name, &group_fd);
                return r < 0 ? r : 0;
        }
        /* Out of RMIDs is ENOSPC, or EBUSY while freed RMIDs wait in limbo; the
         * kernel says which in last_cmd_status. */
        if (r != -ENOENT)
                read_last_cmd_status(root_fd, reterr_status);
        return r;
}

/* The group's tasks file, opened with flags (O_RDONLY or O_WRONLY). */
static int open_tasks(int root_fd, const char *ctrl, const char *name, int flags, int *ret_fd)
{
        _cleanup_close_ int group_fd = -EBADF;
        int r, fd;

        r = rdt_mon_group_open(root_fd, ctrl, name, &group_fd);
        if (r < 0)
                return r;
        fd = openat(group_fd, "tasks", flags | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        *ret_fd = fd;
        return 0;
}

/* resctrl takes one command per write(2), and before 6.7 only one id per command. */
static int write_task_id(int tasks_fd, pid_t id)
{
        char buf[16];
        int len = snprintf(buf, sizeof(buf), "%d\n", (int) id);
        ssize_t n;

        hold.writes++;

        do
                n = write(tasks_fd, buf, (size_t) len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        return n == len ? 0 : -EIO;
}

static int open_task_dir(int proc_fd, pid_t pid, DIR **ret)
{
        char path[32];
        int r;

        snprintf(path, sizeof(path), "%d/task", (int) pid);
        r = opendir_at(proc_fd, path, ret);
        return r == -ENOENT ? -ESRCH : r;
}

int rdt_mon_group_add_process(int root_fd, int proc_fd, const char *ctrl, const char *name,
                              pid_t pid, char **reterr_status)
{
        _cleanup_close_ int tasks_fd = -EBADF;
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        assert(rdt_lock_is_held());
        if (pid <= 0)
                return -EINVAL;
        r = open_tasks(root_fd, ctrl, name, O_WRONLY, &tasks_fd);
        if (r < 0)
                return r;
        r = open_task_dir(proc_fd, pid, &d);
        if (r < 0)
                return r;

        /* The leader first: if it cannot move, no thread of the process has. */
        r = write_task_id(tasks_fd, pid);
        if (r < 0)
                goto fail;

        /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): fdopendir sets errno */
        for (errno = 0; (de = readdir(d)); errno = 0) {
                pid_t tid;

                if (parse_pid(de->d_name, de->d_name + strlen(de->d_name), &tid) < 0 || tid == pid)
                        continue;
                r = write_task_id(tasks_fd, tid);
                if (r == -ESRCH) /* the thread exited meanwhile */
                        continue;
                if (r < 0)
                        goto fail;
        }
        return errno == 0 ? 0 : -errno;

fail:
        read_last_cmd_status(root_fd, reterr_status);
        return r;
}

/* The group's tasks file, read to EOF: it is a seq_file that may span many pages. */
static int read_tasks(int root_fd, const char *ctrl, const char *name, char **ret)
{
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = open_tasks(root_fd, ctrl, name, O_RDONLY, &fd);
        if (r < 0)
                return r;
        return read_all_fd(fd, RDT_TASKS_MAX, ret, NULL);
}

int rdt_mon_group_tasks(int root_fd, const char *ctrl, const char *name, pid_t **ret, size_t *ret_n)
{
        _cleanup_free_ char *buf = NULL;
        int r;

        r = read_tasks(root_fd, ctrl, name, &buf);
        if (r < 0)
                return r;
        return pid_list_parse(buf, ret, ret_n);
}

int rdt_mon_group_open_tasks(int root_fd, const char *ctrl, const char *name, int *ret_fd)
{
        return open_tasks(root_fd, ctrl, name, O_WRONLY, ret_fd);
}

int rdt_tasks_write(int tasks_fd, pid_t id)
{
        assert(tasks_fd >= 0 && rdt_lock_is_held());
        return id > 0 ? write_task_id(tasks_fd, id) : -EINVAL;
}

int rdt_ctrl_add_task(int root_fd, const char *ctrl, pid_t tid)
{
        _cleanup_close_ int tasks_fd = -EBADF;
        int r;

        assert(rdt_lock_is_held());
        if (tid <= 0)
                return -EINVAL;
        r = open_in_ctrl_group(root_fd, ctrl, "tasks", O_WRONLY, &tasks_fd);
        if (r < 0)
                return r;
        return write_task_id(tasks_fd, tid);
}

int rdt_mon_group_is_empty(int root_fd, int proc_fd, const char *ctrl, const char *name)
{
        _cleanup_free_ char *buf = NULL;
        pid_t id;
        int r;

        r = read_tasks(root_fd, ctrl, name, &buf);
        if (r == -EFBIG)
                return 0; /* more ids than the cap: certainly not empty */
        if (r < 0)
                return r;
        for (const char *p = buf; next_pid_line(&p, &id);) {
                if (id == 0)
                        continue;
                r = proc_is_running(proc_fd, id);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        return 1;
}

int rdt_mon_group_has_task(int root_fd, const char *ctrl, const char *name, pid_t pid)
{
        _cleanup_free_ char *buf = NULL;
        pid_t id;
        int r;

        r = read_tasks(root_fd, ctrl, name, &buf);
        if (r < 0)
                return r;
        for (const char *p = buf; next_pid_line(&p, &id);)
                if (id == pid && id != 0)
                        return 1;
        return 0;
}

int rdt_mon_group_remove(int root_fd, const char *ctrl, const char *name)
{
        _cleanup_close_ int dir_fd = -EBADF;
        int r;

        r = open_group_parent(root_fd, ctrl, name, &dir_fd);
        if (r == -ENOENT) /* the control group and with it the group are gone */
                return 0;
        if (r < 0)
                return r;
        if (unlinkat(dir_fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

int rdt_mon_group_exists(int root_fd, const char *ctrl, const char *name)
{
        _cleanup_close_ int dir_fd = -EBADF;
        struct stat st;
        int r;

        /* A look at the entry, never followed, rather than an open of the
         * group: what it says is the same, for an opendir and a releasedir
         * fewer at every claim (round trips on a FUSE resctrl). */
        r = open_group_parent(root_fd, ctrl, name, &dir_fd);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return errno == ENOENT ? 0 : -errno;
        return S_ISDIR(st.st_mode) ? 1 : -ENOTDIR;
}

/* The MON groups in one mon_groups directory. */
static int foreach_mon(int dir_fd, const char *ctrl, rdt_group_fn fn, void *userdata)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int r;

        d = fdopendir(dir_fd);
        if (!d) {
                r = -errno;
                (void) close(dir_fd);
                return r;
        }
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (!name_is_valid(de->d_name))
                        continue; /* "." and ".." */
                r = fn(ctrl, de->d_name, userdata);
                if (r < 0)
                        return r;
        }
        return -errno;
}

/* What rdt_ctrl_mon_tasks gathers: the tasks texts, one after another. */
struct mon_tasks {
        int root_fd;
        const char *except;
        FILE *out;
};

static int collect_mon_tasks(const char *ctrl, const char *mon, void *userdata)
{
        struct mon_tasks *t = userdata;
        _cleanup_free_ char *buf = NULL;
        int r;

        if (t->except && strcmp(mon, t->except) == 0)
                return 0;
        r = read_tasks(t->root_fd, ctrl, mon, &buf);
        /* Removed meanwhile: gone, or kernfs's ENODEV for a read after rmdir. */
        if (r == -ENOENT || r == -ENODEV)
                return 0;
        if (r < 0)
                return r;
        return fprintf(t->out, "%s\n", buf) < 0 ? -ENOMEM : 0;
}

int rdt_ctrl_mon_tasks(int root_fd, const char *ctrl, const char *except, pid_t **ret,
                       size_t *ret_n)
{
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ pid_t *ids = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        struct mon_tasks t = {.root_fd = root_fd, .except = except};
        size_t len = 0, n = 0, k = 0;
        int fd = -EBADF, r;

        f = t.out = open_memstream(&text, &len);
        if (!f)
                return -ENOMEM;
        r = open_mon_groups(root_fd, ctrl, &fd);
        if (r >= 0)
                r = foreach_mon(fd, ctrl, collect_mon_tasks, &t);
        if (fclose(TAKE_PTR(f)) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0)
                return r;
        r = pid_list_parse(text, &ids, &n);
        if (r < 0)
                return r;
        /* A task that moved between two groups during the scan is listed twice. */
        for (size_t i = 0; i < n; i++)
                if (k == 0 || ids[k - 1] != ids[i])
                        ids[k++] = ids[i];
        *ret = TAKE_PTR(ids);
        *ret_n = k;
        return 0;
}

static bool is_ctrl_group(int root_fd, const char *name)
{
        struct stat st;

        return rdt_ctrl_group_is_valid(name) && strcmp(name, "/") != 0 &&
               fstatat(root_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

int rdt_groups_foreach(int root_fd, rdt_group_fn fn, void *userdata)
{
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        int fd = -EBADF, r;

        r = open_mon_groups(root_fd, "/", &fd);
        if (r < 0)
                return r;
        r = foreach_mon(fd, "/", fn, userdata);
        if (r < 0)
                return r;

        r = opendir_at(root_fd, ".", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                if (!is_ctrl_group(root_fd, de->d_name))
                        continue; /* info, mon_groups, mon_data, files */
                r = fn(de->d_name, NULL, userdata);
                if (r < 0)
                        return r;
                r = open_mon_groups(root_fd, de->d_name, &fd);
                if (r == -ENOENT)
                        continue; /* removed meanwhile */
                if (r >= 0)
                        r = foreach_mon(fd, de->d_name, fn, userdata);
                if (r < 0)
                        return r;
        }
        return -errno;
}

/* info/<sub>/<file> as a number > 0. */
static int read_info_uint(int root_fd, const char *sub, const char *file, unsigned *ret)
{
        _cleanup_free_ char *buf = NULL;
        unsigned long v;
        char *end;
        int r;

        r = rdt_read_info_file(root_fd, sub, file, &buf);
        if (r < 0)
                return r;
        errno = 0;
        v = strtoul(buf, &end, 10);
        if (!isdigit((unsigned char) buf[0]) || errno != 0 || end == buf ||
            (*end != '\n' && *end != '\0') || v == 0 || v > UINT_MAX)
                return -EBADMSG;
        *ret = (unsigned) v;
        return 0;
}

int rdt_rmid_budget(int root_fd, unsigned *ret)
{
        static const char *const mon_dirs[] = {"L3_MON", "PERF_PKG_MON"};
        unsigned budget = UINT_MAX;
        bool found = false;

        /* Since 7.0 the kernel allocates from the smaller of the two RMID counts. */
        for (size_t i = 0; i < ELEMENTSOF(mon_dirs); i++) {
                unsigned n;
                int r = read_info_uint(root_fd, mon_dirs[i], "num_rmids", &n);

                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                if (n < budget)
                        budget = n;
                found = true;
        }
        if (!found)
                return -ENOENT;
        *ret = budget - 1; /* RMID 0 is the root group's */
        return 0;
}

/* The control groups the system can have: the smallest num_closids of
 * info's resources (L3, L3CODE and L3DATA with CDP, MB, ...), as resctrl's
 * own count is. -ENOENT when none has one. */
static int num_closids(int root_fd, unsigned *ret)
{
        _cleanup_(closedirp) DIR *d = NULL;
        unsigned least = UINT_MAX;
        struct dirent *de;
        int r;

        r = opendir_at(root_fd, "info", &d);
        if (r < 0)
                return r;
        for (errno = 0; (de = readdir(d)); errno = 0) {
                unsigned n;

                if (de->d_name[0] == '.' || !name_is_valid(de->d_name))
                        continue;
                r = read_info_uint(root_fd, de->d_name, "num_closids", &n);
                if (r == -ENOENT || r == -ENOTDIR)
                        continue; /* a monitoring resource, or a file */
                if (r < 0)
                        return r;
                least = n < least ? n : least;
        }
        if (errno != 0)
                return -errno;
        if (least == UINT_MAX)
                return -ENOENT;
        *ret = least;
        return 0;
}

int rdt_mon_groups_per_ctrl(int root_fd, unsigned *ret)
{
        unsigned rmids = 0, closids = 0;
        int r;

        r = read_info_uint(root_fd, "L3_MON", "num_rmids", &rmids);
        if (r >= 0)
                r = num_closids(root_fd, &closids);
        if (r < 0)
                return r;
        if (closids == 0 || rmids / closids < 1)
                return -EBADMSG;
        *ret = rmids / closids - 1;
        return 0;
}

enum rmid_budget rdt_budget_rule(enum rmid_budget configured)
{
        struct utsname u;

        if (configured != RMID_BUDGET_AUTO)
                return configured;
        return uname(&u) == 0 && strcmp(u.machine, "aarch64") == 0 ? RMID_BUDGET_CTRL_GROUP
                                                                   : RMID_BUDGET_NODE;
}

struct usage_list {
        struct rdt_ctrl_usage *items;
        size_t n;
        bool (*is_pod_group)(const char *mon);
};

static int count_usage(const char *ctrl, const char *mon, void *userdata)
{
        struct usage_list *l = userdata;
        struct rdt_ctrl_usage *a;

        if (mon) { /* ctrl's entry comes first: the root's is there, others' made below */
                bool pod = l->is_pod_group(mon);

                for (size_t i = 0; i < l->n; i++)
                        if (strcmp(l->items[i].name, ctrl) == 0) {
                                l->items[i].mon_groups++;
                                l->items[i].pod_groups += pod;
                        }
                return 0;
        }
        a = reallocarray(l->items, l->n + 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        l->items = a;
        a[l->n] = (struct rdt_ctrl_usage){0};
        (void) snprintf(a[l->n].name, sizeof(a[l->n].name), "%s", ctrl);
        l->n++;
        return 0;
}

int rdt_mon_groups_count(int root_fd, bool (*is_pod_group)(const char *mon),
                         struct rdt_ctrl_usage **ret, size_t *ret_n)
{
        struct usage_list l = {.is_pod_group = is_pod_group};
        int r;

        r = count_usage("/", NULL, &l);
        if (r >= 0)
                r = rdt_groups_foreach(root_fd, count_usage, &l);
        if (r < 0) {
                free(l.items);
                return r;
        }
        *ret = l.items;
        *ret_n = l.n;
        return 0;
}

void rdt_ctrl_usage_format(const struct rdt_ctrl_usage *u, unsigned per_ctrl, char *buf,
                           size_t size)
{
        unsigned others = u->mon_groups - u->pod_groups;
        bool root = strcmp(u->name, "/") == 0;

        if (u->mon_groups < per_ctrl) {
                (void) snprintf(buf, size, "%s %u in use",
                                root ? "the root control group" : u->name, u->mon_groups);
                return;
        }
        (void) snprintf(buf, size, "%s %u in use (full: %u pod%s group%s, %u other%s)",
                        root ? "the root control group" : u->name, u->mon_groups, u->pod_groups,
                        u->pod_groups == 1 ? "'s" : "s'", u->pod_groups == 1 ? "" : "s", others,
                        others == 1 ? "" : "s");
}

static int count_group(const char *ctrl, const char *mon, void *userdata)
{
        (void) ctrl;
        (void) mon;
        (*(unsigned *) userdata)++;
        return 0;
}

int rdt_groups_count(int root_fd, unsigned *ret)
{
        unsigned n = 0;
        int r = rdt_groups_foreach(root_fd, count_group, &n);

        if (r < 0)
                return r;
        *ret = n;
        return 0;
}
