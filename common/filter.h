/* SPDX-License-Identifier: Apache-2.0 */
/* Which pods the operator wants monitored: namespaces, labels, annotations. */
#pragma once

#include <stdbool.h>

#include "config.h"
#include "oci.h"

/* True when the container passes every configured filter. Otherwise false,
 * with *ret_reason a fixed phrase for the log: "namespace not selected",
 * "namespace excluded", "labels do not match", "labels not exposed by this
 * runtime" or "annotations do not match".
 * Empty lists and maps select everything. A pod without a namespace
 * annotation matches no non-empty "namespaces" list and no exclusion.
 * labelSelector reads CRI-O's io.kubernetes.cri-o.Labels (a JSON object in a
 * string); other runtimes expose no labels, so a non-empty labelSelector
 * does not match them. */
bool pod_filter_match(const struct config *c, const struct oci_state *s,
                      const struct pod_identity *id, const char **ret_reason);
