/* SPDX-License-Identifier: Apache-2.0 */
/* stateDir: the directory of the hook's per-pod files and node-wide markers,
 * whose names are spelled here and nowhere else (but the temporary files
 * of atomic saves, <name>.tmp beside each file so saved), and the one rule
 * for trusting it. It belongs on tmpfs (/run): what it holds is of this boot.
 *   <uid>.members             a pod's member file (pod_state.h)
 *   <uid>.members.tmp         its next version while a save is under way
 *   <uid>.lock                the pod lock (pod.h)
 *   <uid>.intake.<id>         container <id>, which its createRuntime could
 *                             not record in time (intake.h)
 *   gc.last-pass              its mtime is when gc's last pass ended
 *   outcome.<stage>.<result>  the hook outcome counters (outcome.h)
 *   watch.state               what the running watch says (watch_state.h)
 *   watch.lock                held by the running watch: one a stateDir
 *   finished/                 finished pods' final counters (finished.h)
 *   freed.<hash>              its mtime is when the hook last removed a group
 *                             in the control group of that hash (below)
 * A <uid> is a canonical pod UID (oci.h). Other versions ignore names they
 * do not know. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "oci.h"

enum statedir_file {
        STATEDIR_MEMBERS,
        STATEDIR_MEMBERS_TMP,
        STATEDIR_LOCK,
};

/* Room for the longest name of a pod's file, NUL included. */
#define STATEDIR_NAME_SIZE (POD_UID_LEN + sizeof(".members.tmp"))

#define STATEDIR_GC_LAST_PASS "gc.last-pass"
#define STATEDIR_OUTCOME_PREFIX "outcome."
#define STATEDIR_WATCH_STATE "watch.state"
#define STATEDIR_WATCH_LOCK "watch.lock"
#define STATEDIR_FINISHED "finished"

/* Opens stateDir (O_RDONLY|O_DIRECTORY|O_NOFOLLOW|O_CLOEXEC): a directory,
 * no symlink (nor a trailing slash, which would follow one). create, for
 * those who write there (the stages, gc): made 0700 if missing, and trusted
 * only if owned by the caller's euid and writable by no one else (-EPERM):
 * whoever else can write there can forge which groups are the hook's.
 * Readers (status, check, run by any user) never make it (-ENOENT), and
 * read it whoever owns it: check's state-dir row says what is wrong. */
int statedir_open(const char *path, bool create, int *ret_fd);

/* Opens stateDir's finished/ (state_fd from statedir_open) by the same rule:
 * create (0700 if missing) and trust it only if the caller owns it, for
 * writers; open it as it is, for readers. */
int statedir_open_finished(int state_fd, bool create, int *ret_fd);

/* The name of pod uid's file of that kind into buf; -EINVAL when uid is no
 * file name, or kind no kind. */
int statedir_name(const char *uid, enum statedir_file kind, char buf[static STATEDIR_NAME_SIZE]);

/* The pod UID and kind of a pod's file's name; false for any other name,
 * a UID that is not canonical included. */
bool statedir_parse_name(const char *name, char uid[static POD_UID_LEN + 1],
                         enum statedir_file *ret_kind);

#define STATEDIR_INTAKE_INFIX ".intake."

/* The pod UID of an intake record's name (<uid>.intake.<id>, with a
 * canonical UID and an id that is a file name); false for any other name. */
bool statedir_parse_intake_name(const char *name, char uid[static POD_UID_LEN + 1]);

/* A group the hook removed frees its RMID into limbo, where it waits until
 * its cache lines age out (the kernel looks every second). On Arm MPAM an
 * RMID is one of its control group's PMGs: mkdir there says ENOSPC
 * meanwhile, as when none is left at all, not EBUSY as where RMIDs are the
 * node's. So each removal is marked, per control group: freed.<16 hex
 * digits, FNV-1a of the control group's name>, whose mtime is the last
 * one's; createRuntime waits for limbo only where one is recent, and watch
 * (inotify) tries the containers waiting there as soon as one comes. A
 * removal longer ago than STATEDIR_FREED_RECENT_SEC has let its RMID out of
 * limbo, or a busy cache keeps it there for long. */
#define STATEDIR_FREED_PREFIX "freed."
#define STATEDIR_FREED_NAME_SIZE (sizeof(STATEDIR_FREED_PREFIX) + 16)
#define STATEDIR_FREED_RECENT_SEC 10

/* freed.<hash> of control group ctrl ("/" for the root) into buf. */
void statedir_freed_name(const char *ctrl, char buf[static STATEDIR_FREED_NAME_SIZE]);
/* Is name a freed.<hash> mark's? */
bool statedir_is_freed_name(const char *name);
/* Marks a removal in ctrl now: the mark's mtime to now, made if missing
 * (an open for writing and its close: inotify's IN_CLOSE_WRITE). No lock:
 * concurrent marks all say "now". Writers only (the stages, gc). 0 or
 * -errno. */
int statedir_mark_freed(int state_fd, const char *ctrl);
/* Milliseconds since the last removal marked in ctrl: -ENOENT when none
 * is; -ERANGE when it is in the future (the clock went back). */
int statedir_freed_age_ms(int state_fd, const char *ctrl, int64_t *ret);

/* A pod stateDir has files of, and which. */
struct statedir_pod {
        char uid[POD_UID_LEN + 1];
        bool members, lock, temp, intake;
};

/* The pods of stateDir, by their files' names, sorted by UID (a stable
 * order for reports); *ret malloc'd, NULL when there is none. Names of
 * anything else, a UID not canonical included, are passed over. 0 or
 * -errno. */
int statedir_scan(int dir_fd, struct statedir_pod **ret, size_t *ret_n);
