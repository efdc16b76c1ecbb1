/* SPDX-License-Identifier: Apache-2.0 */
/* The counters of a resctrl group's mon_data, typed: gauge or cumulative, with
 * a unit, read from the kernel's text without losing a digit. Never log. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum counter_kind {
        COUNTER_GAUGE,      /* a snapshot (llc_occupancy) */
        COUNTER_CUMULATIVE, /* only grows while the RMID is held */
};

/* What a counter file said: a value, or one of the kernel's words for none. */
enum counter_state {
        COUNTER_OK,
        COUNTER_UNAVAILABLE, /* "Unavailable": nothing counted yet, or no counter (AMD) */
        COUNTER_ERROR,       /* "Error": the hardware flagged the read */
        COUNTER_UNASSIGNED,  /* "Unassigned": no ABMC counter assigned (v6.18+) */
        COUNTER_UNPARSED,    /* the file says neither a value nor one of those words */
};

/* An exact decimal, v / 10^scale. Integer counters have scale 0; fixed-point
 * events keep the decimals the kernel printed (6 for the 18 binary bits of
 * AET core_energy and activity), so "1.500000" is {1500000, 6}. A double
 * would round large joule counts; this never does. */
struct counter_value {
        uint64_t v;
        unsigned scale;
};

#define COUNTER_SCALE_MAX 18 /* 10^18 still fits in a uint64_t */
/* Longest formatted value: 20 digits, a point, the NUL. */
#define COUNTER_VALUE_STRLEN 22
/* A group with more counter files than this is not a resctrl group. */
#define COUNTERS_MAX 4096

struct counter_reading {
        char domain[NAME_MAX + 1]; /* mon_data subdirectory: "mon_L3_00", "mon_PERF_PKG_01" */
        char name[NAME_MAX + 1];   /* event file: "mbm_total_bytes", "core_energy" */
        enum counter_kind kind;
        const char *unit; /* static: "bytes", "joules", "farads", or NULL (unitless) */
        enum counter_state state;
        struct counter_value value; /* when state is COUNTER_OK */
};

/* Kind and unit of an event by name: llc_occupancy bytes gauge; mbm_*_bytes
 * bytes cumulative; core_energy joules and activity farads cumulative; any
 * other (the PERF_PKG integer events, events of later kernels) unitless
 * cumulative. */
void counter_describe(const char *name, enum counter_kind *ret_kind, const char **ret_unit);

/* Parses the kernel's "123\n" or "12.500000\n" (the newline optional):
 * digits, optionally a point and 1..COUNTER_SCALE_MAX digits, nothing else.
 * 0; -EINVAL for anything else; -ERANGE when it does not fit. */
int counter_value_parse(const char *text, struct counter_value *ret);

/* Like counter_value_parse, and also the words "Unavailable", "Error" and
 * "Unassigned" (*ret_value untouched then). */
int counter_text_parse(const char *text, enum counter_state *ret_state,
                       struct counter_value *ret_value);

/* Writes v as the kernel would print it ("12.500000"); -ENOBUFS if size is
 * too small (COUNTER_VALUE_STRLEN always suffices). */
int counter_value_format(const struct counter_value *v, char *buf, size_t size);

/* *acc += v. -EDOM when the scales differ, -ERANGE on overflow (*acc untouched). */
int counter_value_add(struct counter_value *acc, const struct counter_value *v);

/* *ret = a - b. -EDOM when the scales differ; -ERANGE when b > a (the
 * counter went back: its RMID was reset or the group re-created). */
int counter_value_sub(const struct counter_value *a, const struct counter_value *b,
                      struct counter_value *ret);

/* The value as a double, for JSON (rounds beyond 2^53). */
double counter_value_to_double(const struct counter_value *v);

/* "ok", "Unavailable", "Error", "Unassigned", "error" (COUNTER_UNPARSED: the
 * hook's word, not the kernel's); "gauge", "cumulative". */
const char *counter_state_to_string(enum counter_state s);
const char *counter_kind_to_string(enum counter_kind k);

/* Reads every event file of every domain directory under group_fd's
 * mon_data/ (a group's own directory fd), one read(2) each, into *ret
 * (malloc'd, *ret_n entries, sorted by domain then name). Subdirectories of a
 * domain (SNC's mon_sub_L3_*) are skipped: the domain's files already sum
 * them. With cumulative_only, gauges are not read at all. A file that is
 * neither a value nor one of the kernel's words, or too long for one, is
 * that counter's reading, COUNTER_UNPARSED: it costs no other counter.
 * -ENOENT when the group went away meanwhile; -E2BIG past COUNTERS_MAX
 * files. */
int counters_read(int group_fd, bool cumulative_only, struct counter_reading **ret, size_t *ret_n);

/* Reads one counter of the group, key "<domain>/<event>" (a baseline's, as
 * pod_state.h keys them), as counters_read would. -ENOENT when the group or
 * that file is gone; -EINVAL for a key that is not two names. */
int counter_read_key(int group_fd, const char *key, struct counter_reading *ret);
