/* SPDX-License-Identifier: Apache-2.0 */
/* watch's containers waiting for an RMID, tried as soon as one may be free.
 *
 * A group the hook removes frees its RMID into limbo, which the kernel
 * empties about a second later on a quiet cache (statedir.h's freed marks).
 * watch sees each removal's mark change (inotify), and from then on tries
 * the pods whose containers wait where that RMID serves every
 * RMID_WAIT_STEP_MS, for STATEDIR_FREED_RECENT_SEC: on Arm MPAM (rmidBudget
 * ctrlGroup) those of the mark's control group, whose PMG it was; where
 * RMIDs are the node's, any. A try is the pod's part of a gc pass
 * (gc_pod_now), the oldest waiter first; one still waiting after it ends
 * that step's tries where it waits (one RMID went to one pod). Past the
 * window a container waits for the next removal or gc's pass. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "oci.h"
#include "pod_state.h"
#include "statedir.h"

#define RMID_WAIT_STEP_MS 250u

struct rmid_waiter {
        char uid[POD_UID_LEN + 1];
        char *ctrl;       /* where its containers wait */
        uint64_t started; /* its oldest waiting container's start: who goes first */
        int64_t until;    /* now_usec() until which it is tried; 0: until a removal */
};

/* A removal seen, by its mark's name, and when (now_usec()). */
struct rmid_freed {
        char name[STATEDIR_FREED_NAME_SIZE];
        int64_t at;
};

struct rmid_wait {
        bool per_ctrl; /* each control group has RMIDs (PMGs) of its own */
        struct rmid_waiter *waiters;
        size_t n_waiters;
        struct rmid_freed *freed; /* one a control group */
        size_t n_freed;
        int64_t next_try; /* now_usec() of the next try; INT64_MAX: none due */
};

/* per_ctrl as rmidBudget resolves here (rdt_budget_rule). */
void rmid_wait_init(struct rmid_wait *rw, const struct config *c);
void rmid_wait_done(struct rmid_wait *rw);

/* Pod uid's containers waiting for an RMID, as st says (NULL: none, or
 * none that watch may take: another pid namespace's): an entry for each
 * control group they wait in, tried at once where a removal that serves it
 * was seen within the window. */
void rmid_wait_note(struct rmid_wait *rw, const char *uid, const struct pod_state *st);
/* Forgets every pod (watch reads them all again). Removals seen are kept. */
void rmid_wait_forget_all(struct rmid_wait *rw);

/* stateDir's entry name changed: when it is a freed mark, the waiters that
 * removal serves are tried from now on, and true. */
bool rmid_wait_freed(struct rmid_wait *rw, const char *name);

/* The tries due (rmid_wait.next_try passed), each pod's within its own
 * deadline. state_fd: stateDir, to read back whether a pod still waits.
 * Returns the threads they joined to their pods' groups. */
unsigned rmid_wait_try(struct rmid_wait *rw, const struct config *c, int proc_fd, int state_fd);
