/* SPDX-License-Identifier: Apache-2.0 */
/* The hook's only logger: syslog (ident resctrl-mon-hook) and/or stderr, since
 * runtimes often send a hook's stderr to /dev/null. Every line carries the
 * stage and the container id. */
#pragma once

#include <stdbool.h>
#include <syslog.h>

/* Until log_setup() runs, messages go to stderr at LOG_INFO and above. */
void log_setup(int max_level, bool to_syslog, bool to_stderr);
void log_set_context(const char *stage, const char *container_id);
bool log_enabled(int level);

/* Logs "message: strerror(error)" (or just the message when error is 0) and
 * returns -abs(error), so that callers can log and return in one step. */
int log_full_errno(int level, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value is computed here, not in log_full_errno, so that the compiler and
 * the static analyzer see that "return log_error_errno(r, ...)" returns < 0. */
#define log_errno_at(level, error, ...)                                                            \
        ({                                                                                         \
                int _v = (error), _e = _v < 0 ? -_v : _v;                                          \
                (void) log_full_errno((level), _e, __VA_ARGS__);                                   \
                -_e;                                                                               \
        })
#define log_error_errno(error, ...) log_errno_at(LOG_ERR, (error), __VA_ARGS__)
#define log_warning_errno(error, ...) log_errno_at(LOG_WARNING, (error), __VA_ARGS__)
#define log_error(...) ((void) log_full_errno(LOG_ERR, 0, __VA_ARGS__))
#define log_warning(...) ((void) log_full_errno(LOG_WARNING, 0, __VA_ARGS__))
#define log_info(...) ((void) log_full_errno(LOG_INFO, 0, __VA_ARGS__))
#define log_debug(...) ((void) log_full_errno(LOG_DEBUG, 0, __VA_ARGS__))

/* A line prepared now, to be written later from a signal handler (the
 * watchdog's), where neither stdio nor syslog(3) may run: the message is
 * formatted here as log_full_errno would, and log_prepared_write() sends
 * it with write(2) to stderr and with one send(2) on a socket of its own to
 * syslog, as log_setup chose. A later call replaces the line. */
void log_prepare(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Async-signal-safe. */
void log_prepared_write(void);
