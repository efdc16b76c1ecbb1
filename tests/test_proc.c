/* SPDX-License-Identifier: Apache-2.0 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "proc.h"
#include "tmptree.h"
#include "wait_for.h"

static int proc_fd = -EBADF;

static void setup(void)
{
        proc_fd = tmptree_new(NULL);
        tmptree_mkdir(proc_fd, "100");
}

static void teardown(void)
{
        close(proc_fd);
}

static int start_time_of(const char *stat, uint64_t *ret)
{
        tmptree_put(proc_fd, "100/stat", stat);
        return proc_start_time(proc_fd, 100, ret);
}

START_TEST(test_start_time)
{
        uint64_t t = 0;

        ck_assert_int_eq(start_time_of("100 (sh) S 1 100 100 0 -1 4194560 111 0 0 0 1 2 0 0 20 0 "
                                       "1 0 123456 2211840 210 18446744073709551615 1 1 0 0 0 0 "
                                       "0 0 65536 0 0 0 17 3 0 0 0 0 0\n",
                                       &t),
                         0);
        ck_assert_uint_eq(t, 123456);

        /* comm is whatever the process chose: spaces and ") (" included. */
        ck_assert_int_eq(start_time_of("100 (a) (b c) d) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 "
                                       "17 18 18446744073709551615 19 20\n",
                                       &t),
                         0);
        ck_assert_uint_eq(t, UINT64_MAX);
        ck_assert_int_eq(start_time_of("100 () 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17) S 1 2 3 "
                                       "4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987 19\n",
                                       &t),
                         0);
        ck_assert_uint_eq(t, 987);
        /* The last field need not be followed by anything. */
        ck_assert_int_eq(
            start_time_of("100 (x) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42", &t), 0);
        ck_assert_uint_eq(t, 42);
}
END_TEST

START_TEST(test_start_time_malformed)
{
        static const char *const bad[] = {
            "",
            "100 (sh S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 42 0\n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18\n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 \n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 -42 0\n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 4x2 0\n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 18446744073709551616 0\n",
            "100 (sh) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18  42 0\n",
        };
        uint64_t t = 7;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                ck_assert_msg(start_time_of(bad[i], &t) == -EBADMSG, "'%s'", bad[i]);
        ck_assert_uint_eq(t, 7);
}
END_TEST

START_TEST(test_start_time_gone)
{
        uint64_t t = 7;

        ck_assert_int_eq(proc_start_time(proc_fd, 100, &t), -ESRCH);
        ck_assert_int_eq(proc_start_time(proc_fd, 999, &t), -ESRCH);
        ck_assert_int_eq(proc_start_time(proc_fd, 0, &t), -EINVAL);
        ck_assert_int_eq(proc_start_time(proc_fd, -1, &t), -EINVAL);
        ck_assert_uint_eq(t, 7);
}
END_TEST

START_TEST(test_real_proc)
{
        uint64_t self = 0, child_time = 0, again = 0, t = 0;
        int fd = -EBADF, status;
        bool running = false;
        pid_t child;

        ck_assert_int_eq(proc_open(&fd), 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        ck_assert_int_eq(proc_start_time(fd, getpid(), &self), 0);
        ck_assert_int_eq(proc_start_time(fd, getpid(), &again), 0);
        ck_assert_uint_eq(self, again);

        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        /* Names a process: a later one cannot have started earlier. */
        ck_assert_int_eq(proc_start_time(fd, child, &child_time), 0);
        ck_assert_uint_ge(child_time, self);
        ck_assert_int_eq(proc_is_running(fd, child), 1);
        ck_assert_int_eq(proc_start_time_running(fd, child, &t, &running), 0);
        ck_assert_uint_eq(t, child_time);
        ck_assert(running);

        /* Killed but not reaped: a zombie, no longer running. */
        kill(child, SIGKILL);
        ck_assert_int_eq(waitid(P_PID, child, NULL, WEXITED | WNOWAIT), 0);
        ck_assert_int_eq(proc_is_running(fd, child), 0);
        ck_assert_int_eq(proc_start_time_running(fd, child, &t, &running), 0);
        ck_assert_uint_eq(t, child_time);
        ck_assert(!running);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_int_eq(proc_start_time(fd, child, &child_time), -ESRCH);
        ck_assert_int_eq(proc_is_running(fd, child), 0);
        close(fd);
}
END_TEST

static void *park(void *arg)
{
        (void) arg;
        for (;;)
                pause();
        return NULL;
}

/* The state letter in /proc/<pid>/stat. */
static char state_of(pid_t pid)
{
        char path[64], state = 0;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fscanf(f, "%*d %*s %c", &state), 1);
        fclose(f);
        return state;
}

/* A process whose main thread called pthread_exit: its leader shows Z, but
 * its other thread runs, so the process has not exited; once it is killed
 * it is a zombie like any other. */
