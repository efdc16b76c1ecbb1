/* SPDX-License-Identifier: Apache-2.0 */
/* with_pid PID PROGRAM [ARG...]: runs PROGRAM as a child whose pid is
 * exactly PID (clone3's set_tid: root, and the pid free), and waits for it,
 * exiting with its status; 125 when that pid cannot be had. What a test
 * needs to reuse an exited process's pid on purpose, as the kernel may at
 * any time. */
#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
        pid_t pid;
        struct clone_args args = {.exit_signal = SIGCHLD, .set_tid_size = 1};
        long child;
        int status;

        if (argc < 3 || (pid = (pid_t) strtol(argv[1], NULL, 10)) <= 0) {
                fprintf(stderr, "usage: with_pid PID PROGRAM [ARG...]\n");
                return 125;
        }
        args.set_tid = (uintptr_t) &pid;
        child = syscall(SYS_clone3, &args, sizeof(args));
        if (child < 0) {
                fprintf(stderr, "with_pid: cannot have pid %d: %s\n", (int) pid, strerror(errno));
                return 125;
        }
        if (child == 0) {
                execvp(argv[2], argv + 2);
                fprintf(stderr, "with_pid: cannot run %s: %s\n", argv[2], strerror(errno));
                _exit(127);
        }
        if (waitpid((pid_t) child, &status, 0) < 0)
                return 125;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
