/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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
        char msg[1024];
        va_list ap;

        error = abs(error);
        if (!log_enabled(level))
                return -error;

        va_start(ap, fmt);
        (void) vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);

        if (log_to_syslog) {
                if (error)
                        syslog(level, "%s %s: %s: %s", log_stage, log_container, msg,
                               strerror(error));
                else
                        syslog(level, "%s %s: %s", log_stage, log_container, msg);
        }
        if (log_to_stderr) {
                if (error)
                        fprintf(stderr, "resctrl-mon-hook: %s %s: %s: %s\n", log_stage,
                                log_container, msg, strerror(error));
                else
                        fprintf(stderr, "resctrl-mon-hook: %s %s: %s\n", log_stage, log_container,
                                msg);
        }
        return -error;
}
