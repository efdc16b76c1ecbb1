/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void log_set_context(const char *stage, const char *container_id)
{
        log_stage = stage ? stage : "-";
        log_container = container_id ? container_id : "-";
}

bool log_enabled(int level)
{
        return level <= log_max_level && (log_to_syslog || log_to_stderr);
}

int log_full_errno(int level, int error, const char *fmt, ...)
{
        char msg[LOG_LINE_MAX], line[LOG_LINE_MAX], safe[4 * LOG_LINE_MAX];
        va_list ap;
        int n;

        error = abs(error);
        if (!log_enabled(level))
                return -error;

        va_start(ap, fmt);
        n = vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (n >= (int) sizeof(msg)) /* cut: say so */
                memcpy(msg + sizeof(msg) - 4, "...", 4);
        /* Cut where it must be; the return value says by how much, nobody asks. */
        if (error)
                n = snprintf(line, sizeof(line), "%s %s: %s: %s", log_stage, log_container, msg,
                             strerror(error));
        else
                n = snprintf(line, sizeof(line), "%s %s: %s", log_stage, log_container, msg);
        if (n < 0)
                return -error;
        /* Annotations, paths and kernel text end up in messages: whatever
         * they hold, the line stays one line of the hook's own. */
        (void) text_escape(safe, sizeof(safe), line);

        if (log_to_syslog)
                syslog(level, "%s", safe);
        if (log_to_stderr)
                fprintf(stderr, "resctrl-mon-hook: %s\n", safe);
        return -error;
}
