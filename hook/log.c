/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "text.h"

/* A message longer than this is cut (before escaping). */
#define LOG_LINE_MAX 1024

static int log_max_level = LOG_INFO;
static bool log_to_syslog;
static bool log_to_stderr = true;
static const char *log_stage = "-";
static const char *log_container = "-";

void log_setup(int max_level, bool to_syslog, bool to_stderr)
{
        log_max_level = max_level;
        log_to_stderr = to_stderr;
        if (to_syslog && !log_to_syslog)
                openlog("resctrl-mon-hook", LOG_PID | LOG_NDELAY, LOG_DAEMON);
        else if (!to_syslog && log_to_syslog)
                closelog();
        log_to_syslog = to_syslog;
}

static void format_prepared(void);

void log_set_context(const char *stage, const char *container_id)
{
        log_stage = stage ? stage : "-";
        log_container = container_id ? container_id : "-";
        format_prepared(); /* a prepared line names the run as the others do */
}

bool log_enabled(int level)
{
        return level <= log_max_level && (log_to_syslog || log_to_stderr);
}

/* The line of a message: stage, container, message, error; escaped into
 * safe. false when there is none. */
__attribute__((format(printf, 3, 0))) static bool
format_line(char safe[static 4 * LOG_LINE_MAX], int error, const char *fmt, va_list ap)
{
        char msg[LOG_LINE_MAX], line[LOG_LINE_MAX];
        int n;

        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        if (n >= (int) sizeof(msg)) /* cut: say so */
                memcpy(msg + sizeof(msg) - 4, "...", 4);
        /* Cut where it must be; the return value says by how much, nobody asks. */
        if (error)
                n = snprintf(line, sizeof(line), "%s %s: %s: %s", log_stage, log_container, msg,
                             strerror(error));
        else
                n = snprintf(line, sizeof(line), "%s %s: %s", log_stage, log_container, msg);
        if (n < 0)
                return false;
        /* Annotations, paths and kernel text end up in messages: whatever
         * they hold, the line stays one line of the hook's own. */
        (void) text_escape(safe, 4 * (size_t) LOG_LINE_MAX, line);
        return true;
}

__attribute__((format(printf, 3, 4))) static bool line_of(char safe[static 4 * LOG_LINE_MAX],
                                                          int error, const char *fmt, ...)
{
        va_list ap;
        bool ok;

        va_start(ap, fmt);
        ok = format_line(safe, error, fmt, ap);
        va_end(ap);
        return ok;
}

int log_full_errno(int level, int error, const char *fmt, ...)
{
        char safe[4 * LOG_LINE_MAX];
        va_list ap;
        bool ok;

        error = abs(error);
        if (!log_enabled(level))
                return -error;

        va_start(ap, fmt);
        ok = format_line(safe, error, fmt, ap);
        va_end(ap);
        if (!ok)
                return -error;
        if (log_to_syslog)
                syslog(level, "%s", safe);
        if (log_to_stderr)
                fprintf(stderr, "resctrl-mon-hook: %s\n", safe);
        return -error;
}

static struct {
        int level;
        char msg[LOG_LINE_MAX]; /* "": none prepared */
        char to_stderr[4 * LOG_LINE_MAX + 64];
        int n_stderr; /* 0: nothing to write */
        char to_syslog[4 * LOG_LINE_MAX + 64];
        int n_syslog;
        int syslog_fd; /* connected to /dev/log; -1 while not opened */
} prepared = {.syslog_fd = -1};

/* A socket of the line's own: syslog(3)'s takes a lock a handler must not. */
static int open_syslog_socket(void)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX, .sun_path = "/dev/log"};
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

        if (fd >= 0 && connect(fd, (const struct sockaddr *) &sa, sizeof(sa)) < 0) {
                (void) close(fd);
                return -1;
        }
        return fd;
}

/* The prepared message as a line of the current context. */
static void format_prepared(void)
{
        char safe[4 * LOG_LINE_MAX];
        int level = prepared.level;

        prepared.n_stderr = prepared.n_syslog = 0;
        if (!prepared.msg[0] || !log_enabled(level) || !line_of(safe, 0, "%s", prepared.msg))
                return;
        if (log_to_stderr)
                prepared.n_stderr = snprintf(prepared.to_stderr, sizeof(prepared.to_stderr),
                                             "resctrl-mon-hook: %s\n", safe);
        if (log_to_syslog && prepared.syslog_fd < 0)
                prepared.syslog_fd = open_syslog_socket();
        if (log_to_syslog && prepared.syslog_fd >= 0)
                prepared.n_syslog = snprintf(prepared.to_syslog, sizeof(prepared.to_syslog),
                                             "<%d>resctrl-mon-hook[%d]: %s", LOG_DAEMON | level,
                                             (int) getpid(), safe);
        /* Cut lines are written cut. */
        if (prepared.n_stderr >= (int) sizeof(prepared.to_stderr))
                prepared.n_stderr = sizeof(prepared.to_stderr) - 1;
        if (prepared.n_syslog >= (int) sizeof(prepared.to_syslog))
                prepared.n_syslog = sizeof(prepared.to_syslog) - 1;
}

void log_prepare(int level, const char *fmt, ...)
{
        va_list ap;

        va_start(ap, fmt);
        (void) vsnprintf(prepared.msg, sizeof(prepared.msg), fmt, ap);
        va_end(ap);
        prepared.level = level;
        format_prepared();
}

void log_prepared_write(void)
{
        if (prepared.n_stderr > 0)
                (void) !write(STDERR_FILENO, prepared.to_stderr, (size_t) prepared.n_stderr);
        if (prepared.n_syslog > 0)
                (void) !send(prepared.syslog_fd, prepared.to_syslog, (size_t) prepared.n_syslog,
                             MSG_DONTWAIT | MSG_NOSIGNAL);
}
