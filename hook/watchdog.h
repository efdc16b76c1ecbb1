/* SPDX-License-Identifier: Apache-2.0 */
/* A hook run's last resort against its runtime's timeout. Every wait of a
 * run draws from its deadline (lockTimeoutMs after its start), but a step
 * can block past it all the same: a stalled disk under stateDir, a FUSE or
 * cgroup file that does not answer. A runtime that kills the hook at its
 * own timeout fails the container whatever failurePolicy says; the
 * watchdog ends the run first, WATCHDOG_AFTER_DEADLINE_MS past its
 * deadline (check's hooks.d row wants the hooks.d timeout above both): it
 * links the run's intake record (intake.h), if it has one, so that the
 * container is recorded all the same, counts the outcome "timeout", logs
 * one line prepared beforehand (log_prepare), and exits with the status
 * failurePolicy says. All of it is async-signal-safe: a kill at any
 * instruction is safe (the crash suites), so an exit there is too. A handled
 * signal does not end every wait: one the kernel keeps uninterruptible (a
 * FUSE request it has sent, a disk in D state) runs the handler only when it
 * returns. */
#pragma once

#include <stdint.h>

#include "intake.h"

#define WATCHDOG_AFTER_DEADLINE_MS 500u

/* Arms the watchdog for deadline (now_usec() time) plus
 * WATCHDOG_AFTER_DEADLINE_MS, when the run of that stage (its outcome
 * counter's word) exits with exit_status, counting in state_dir if it
 * exists. Call after log_setup: the line is prepared here. 0 or -errno. */
int watchdog_arm(int64_t deadline, int exit_status, const char *stage, const char *state_dir);
/* The record the watchdog links if it fires; NULL: none (any longer). */
void watchdog_set_intake(const struct intake *in);
/* The run is over: the watchdog no longer fires. */
void watchdog_disarm(void);
