/* SPDX-License-Identifier: Apache-2.0 */
/* Scratch directory trees for the unit suites. Each suite gets one top
 * directory that tmptree_run() removes after every test has run, so that a
 * failing test (which under CK_FORK skips its teardown), or a run ended by a
 * signal, leaves nothing behind. */
#pragma once

#include <check.h>

/* Runs the suite in CK_FORK mode inside a fresh top directory, in a child
 * that a SIGTERM, SIGINT or SIGHUP here is passed on to. Once the child is
 * gone, however it ended: its tests still running are killed, what they
 * mounted under the top directory unmounted, and the directory removed.
 * Returns the process exit status: 0 when every test passed and nothing
 * was left mounted; a signal that ended the child ends this process too. */
int tmptree_run(Suite *s);

/* A new empty directory under the top directory: its dirfd (O_RDONLY|O_DIRECTORY),
 * and its path in *ret_path (static storage, valid until the next call) if non-NULL. */
int tmptree_new(const char **ret_path);

/* Creates or truncates dir_fd/path with text; fails the test on error. */
void tmptree_put(int dir_fd, const char *path, const char *text);

/* mkdir of dir_fd/path (0755); fails the test on error. */
void tmptree_mkdir(int dir_fd, const char *path);

/* The whole content of dir_fd/path (malloc'd), NULL when it does not exist. */
char *tmptree_get(int dir_fd, const char *path);

/* Number of entries in dir_fd/path other than "." and "..", -1 when it cannot be opened. */
int tmptree_count(int dir_fd, const char *path);
