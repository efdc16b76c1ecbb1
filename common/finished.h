/* SPDX-License-Identifier: Apache-2.0 */
/* Finished pods' final counters: a pod group's cumulative counts as they
 * read right before the hook removed it, so that a reader that samples every
 * few seconds (a Prometheus scrape, Kepler) still sees a pod's last interval,
 * and a pod that lived less than one interval at all.
 *
 * One file a group in <stateDir>/finished/ (statedir.h), named for the
 * group's incarnation, <uid>.<created_ms>.<hash of its ctrl group>, its
 * mtime when it was written. The hook writes it right before the rmdir, so
 * that a SIGKILL between the two loses nothing: the next removal of the same
 * group writes the same name again, and until then a reader that still
 * finds the group passes the record over (finished_pod_is_of). A writer
 * holds the directory's flock while it prunes (records past the retention
 * window, then the oldest until the new one fits FINISHED_MAX_BYTES and
 * FINISHED_MAX_RECORDS) and writes its record (temp file, rename): the
 * records never take more than the cap, and a SIGKILL at any instruction
 * leaves a whole record or none (a temp file, which the next writer
 * removes). Files of other names are no one's records: left alone, and
 * not counted. Never log.
 *
 * A record is JSON:
 * {"version":1,"uid":"...","namespace":"...","pod":"...","ctrl":"/",
 *  "created_ms":1764000000123,"removed_ms":1764000100456,
 *  "counters":{"mon_L3_00/mbm_total_bytes":"123456"},
 *  "baseline":{"mon_L3_00/mbm_total_bytes":"1234"}}
 * counters are the kernel's text ("Unavailable" included), keyed and valued
 * as a member file's baseline (pod_state.h); the times are Unix milliseconds,
 * created_ms null where unknown (a group 0.2 saved last). Other
 * versions follow pod_state.h's rule: unknown keys are ignored. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "counters.h"
#include "oci.h"
#include "pod_state.h"

#define FINISHED_VERSION 1
/* The most the records take, in tmpfs memory: some 2,700 of a two-socket
 * node with energy counters (about 1.5 KiB each), and in files, so that a
 * writer, which prunes under the resctrl lock, lists a few thousand at most
 * however small they are. */
#define FINISHED_MAX_BYTES ((size_t) 4 << 20)
#define FINISHED_MAX_RECORDS 2048

struct finished_limits {
        unsigned retention_sec; /* finalCountersSeconds; 0 keeps none */
        size_t max_bytes;
        size_t max_records;
};

#define FINISHED_LIMITS(retention)                                                                 \
        (const struct finished_limits)                                                             \
        {                                                                                          \
                (retention), FINISHED_MAX_BYTES, FINISHED_MAX_RECORDS                              \
        }
/* A record larger than this is not one of ours (COUNTERS_MAX counters). */
#define FINISHED_RECORD_MAX ((size_t) 1 << 20)

struct finished_pod {
        char uid[POD_UID_LEN + 1];
        char *namespace;            /* NULL when unknown */
        char *pod_name;             /* NULL when unknown */
        struct group group;         /* ctrl and baseline; the rest unused */
        int64_t created_ms;         /* Unix milliseconds; 0 when unknown */
        int64_t removed_ms;         /* Unix milliseconds */
        struct counter_reading *rd; /* sorted by domain then name */
        size_t n_rd;
};

/* f for pod uid's group g, removed now: copies of the pod's identity and of
 * g's ctrl, creation and baseline; no readings yet. 0 or -ENOMEM. */
int finished_pod_init(struct finished_pod *f, const char *uid, const struct pod_state *st,
                      const struct group *g);
void finished_pod_done(struct finished_pod *f);

/* The record's text (*ret malloc'd). 0 or -ENOMEM. */
int finished_format(const struct finished_pod *f, char **ret);

/* Parses a record. 0, or -EBADMSG with *reterr (malloc'd, may be NULL on
 * ENOMEM) saying what is wrong; -ENOMEM. */
int finished_parse(const char *text, size_t len, struct finished_pod *ret, char **reterr);

/* Saves f in dir_fd (statedir_open_finished), replacing an earlier record
 * of the same group, first removing records written longer ago than the
 * limits' retention and the oldest ones until f fits them, all under the
 * directory's flock, taken by deadline (a now_usec() time). 0, -ETIMEDOUT,
 * -EFBIG when f alone exceeds them, -errno. */
int finished_save(int dir_fd, const struct finished_pod *f, const struct finished_limits *l,
                  int64_t deadline);

/* Removes f's record: its group was not removed after all. 0 or -errno. */
int finished_remove(int dir_fd, const struct finished_pod *f);

/* Is f's group the one g records (same ctrl group and creation, or g's
 * creation unknown): a record written by a removal that was killed before
 * its rmdir? */
bool finished_pod_is_of(const struct finished_pod *f, const struct group *g);

/* Removes what finished_save would before saving one more now, and the
 * temp file of a writer that was killed. The number of files removed, or
 * -errno. */
int finished_prune(int dir_fd, const struct finished_limits *l, int64_t deadline);

/* The records written within retention_sec, oldest first (*ret malloc'd,
 * NULL when none). A record that does not parse is
 * counted in *ret_bad and passed over. Without the lock: records are
 * replaced by rename, never torn. 0 or -errno. */
int finished_load(int dir_fd, unsigned retention_sec, struct finished_pod **ret, size_t *ret_n,
                  unsigned *ret_bad);
