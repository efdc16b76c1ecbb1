/* SPDX-License-Identifier: Apache-2.0 */
/* Intake records: a container that its createRuntime could not record in
 * time (its pod's lock busy past the run's deadline, or the watchdog ending
 * the run), left for gc and watch to record. <stateDir>/<uid>.intake.<id>
 * (statedir.h; an id that makes no file name hashed), one a container,
 * holds a member file's text (pod_state.h)
 * with the pod and that one container, waiting.
 *
 * Lock-free and whole or not at all: createRuntime writes the record into an
 * unnamed file (O_TMPFILE) before it waits for any lock, and links it into
 * place only when it must (intake_commit, one linkat, which a signal handler
 * may call); otherwise closing the file discards it. linkat never replaces
 * a record (EEXIST). gc and watch merge a record into the pod's member file
 * under the pod lock, save that, and only then remove the record: a kill in
 * between leaves a record whose container is already a member, which the
 * next taker removes. Older versions pass the name over. Never logs. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pod_state.h"

/* A record written and not yet linked into stateDir. */
struct intake {
        int fd;                  /* the O_TMPFILE; -EBADF when there is none */
        int state_fd;            /* borrowed */
        char name[NAME_MAX + 1]; /* <uid>.intake.<id> */
        char fd_path[32];        /* /proc/self/fd/<fd>, for linkat */
};

#define INTAKE_INIT                                                                                \
        {                                                                                          \
                .fd = -EBADF, .state_fd = -EBADF                                                   \
        }

/* Writes st (a pod's state with container id among its members) into an
 * unnamed file in stateDir, to be named <uid>.intake.<id>, or
 * <uid>.intake.~<hash of id> for an id that makes no file name (too long,
 * a '/'). -errno (-EOPNOTSUPP: the file system has no O_TMPFILE). */
int intake_prepare(int state_fd, const char *uid, const char *id, const struct pod_state *st,
                   struct intake *ret);
/* Links the record into place: 0, or -errno (-EEXIST when a record of that
 * container is there already). Async-signal-safe. */
int intake_commit(const struct intake *in);
/* Closes the file; a record never committed is gone. */
void intake_discard(struct intake *in);

/* The names of pod uid's records in stateDir, sorted (*ret malloc'd, each
 * name too; NULL when none). 0 or -errno. */
int intake_list(int state_fd, const char *uid, char ***ret, size_t *ret_n);
void intake_names_free(char **names, size_t n);
/* Loads the record of that name, for pod uid: -EBADMSG with *reterr when
 * it is not a member file of uid with exactly one member; -ENOENT when it
 * is gone. */
int intake_load(int state_fd, const char *name, const char *uid, struct pod_state *ret,
                char **reterr);

/* The readers' view (status, check): adds to st, pod uid's state as its
 * member file has it (or empty), the containers of its intake records that
 * are not members yet, as their records say (waiting); not those a pass in
 * pid namespace pid_ns and boot boot_id (proc.h) would never take in. How
 * many, or -errno. */
int intake_view(int state_fd, const char *uid, uint64_t pid_ns, const char *boot_id,
                struct pod_state *st);
