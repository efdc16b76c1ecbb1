/* SPDX-License-Identifier: Apache-2.0 */
/* For scripts/bench.sh: processes exec'd into a container as a runtime's
 * exec does it (forked outside, the child joins the container's cgroup,
 * then execs), and how soon each is in its pod's resctrl group.
 *
 *   exec_probe latency N CGROUP TASKS
 *      N execs of a long-lived process: the time from each child's execve
 *      until TASKS lists it, polled every 100 us; prints p50 and p99 in ms.
 *   exec_probe short N CGROUP TASKS MS
 *      N execs of a process that lives MS ms: prints how many TASKS listed
 *      before they exited.
 *   exec_probe flood RATE SECONDS
 *      RATE execs of /bin/true a second, outside any container, for SECONDS.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_ns(int64_t ns)
{
        struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Does the tasks file list pid? */
static bool listed(const char *tasks, pid_t pid)
{
        char buf[1 << 16], want[16];
        int fd = open(tasks, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return false;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        /* "\nPID\n" anywhere, or "PID\n" at the start. */
        snprintf(want, sizeof(want), "\n%d\n", (int) pid);
        return strstr(buf, want) || memcmp(buf, want + 1, strlen(want) - 1) == 0;
}

/* Forks a child that joins cgroup, writes the time of its execve to the
 * pipe, and execs path with one argument. */
static pid_t exec_into(const char *cgroup, const char *path, const char *arg, int64_t *ret_exec_ns)
{
        int p[2];
        pid_t pid;

        if (pipe(p) < 0)
                return -1;
        pid = fork();
        if (pid == 0) {
                char procs[4096], me[16];
                int fd;
                int64_t t;

                snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
                snprintf(me, sizeof(me), "%d", (int) getpid());
                fd = open(procs, O_WRONLY | O_CLOEXEC);
                if (fd < 0 || write(fd, me, strlen(me)) < 0)
                        _exit(127);
                close(fd);
                t = now_ns();
                if (write(p[1], &t, sizeof(t)) != sizeof(t))
                        _exit(127);
                execl(path, path, arg, (char *) NULL);
                _exit(127);
        }
        close(p[1]);
        if (pid > 0 && read(p[0], ret_exec_ns, sizeof(*ret_exec_ns)) != sizeof(*ret_exec_ns))
                pid = -1;
        close(p[0]);
        return pid;
}

static int compare(const void *a, const void *b)
{
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return (x > y) - (x < y);
}

static int latency(int n, const char *cgroup, const char *tasks)
{
        int64_t *ns = calloc((size_t) n, sizeof(*ns)), p50, p99;
        int missed = 0;

        for (int i = 0; ns && i < n; i++) {
                int64_t exec_ns, deadline;
                pid_t pid = exec_into(cgroup, "/bin/sleep", "1000", &exec_ns);

                if (pid < 0)
                        return 1;
                deadline = exec_ns + 2000000000LL;
                while (!listed(tasks, pid) && now_ns() < deadline)
                        sleep_ns(100000);
                ns[i] = now_ns() - exec_ns;
                missed += ns[i] >= 2000000000LL;
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
        if (!ns)
                return 1;
        qsort(ns, (size_t) n, sizeof(*ns), compare);
        p50 = ns[n / 2];
        p99 = ns[n * 99 / 100];
        printf("%.2f %.2f %d\n", (double) p50 / 1e6, (double) p99 / 1e6, missed);
        free(ns);
        return 0;
}

static int short_lived(int n, const char *cgroup, const char *tasks, int ms)
{
        char seconds[32];
        int seen = 0;

        snprintf(seconds, sizeof(seconds), "%d.%03d", ms / 1000, ms % 1000);
        for (int i = 0; i < n; i++) {
                int64_t exec_ns;
                pid_t pid = exec_into(cgroup, "/bin/sleep", seconds, &exec_ns);
                bool in = false;
                int status;

                if (pid < 0)
                        return 1;
                while (!in && waitpid(pid, &status, WNOHANG) == 0) {
                        in = listed(tasks, pid);
                        if (!in)
                                sleep_ns(100000);
                }
                if (in)
                        waitpid(pid, &status, 0);
                seen += in;
        }
        printf("%d\n", seen);
        return 0;
}

static int flood(int rate, int seconds)
{
        int64_t start = now_ns(), step = 1000000000LL / rate;

        for (int64_t i = 0; i < (int64_t) rate * seconds; i++) {
                pid_t pid = fork();

                if (pid == 0) {
                        execl("/bin/true", "true", (char *) NULL);
                        _exit(127);
                }
                if (pid > 0)
                        waitpid(pid, NULL, 0);
                if (start + (i + 1) * step > now_ns())
                        sleep_ns(start + (i + 1) * step - now_ns());
        }
        printf("%.0f\n", (double) rate * seconds / ((now_ns() - start) / 1e9));
        return 0;
}

/* A positive decimal number, or exits with a usage error. */
static int number(const char *s)
{
        char *end;
        long v = strtol(s, &end, 10);

        if (*s == '\0' || *end != '\0' || v < 1 || v > 1000000) {
                fprintf(stderr, "exec_probe: '%s' is no number in [1, 1000000]\n", s);
                exit(2);
        }
        return (int) v;
}

int main(int argc, char **argv)
{
        if (argc == 5 && strcmp(argv[1], "latency") == 0)
                return latency(number(argv[2]), argv[3], argv[4]);
        if (argc == 6 && strcmp(argv[1], "short") == 0)
                return short_lived(number(argv[2]), argv[3], argv[4], number(argv[5]));
        if (argc == 4 && strcmp(argv[1], "flood") == 0)
                return flood(number(argv[2]), number(argv[3]));
        fprintf(stderr, "usage: exec_probe latency N CGROUP TASKS | short N CGROUP TASKS MS | "
                        "flood RATE SECONDS\n");
        return 2;
}
