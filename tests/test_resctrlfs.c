/* SPDX-License-Identifier: Apache-2.0 */
/* The resctrlfs emulator against the kernel rules it imitates: each test mounts
 * the built binary on a fresh directory and drives it with real syscalls from
 * live processes and threads. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "model.h"
#include "tmptree.h"
#include "wait_for.h"

static char mnt[PATH_MAX];
static int root_fd = -EBADF;
static pid_t children[64];
static size_t n_children;

/* ---- helpers ---- */

static const char *fmt(const char *format, ...) __attribute__((format(printf, 1, 2)));
static const char *fmt(const char *format, ...)
{
        static char ring[8][4200];
        static unsigned next;
        char *buf = ring[next++ % ELEMENTSOF(ring)];
        va_list ap;

        va_start(ap, format);
        (void) vsnprintf(buf, sizeof(ring[0]), format, ap);
        va_end(ap);
        return buf;
}

/* The exit status of argv, or -1. No ck_assert: main() uses it too. */
static int run(const char *const argv[])
{
        pid_t pid = fork();
        int status;

        if (pid < 0)
                return -1;
        if (pid == 0) {
                /* execvp() does not modify argv; its prototype just predates const. */
                execvp(argv[0], (char *const *) (uintptr_t) argv);
                _exit(127);
        }
        if (waitpid(pid, &status, 0) != pid)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static bool is_mounted(const char *path)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mounts", "re");
        char line[1024];

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                if (strstr(line, fmt(" %s fuse.resctrlfs ", path)))
                        return true;
        return false;
}

/* Mounts resctrlfs with the given options (NULL-terminated). Without -f the
 * command returns only once the mount is ready, which this relies on. */
static void emu_mount(const char *opt, ...)
{
        const char *argv[32] = {RESCTRLFS_PATH};
        size_t n = 1;
        const char *dir;
        va_list ap;

        /* Under the suite's top directory: tmptree_run unmounts what a
         * test that failed or was killed left there. */
        (void) close(tmptree_new(&dir));
        snprintf(mnt, sizeof(mnt), "%s", dir);
        va_start(ap, opt);
        for (const char *o = opt; o; o = va_arg(ap, const char *))
                argv[n++] = o;
        va_end(ap);
        argv[n++] = mnt;
        ck_assert_int_eq(run(argv), 0);
        ck_assert(is_mounted(mnt));
        root_fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root_fd, 0);
}

static void setup(void)
{
        (void) umask(022);
}

static void teardown(void)
{
        for (size_t i = 0; i < n_children; i++) {
                (void) kill(children[i], SIGKILL);
                (void) waitpid(children[i], NULL, 0);
        }
        n_children = 0;
        if (root_fd >= 0)
                (void) close(root_fd);
        root_fd = -EBADF;
        if (mnt[0]) {
                /* A copy in a mount namespace that another suite's runtime
                 * is tearing down keeps it busy for a moment. */
                WAIT_FOR(WAIT_DAEMON_MS, "the emulator's unmount",
                         run((const char *const[]){"fusermount3", "-u", "-q", mnt, NULL}) == 0);
                ck_assert(!is_mounted(mnt));
                ck_assert_int_eq(rmdir(mnt), 0);
                mnt[0] = '\0';
        }
}

static char *read_at(const char *path)
{
        _cleanup_close_ int fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
        char *buf = NULL;

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_int_eq(read_all_fd(fd, 1 << 20, &buf, NULL), 0);
        return buf;
}

#define assert_file(path, expected)                                                                \
        do {                                                                                       \
                _cleanup_free_ char *_c = read_at(path);                                           \
                ck_assert_str_eq(_c, expected);                                                    \
        } while (0)

#define assert_status(expected) assert_file("info/last_cmd_status", expected)

