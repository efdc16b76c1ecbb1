/* SPDX-License-Identifier: Apache-2.0 */
/* The Prometheus text exposition format (version 0.0.4), for node_exporter's
 * textfile collector. Never log. */
#pragma once

#include <stddef.h>

#include "counters.h"

/* Samples grouped by metric family, each family rendered once with its HELP
 * and TYPE lines, in the order families were first added. */
struct prom_family;
struct prom_writer {
        struct prom_family *families;
        size_t n;
};

void prom_writer_done(struct prom_writer *w);

/* Adds one sample: name must be a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*),
 * type "gauge" or "counter"; labels is NULL or "key", "value", ..., NULL
 * (label values are escaped here); value is the sample's text (a decimal).
 * The first sample of a family sets its help and type; a later sample with
 * another type is refused with -EINVAL. 0, -EINVAL or -ENOMEM. */
int prom_add(struct prom_writer *w, const char *name, const char *type, const char *help,
             const char *const *labels, const char *value);

/* The whole exposition (*ret malloc'd, NUL-terminated). 0 or -ENOMEM. */
int prom_render(const struct prom_writer *w, char **ret);

/* The metric name of a resctrl event, following the Prometheus naming
 * conventions: prefix + the event name with anything outside [a-zA-Z0-9_]
 * made '_', then "_<unit>" unless the name already ends so, then "_total"
 * for a cumulative counter: "resctrl_pod_" + "core_energy" gives
 * "resctrl_pod_core_energy_joules_total"; "llc_occupancy" gives
 * "resctrl_pod_llc_occupancy_bytes"; "mbm_total_bytes" gives
 * "resctrl_pod_mbm_total_bytes_total". *ret malloc'd; 0 or -ENOMEM. */
int prom_counter_name(const char *prefix, const char *event, enum counter_kind kind,
                      const char *unit, char **ret);
