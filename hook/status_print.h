/* SPDX-License-Identifier: Apache-2.0 */
/* status's printers over the readers' model (node_view.h): a table
 * (status_table.c), JSON (status_json.c), the Prometheus text
 * (status_prom.c); the command itself is status.c. */
#pragma once

#include <stddef.h>

#include "node_view.h"

/* s, or "-" when absent. */
static inline const char *or_dash(const char *s)
{
        return s ? s : "-";
}

void status_print_table(const struct node_view *nv);
/* 0, or -ENOMEM. */
int status_print_json(const struct node_view *nv);
/* The text into *ret (malloc'd). 0, or -errno. */
int status_render_prometheus(const struct node_view *nv, char **ret);