/* One write(2) of s; 0 or -errno. */
static int write_at(const char *path, const char *s)
{
        _cleanup_close_ int fd = openat(root_fd, path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        n = write(fd, s, strlen(s));
        if (n < 0)
                return -errno;
        ck_assert_int_eq(n, (ssize_t) strlen(s));
        return 0;
}

static int mkdir_at(const char *path)
{
        return mkdirat(root_fd, path, 0755) < 0 ? -errno : 0;
}

static int rmdir_at(const char *path)
{
        return unlinkat(root_fd, path, AT_REMOVEDIR) < 0 ? -errno : 0;
}

static void move(const char *tasks, pid_t tid)
{
        ck_assert_int_eq(write_at(tasks, fmt("%d", (int) tid)), 0);
}

static bool lists(const char *tasks, pid_t tid)
{
        _cleanup_free_ char *c = read_at(tasks);

        for (char *p = c; *p;) {
                char *end;
                long v = strtol(p, &end, 10);

                ck_assert_msg(end != p && *end == '\n', "bad tasks line in '%s'", c);
                if (v == tid)
                        return true;
                p = end + 1;
        }
        return false;
}

static unsigned long long read_u64(const char *path)
{
        _cleanup_free_ char *c = read_at(path);
        char *end;
        unsigned long long v = strtoull(c, &end, 10);

        ck_assert_msg(end != c && strcmp(end, "\n") == 0, "bad counter '%s'", c);
        return v;
}

static int qsort_strcmp(const void *a, const void *b)
{
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Sorted entry names, space-separated. */
static char *entries(const char *path)
{
        _cleanup_free_ char *out = NULL;
        char *names[64];
        size_t n = 0, len = 0;
        struct dirent *de;
        DIR *d;
        int fd;

        fd = openat(root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        d = fdopendir(fd);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        ck_assert_uint_lt(n, ELEMENTSOF(names));
                        names[n++] = strdup(de->d_name);
                }
        (void) closedir(d);
        qsort(names, n, sizeof(names[0]), qsort_strcmp);
        out = calloc(1, 4096);
        for (size_t i = 0; i < n; i++) {
                len += (size_t) snprintf(out + len, 4096 - len, "%s%s", i ? " " : "", names[i]);
                free(names[i]);
        }
        return TAKE_PTR(out);
}

#define assert_entries(path, expected)                                                             \
        do {                                                                                       \
                _cleanup_free_ char *_e = entries(path);                                           \
                ck_assert_str_eq(_e, expected);                                                    \
        } while (0)

static void assert_mode(const char *path, mode_t mode)
{
        struct stat st;

        ck_assert_msg(fstatat(root_fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0, "stat %s: %s", path,
                      strerror(errno));
        ck_assert_msg(st.st_mode == mode, "%s: mode %o, expected %o", path, st.st_mode, mode);
        ck_assert_int_eq(st.st_uid, 0);
}

/* A child that only waits to be killed; it dies with this test process. */
static pid_t sleeper(void)
{
        pid_t parent = getpid();
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                (void) close(root_fd);
                for (;;)
                        pause();
        }
        ck_assert_uint_lt(n_children, ELEMENTSOF(children));
        children[n_children++] = pid;
        return pid;
}

/* A sleeper that has run on cpu: it says so through a pipe once it is there. */
static pid_t sleeper_on_cpu(int cpu)
{
        pid_t parent = getpid();
        int fds[2];
        pid_t pid;
        char c;

        ck_assert_int_eq(pipe2(fds, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                cpu_set_t set;

                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                (void) close(root_fd);
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                /* sched_setaffinity moves the caller before it returns. */
                if (sched_setaffinity(0, sizeof(set), &set) < 0 || write(fds[1], "x", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        (void) close(fds[1]);
        ck_assert_int_eq(read(fds[0], &c, 1), 1);
        (void) close(fds[0]);
        ck_assert_uint_lt(n_children, ELEMENTSOF(children));
        children[n_children++] = pid;
        return pid;
}

static void reap(pid_t pid)
{
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        for (size_t i = 0; i < n_children; i++)
                if (children[i] == pid)
                        children[i] = children[--n_children];
}

/* An id that named a process a moment ago and names none now. */
static pid_t dead_pid(void)
{
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        ck_assert_int_ne(access(fmt("/proc/%d", (int) pid), F_OK), 0);
        return pid;
}

static void sleep_ms(unsigned ms)
{
        (void) nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000L},
                         NULL);
}

/* /proc/<pid>/stat's clock: USER_HZ ticks since boot. */
static unsigned long long ticks_now(void)
{
        long hz = sysconf(_SC_CLK_TCK);
        struct timespec ts;

        ck_assert_int_eq(clock_gettime(CLOCK_BOOTTIME, &ts), 0);
        return (unsigned long long) ts.tv_sec * (unsigned long long) hz +
               (unsigned long long) ts.tv_nsec / (1000000000ULL / (unsigned long long) hz);
}

/* Returns once the clock has moved to a later tick: a task started from now
 * on has a later start time than every task started before, which is what
 * the model compares. */
static void wait_next_tick(void)
{
        unsigned long long t = ticks_now();

        WAIT_FOR(WAIT_PROCESS_MS, "the next clock tick", ticks_now() != t);
}

/* ---- a child process with extra threads ---- */

struct threaded {
        pid_t pid;
        pid_t tids[3];
        int quit_fds[3]; /* a byte written makes that thread exit */
};

struct thread_arg {
        int report_fd;
        int quit_fd;
        pid_t report[2]; /* index, tid: threads report in any order */
};

static void *thread_main(void *p)
{
        struct thread_arg *a = p;
        char c;

        a->report[1] = gettid();
        if (write(a->report_fd, a->report, sizeof(a->report)) != sizeof(a->report) ||
            read(a->quit_fd, &c, 1) < 0)
                _exit(1);
        return NULL;
}

static void spawn_threaded(struct threaded *t)
{
        int report[2], quit[3][2];

        ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
        for (size_t i = 0; i < ELEMENTSOF(quit); i++)
                ck_assert_int_eq(pipe2(quit[i], O_CLOEXEC), 0);
        t->pid = fork();
        ck_assert_int_ge(t->pid, 0);
        if (t->pid == 0) {
                static struct thread_arg args[3];
                pthread_t th;

                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (size_t i = 0; i < ELEMENTSOF(args); i++) {
                        args[i] = (struct thread_arg){report[1], quit[i][0], {(pid_t) i}};
                        if (pthread_create(&th, NULL, thread_main, &args[i]) != 0)
                                _exit(1);
                        (void) pthread_detach(th);
                }
                for (;;)
                        pause();
        }
        children[n_children++] = t->pid;
        for (size_t i = 0; i < ELEMENTSOF(t->tids); i++) {
                pid_t got[2];

                ck_assert_int_eq(read(report[0], got, sizeof(got)), sizeof(got));
                ck_assert(got[0] >= 0 && got[0] < (pid_t) ELEMENTSOF(t->tids));
                t->tids[got[0]] = got[1];
                t->quit_fds[i] = quit[i][1];
                (void) close(quit[i][0]);
        }
        (void) close(report[0]);
        (void) close(report[1]);
}

static void end_thread(struct threaded *t, size_t i)
{
        const char *path = fmt("/proc/%d/task/%d", (int) t->pid, (int) t->tids[i]);

        ck_assert_int_eq(write(t->quit_fds[i], "q", 1), 1);
        WAIT_FOR(WAIT_PROCESS_MS, "a thread's exit", access(path, F_OK) != 0);
}

/* ---- layout and modes ---- */

START_TEST(test_layout_root)
{
        emu_mount("--num-rmids", "32", NULL);

        assert_entries(".", "cpus cpus_list info mode mon_data mon_groups schemata size tasks");
        assert_entries("info", "L3 L3_MON last_cmd_status");
        assert_entries("info/L3_MON", "max_threshold_occupancy mon_features num_rmids");
        assert_entries("mon_groups", "");
        assert_entries("mon_data", "mon_L3_00");
        assert_entries("mon_data/mon_L3_00", "llc_occupancy mbm_local_bytes mbm_total_bytes");

        assert_file("info/L3_MON/num_rmids", "32\n");
        assert_file("info/L3_MON/mon_features",
                    "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
        assert_file("info/L3/num_closids", "16\n");
        assert_file("info/last_cmd_status", "ok\n");
        assert_file("mode", "shareable\n");
        assert_file("schemata", "L3:0=fff\n");
        assert_file("tasks", "");

        for (const char *const *d = (const char *const[]){".", "info", "info/L3_MON", "mon_groups",
                                                          "mon_data", "mon_data/mon_L3_00", NULL};
             *d; d++)
                assert_mode(*d, S_IFDIR | 0555);
        for (const char *const *f =
                 (const char *const[]){"tasks", "cpus", "cpus_list", "schemata", "mode",
                                       "info/L3_MON/max_threshold_occupancy", NULL};
             *f; f++)
                assert_mode(*f, S_IFREG | 0644);
        for (const char *const *f =
                 (const char *const[]){"size", "info/last_cmd_status", "info/L3_MON/num_rmids",
                                       "info/L3_MON/mon_features",
                                       "mon_data/mon_L3_00/llc_occupancy",
                                       "mon_data/mon_L3_00/mbm_total_bytes",
                                       "mon_data/mon_L3_00/mbm_local_bytes", NULL};
             *f; f++)
                assert_mode(*f, S_IFREG | 0444);
}
END_TEST

START_TEST(test_layout_groups)
{
        emu_mount("--l3-domains", "2", NULL);

        ck_assert_int_eq(mkdirat(root_fd, "g", 0750), 0);
        ck_assert_int_eq(mkdirat(root_fd, "g/mon_groups/m", 0700), 0);
        ck_assert_int_eq(mkdirat(root_fd, "mon_groups/r", 0777), 0);

        assert_entries(".", "cpus cpus_list g info mode mon_data mon_groups schemata size tasks");
        assert_entries("g", "cpus cpus_list mode mon_data mon_groups schemata size tasks");
        assert_entries("g/mon_groups", "m");
        assert_entries("g/mon_data", "mon_L3_00 mon_L3_01");
        assert_entries("g/mon_groups/m", "cpus cpus_list mon_data tasks");
        assert_entries("g/mon_groups/m/mon_data/mon_L3_01",
                       "llc_occupancy mbm_local_bytes mbm_total_bytes");
        assert_entries("mon_groups/r", "cpus cpus_list mon_data tasks");
        assert_entries("mon_data", "mon_L3_00 mon_L3_01");
        assert_file("g/schemata", "L3:0=fff;1=fff\n");

        /* The mkdir mode after umask; the group's subdirectories copy it. */
        for (const char *const *d = (const char *const[]){"g", "g/mon_groups", "g/mon_data",
                                                          "g/mon_data/mon_L3_01", NULL};
             *d; d++)
                assert_mode(*d, S_IFDIR | 0750);
        assert_mode("g/mon_groups/m", S_IFDIR | 0700);
        assert_mode("g/mon_groups/m/mon_data/mon_L3_00", S_IFDIR | 0700);
        assert_mode("mon_groups/r", S_IFDIR | 0755);
        assert_mode("g/tasks", S_IFREG | 0644);
        assert_mode("g/schemata", S_IFREG | 0644);
        assert_mode("g/size", S_IFREG | 0444);
        assert_mode("g/mon_groups/m/cpus_list", S_IFREG | 0644);
        assert_mode("g/mon_groups/m/mon_data/mon_L3_00/mbm_total_bytes", S_IFREG | 0444);
}
END_TEST

START_TEST(test_layout_perf_pkg)
{
        emu_mount("--perf-pkg-domains", "2", "--num-rmids", "20", NULL);

        assert_entries("info", "L3 L3_MON PERF_PKG_MON last_cmd_status");
        assert_entries("info/PERF_PKG_MON", "mon_features num_rmids");
        assert_file("info/PERF_PKG_MON/mon_features", "core_energy\nactivity\n");
        assert_file("info/PERF_PKG_MON/num_rmids", "20\n");
        assert_mode("info/PERF_PKG_MON/num_rmids", S_IFREG | 0444);

        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        for (const char *const *d =
                 (const char *const[]){"mon_data", "g/mon_data", "g/mon_groups/m/mon_data", NULL};
             *d; d++) {
                assert_entries(*d, "mon_L3_00 mon_PERF_PKG_00 mon_PERF_PKG_01");
                assert_entries(fmt("%s/mon_PERF_PKG_01", *d), "activity core_energy");
                assert_mode(fmt("%s/mon_PERF_PKG_00/core_energy", *d), S_IFREG | 0444);
        }
        assert_file("g/mon_groups/m/mon_data/mon_PERF_PKG_00/core_energy", "0.000000\n");
        assert_file("g/mon_data/mon_PERF_PKG_01/activity", "0.000000\n");
}
END_TEST

/* An energy counter's value: decimal joules, six digits after the point. */
static double read_energy(const char *path)
{
        _cleanup_free_ char *c = read_at(path);
        unsigned long long ip, fp;
        int n = 0;

        ck_assert_int_eq(sscanf(c, "%llu.%llu\n%n", &ip, &fp, &n), 2);
        ck_assert_msg(strlen(c) == (size_t) n && strchr(c, '.') + 7 == c + n - 1, "bad value '%s'",
                      c);
        return (double) ip + (double) fp / 1e6;
}

/* The fixed-point values grow with live tasks and keep their format. */
START_TEST(test_perf_pkg_values)
{
        const char *path = "g/mon_groups/m/mon_data/mon_PERF_PKG_00/core_energy";
        double prev = 0;

        emu_mount("--perf-pkg-domains", "1", NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        move("g/tasks", sleeper());
        move("g/tasks", getpid());
        move("g/mon_groups/m/tasks", getpid());
        for (int i = 0; i < 3; i++) {
                double value;

                /* Grows with time: read until it has. */
                WAIT_FOR(WAIT_PROCESS_MS, "the energy counter's growth",
                         (value = read_energy(path)) > prev);
                prev = value;
        }
}
END_TEST

START_TEST(test_fixed_point_format)
{
        char buf[64];

        ck_assert_int_eq(model_format_fixed_point(0x60000, 18, buf, sizeof(buf)), 9);
        ck_assert_str_eq(buf, "1.500000\n");
        ck_assert_int_gt(model_format_fixed_point(5775, 18, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0.022030\n");
        ck_assert_int_gt(model_format_fixed_point(0, 18, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0.000000\n");
        ck_assert_int_gt(model_format_fixed_point((1 << 18) - 1, 18, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0.999996\n");
        ck_assert_int_gt(model_format_fixed_point((42ULL << 18) + (3 << 15), 18, buf, sizeof(buf)),
                         0);
        ck_assert_str_eq(buf, "42.375000\n");
        ck_assert_int_gt(model_format_fixed_point(3, 1, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "1.5\n");
        ck_assert_int_gt(model_format_fixed_point(1, 27, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0.000000007\n");
        ck_assert_int_eq(model_format_fixed_point(1, 0, buf, sizeof(buf)), -EINVAL);
        ck_assert_int_eq(model_format_fixed_point(1, 28, buf, sizeof(buf)), -EINVAL);
        ck_assert_int_eq(model_format_fixed_point(0x60000, 18, buf, 9), -ENOBUFS);
}
END_TEST

/* ---- mkdir ---- */

START_TEST(test_mkdir_rules)
{
        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        assert_status("ok\n");

        /* A newline in the name: EINVAL, and the old message stays. */
        ck_assert_int_eq(write_at("tasks", "abc"), -EINVAL);
        assert_status("Task list parsing error pid abc\n");
        ck_assert_int_eq(mkdir_at("a\nb"), -EINVAL);
        ck_assert_int_eq(mkdir_at("g/mon_groups/a\nb"), -EINVAL);
        assert_status("Task list parsing error pid abc\n");

        /* Under info/: ENODEV, status untouched too. */
        ck_assert_int_eq(mkdir_at("info/x"), -ENODEV);
        ck_assert_int_eq(mkdir_at("info/L3_MON/x"), -ENODEV);
        assert_status("Task list parsing error pid abc\n");

        /* Not directly in a mon_groups/: EPERM with a cleared status. */
        ck_assert_int_eq(mkdir_at("g/x"), -EPERM);
        assert_status("ok\n");
        for (const char *const *p =
                 (const char *const[]){"g/mon_groups/m/x", "g/mon_groups/m/mon_data/x",
                                       "mon_data/x", "mon_data/mon_L3_00/x", "g/mon_data/x",
                                       "mon_groups/mon_groups", "g/mon_groups/mon_groups", NULL};
             *p; p++) {
                ck_assert_int_eq(write_at("tasks", "abc"), -EINVAL);
                ck_assert_msg(mkdir_at(*p) == -EPERM, "mkdir %s", *p);
                assert_status("ok\n");
        }

        for (const char *const *p =
                 (const char *const[]){"g", "g/mon_groups/m", "info", "tasks", "mon_groups",
                                       "mon_data", "g/mon_groups", "info/L3_MON", NULL};
             *p; p++)
                ck_assert_msg(mkdir_at(*p) == -EEXIST, "mkdir %s", *p);

        /* The same MON name under two parents, and a MON group named like a CTRL_MON one. */
        ck_assert_int_eq(mkdir_at("mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/g"), 0);
        ck_assert_int_eq(mkdir_at("mon_ g ü"), 0);
}
END_TEST

START_TEST(test_vfs_ops)
{
        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);

        ck_assert_int_lt(openat(root_fd, "newfile", O_CREAT | O_WRONLY | O_CLOEXEC, 0644), 0);
        ck_assert_int_eq(errno, EACCES);
        ck_assert_int_lt(openat(root_fd, "g/newfile", O_CREAT | O_WRONLY | O_CLOEXEC, 0644), 0);
        ck_assert_int_eq(errno, EACCES);
        ck_assert_int_eq(unlinkat(root_fd, "tasks", 0), -1);
        ck_assert_int_eq(errno, EPERM);
        ck_assert_int_eq(unlinkat(root_fd, "g/mon_groups/m/tasks", 0), -1);
        ck_assert_int_eq(errno, EPERM);
        /* kernfs refuses writers of a file without write bits, root included. */
        for (const char *const *p = (const char *const[]){"size", "info/L3_MON/num_rmids",
                                                          "mon_data/mon_L3_00/llc_occupancy",
                                                          "info/last_cmd_status", NULL};
             *p; p++) {
                ck_assert_int_lt(openat(root_fd, *p, O_WRONLY | O_CLOEXEC), 0);
                ck_assert_int_eq(errno, EACCES);
        }
        /* A shell redirection truncates first; that must not get in the way. */
        {
                _cleanup_close_ int fd = openat(root_fd, "g/tasks", O_WRONLY | O_TRUNC | O_CLOEXEC);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, "0\n", 2), 2);
                ck_assert(lists("g/tasks", getpid()));
        }
}
END_TEST

START_TEST(test_closids)
{
        emu_mount("--num-closids", "3", "--ctrl-groups", "a", NULL);
        assert_mode("a", S_IFDIR | 0755);
        assert_entries("a", "cpus cpus_list mode mon_data mon_groups schemata size tasks");
        assert_file("info/L3/num_closids", "3\n");

        ck_assert_int_eq(mkdir_at("b"), 0);
        ck_assert_int_eq(mkdir_at("c"), -ENOSPC);
        assert_status("Out of CLOSIDs\n");
        /* MON groups need no CLOSID. */
        ck_assert_int_eq(mkdir_at("a/mon_groups/m"), 0);
        assert_status("ok\n");
        ck_assert_int_eq(rmdir_at("a"), 0);
        ck_assert_int_eq(mkdir_at("c"), 0);
}
END_TEST

START_TEST(test_rmids_exhausted)
{
        emu_mount("--num-rmids", "4", NULL);
        assert_file("info/L3_MON/num_rmids", "4\n");

        /* RMID 0 is the root's: three groups in all, CTRL_MON and MON alike. */
        ck_assert_int_eq(mkdir_at("c1"), 0);
        ck_assert_int_eq(mkdir_at("c1/mon_groups/m1"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/m2"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/m3"), -ENOSPC);
        assert_status("Out of RMIDs\n");
        ck_assert_int_eq(mkdir_at("c2"), -ENOSPC);
        assert_status("Out of RMIDs\n");
        /* The failed CTRL_MON mkdir gave its CLOSID back: plenty are left. */
        ck_assert_int_eq(access(fmt("%s/c2", mnt), F_OK), -1);

        /* Without limbo a freed RMID is free at once. */
        ck_assert_int_eq(rmdir_at("mon_groups/m2"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/m3"), 0);
        assert_status("ok\n");
        /* Removing a CTRL_MON group frees its MON groups' RMIDs too. */
        ck_assert_int_eq(rmdir_at("c1"), 0);
        ck_assert_int_eq(mkdir_at("c2"), 0);
        ck_assert_int_eq(mkdir_at("c2/mon_groups/x"), 0);
        ck_assert_int_eq(mkdir_at("c3"), -ENOSPC);
}
END_TEST

START_TEST(test_rmid_limbo)
{
        int64_t t0, elapsed;
        int r;

        emu_mount("--num-rmids", "3", "--limbo-ms", "1500", NULL);
        ck_assert_int_eq(mkdir_at("a"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/b"), 0);
        ck_assert_int_eq(mkdir_at("c"), -ENOSPC);
        assert_status("Out of RMIDs\n");

        t0 = now_usec();
        ck_assert_int_eq(rmdir_at("mon_groups/b"), 0);
        ck_assert_int_eq(mkdir_at("c"), -EBUSY);
        assert_status("Out of RMIDs\n");
        ck_assert_int_eq(mkdir_at("mon_groups/c"), -EBUSY);
        WAIT_FOR(WAIT_DAEMON_MS, "the RMID out of limbo", (r = mkdir_at("c")) != -EBUSY);
        elapsed = now_usec() - t0;
        ck_assert_int_eq(r, 0);
        ck_assert_int_ge(elapsed, 1500 * 1000);
        assert_status("ok\n");
        /* Nothing left in limbo now: ENOSPC again. */
        ck_assert_int_eq(mkdir_at("d"), -ENOSPC);
}
END_TEST

/* ---- rmdir ---- */

START_TEST(test_rmdir_rules)
{
        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);

        for (const char *const *p =
                 (const char *const[]){"mon_groups", "mon_data", "mon_data/mon_L3_00", "info",
                                       "info/L3_MON", "info/L3", "g/mon_groups", "g/mon_data",
                                       "g/mon_data/mon_L3_00", "g/mon_groups/m/mon_data", NULL};
             *p; p++)
                ck_assert_msg(rmdir_at(*p) == -EPERM, "rmdir %s", *p);
        ck_assert_int_eq(rmdir_at("tasks"), -ENOTDIR);
        ck_assert_int_eq(rmdir_at("nope"), -ENOENT);

        /* Group directories go regardless of what is in them. */
        ck_assert_int_eq(rmdir_at("g"), 0);
        ck_assert_int_eq(faccessat(root_fd, "g", F_OK, 0), -1);
        ck_assert_int_eq(errno, ENOENT);
        assert_entries(".", "cpus cpus_list info mode mon_data mon_groups schemata size tasks");
}
END_TEST

START_TEST(test_rmdir_moves_tasks)
{
        pid_t a, b, c;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m2"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/r"), 0);
        a = sleeper(), b = sleeper(), c = sleeper();
        move("g/tasks", a);
        move("g/tasks", b);
        move("g/mon_groups/m/tasks", b);
        move("mon_groups/r/tasks", c);

        /* A MON group's tasks stay in the parent CTRL_MON group. */
        ck_assert_int_eq(rmdir_at("g/mon_groups/m"), 0);
        ck_assert(lists("g/tasks", a) && lists("g/tasks", b));
        ck_assert(!lists("tasks", b));
        move("g/mon_groups/m2/tasks", b); /* still g's CLOSID */

        ck_assert_int_eq(rmdir_at("mon_groups/r"), 0);
        ck_assert(lists("tasks", c));

        /* A CTRL_MON group's tasks, its MON groups' included, go to the root. */
        ck_assert_int_eq(rmdir_at("g"), 0);
        ck_assert(lists("tasks", a) && lists("tasks", b) && lists("tasks", c));
        ck_assert_int_eq(mkdir_at("mon_groups/r"), 0);
        move("mon_groups/r/tasks", b); /* now root's CLOSID */
}
END_TEST

/* ---- tasks ---- */

START_TEST(test_tasks_membership)
{
        pid_t a, b, c;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("h"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m2"), 0);
        a = sleeper(), b = sleeper(), c = sleeper();

        move("g/tasks", a);
        ck_assert(lists("g/tasks", a) && !lists("tasks", a));
        move("g/mon_groups/m/tasks", a);
        ck_assert(lists("g/mon_groups/m/tasks", a) && lists("g/tasks", a));
        ck_assert(!lists("g/mon_groups/m2/tasks", a));
        move("g/mon_groups/m2/tasks", a); /* leaves the sibling */
        ck_assert(!lists("g/mon_groups/m/tasks", a) && lists("g/mon_groups/m2/tasks", a));
        move("g/tasks", a); /* a CTRL_MON write clears the MON membership */
        assert_file("g/mon_groups/m2/tasks", "");
        ck_assert(lists("g/tasks", a));
        move("h/tasks", a);
        ck_assert(!lists("g/tasks", a) && lists("h/tasks", a));
        move("tasks", a);
        ck_assert(lists("tasks", a) && !lists("h/tasks", a));

        /* A comma-separated list, trimmed, in one write; the full count comes back. */
        ck_assert_int_eq(write_at("g/tasks", fmt(" %d, %d,%d \n", a, b, c)), 0);
        ck_assert(lists("g/tasks", a) && lists("g/tasks", b) && lists("g/tasks", c));
        assert_file("g/tasks", fmt("%d\n%d\n%d\n", a, b, c));
}
END_TEST

START_TEST(test_tasks_write_shapes)
{
        _cleanup_close_ int fd = -EBADF;
        char big[4097];
        pid_t a = sleeper();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        fd = openat(root_fd, "g/tasks", O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);

        /* Empty and newline-only writes succeed and do nothing but clear the status. */
        ck_assert_int_eq(write_at("tasks", "x"), -EINVAL);
        ck_assert_int_eq(write(fd, "", 0), 0);
        ck_assert_int_eq(write(fd, "\n", 1), 1);
        assert_status("ok\n");
        ck_assert_int_eq(write(fd, "\n5,6", 4), 4);
        assert_file("g/tasks", "");

        /* Each write(2) is one command whatever the offset. */
        ck_assert_int_eq(pwrite(fd, fmt("%d", a), strlen(fmt("%d", a)), 12345),
                         (ssize_t) strlen(fmt("%d", a)));
        ck_assert(lists("g/tasks", a));

        /* More than a page: E2BIG before resctrl sees it, so the status stays. */
        ck_assert_int_eq(write_at("tasks", "x"), -EINVAL);
        memset(big, ' ', sizeof(big));
        memcpy(big, "0", 1);
        ck_assert_int_eq(write(fd, big, sizeof(big)), -1);
        ck_assert_int_eq(errno, E2BIG);
        assert_status("Task list parsing error pid x\n");
        ck_assert(!lists("g/tasks", getpid()));
        /* Exactly a page is fine (the trailing blanks are trimmed). */
        ck_assert_int_eq(write(fd, big, 4096), 4096);
        ck_assert(lists("g/tasks", getpid()));
}
END_TEST

START_TEST(test_tasks_parsing)
{
        pid_t a = sleeper();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);

        /* kstrtoint(..., 0): hex, octal, a '+' sign. */
        ck_assert_int_eq(write_at("g/tasks", fmt("0x%x", a)), 0);
        ck_assert(lists("g/tasks", a));
        ck_assert_int_eq(write_at("tasks", fmt("0X%X\n", a)), 0);
        ck_assert(lists("tasks", a) && !lists("g/tasks", a));
        ck_assert_int_eq(write_at("g/tasks", fmt("0%o", a)), 0);
        ck_assert(lists("g/tasks", a));
        ck_assert_int_eq(write_at("tasks", fmt("+%d", a)), 0);
        ck_assert(lists("tasks", a));

        ck_assert_int_eq(write_at("g/tasks", "08"), -EINVAL);
        assert_status("Task list parsing error pid 08\n");
        ck_assert_int_eq(write_at("g/tasks", "1 2"), -EINVAL);
        assert_status("Task list parsing error pid 1 2\n");
        ck_assert_int_eq(write_at("g/tasks", fmt("%dx", a)), -EINVAL);
        assert_status(fmt("Task list parsing error pid %dx\n", a));
        ck_assert_int_eq(write_at("g/tasks", "0x"), -EINVAL);
        assert_status("Task list parsing error pid 0x\n");
        ck_assert_int_eq(write_at("g/tasks", "99999999999"), -EINVAL);
        assert_status("Task list parsing error pid 99999999999\n");
        ck_assert_int_eq(write_at("g/tasks", "-+5"), -EINVAL);
        assert_status("Task list parsing error pid -+5\n");
        ck_assert_int_eq(write_at("g/tasks", "-5"), -EINVAL);
        assert_status("Invalid pid -5\n");
        ck_assert_int_eq(write_at("g/tasks", " -0x10 "), -EINVAL);
        assert_status("Invalid pid -16\n");
        ck_assert(!lists("g/tasks", a));

        /* An empty item is a parse error: the ids before it stay moved. */
        ck_assert_int_eq(write_at("g/tasks", fmt("%d,,%d", a, getpid())), -EINVAL);
        assert_status("Task list parsing error pid \n");
        ck_assert(lists("g/tasks", a) && !lists("g/tasks", getpid()));
}
END_TEST

START_TEST(test_tasks_stop_at_first_error)
{
        pid_t a = sleeper(), b = sleeper(), c = sleeper(), dead = dead_pid();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(write_at("g/tasks", fmt("%d,%d,%d,%d", a, b, dead, c)), -ESRCH);
        assert_status(fmt("No task %d\nError while processing task %d\n", dead, dead));
        ck_assert(lists("g/tasks", a) && lists("g/tasks", b));
        ck_assert(!lists("g/tasks", c) && !lists("g/tasks", dead));
}
END_TEST

struct self_write {
        pid_t tid;
        int r;
        bool listed;
};

static void *write_self(void *p)
{
        struct self_write *s = p;

        s->tid = gettid();
        s->r = write_at("h/tasks", "0");
        s->listed = lists("h/tasks", s->tid);
        return NULL;
}

START_TEST(test_tasks_zero_is_caller)
{
        struct self_write s = {};
        pthread_t th;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("h"), 0);
        ck_assert_int_eq(mkdir_at("h/mon_groups/m"), 0);

        ck_assert_int_eq(write_at("g/tasks", "0\n"), 0);
        assert_file("g/tasks", fmt("%d\n", getpid()));

        /* "0" is the writing thread, not its process. */
        ck_assert_int_eq(pthread_create(&th, NULL, write_self, &s), 0);
        ck_assert_int_eq(pthread_join(th, NULL), 0);
        ck_assert_int_eq(s.r, 0);
        ck_assert_int_ne(s.tid, getpid());
        ck_assert(s.listed);
        ck_assert(!lists("h/tasks", getpid()));

        ck_assert_int_eq(write_at("h/mon_groups/m/tasks", "0"), -EINVAL);
        assert_status("Can't move task to different control group\n"
                      "Error while processing task 0\n");
}
END_TEST

START_TEST(test_tasks_cross_parent)
{
        pid_t a = sleeper(), b = sleeper();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g1"), 0);
        ck_assert_int_eq(mkdir_at("g2"), 0);
        ck_assert_int_eq(mkdir_at("g1/mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("g2/mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/r"), 0);

        move("g1/tasks", a);
        ck_assert_int_eq(write_at("g2/mon_groups/m/tasks", fmt("%d", a)), -EINVAL);
        assert_status(fmt("Can't move task to different control group\n"
                          "Error while processing task %d\n",
                          a));
        ck_assert_int_eq(write_at("mon_groups/r/tasks", fmt("%d", a)), -EINVAL);
        ck_assert(lists("g1/tasks", a) && !lists("g2/tasks", a));

        /* b was never moved: it is in the root, so only root MON groups take it. */
        ck_assert_int_eq(write_at("g1/mon_groups/m/tasks", fmt("%d", b)), -EINVAL);
        move("mon_groups/r/tasks", b);
        ck_assert(lists("mon_groups/r/tasks", b) && lists("tasks", b));
        move("g1/mon_groups/m/tasks", a);
        ck_assert(lists("g1/mon_groups/m/tasks", a));
}
END_TEST

START_TEST(test_tasks_threads)
{
        struct threaded t;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        spawn_threaded(&t);

        /* An id is one thread: the others stay where they are. */
        move("g/tasks", t.tids[1]);
        assert_file("g/tasks", fmt("%d\n", t.tids[1]));
        ck_assert_int_eq(write_at("g/tasks", fmt("%d,%d", t.tids[0], t.tids[2])), 0);
        ck_assert_int_eq(write_at("g/mon_groups/m/tasks", fmt("%d,%d", t.tids[0], t.tids[2])), 0);
        assert_file("g/mon_groups/m/tasks", fmt("%d\n%d\n", t.tids[0], t.tids[2]));
        ck_assert(!lists("g/tasks", t.pid));

        /* A thread that exits drops out of every list. */
        end_thread(&t, 2);
        assert_file("g/mon_groups/m/tasks", fmt("%d\n", t.tids[0]));
        assert_file("g/tasks", fmt("%d\n%d\n", t.tids[1], t.tids[0]));
        ck_assert_int_eq(write_at("g/tasks", fmt("%d", t.tids[2])), -ESRCH);

        reap(t.pid);
        assert_file("g/tasks", "");
        assert_file("g/mon_groups/m/tasks", "");
}
END_TEST

/* ---- a child that forks and clones on command ---- */

struct forker {
        pid_t pid;
        int cmd_fd;    /* 'f': fork a child, 't': start a thread */
        int report_fd; /* the new task's id */
};

static void *forker_thread(void *p)
{
        int fd = *(int *) p;
        pid_t tid = gettid();

        if (write(fd, &tid, sizeof(tid)) != sizeof(tid))
                _exit(1);
        for (;;)
                pause();
        return NULL;
}

static _Noreturn void forker_main(int cmd_fd, int report_fd)
{
        pid_t parent = getpid(), id;
        pthread_t thread;
        char c;

        while (read(cmd_fd, &c, 1) == 1) {
                if (c == 't') {
                        if (pthread_create(&thread, NULL, forker_thread, &report_fd) != 0)
                                _exit(1);
                        continue;
                }
                id = fork();
                if (id == 0) {
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(0);
                        for (;;)
                                pause();
                }
                if (id < 0 || write(report_fd, &id, sizeof(id)) != sizeof(id))
                        _exit(1);
        }
        _exit(0);
}

static void spawn_forker(struct forker *f)
{
        pid_t parent = getpid();
        int cmd[2], report[2];

        ck_assert_int_eq(pipe2(cmd, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
        f->pid = fork();
        ck_assert_int_ge(f->pid, 0);
        if (f->pid == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (getppid() != parent)
                        _exit(0);
                /* Neither it nor its children may keep the mount busy at teardown. */
                (void) close(root_fd);
                forker_main(cmd[0], report[1]);
        }
        (void) close(cmd[0]);
        (void) close(report[1]);
        f->cmd_fd = cmd[1];
        f->report_fd = report[0];
        ck_assert_uint_lt(n_children, ELEMENTSOF(children));
        children[n_children++] = f->pid;
}

/* Has the forker make a task ('f' a process, 't' a thread); its id. */
static pid_t forker_new(const struct forker *f, char what)
{
        pid_t id;

        ck_assert_int_eq(write(f->cmd_fd, &what, 1), 1);
        ck_assert_int_eq(read(f->report_fd, &id, sizeof(id)), (ssize_t) sizeof(id));
        return id;
}

/* The emulator learns of new tasks from fork events, a moment later. */
#define WAIT_LISTED(tasks, tid)                                                                    \
        WAIT_FOR(WAIT_PROCESS_MS, "a new task listed in " tasks, lists(tasks, tid))

/* copy_process() copies CLOSID and RMID: a new process or thread starts in
 * the group of its creator, one created before the creator moved does not
 * follow it, and a tasks write overrides what was inherited. */
START_TEST(test_fork_inheritance)
{
        struct forker f;
        pid_t before, child, thread, grandchild;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        spawn_forker(&f);
        before = forker_new(&f, 'f');
        /* The model takes a child forked in its parent's moving tick as born
         * after the move: move in a later tick. */
        wait_next_tick();
        move("g/tasks", f.pid);
        move("g/mon_groups/m/tasks", f.pid);

        child = forker_new(&f, 'f');
        thread = forker_new(&f, 't');
        WAIT_LISTED("g/mon_groups/m/tasks", child);
        WAIT_LISTED("g/mon_groups/m/tasks", thread);
        ck_assert(lists("g/tasks", child));
        ck_assert(!lists("g/tasks", before));
        ck_assert(!lists("tasks", before)); /* untracked: in the root group */

        /* An explicit move wins over what the task inherited. */
        move("g/tasks", child);
        ck_assert(!lists("g/mon_groups/m/tasks", child));
        ck_assert(lists("g/tasks", child));

        /* Inheritance goes on down the tree: a thread's fork. */
        ck_assert_int_eq(mkdir_at("h"), 0);
        move("h/tasks", thread);
        wait_next_tick();
        grandchild = forker_new(&f, 'f'); /* forked by the main thread: still in m */
        WAIT_LISTED("g/mon_groups/m/tasks", grandchild);
        ck_assert(!lists("h/tasks", grandchild));
}
END_TEST

/* With --no-fork-tracking, only tasks writes place tasks. */
START_TEST(test_no_fork_tracking)
{
        struct forker f;
        pid_t child;

        emu_mount("--no-fork-tracking", NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        spawn_forker(&f);
        move("g/tasks", f.pid);
        child = forker_new(&f, 'f');
        /* The fork's event was queued before the child ran, and each read
         * applies the queued events first: tracking would show now. */
        ck_assert(!lists("g/tasks", child));
}
END_TEST

/* The debug mount option's mon_hw_id and ctrl_hw_id: the RMID and CLOSID a
 * group holds, so that a test can tell a group made again from the old one. */
START_TEST(test_hw_ids)
{
        emu_mount("--debug", NULL);
        assert_file("mon_hw_id", "0\n");
        assert_file("ctrl_hw_id", "0\n");
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/a"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/b"), 0);
        assert_file("g/ctrl_hw_id", "1\n");
        assert_file("g/mon_hw_id", "1\n");
        assert_file("mon_groups/a/mon_hw_id", "2\n");
        assert_file("g/mon_groups/b/mon_hw_id", "3\n");
        ck_assert_int_eq(faccessat(root_fd, "mon_groups/a/ctrl_hw_id", F_OK, 0), -1);
        ck_assert_int_eq(rmdir_at("mon_groups/a"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/c"), 0);
        assert_file("mon_groups/c/mon_hw_id", "4\n"); /* the kernel's free list: oldest first */
        ck_assert_int_eq(faccessat(root_fd, "mon_groups/c/mon_hw_id", R_OK, 0), 0);
}
END_TEST

/* Without the debug option there are no hardware ids. */
START_TEST(test_hw_ids_hidden)
{
        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("mon_groups/a"), 0);
        ck_assert_int_eq(faccessat(root_fd, "mon_hw_id", F_OK, 0), -1);
        ck_assert_int_eq(faccessat(root_fd, "mon_groups/a/mon_hw_id", F_OK, 0), -1);
}
END_TEST

START_TEST(test_tasks_read_snapshot)
{
        _cleanup_free_ char *whole = NULL;
        _cleanup_close_ int fd = -EBADF;
        char small[4096];
        size_t len = 0;
        ssize_t n;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        for (int i = 0; i < 12; i++)
                move("g/tasks", sleeper());
        whole = read_at("g/tasks");
        ck_assert_uint_gt(strlen(whole), 12 * 2);

        /* Content is fixed at open: later moves and tiny reads do not tear it. */
        fd = openat(root_fd, "g/tasks", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        move("tasks", children[0]);
        reap(children[1]);
        while ((n = read(fd, small + len, 3)) > 0)
                len += (size_t) n;
        ck_assert_int_eq(n, 0);
        small[len] = '\0';
        ck_assert_str_eq(small, whole);
        ck_assert(!lists("g/tasks", children[0]));
}
END_TEST

/* A process made with exactly the given pid (clone3 with set_tid). */
static pid_t spawn_with_pid(pid_t pid)
{
        struct clone_args args = {
            .exit_signal = SIGCHLD,
            .set_tid = (uintptr_t) &pid,
            .set_tid_size = 1,
        };
        long r = syscall(SYS_clone3, &args, sizeof(args));

        ck_assert_msg(r >= 0, "clone3 pid %d: %s", (int) pid, strerror(errno));
        if (r == 0) {
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                for (;;)
                        pause();
        }
        children[n_children++] = (pid_t) r;
        return (pid_t) r;
}

/* A reused id is another thread: it starts out untracked, in the root. */
START_TEST(test_tasks_pid_reuse)
{
        pid_t a = sleeper();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        move("g/tasks", a);
        reap(a);
        /* /proc/<pid>/stat's start time counts clock ticks: the new process
         * must start in a later one. */
        wait_next_tick();
        ck_assert_int_eq(spawn_with_pid(a), a);
        ck_assert(!lists("g/tasks", a));
        ck_assert_int_eq(write_at("g/mon_groups/m/tasks", fmt("%d", a)), -EINVAL);
        move("tasks", a);
        ck_assert(lists("tasks", a));
}
END_TEST

START_TEST(test_tasks_root_lists_tracked)
{
        pid_t a = sleeper(), b = sleeper();

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        move("g/tasks", a);
        move("tasks", a);
        /* The emulator cannot see every thread: the root lists the ids it was given. */
        ck_assert(lists("tasks", a));
        ck_assert(!lists("tasks", b));
        reap(a);
        assert_file("tasks", "");
}
END_TEST

START_TEST(test_group_removed_while_open)
{
        _cleanup_close_ int fd = -EBADF;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        fd = openat(root_fd, "g/tasks", O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(rmdir_at("g"), 0);
        ck_assert_int_eq(write(fd, "0", 1), -1);
        ck_assert_int_eq(errno, ENOENT);
        /* A new group of the same name is another group. */
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(write(fd, "0", 1), -1);
        ck_assert_int_eq(errno, ENOENT);
}
END_TEST

/* ---- rename ---- */

START_TEST(test_rename)
{
        pid_t a = sleeper();
        unsigned long long before;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g1"), 0);
        ck_assert_int_eq(mkdir_at("g2"), 0);
        ck_assert_int_eq(mkdir_at("g1/mon_groups/m"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/x"), 0);
        move("g1/tasks", a);
        move("g1/mon_groups/m/tasks", a);
        sleep_ms(20);
        before = read_u64("g1/mon_groups/m/mon_data/mon_L3_00/mbm_total_bytes");
        ck_assert_uint_gt(before, 0);

        /* A MON group may change parent: its tasks follow, its counts stay. */
        ck_assert_int_eq(renameat(root_fd, "g1/mon_groups/m", root_fd, "g2/mon_groups/n"), 0);
        ck_assert(lists("g2/tasks", a) && lists("g2/mon_groups/n/tasks", a));
        ck_assert(!lists("g1/tasks", a));
        ck_assert_uint_ge(read_u64("g2/mon_groups/n/mon_data/mon_L3_00/mbm_total_bytes"), before);
        ck_assert_int_eq(renameat(root_fd, "mon_groups/x", root_fd, "mon_groups/y"), 0);
        assert_entries("mon_groups", "y");

        ck_assert_int_eq(renameat(root_fd, "g1", root_fd, "g3"), -1);
        ck_assert_int_eq(errno, EPERM);
        assert_status("Source must be a MON group\n");
        ck_assert_int_eq(renameat(root_fd, "g2/mon_groups/n/mon_data", root_fd, "mon_groups/z"),
                         -1);
        ck_assert_int_eq(errno, EPERM);
        assert_status("Source must be a MON group\n");
        ck_assert_int_eq(renameat(root_fd, "g2/mon_groups/n", root_fd, "g2/n"), -1);
        ck_assert_int_eq(errno, EPERM);
        assert_status("Destination must be a mon_groups subdirectory\n");
        ck_assert_int_eq(renameat(root_fd, "g2/mon_groups/n", root_fd, "g2/mon_groups/mon_groups"),
                         -1);
        ck_assert_int_eq(errno, EPERM);
        assert_status("Destination must be a mon_groups subdirectory\n");
        ck_assert_int_eq(renameat(root_fd, "tasks", root_fd, "mon_groups/t"), -1);
        ck_assert_int_eq(errno, EPERM);
        assert_status("Source and destination must be directories");
        ck_assert_int_eq(renameat(root_fd, "g2/mon_groups/n", root_fd, "mon_groups/y"), -1);
        ck_assert_int_eq(errno, EEXIST);
        ck_assert_int_eq(
            renameat2(root_fd, "mon_groups/y", root_fd, "mon_groups/w", RENAME_NOREPLACE), -1);
        ck_assert_int_eq(errno, EINVAL);
}
END_TEST

/* ---- counters ---- */

static unsigned long long event(const char *group, const char *name)
{
        return read_u64(fmt("%s%smon_data/mon_L3_00/%s", group, group[0] ? "/" : "", name));
}

START_TEST(test_counters)
{
        pid_t a = sleeper(), b = sleeper(), c = sleeper(), d = sleeper(), e = sleeper();
        unsigned long long v1, v2, n1, n2, sum;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m1"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m2"), 0);
        ck_assert_int_eq(mkdir_at("h"), 0);
        ck_assert_int_eq(mkdir_at("h/mon_groups/n1"), 0);
        ck_assert_int_eq(mkdir_at("h/mon_groups/n2"), 0);
        for (const char *const *ev =
                 (const char *const[]){"llc_occupancy", "mbm_total_bytes", "mbm_local_bytes", NULL};
             *ev; ev++) {
                ck_assert_uint_eq(event("g", *ev), 0);
                ck_assert_uint_eq(event("g/mon_groups/m1", *ev), 0);
        }

        /* g: a on its own RMID, b and c in m1, d in m2. h: only in its MON groups. */
        move("g/tasks", a);
        ck_assert_int_eq(write_at("g/tasks", fmt("%d,%d,%d", b, c, d)), 0);
        ck_assert_int_eq(write_at("g/mon_groups/m1/tasks", fmt("%d,%d", b, c)), 0);
        move("g/mon_groups/m2/tasks", d);
        move("h/tasks", e);
        move("h/tasks", getpid());
        move("h/mon_groups/n1/tasks", e);
        move("h/mon_groups/n2/tasks", getpid());

        /* Occupancy is a gauge of live tasks; a CTRL_MON group adds its MON groups. */
        v1 = event("g/mon_groups/m2", "llc_occupancy");
        ck_assert_uint_gt(v1, 0);
        ck_assert_uint_eq(event("g/mon_groups/m1", "llc_occupancy"), 2 * v1);
        ck_assert_uint_eq(event("g", "llc_occupancy"), 4 * v1);

        /* Bandwidth counts up while tasks live. */
        v1 = event("g/mon_groups/m1", "mbm_total_bytes");
        sleep_ms(30);
        v2 = event("g/mon_groups/m1", "mbm_total_bytes");
        ck_assert_uint_gt(v2, v1);
        ck_assert_uint_gt(event("g/mon_groups/m1", "mbm_local_bytes"), 0);

        /* Once every task is gone the counts stand still, and a CTRL_MON group's
         * count is its own RMID's plus its MON groups': removing one takes
         * exactly that one's count away. */
        move("tasks", getpid());
        for (const pid_t *p = (const pid_t[]){a, b, c, d, e, 0}; *p; p++)
                reap(*p);
        /* The kernel reports an exit just after it wakes the parent, so a
         * read right after waitpid() may come first; a tasks file lists
         * exactly the live tasks, and settles its groups' counts so. */
        assert_file("g/tasks", "");
        assert_file("h/tasks", "");
        ck_assert_uint_eq(event("g", "llc_occupancy"), 0);
        ck_assert_uint_eq(event("h", "llc_occupancy"), 0);
        n1 = event("h/mon_groups/n1", "mbm_total_bytes");
        n2 = event("h/mon_groups/n2", "mbm_total_bytes");
        sum = event("h", "mbm_total_bytes");
        ck_assert_uint_gt(n1, 0);
        ck_assert_uint_gt(n2, 0);
        ck_assert_uint_ge(sum, n1 + n2);
        sleep_ms(10);
        ck_assert_uint_eq(event("h", "mbm_total_bytes"), sum);
        ck_assert_uint_eq(event("h/mon_groups/n1", "mbm_total_bytes"), n1);
        ck_assert_uint_gt(event("g", "mbm_total_bytes"),
                          event("g/mon_groups/m1", "mbm_total_bytes") +
                              event("g/mon_groups/m2", "mbm_total_bytes"));
        ck_assert_int_eq(rmdir_at("h/mon_groups/n1"), 0);
        ck_assert_uint_eq(event("h", "mbm_total_bytes"), sum - n1);

        /* A new group (a new RMID) starts from zero. */
        ck_assert_int_eq(mkdir_at("h/mon_groups/n1"), 0);
        ck_assert_uint_eq(event("h/mon_groups/n1", "mbm_total_bytes"), 0);
        ck_assert_uint_eq(event("h/mon_groups/n1", "mbm_local_bytes"), 0);
        ck_assert_uint_eq(event("h", "mbm_total_bytes"), sum - n1);
}
END_TEST

/* ---- the other files ---- */

static void cpumask(char *buf, size_t size, unsigned n, bool full)
{
        size_t len = 0;

        for (unsigned hi = (n + 31) / 32; hi > 0; hi--) {
                unsigned bits = hi == (n + 31) / 32 && n % 32 ? n % 32 : 32;
                uint32_t v = full ? (uint32_t) (0xffffffffULL >> (32 - bits)) : 0;

                len += (size_t) snprintf(buf + len, size - len, "%s%0*" PRIx32,
                                         hi == (n + 31) / 32 ? "" : ",", (int) (bits + 3) / 4, v);
        }
        (void) snprintf(buf + len, size - len, "\n");
}

/* An exited thread is listed until it is reaped, as the kernel lists a
 * zombie, and its RMID stops counting it once it is gone. */
START_TEST(test_tasks_exit)
{
        unsigned long long two;
        pid_t a, b;

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("mon_groups/m"), 0);
        a = sleeper(), b = sleeper();
        ck_assert_int_eq(write_at("mon_groups/m/tasks", fmt("%d,%d", a, b)), 0);
        two = event("mon_groups/m", "llc_occupancy");
        ck_assert_uint_gt(two, 0);

        ck_assert_int_eq(kill(a, SIGKILL), 0);
        ck_assert_int_eq(waitid(P_PID, (id_t) a, NULL, WEXITED | WNOWAIT), 0);
        ck_assert(lists("mon_groups/m/tasks", a)); /* a zombie */
        reap(a);
        ck_assert(!lists("mon_groups/m/tasks", a) && lists("mon_groups/m/tasks", b));
        /* The exit event may come a moment after the reaping. */
        WAIT_FOR(WAIT_PROCESS_MS, "the exit event's occupancy",
                 event("mon_groups/m", "llc_occupancy") == two / 2);
}
END_TEST

/* Lookups by name stay right at hundreds of groups, through rmdir and rename. */
START_TEST(test_many_groups)
{
        enum { N = 400 };

        emu_mount("--num-rmids", "1024", NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        for (int i = 0; i < N; i++)
                ck_assert_int_eq(mkdir_at(fmt("%s/m%d", i % 2 ? "g/mon_groups" : "mon_groups", i)),
                                 0);
        for (int i = 0; i < N; i++) {
                const char *here = i % 2 ? "g/mon_groups" : "mon_groups";
                const char *there = i % 2 ? "mon_groups" : "g/mon_groups";

                ck_assert_int_eq(faccessat(root_fd, fmt("%s/m%d/tasks", here, i), F_OK, 0), 0);
                ck_assert_int_eq(faccessat(root_fd, fmt("%s/m%d", there, i), F_OK, 0), -1);
                ck_assert_int_eq(mkdir_at(fmt("%s/m%d", here, i)), -EEXIST);
        }
        ck_assert_int_eq(renameat(root_fd, "mon_groups/m0", root_fd, "g/mon_groups/m0"), 0);
        ck_assert_int_eq(faccessat(root_fd, "mon_groups/m0", F_OK, 0), -1);
        ck_assert_int_eq(faccessat(root_fd, "g/mon_groups/m0/tasks", F_OK, 0), 0);
        ck_assert_int_eq(rmdir_at("g/mon_groups/m1"), 0);
        ck_assert_int_eq(faccessat(root_fd, "g/mon_groups/m1", F_OK, 0), -1);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m1"), 0);
        ck_assert_int_eq(rmdir_at("g"), 0); /* its MON groups go with it */
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(faccessat(root_fd, "g/mon_groups/m0", F_OK, 0), -1);
        ck_assert_int_eq(faccessat(root_fd, "mon_groups/m2", F_OK, 0), 0);
}
END_TEST

/* ABMC (v6.18+ "mbm_event" mode): 4 counters per domain, 2 domains. */
START_TEST(test_abmc)
{
        _cleanup_free_ char *status = NULL;
        pid_t a = sleeper();
        unsigned long long v;

        emu_mount("--mbm-counters", "4", "--l3-domains", "2", NULL);
        assert_file("info/L3_MON/mbm_assign_mode", "[mbm_event]\ndefault\n");
        assert_file("info/L3_MON/num_mbm_cntrs", "0=4;1=4\n");
        assert_file("info/L3_MON/mbm_assign_on_mkdir", "1\n");
        /* The default group holds its own: two events in each domain. */
        assert_file("mbm_L3_assignments", "mbm_total_bytes:0=e;1=e\nmbm_local_bytes:0=e;1=e\n");
        assert_file("info/L3_MON/available_mbm_cntrs", "0=2;1=2\n");

        /* mkdir assigns what is left, an event stopping at the first domain
         * that has none; mkdir still succeeds and says so. */
        ck_assert_int_eq(mkdir_at("mon_groups/full"), 0);
        assert_file("info/last_cmd_status", "ok\n");
        assert_file("info/L3_MON/available_mbm_cntrs", "0=0;1=0\n");
        ck_assert_int_eq(mkdir_at("mon_groups/none"), 0);
        assert_file("info/last_cmd_status",
                    "Failed to allocate counter for mbm_total_bytes in domain 0\n"
                    "Failed to allocate counter for mbm_local_bytes in domain 0\n");
        assert_file("mon_groups/none/mbm_L3_assignments",
                    "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=_;1=_\n");
        assert_file("mon_groups/none/mon_data/mon_L3_01/mbm_local_bytes", "Unassigned\n");
        ck_assert_uint_eq(read_u64("mon_groups/none/mon_data/mon_L3_00/llc_occupancy"), 0);

        /* Writes: one event, a domain or '*', e or _; applied in order up
         * to the first domain without a counter. */
        ck_assert_int_eq(write_at("mon_groups/full/mbm_L3_assignments", "mbm_local_bytes:*=_\n"),
                         0);
        assert_file("info/L3_MON/available_mbm_cntrs", "0=1;1=1\n");
        move("mon_groups/none/tasks", a);
        ck_assert_int_eq(write_at("mon_groups/none/mbm_L3_assignments", "mbm_local_bytes:1=e;0=e"),
                         0);
        assert_file("mon_groups/none/mbm_L3_assignments",
                    "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=e;1=e\n");
        assert_file("mon_groups/none/mon_data/mon_L3_00/mbm_total_bytes", "Unassigned\n");
        ck_assert_int_eq(write_at("mon_groups/none/mbm_L3_assignments", "mbm_total_bytes:0=e"),
                         -ENOSPC);
        assert_file("info/last_cmd_status",
                    "Failed to allocate counter for mbm_total_bytes in domain 0\n");
        for (const char *const *bad =
                 (const char *const[]){"mbm_total_bytes", "bogus:0=e", "mbm_total_bytes:2=e",
                                       "mbm_total_bytes:0=x", "mbm_total_bytes:0", NULL};
             *bad; bad++)
                ck_assert_msg(write_at("mon_groups/none/mbm_L3_assignments", *bad) == -EINVAL,
                              "%s accepted", *bad);
        status = read_at("info/last_cmd_status");
        ck_assert_str_ne(status, "ok\n");

        /* A counter counts from its assignment; rmdir frees the group's. */
        sleep_ms(100);
        v = read_u64("mon_groups/none/mon_data/mon_L3_00/mbm_local_bytes");
        ck_assert_uint_gt(v, 0);
        ck_assert_int_eq(write_at("mon_groups/none/mbm_L3_assignments", "mbm_local_bytes:0=_"), 0);
        ck_assert_int_eq(write_at("mon_groups/none/mbm_L3_assignments", "mbm_local_bytes:0=e"), 0);
        ck_assert_uint_lt(read_u64("mon_groups/none/mon_data/mon_L3_00/mbm_local_bytes"), v);
        ck_assert_int_eq(rmdir_at("mon_groups/full"), 0); /* held mbm_total_bytes in both */
        assert_file("info/L3_MON/available_mbm_cntrs", "0=1;1=1\n");

        /* mbm_assign_on_mkdir 0: groups start without counters. The mode
         * itself is never written. */
        ck_assert_int_eq(write_at("info/L3_MON/mbm_assign_on_mkdir", "0\n"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/later"), 0);
        assert_file("mon_groups/later/mbm_L3_assignments",
                    "mbm_total_bytes:0=_;1=_\nmbm_local_bytes:0=_;1=_\n");
        ck_assert_int_eq(write_at("info/L3_MON/mbm_assign_on_mkdir", "2"), -EINVAL);
        ck_assert_int_eq(write_at("info/L3_MON/mbm_assign_mode", "default"), -EINVAL);
        assert_file("info/L3_MON/mbm_assign_mode", "[mbm_event]\ndefault\n");
}
END_TEST

/* A CTRL_MON group's event counts what it and its MON groups have counters
 * for, and is Unassigned only when none has. */
START_TEST(test_abmc_ctrl_groups)
{
        emu_mount("--mbm-counters", "4", NULL);
        ck_assert_int_eq(write_at("info/L3_MON/mbm_assign_on_mkdir", "0"), 0);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        assert_file("g/mon_data/mon_L3_00/mbm_total_bytes", "Unassigned\n");
        ck_assert_int_eq(write_at("g/mon_groups/m/mbm_L3_assignments", "mbm_total_bytes:0=e"), 0);
        ck_assert_uint_eq(read_u64("g/mon_data/mon_L3_00/mbm_total_bytes"), 0);
        assert_file("g/mon_data/mon_L3_00/mbm_local_bytes", "Unassigned\n");
}
END_TEST

/* Arm MPAM: one control group full while the node has RMIDs for others,
 * the root's as any; num_rmids is PMGs times PARTIDs. */
START_TEST(test_mon_groups_per_ctrl)
{
        emu_mount("--mon-groups-per-ctrl", "1", "--num-closids", "4", "--ctrl-groups", "g,h", NULL);
        assert_file("info/L3_MON/num_rmids", "8\n");
        ck_assert_int_eq(mkdir_at("g/mon_groups/a"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/b"), -ENOSPC);
        assert_status("Out of RMIDs\n");
        ck_assert_int_eq(mkdir_at("h/mon_groups/b"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/b"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/c"), -ENOSPC);
}
END_TEST

/* Arm MPAM's limbo: a PMG freed in a control group is in limbo for that
 * control group alone, whose mkdir says ENOSPC meanwhile (not EBUSY: the
 * free list holds other PARTIDs' PMGs), until it is clean. */
START_TEST(test_mon_groups_per_ctrl_limbo)
{
        int64_t t0;
        int r;

        emu_mount("--mon-groups-per-ctrl", "1", "--num-closids", "4", "--ctrl-groups", "g",
                  "--limbo-ms", "1500", NULL);
        ck_assert_int_eq(mkdir_at("mon_groups/a"), 0);
        t0 = now_usec();
        ck_assert_int_eq(rmdir_at("mon_groups/a"), 0);
        ck_assert_int_eq(mkdir_at("mon_groups/b"), -ENOSPC);
        assert_status("Out of RMIDs\n");
        /* Another control group's PMGs are not in limbo. */
        ck_assert_int_eq(mkdir_at("g/mon_groups/b"), 0);
        WAIT_FOR(WAIT_DAEMON_MS, "the PMG out of limbo", (r = mkdir_at("mon_groups/b")) != -ENOSPC);
        ck_assert_int_eq(r, 0);
        ck_assert_int_ge(now_usec() - t0, 1500 * 1000);
}
END_TEST

/* AET: a package reads Unavailable for an RMID until one of its tasks ran
 * on a CPU of that package (CPU c in package c mod 2 here); the data stays
 * with the RMID. A control group sums what its groups have. */
START_TEST(test_perf_pkg_by_cpu)
{
#define PKG_M(n) "g/mon_groups/m/mon_data/mon_PERF_PKG_0" #n "/core_energy"
        _cleanup_free_ char *c = NULL;
        pid_t p0;

        if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || sched_getcpu() < 0)
                return; /* one CPU: package 1 never has data */
        emu_mount("--perf-pkg-domains", "2", "--perf-pkg-by-cpu", NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);
        assert_file(PKG_M(0), "Unavailable\n");
        assert_file(PKG_M(1), "Unavailable\n");
        assert_file("g/mon_data/mon_PERF_PKG_00/activity", "Unavailable\n");
        /* The root's RMID: every task the kernel has not moved runs there. */
        assert_file("mon_data/mon_PERF_PKG_01/core_energy", "0.000000\n");

        p0 = sleeper_on_cpu(0);
        move("g/tasks", p0);
        move("g/mon_groups/m/tasks", p0);
        c = read_at(PKG_M(0));
        ck_assert_msg(strcmp(c, "Unavailable\n") != 0, "package 0 has no data");
        assert_file(PKG_M(1), "Unavailable\n");
        free(TAKE_PTR(c));
        c = read_at("g/mon_data/mon_PERF_PKG_00/core_energy");
        ck_assert_msg(strcmp(c, "Unavailable\n") != 0, "the control group sums none");
        assert_file("g/mon_data/mon_PERF_PKG_01/core_energy", "Unavailable\n");

        /* The task gone, its data stays. */
        reap(p0);
        free(TAKE_PTR(c));
        c = read_at(PKG_M(0));
        ck_assert_msg(strcmp(c, "Unavailable\n") != 0, "package 0's data went with the task");
        p0 = sleeper_on_cpu(1);
        move("g/tasks", p0);
        move("g/mon_groups/m/tasks", p0);
        free(TAKE_PTR(c));
        c = read_at(PKG_M(1));
        ck_assert_msg(strcmp(c, "Unavailable\n") != 0, "package 1 has no data");
#undef PKG_M
}
END_TEST

START_TEST(test_no_abmc)
{
        emu_mount(NULL);
        ck_assert_int_eq(faccessat(root_fd, "mbm_L3_assignments", F_OK, 0), -1);
        ck_assert_int_eq(faccessat(root_fd, "info/L3_MON/mbm_assign_mode", F_OK, 0), -1);
        ck_assert_int_eq(mkdir_at("mon_groups/m"), 0);
        ck_assert_uint_eq(read_u64("mon_groups/m/mon_data/mon_L3_00/mbm_total_bytes"), 0);
}
END_TEST

START_TEST(test_other_files)
{
        unsigned n = (unsigned) sysconf(_SC_NPROCESSORS_CONF);
        char mask[256];

        emu_mount(NULL);
        ck_assert_int_eq(mkdir_at("g"), 0);
        ck_assert_int_eq(mkdir_at("g/mon_groups/m"), 0);

        cpumask(mask, sizeof(mask), n, true);
        assert_file("cpus", mask);
        assert_file("cpus_list", n > 1 ? fmt("0-%u\n", n - 1) : "0\n");
        cpumask(mask, sizeof(mask), n, false);
        assert_file("g/cpus", mask);
        assert_file("g/cpus_list", "\n");
        assert_file("g/mon_groups/m/cpus_list", "\n");
        assert_file("g/mode", "shareable\n");
        assert_file("g/schemata", "L3:0=fff\n");
        assert_file("g/size", "L3:0=12582912\n");

        /* Accepted and ignored (documented). */
        ck_assert_int_eq(write_at("g/schemata", "L3:0=f\n"), 0);
        assert_file("g/schemata", "L3:0=fff\n");
        ck_assert_int_eq(write_at("g/cpus_list", "0\n"), 0);
        ck_assert_int_eq(write_at("g/mode", "exclusive\n"), 0);

        ck_assert_int_eq(write_at("info/L3_MON/max_threshold_occupancy", "4096\n"), 0);
        assert_file("info/L3_MON/max_threshold_occupancy", "4096\n");
        ck_assert_int_eq(write_at("info/L3_MON/max_threshold_occupancy", "lots"), -EINVAL);
}
END_TEST

/* ---- locking and namespaces ---- */

START_TEST(test_flock_root)
{
        _cleanup_close_ int fd = -EBADF;
        int ready[2], release[2];
        pid_t pid;
        char c;

        emu_mount(NULL);
        ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
        ck_assert_int_eq(pipe2(release, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int lfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                if (lfd < 0 || flock(lfd, LOCK_EX) < 0)
                        _exit(1);
                (void) close(release[1]);
                if (write(ready[1], "r", 1) != 1 || read(release[0], &c, 1) != 0)
                        _exit(1);
                _exit(0);
        }
        children[n_children++] = pid;
        (void) close(release[0]);
        ck_assert_int_eq(read(ready[0], &c, 1), 1);

        fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
        ck_assert_int_eq(errno, EWOULDBLOCK);
        ck_assert_int_eq(flock(fd, LOCK_SH | LOCK_NB), -1);

        (void) close(release[1]);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        n_children--;
        ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
}
END_TEST

START_TEST(test_other_mount_namespace)
{
        pid_t pid;
        int status;

        emu_mount(NULL);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                _cleanup_free_ char *buf = NULL;

                if (unshare(CLONE_NEWNS) < 0 ||
                    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        _exit(1);
                if (read_small_file_at(AT_FDCWD, fmt("%s/info/last_cmd_status", mnt), 64, &buf) <
                        0 ||
                    strcmp(buf, "ok\n") != 0)
                        _exit(2);
                _exit(mkdir(fmt("%s/from-ns", mnt), 0755) == 0 ? 0 : 3);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert(WIFEXITED(status));
        ck_assert_int_eq(WEXITSTATUS(status), 0);
        assert_mode("from-ns", S_IFDIR | 0755);
}
END_TEST

/* ---- the suite ---- */

static Suite *resctrlfs_suite(void)
{
        const struct {
                const char *name;
                const TTest *test;
        } cases[] = {
            {"layout_root", test_layout_root},
            {"layout_groups", test_layout_groups},
            {"layout_perf_pkg", test_layout_perf_pkg},
            {"perf_pkg_values", test_perf_pkg_values},
            {"fixed_point_format", test_fixed_point_format},
            {"mkdir_rules", test_mkdir_rules},
            {"vfs_ops", test_vfs_ops},
            {"closids", test_closids},
            {"rmids_exhausted", test_rmids_exhausted},
            {"rmid_limbo", test_rmid_limbo},
            {"rmdir_rules", test_rmdir_rules},
            {"rmdir_moves_tasks", test_rmdir_moves_tasks},
            {"tasks_membership", test_tasks_membership},
            {"tasks_write_shapes", test_tasks_write_shapes},
            {"tasks_parsing", test_tasks_parsing},
            {"tasks_stop_at_first_error", test_tasks_stop_at_first_error},
            {"tasks_zero_is_caller", test_tasks_zero_is_caller},
            {"tasks_cross_parent", test_tasks_cross_parent},
            {"tasks_threads", test_tasks_threads},
            {"tasks_read_snapshot", test_tasks_read_snapshot},
            {"fork_inheritance", test_fork_inheritance},
            {"no_fork_tracking", test_no_fork_tracking},
            {"hw_ids", test_hw_ids},
            {"hw_ids_hidden", test_hw_ids_hidden},
            {"tasks_pid_reuse", test_tasks_pid_reuse},
            {"tasks_root_lists_tracked", test_tasks_root_lists_tracked},
            {"group_removed_while_open", test_group_removed_while_open},
            {"tasks_exit", test_tasks_exit},
            {"many_groups", test_many_groups},
            {"rename", test_rename},
            {"counters", test_counters},
            {"abmc", test_abmc},
            {"abmc_ctrl_groups", test_abmc_ctrl_groups},
            {"no_abmc", test_no_abmc},
            {"mon_groups_per_ctrl", test_mon_groups_per_ctrl},
            {"mon_groups_per_ctrl_limbo", test_mon_groups_per_ctrl_limbo},
            {"perf_pkg_by_cpu", test_perf_pkg_by_cpu},
            {"other_files", test_other_files},
            {"flock_root", test_flock_root},
            {"other_mount_namespace", test_other_mount_namespace},
        };
        Suite *s = suite_create("resctrlfs");

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                TCase *tc = tcase_create(cases[i].name);

                tcase_add_checked_fixture(tc, setup, teardown);
                tcase_set_timeout(tc, 120);
                tcase_add_test(tc, cases[i].test);
                suite_add_tcase(s, tc);
        }
        return s;
}

static bool can_mount(void)
{
        if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0)
                return false;
        return system("command -v fusermount3 >/dev/null 2>&1") == 0;
}

int main(void)
{
        if (!can_mount()) {
                fprintf(stderr, "resctrlfs: needs root, /dev/fuse and fusermount3\n");
                return 77;
        }
        return tmptree_run(resctrlfs_suite());
}
