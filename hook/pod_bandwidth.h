/* SPDX-License-Identifier: Apache-2.0 */
/* A pod group's bandwidth counters under ABMC: keep those mbmEvents wants. */
#pragma once

#include <stddef.h>

#include "abmc.h"
#include "pod.h"

/* With ABMC (abmc.h): gives up the group's counters for the events mbmEvents
 * leaves out, and says what it counts in *ret. 1 then; 0 without ABMC
 * (every event counts); -errno (logged) when its assignments cannot be read
 * or make no sense: nothing is written then. Caller holds the resctrl lock.
 * gc --dry-run: changes nothing. */
int pod_bandwidth_fit(struct pod_session *s, const char *ctrl, struct abmc_assignments *ret);

/* The wanted events (mbmEvents) the group has no counter for, as
 * "mbm_local_bytes in domain 1, ..." into buf. */
void pod_bandwidth_missing(const struct pod_session *s, const struct abmc_assignments *a, char *buf,
                           size_t size);
