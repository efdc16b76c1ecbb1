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
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "tmptree.h"

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

/* The suite's runner: a child, in a process group of its own. On SIGTERM
 * check's runner kills its test and then its own group, and a group shared
 * with ctest would take ctest and every suite beside down with it. */
static pid_t runner;

static void pass_on(int sig)
{
        if (runner > 0)
                (void) kill(runner, sig);
}

/* Runs the suite in its runner and waits for it, whatever ends it: SIGTERM,
 * SIGINT or SIGHUP here is passed on to the runner, and once it is gone the
 * top directory is removed and sweep run all the same. The runner's exit
 * status, 128 + the signal that ended it, or 1 when sweep found something
 * left. */
static int run_kept(Suite *s, bool (*sweep)(void))
{
        static const int signals[] = {SIGTERM, SIGINT, SIGHUP};
        SRunner *sr = srunner_create(s); /* freed by both: it owns the suite */
        sigset_t mask, old;
        int status, rc;

        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                sigaddset(&mask, signals[i]);
        /* Blocked until the handler knows whom to pass a signal on to. */
        (void) sigprocmask(SIG_BLOCK, &mask, &old);
        runner = fork();
        if (runner < 0) {
                perror("fork");
                srunner_free(sr);
                return 1;
        }
        if (runner == 0) {
                int failed;

                (void) setpgid(0, 0);
                (void) sigprocmask(SIG_SETMASK, &old, NULL);
                srunner_set_fork_status(sr, CK_FORK);
                srunner_run_all(sr, CK_NORMAL);
                failed = srunner_ntests_failed(sr);
                srunner_free(sr);
                exit(failed == 0 ? 0 : 1); /* exit: a sanitizer build checks for leaks */
        }
        (void) setpgid(runner, runner);
        for (size_t i = 0; i < ELEMENTSOF(signals); i++)
                (void) sigaction(signals[i], &(struct sigaction){.sa_handler = pass_on}, NULL);
        (void) sigprocmask(SIG_SETMASK, &old, NULL);
        while (waitpid(runner, &status, 0) < 0)
                if (errno != EINTR) {
                        perror("waitpid");
                        status = W_EXITCODE(1, 0);
                        break;
                }
        srunner_free(sr);
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

        (void) nftw(top, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        if (sweep && !sweep() && rc == 0)
                rc = 1;
        return rc;
}

int tmptree_run(Suite *s)
{
        return tmptree_run_sweeping(s, NULL);
}

int tmptree_run_sweeping(Suite *s, bool (*sweep)(void))
{
        const char *base = getenv("TMPDIR");

        snprintf(top, sizeof(top), "%s/rmh-test-XXXXXX", base && *base ? base : "/tmp");
        if (!mkdtemp(top)) {
                perror("mkdtemp");
                return 1;
        }
        /* Tests that drop privileges still need to reach their own trees. */
        (void) chmod(top, 0755);
        return run_kept(s, sweep);
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
