# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# A test's cgroup tree, removed (POSIX sh: tests/lib/harness.sh,
# tests/e2e/lib.sh and tests/deploy/test_image.sh source it, after wait.sh).

# The pids in cgroup DIR and below it, one a line.
cgroup_tree_procs() { find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null; } # DIR

# SIGKILL to every process in cgroup DIR and below it (never to this shell).
kill_cgroup_tree() { # DIR
        for cgroup_tree_p in $(cgroup_tree_procs "$1"); do
                [ "$cgroup_tree_p" = $$ ] || [ "$cgroup_tree_p" = "${BASHPID:-}" ] ||
                        kill -KILL "$cgroup_tree_p" 2>/dev/null
        done
}

# Cgroup DIR and every cgroup below it removed, leaves first, the processes
# in them killed first; false, saying so, if DIR is still there after
# WAIT_PROCESS.
remove_cgroup_tree() { wait_for "$WAIT_PROCESS" "cgroup $1 removed" cgroup_tree_removed "$1"; } # DIR
cgroup_tree_removed() { # DIR: one try
        [ -d "$1" ] || return 0
        kill_cgroup_tree "$1"
        find "$1" -depth -type d -exec rmdir {} + 2>/dev/null
        [ ! -d "$1" ]
}
