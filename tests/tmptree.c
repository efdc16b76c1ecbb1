/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "tmptree.h"
#include "wait_for.h"

static char top[PATH_MAX];

/* check's default time for a test is 4 s: a machine busy with other work
 * takes longer for some, whose waits are bounded by WAIT_PROCESS_MS
 * (wait_for.h) each. Set before main() builds the suite, as tcase_create
 * reads it; the environment's own setting wins. */
__attribute__((constructor)) static void default_test_timeout(void)
{
        (void) setenv("CK_DEFAULT_TIMEOUT", "60", 0);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) remove(path);
        return 0;
}

/* The signals a run passes on to its runner, and whether each was ignored
 * when the run began (a background job of a non-interactive shell ignores
 * SIGINT): one that was stays ignored. */
static const int passed_on[] = {SIGTERM, SIGINT, SIGHUP};
static bool ignored[ELEMENTSOF(passed_on)];

/* The suite's runner: a child, in a process group of its own. On SIGTERM
 * check's runner kills its test and then its own group, and a group shared
 * with ctest would take ctest and every suite beside down with it. 0 once
 * it has exited. */
static volatile pid_t runner;

static void pass_on(int sig)
{
        int saved_errno = errno;

        /* check has no handler for SIGHUP: the runner would die and leave
         * its test running. */
        if (runner > 0)
                (void) kill(runner, sig == SIGHUP ? SIGTERM : sig);
        errno = saved_errno;
}

static void block_passed_on(int how, sigset_t *old)
{
        sigset_t mask;

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(passed_on); i++)
                sigaddset(&mask, passed_on[i]);
        (void) sigprocmask(how, &mask, old);
}

/* SIGKILL to each child of this process (/proc: whatever the kernel's
 * config); how many there were. */
static int kill_children(void)
{
        _cleanup_(closedirp) DIR *proc = opendir("/proc");
        struct dirent *de;
        int n = 0;

        while (proc && (de = readdir(proc))) {
                char path[64], *stat = NULL;
                int pid = atoi(de->d_name), ppid = 0;
                const char *after;

                if (pid <= 0)
                        continue;
                (void) snprintf(path, sizeof(path), "/proc/%d/stat", pid);
                if (read_small_file_at(AT_FDCWD, path, 4096, &stat) < 0)
                        continue;
                after = strrchr(stat, ')'); /* the command may hold anything */
                if (after && sscanf(after, ") %*c %d", &ppid) == 1 && ppid == getpid()) {
                        (void) kill(pid, SIGKILL);
                        n++;
                }
                free(stat);
        }
        return n;
}

/* The runner's tests that outlived it (on SIGTERM check's runner signals
 * its test and exits without waiting) and detached emulator daemons: this
 * process is their subreaper. Each is killed and reaped, those that come
 * meanwhile too, for WAIT_DAEMON at most; what is still there is named. */
static void end_orphans(void)
{
        const int64_t until = deadline_after_ms(WAIT_DAEMON_MS);

        for (;;) {
                int n = kill_children();
                pid_t pid;

                while ((pid = waitpid(-1, NULL, WNOHANG)) > 0)
                        ;
                if (pid < 0 && errno == ECHILD)
                        return;
                if (now_usec() >= until) {
                        fprintf(stderr, "%d process(es) of the run still there after %u ms\n", n,
                                WAIT_DAEMON_MS);
                        return;
                }
                (void) nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        }
}

/* The newest mount under the top directory (mountinfo lists a mount after
 * the one it is on), into point; false when there is none. The top's
 * path, canonical and of mkdtemp's letters, needs no unescaping. */
static bool newest_mount_left(char point[PATH_MAX])
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        size_t len = strlen(top);
        char p[PATH_MAX];
        bool found = false;

        while (f && fscanf(f, "%*s %*s %*s %*s %4095s %*[^\n]", p) == 1)
                if (strncmp(p, top, len) == 0 && p[len] == '/') {
                        memcpy(point, p, sizeof(p));
                        found = true;
                }
        return found;
}

/* Unmounts whatever a test left mounted under the top directory (an
 * emulator's mount), newest first; how many there were. */
static int unmount_left(void)
{
        char point[PATH_MAX];
        int n = 0;

        while (newest_mount_left(point)) {
                if (umount2(point, UMOUNT_NOFOLLOW) < 0 &&
                    umount2(point, UMOUNT_NOFOLLOW | MNT_DETACH) < 0) {
                        fprintf(stderr, "cannot unmount %s: %m\n", point);
                        return n + 1;
                }
                n++;
        }
        return n;
}

/* Waits for the runner, reaping the other children as they exit; then,
 * with the passed-on signals blocked, reaps it: from then on nothing is
 * passed on to its pid, which may be another's. Its wait status. */
static int wait_runner(void)
{
        siginfo_t si;
        int status = W_EXITCODE(1, 0);
        pid_t pid;

        for (;;) {
                si.si_pid = 0;
                if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) < 0) {
                        if (errno == EINTR)
                                continue;
                        perror("waitid");
                        break;
                }
                if (si.si_pid == runner)
                        break;
                (void) waitpid(si.si_pid, NULL, 0);
        }
        block_passed_on(SIG_BLOCK, NULL);
        pid = runner;
        runner = 0;
        (void) waitpid(pid, &status, 0);
        return status;
}

