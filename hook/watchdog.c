/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "outcome.h"
#include "watchdog.h"

/* What the handler does, set beforehand: it reads, never writes, these. */
static struct {
        int exit_status;
        int state_fd; /* for the outcome counter; -1: not counted */
        char outcome[OUTCOME_FILE_NAME_SIZE];
        const struct intake *intake;
} armed = {.state_fd = -1};

/* The line first: linking and counting touch stateDir, which may be what
 * stalls. */
static void fire(int sig)
{
        (void) sig;
        log_prepared_write();
        if (armed.intake)
                (void) intake_commit(armed.intake);
        if (armed.state_fd >= 0 && armed.outcome[0])
                (void) outcome_count_file(armed.state_fd, armed.outcome);
        _exit(armed.exit_status);
}

/* The line the watchdog writes: whether the container is left for gc and
 * watch, or not recorded at all (the run ended before it could write a
 * record). */
static void prepare_line(void)
{
        if (armed.intake)
                log_prepare(LOG_ERR,
                            "still running %u ms past its deadline (lockTimeoutMs): ended by its "
                            "watchdog (outcome timeout); its container is left in stateDir as %s "
                            "for gc and watch",
                            WATCHDOG_AFTER_DEADLINE_MS, armed.intake->name);
        else
                log_prepare(LOG_ERR,
                            "still running %u ms past its deadline (lockTimeoutMs): ended by its "
                            "watchdog (outcome timeout) before it could record its container",
                            WATCHDOG_AFTER_DEADLINE_MS);
}

int watchdog_arm(int64_t deadline, int exit_status, const char *stage, const char *state_dir)
{
        int64_t at = deadline + (int64_t) WATCHDOG_AFTER_DEADLINE_MS * 1000;
        struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
        struct itimerspec when = {
            .it_value = {.tv_sec = at / 1000000, .tv_nsec = (long) (at % 1000000) * 1000}};
        struct sigaction sa = {.sa_handler = fire};
        sigset_t alarm;
        timer_t timer;

        armed.exit_status = exit_status;
        if (outcome_file_name(stage, "timeout", armed.outcome) < 0)
                armed.outcome[0] = '\0';
        /* Read-only, never made: counting never creates stateDir. */
        armed.state_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        prepare_line();
        /* Whatever mask the runtime left the hook: SIGALRM is its own. */
        (void) sigemptyset(&alarm);
        (void) sigaddset(&alarm, SIGALRM);
        (void) sigfillset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0 || sigprocmask(SIG_UNBLOCK, &alarm, NULL) < 0)
                return -errno;
        /* now_usec() is CLOCK_MONOTONIC: the deadline is absolute on it. */
        if (timer_create(CLOCK_MONOTONIC, &sev, &timer) < 0 ||
            timer_settime(timer, TIMER_ABSTIME, &when, NULL) < 0)
                return -errno;
        return 0;
}

void watchdog_set_intake(const struct intake *in)
{
        armed.intake = in;
        prepare_line();
}

void watchdog_disarm(void)
{
        sigset_t alarm;

        (void) sigemptyset(&alarm);
        (void) sigaddset(&alarm, SIGALRM);
        (void) sigprocmask(SIG_BLOCK, &alarm, NULL);
}
