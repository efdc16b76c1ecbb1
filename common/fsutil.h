/* SPDX-License-Identifier: Apache-2.0 */
/* Small file helpers. Never log; return 0 or a positive count on success, -errno on failure. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes all of buf, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);

/* Replaces dir_fd/name atomically: writes tmp (mode, O_EXCL, after removing
 * a leftover one), fsyncs it, renames it over name and fsyncs dir_fd (which
 * must be O_RDONLY, not O_PATH). The caller makes sure no one else uses tmp. */
int write_atomic_at(int dir_fd, const char *name, const char *tmp, const char *data, size_t len,
                    mode_t mode);

/* Reads fd to EOF into a NUL-terminated buffer (*ret, owned by the caller).
 * Past cap bytes it keeps reading and discarding to EOF (so a writer on the
 * other end of a pipe never blocks or gets EPIPE), then returns -EFBIG. */
int read_all_fd(int fd, size_t cap, char **ret, size_t *ret_len);

/* The same, but gives up with -ETIMEDOUT once the CLOCK_MONOTONIC deadline
 * (in now_usec() microseconds; INT64_MAX for none) has passed without EOF,
 * draining included: a writer that never closes cannot hold the caller. */
int read_all_fd_until(int fd, size_t cap, int64_t deadline, char **ret, size_t *ret_len);

/* Opens dir_fd/name (O_NOFOLLOW, O_NONBLOCK, so that a FIFO put there never
 * blocks) and reads it as read_all_fd does; -EINVAL for anything but a
 * regular file. */
int read_file_at(int dir_fd, const char *name, size_t cap, char **ret, size_t *ret_len);

/* Reads a small file relative to dir_fd (O_NOFOLLOW on the last component)
 * into a NUL-terminated buffer (*ret, owned by the caller). Uses a single
 * read(2) of up to cap bytes: kernfs and procfs files must be read in one go.
 * -EFBIG if the file is larger than cap. */
int read_small_file_at(int dir_fd, const char *path, size_t cap, char **ret);

/* Opens dir_fd/path (O_NOFOLLOW on the last component; "." for dir_fd itself)
 * as a directory stream of its own, *ret owned by the caller (closedir). */
int opendir_at(int dir_fd, const char *path, DIR **ret);

/* A name that is safe as one path component: non-empty, at most NAME_MAX
 * bytes, no '/', no control characters (newline, NUL), not "." or "..". */
bool name_is_valid(const char *name);

/* A decimal id as the kernel prints it, from s up to end: digits only, no
 * sign, no leading zero, in [1, INT_MAX]. 0, -EINVAL or -ERANGE. */
int parse_pid(const char *s, const char *end, pid_t *ret);

/* Steps *p past the next line of an id listing ("%d\n" per task: resctrl's
 * tasks, a cgroup's cgroup.threads), its id in *ret (0 for a line that is
 * not one): false at the end. */
bool next_pid_line(const char **p, pid_t *ret);

/* The ids of an id listing (resctrl's tasks, cgroup.threads), sorted, lines
 * that are no id skipped: *ret malloc'd (NULL when empty). 0 or -ENOMEM. */
int pid_list_parse(const char *text, pid_t **ret, size_t *ret_n);
/* Is id in the sorted list? */
bool pid_list_has(const pid_t *ids, size_t n, pid_t id);

/* CLOCK_MONOTONIC in microseconds. */
int64_t now_usec(void);

/* CLOCK_REALTIME in milliseconds: Unix time, for what readers are told. */
int64_t now_unix_ms(void);

/* Deadlines are now_usec() times; timeouts are milliseconds. The time ms
 * after t, and a deadline ms from now. */
int64_t usec_after_ms(int64_t t, unsigned ms);
int64_t deadline_after_ms(unsigned ms);
/* Whole milliseconds left before deadline, rounded down (a wait that long
 * ends by it); 0 once it has passed. */
unsigned deadline_left_ms(int64_t deadline);

/* CLOCK_BOOTTIME in whole seconds: the same in every process, counts time
 * suspended, and restarts at boot exactly when /run and resctrl start empty. */
int64_t now_boottime_sec(void);
