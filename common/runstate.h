/* SPDX-License-Identifier: Apache-2.0 */
/* What runc and crun keep of a running container under their --root: enough
 * to adopt a container that started before the hook was there. Never log.
 *
 *   runc (and containerd's, CRI-O's runc): <root>/<id>/state.json with
 *     "init_process_pid", "init_process_start" and config.labels, which hold
 *     the annotations as "KEY=VALUE" and the bundle as "bundle=PATH";
 *   crun: <root>/<id>/status with "pid", "process-start-time" and "bundle",
 *     and the annotations in <root>/<id>/config.json.
 *
 * Files are trusted only when they are regular files (no symlink followed)
 * owned by root or by the caller, not writable by group or others, and at
 * most 1 MiB: whoever can write them could make the hook adopt any process. */
#pragma once

#include <stdint.h>
#include <sys/types.h>

/* Opens a runtime's --root (O_RDONLY|O_DIRECTORY, no symlink followed) if it
 * is to be trusted: owned by root or the caller, not writable by group or
 * others. -ENOENT when there is none (that runtime is not used here);
 * -ELOOP or -ENOTDIR for a symlink or a file; -EPERM when not to be
 * trusted; -errno. */
int runstate_open_root(const char *root, int *ret_fd);

/* How many containers root_fd holds a record of (a directory with runc's
 * state.json or crun's status), trusted or not; -errno. *ret_readable: of
 * those, how many adopt can read, with their bundle there. */
int runstate_count(int root_fd, int *ret_readable);

/* The OCI state JSON (oci.h) a runtime would have sent at createRuntime for
 * container id under root_fd, in *ret (malloc'd), with the init's start time
 * from the runtime's own record in *ret_start_time. 0; -ENOENT when neither
 * runtime's file is there (not a container); -EBADMSG with *reterr (one
 * malloc'd line) for a file that is not to be trusted or not valid;
 * -errno. */
int runstate_read(int root_fd, const char *id, char **ret, uint64_t *ret_start_time, char **reterr);