/* The signal the run is to end by: the one that ended the runner, else
 * one that came during the cleanup (blocked, pending); 0 for none. One
 * ignored at the start is not. */
static int ending_signal(int status)
{
        sigset_t pending;

        (void) sigpending(&pending);
        for (size_t i = 0; i < ELEMENTSOF(passed_on); i++)
                if (!ignored[i] && ((WIFSIGNALED(status) && WTERMSIG(status) == passed_on[i]) ||
                                    sigismember(&pending, passed_on[i]) == 1))
                        return passed_on[i];
        return 0;
}

/* Runs the suite in its runner and waits for it, whatever ends it: SIGTERM,
 * SIGINT or SIGHUP here is passed on to it. Then, with those blocked, its
 * orphaned tests are killed, what they mounted under the top directory is
 * unmounted and the directory removed. The runner's exit status, 1 when
 * something was left; a signal that ended the runner, or came meanwhile,
 * ends this process too. */
static int run_kept(Suite *s, const sigset_t *old)
{
        SRunner *sr = srunner_create(s); /* freed by both: it owns the suite */
        const pid_t keeper = getpid();
        int status, rc, mounts, sig;

        (void) prctl(PR_SET_CHILD_SUBREAPER, 1);
        runner = fork();
        if (runner < 0) {
                perror("fork");
                srunner_free(sr);
                return 1;
        }
        if (runner == 0) {
                int failed;

                (void) setpgid(0, 0);
                /* Killed outright (ctest's timeout), the keeper leaves check
                 * to end its test. */
                (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != keeper)
                        _exit(1);
                (void) sigprocmask(SIG_SETMASK, old, NULL);
                srunner_set_fork_status(sr, CK_FORK);
                srunner_run_all(sr, CK_NORMAL);
                failed = srunner_ntests_failed(sr);
                srunner_free(sr);
                exit(failed == 0 ? 0 : 1); /* exit: a sanitizer build checks for leaks */
        }
        (void) setpgid(runner, runner);
        for (size_t i = 0; i < ELEMENTSOF(passed_on); i++)
                if (!ignored[i])
                        (void) sigaction(passed_on[i], &(struct sigaction){.sa_handler = pass_on},
                                         NULL);
        (void) sigprocmask(SIG_SETMASK, old, NULL);
        status = wait_runner();
        srunner_free(sr);
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;

        end_orphans();
        mounts = unmount_left();
        if (mounts > 0) {
                fprintf(stderr, "%d mount(s) left behind under %s\n", mounts, top);
                rc = 1;
        }
        (void) nftw(top, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
        if (access(top, F_OK) == 0) {
                fprintf(stderr, "cannot remove %s\n", top);
                rc = 1;
        }
        sig = ending_signal(status);
        if (sig != 0) {
                (void) signal(sig, SIG_DFL);
                block_passed_on(SIG_UNBLOCK, NULL);
                (void) raise(sig);
        }
        return rc;
}

int tmptree_run(Suite *s)
{
        const char *base = getenv("TMPDIR");
        char made[PATH_MAX];
        sigset_t old;

        /* Blocked from before anything is made until the runner is there
         * to pass them on to: one that comes meanwhile waits. */
        for (size_t i = 0; i < ELEMENTSOF(passed_on); i++) {
                struct sigaction sa;

                ignored[i] = sigaction(passed_on[i], NULL, &sa) == 0 && sa.sa_handler == SIG_IGN;
        }
        block_passed_on(SIG_BLOCK, &old);
        snprintf(made, sizeof(made), "%s/rmh-test-XXXXXX", base && *base ? base : "/tmp");
        /* Canonical, as mountinfo names what is mounted under it. */
        if (!mkdtemp(made) || !realpath(made, top)) {
                perror("mkdtemp");
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                return 1;
        }
        /* Tests that drop privileges still need to reach their own trees. */
        (void) chmod(top, 0755);
        return run_kept(s, &old);
}

int tmptree_new(const char **ret_path)
{
        static char path[PATH_MAX + 16];
        int fd;

        snprintf(path, sizeof(path), "%s/t-XXXXXX", top);
        ck_assert_ptr_nonnull(mkdtemp(path));
        ck_assert_int_eq(chmod(path, 0755), 0);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        if (ret_path)
                *ret_path = path;
        return fd;
}

void tmptree_put(int dir_fd, const char *path, const char *text)
{
        _cleanup_close_ int fd = -EBADF;

        fd = openat(dir_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
        ck_assert_msg(fd >= 0, "create %s: %m", path);
        ck_assert_int_eq(write_all(fd, text, strlen(text)), 0);
}

void tmptree_mkdir(int dir_fd, const char *path)
{
        ck_assert_msg(mkdirat(dir_fd, path, 0755) == 0, "mkdir %s: %m", path);
}

char *tmptree_get(int dir_fd, const char *path)
{
        _cleanup_close_ int fd = -EBADF;
        char *buf = NULL;

        fd = openat(dir_fd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        ck_assert_int_eq(read_all_fd(fd, 64 * 1024 * 1024, &buf, NULL), 0);
        return buf;
}

int tmptree_count(int dir_fd, const char *path)
{
        struct dirent *de;
        int fd, n = 0;
        DIR *d;

        fd = openat(dir_fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -1;
        d = fdopendir(fd);
        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}