START_TEST(test_zombie_leader)
{
        _cleanup_close_ int fd = -EBADF;
        int ready[2], status;
        uint64_t t;
        bool running;
        pid_t child;
        char c;

        ck_assert_int_eq(proc_open(&fd), 0);
        ck_assert_int_eq(pipe(ready), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pthread_t th;

                if (pthread_create(&th, NULL, park, NULL) != 0)
                        _exit(1);
                if (write(ready[1], "r", 1) != 1)
                        _exit(1);
                pthread_exit(NULL);
        }
        ck_assert_int_eq(read(ready[0], &c, 1), 1);
        /* The leader's exit follows its write: wait for its Z. */
        WAIT_FOR(WAIT_PROCESS_MS, "the leader's exit", state_of(child) == 'Z');
        ck_assert_int_eq(proc_is_running(fd, child), 1);
        ck_assert_int_eq(proc_start_time_running(fd, child, &t, &running), 0);
        ck_assert(running);

        kill(child, SIGKILL);
        ck_assert_int_eq(waitid(P_PID, child, NULL, WEXITED | WNOWAIT), 0);
        ck_assert_int_eq(proc_is_running(fd, child), 0);
        ck_assert_int_eq(proc_start_time_running(fd, child, &t, &running), 0);
        ck_assert(!running);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        close(ready[0]);
        close(ready[1]);
}
END_TEST

START_TEST(test_pid_ns)
{
        _cleanup_close_ int real_fd = -EBADF;
        struct stat st;
        uint64_t ns = 0;

        ck_assert_int_eq(proc_pid_ns(proc_fd, &ns), -ENOENT);
        tmptree_mkdir(proc_fd, "self");
        tmptree_mkdir(proc_fd, "self/ns");
        tmptree_put(proc_fd, "self/ns/pid", "");
        ck_assert_int_eq(fstatat(proc_fd, "self/ns/pid", &st, 0), 0);
        ck_assert_int_eq(proc_pid_ns(proc_fd, &ns), 0);
        ck_assert_uint_eq(ns, st.st_ino);

        /* The real one names this process's namespace, as the kernel links it. */
        ck_assert_int_eq(proc_open(&real_fd), 0);
        ck_assert_int_eq(stat("/proc/self/ns/pid", &st), 0);
        ck_assert_int_eq(proc_pid_ns(real_fd, &ns), 0);
        ck_assert_uint_eq(ns, st.st_ino);
}
END_TEST

/* The kernel's boot id, one UUID and a newline; anything else refused. */
START_TEST(test_boot_id)
{
        static const char *const bad[] = {
            "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f",      /* no newline */
            "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5\n",     /* short */
            "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f0\n",   /* long */
            "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5g\n",    /* not hex */
            "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f\nx\n", /* more */
        };
        _cleanup_close_ int real_fd = -EBADF;
        char id[BOOT_ID_LEN + 1], again[BOOT_ID_LEN + 1];

        tmptree_mkdir(proc_fd, "sys");
        tmptree_mkdir(proc_fd, "sys/kernel");
        tmptree_mkdir(proc_fd, "sys/kernel/random");
        ck_assert_int_eq(proc_boot_id(proc_fd, id), -ENOENT);
        tmptree_put(proc_fd, "sys/kernel/random/boot_id", "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f\n");
        ck_assert_int_eq(proc_boot_id(proc_fd, id), 0);
        ck_assert_str_eq(id, "0f9b2a57-5d8e-4c1b-9b7e-3a1f0c2d4e5f");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                tmptree_put(proc_fd, "sys/kernel/random/boot_id", bad[i]);
                ck_assert_int_eq(proc_boot_id(proc_fd, id), -EBADMSG);
        }

        /* The real one: the same at every read. */
        ck_assert_int_eq(proc_open(&real_fd), 0);
        ck_assert_int_eq(proc_boot_id(real_fd, id), 0);
        ck_assert_int_eq(proc_boot_id(real_fd, again), 0);
        ck_assert_str_eq(id, again);
}
END_TEST

/* A pin holds the very task it was opened for, process or thread, holds
 * while its id is not free (a zombie's is not), and never reads another task
 * that took its id. */
START_TEST(test_pin)
{
        _cleanup_close_ int fd = -EBADF, pin = -EBADF, other = -EBADF;
        uint64_t start, t;
        bool running;
        pid_t child;
        int status;

        ck_assert_int_eq(proc_open(&fd), 0);
        child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
                pause();
                _exit(0);
        }
        ck_assert_int_eq(proc_start_time(fd, child, &start), 0);
        ck_assert_int_eq(proc_pin(fd, child, &pin), 0);
        ck_assert_int_eq(proc_pinned_start_time(pin, &t, &running), 0);
        ck_assert_uint_eq(t, start);
        ck_assert(running);
        ck_assert_int_eq(proc_pin_holds(pin), 1);
        kill(child, SIGKILL);
        ck_assert_int_eq(waitid(P_PID, child, NULL, WEXITED | WNOWAIT), 0);
        ck_assert_int_eq(proc_pin_holds(pin), 1); /* a zombie: its pid is not free */
        ck_assert_int_eq(proc_pinned_start_time(pin, &t, &running), 0);
        ck_assert(!running);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_int_eq(proc_pin_holds(pin), 0);
        ck_assert_int_eq(proc_pinned_start_time(pin, &t, &running), -ESRCH);
        ck_assert_int_eq(proc_pin(fd, child, &other), -ESRCH);
        ck_assert_int_eq(proc_pin(fd, 0, &other), -EINVAL);
        ck_assert_int_eq(other, -EBADF);
}
END_TEST

static Suite *proc_suite(void)
{
        Suite *s = suite_create("proc");
        TCase *tc = tcase_create("proc");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_start_time);
        tcase_add_test(tc, test_start_time_malformed);
        tcase_add_test(tc, test_start_time_gone);
        tcase_add_test(tc, test_real_proc);
        tcase_add_test(tc, test_zombie_leader);
        tcase_add_test(tc, test_pid_ns);
        tcase_add_test(tc, test_boot_id);
        tcase_add_test(tc, test_pin);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        return tmptree_run(proc_suite());
}
