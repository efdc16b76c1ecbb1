/* SPDX-License-Identifier: Apache-2.0 */
/* The FUSE side of resctrlfs: paths to model objects, files and their texts. */
#pragma once

#include <stdbool.h>

#include "model.h"

/* Mounts the model at mountpoint and serves it until unmounted or signalled.
 * Without foreground, detaches only once the mount is in place, so the
 * mountpoint is usable as soon as the calling command returns. Returns 0 or a
 * negative errno-style code; the caller keeps ownership of m. */
int fs_run(struct model *m, const char *mountpoint, bool foreground);
