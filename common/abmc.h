/* SPDX-License-Identifier: Apache-2.0 */
/* Assignable bandwidth counters (ABMC, resctrl's "mbm_event" mode, v6.18+):
 * where a bandwidth event counts only while a hardware counter is assigned
 * to the group for it, one per L3 domain, with a few dozen per domain. mkdir
 * assigns what is left (and still succeeds when nothing is); an event
 * without one reads "Unassigned". The hook reads what a group got, gives up
 * the events the operator does not want (mbmEvents), and gc hands freed
 * counters to groups that lack some. It never writes mbm_assign_mode:
 * switching it resets every counter on the node. Never logs.
 *
 * The texts, as the kernel writes them:
 *   info/L3_MON/mbm_assign_mode       "[mbm_event]\ndefault\n" (the active one bracketed)
 *   info/L3_MON/num_mbm_cntrs         "0=32;1=32\n"
 *   info/L3_MON/available_mbm_cntrs   "0=30;1=30\n"
 *   <group>/mbm_L3_assignments        "mbm_total_bytes:0=e;1=_\nmbm_local_bytes:0=e;1=e\n"
 * A write to mbm_L3_assignments is one "<event>:<domain>=e" or "=_". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* More L3 domains than this in one text is refused (-E2BIG). */
#define ABMC_DOMAINS_MAX 64

enum abmc_event {
        ABMC_TOTAL, /* mbm_total_bytes */
        ABMC_LOCAL, /* mbm_local_bytes */
        ABMC_EVENTS,
};
#define ABMC_ALL_EVENTS ((1U << ABMC_EVENTS) - 1)

/* "mbm_total_bytes", "mbm_local_bytes". */
const char *abmc_event_name(enum abmc_event ev);
/* The event of that name, or -EINVAL. */
int abmc_event_from_name(const char *name);

/* Per L3 domain: ids[i] and counts[i] ("0=32;1=32"). */
struct abmc_counts {
        size_t n;
        unsigned ids[ABMC_DOMAINS_MAX];
        unsigned counts[ABMC_DOMAINS_MAX];
};

struct abmc_assignments {
        size_t n;                                     /* domains, in the file's order */
        unsigned ids[ABMC_DOMAINS_MAX];               /* their ids */
        bool assigned[ABMC_EVENTS][ABMC_DOMAINS_MAX]; /* [event][i] */
        bool listed[ABMC_EVENTS]; /* the kernel counts that event (rdt=!mbmlocal: not) */
};

enum abmc_bandwidth {
        ABMC_FULL,    /* every wanted event counts in every domain */
        ABMC_PARTIAL, /* some */
        ABMC_NONE,    /* none */
};
const char *abmc_bandwidth_name(enum abmc_bandwidth b);

/* Parsers of the texts above: 0, or -EBADMSG for anything else (an unknown
 * event line in mbm_L3_assignments is skipped: a newer kernel's), -E2BIG past
 * ABMC_DOMAINS_MAX domains. */
int abmc_parse_mode(const char *text, bool *ret_mbm_event);
int abmc_parse_counts(const char *text, struct abmc_counts *ret);
int abmc_parse_assignments(const char *text, struct abmc_assignments *ret);

/* What a group counts of the events in mask (bits of enum abmc_event) that
 * the kernel has. */
enum abmc_bandwidth abmc_bandwidth(const struct abmc_assignments *a, unsigned mask);

/* The node's mode: 1 when "mbm_event" is active, 0 when not (the default
 * mode, or no ABMC: then every group counts without counters), -errno. */
int abmc_active(int root_fd);
/* info/L3_MON/num_mbm_cntrs and available_mbm_cntrs. */
int abmc_counters(int root_fd, struct abmc_counts *ret_total, struct abmc_counts *ret_available);
/* The group's mbm_L3_assignments: -ENOENT when it has none (no ABMC). */
int abmc_group_assignments(int root_fd, const char *ctrl, const char *name,
                           struct abmc_assignments *ret);
/* One write to the group's mbm_L3_assignments: a counter for ev in domain
 * dom (assign) or none there. -ENOSPC when the domain has none left. Caller
 * holds rdt_lock. */
int abmc_group_set(int root_fd, const char *ctrl, const char *name, enum abmc_event ev,
                   unsigned dom, bool assign);
/* Gives up ev in every domain ("<ev>:*=_"). Caller holds rdt_lock. */
int abmc_group_drop(int root_fd, const char *ctrl, const char *name, enum abmc_event ev);
