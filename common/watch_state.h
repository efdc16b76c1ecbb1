/* SPDX-License-Identifier: Apache-2.0 */
/* What the running watch (hook/watch.h) tells status and check, in
 * stateDir's STATEDIR_WATCH_STATE, replaced atomically as it changes:
 * {"version":1,"pid":123,"start_time":456,"boot_id":"...","events":true,
 *  "joins":{"watch":7,"gc":2},"lost_events":0,"passes":12}
 * "boot_id": the boot it runs in (proc_boot_id; "" unknown, omitted); "events": it receives the
 * kernel's process events (else it only runs gc passes); "joins": the threads it put into their
 * pods' groups at an exec event and in its gc passes, since it started; "lost_events": how often
 * the kernel dropped events for it. Counters restart with watch. Other
 * versions ignore keys they do not know; a missing counter reads 0. Never
 * log. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "proc.h"

struct watch_state {
        pid_t pid;
        uint64_t start_time;           /* of pid (proc_start_time): which process it is */
        char boot_id[BOOT_ID_LEN + 1]; /* and in which boot; "" when unknown */
        bool events;
        uint64_t joins_watch, joins_gc, lost_events, passes;
};

/* Replaces the file. 0 or -errno. */
int watch_state_save(int state_fd, const struct watch_state *ws);

/* -ENOENT when there is none; -EBADMSG when it is not valid. */
int watch_state_load(int state_fd, struct watch_state *ret);

/* 1 when the watch that wrote ws still runs (this boot where both are
 * known, its pid, its start time, not a zombie); 0 when not; -errno. */
int watch_state_is_live(int proc_fd, const struct watch_state *ws);
