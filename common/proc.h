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
 * tasks files until its parent reaps it; -errno otherwise. A zombie leader
 * whose other threads still run (it called pthread_exit) has not exited:
 * its process runs. */
int proc_is_running(int proc_fd, pid_t pid);

/* The inode of <proc>/self/ns/pid: which pid namespace the pids this /proc
 * shows belong to. Pids recorded under another namespace name other processes
 * here (or none). */
int proc_pid_ns(int proc_fd, uint64_t *ret);
/* The initial pid namespace's, the same on every boot (PROC_PID_INIT_INO,
 * include/linux/proc_ns.h): the host's, where pid 1 is the node's init and
 * no namespace lies above. */
#define PROC_PID_NS_INIT_INO 0xEFFFFFFCU

/* The boot this kernel runs in: <proc>/sys/kernel/random/boot_id, a UUID
 * of BOOT_ID_LEN characters that no other boot shares. Pids and start times
 * of another boot name nothing in this one. -EBADMSG when it is no UUID. */
#define BOOT_ID_LEN 36
int proc_boot_id(int proc_fd, char ret[static BOOT_ID_LEN + 1]);
/* Is s a boot id as the kernel writes it (lowercase UUID)? */
bool boot_id_is_valid(const char *s);

/* Pins the task (process or thread) that id names now: <proc>/<id> opened
 * as a directory, which the kernel ties to that task, so that what is read
 * through it is that task's, and once it is gone every read says -ESRCH,
 * even when its id names another task since (a pidfd for every kernel and
 * for threads too). 0 with *ret_fd; -ESRCH when there is no such task. */
int proc_pin(int proc_fd, pid_t id, int *ret_fd);

/* proc_start_time_running of the pinned task. */
int proc_pinned_start_time(int pin_fd, uint64_t *ret, bool *ret_running);

/* 1 while the pinned task has not been reaped (a zombie included): its id
 * names it still (an id is never reused before its task is reaped), so
 * whatever was written for that id since the pin reached it. 0 once it is
 * gone; -errno. */
int proc_pin_holds(int pin_fd);
