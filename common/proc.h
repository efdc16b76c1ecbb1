/* SPDX-License-Identifier: Apache-2.0 */
/* Process facts from /proc, relative to a /proc dirfd (tests pass a fake tree). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens /proc (O_RDONLY|O_DIRECTORY|O_CLOEXEC). */
int proc_open(int *ret_fd);

/* Field 22 (starttime, clock ticks since boot) of /proc/<pid>/stat, parsed
 * after the last ')' so a comm with spaces or parentheses cannot confuse it.
 * Together with the pid it names a process across pid reuse.
 * -ESRCH when the process is gone, -EBADMSG when malformed. */
int proc_start_time(int proc_fd, pid_t pid, uint64_t *ret);
/* The same, and in *ret_running what proc_is_running says: one read. */
int proc_start_time_running(int proc_fd, pid_t pid, uint64_t *ret, bool *ret_running);

/* 1 when pid (a process or a thread) exists and has not exited; 0 when it is
 * gone or a zombie (state Z or X), which the kernel still lists in resctrl
 * tasks files until its parent reaps it; -errno otherwise. */
int proc_is_running(int proc_fd, pid_t pid);

/* The inode of <proc>/self/ns/pid: which pid namespace the pids this /proc
 * shows belong to. Pids recorded under another namespace name other processes
 * here (or none). */
int proc_pid_ns(int proc_fd, uint64_t *ret);

/* Pins the process that pid names while its start time is start_time: a
 * pidfd (pidfd_open(2)) opened before the start time is checked, so that it
 * refers to that very process. 1 with *ret_pidfd; 0 when pid is gone,
 * reused or a zombie; -errno. */
int proc_pin(int proc_fd, pid_t pid, uint64_t start_time, int *ret_pidfd);

/* 1 while the pinned process has not exited: its pid names it still (a pid
 * is never reused before its process is reaped), so whatever was written
 * for that pid reached it. 0 once it has exited; -errno. */
int proc_pin_holds(int pidfd);
