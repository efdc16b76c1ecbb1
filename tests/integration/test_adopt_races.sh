#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The ownership rule for tasks (docs/design.md) where a running process's
# pid or thread id can be reused between a read and a write:
#   test_adopt_races.sh HOOK RESCTRLFS WITH_PID
# gdb stops the run between the two, and the test then kills the process and
# gives its id to an unrelated one (WITH_PID, tests/with_pid.c), in another
# cgroup: that process must never be moved, nor recorded as the container.
# Also: an init that another monitor placed costs adopt no group made and
# removed, and is recorded as elsewhere even when no RMID is left.
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" adopt-races
WITH_PID=$(readlink -f "$3")
command -v gdb >/dev/null || { echo "SKIP: needs gdb"; exit 77; }
# Every hook run here is traced (gdb, strace), which LeakSanitizer cannot
# run under: a sanitizer build's would report that instead of ending quietly.
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
ROOT=$(private_cgroup v2 || private_cgroup v1) || { echo "SKIP: no cgroup hierarchy"; exit 77; }
G1=$MNT/mon_groups/$UID1

not() { ! "$@"; }
logged() { grep -q -- "$1" "$LOG"; }
start_of() { awk '{ print $22 }' "/proc/$1/stat"; }
in_cgroup() { echo "$2" >"$ROOT/$1/cgroup.procs"; } # NAME PID
no_monitored_member() { ! jq -e '.members[] | select(.monitored)' "$STATE/$UID1.members" >/dev/null 2>&1; }
member_reason() { jq -r '.members[0].reason' "$STATE/$UID1.members" 2>/dev/null; }

# A runtime root holding container c1 of pod UID1, init PID, as runc records
# one that createRuntime never saw (adopt's input).
runtime_record() { # PID
        runtime_roots=$WORK/runtime
        rm -rf "$runtime_roots"
        mkdir -p "$runtime_roots/c1" "$WORK/bundle"
        printf '{"init_process_pid": %s, "init_process_start": %s, "config": {"labels": ["bundle=%s", "io.kubernetes.pod.uid=%s", "io.kubernetes.pod.namespace=default", "io.kubernetes.pod.name=p"]}}\n' \
                "$1" "$(start_of "$1")" "$WORK/bundle" "$UID1" >"$runtime_roots/c1/state.json"
}

# A script for gdb's shell: kills PID, waits until it is reaped, and gives
# its id to a new process in cgroup "other".
reuse_script() { # PID
        cat >"$WORK/reuse.sh" <<EOS
. "$(cd "$(dirname "$0")" && pwd)/../lib/wait.sh"
kill -KILL $1
wait_for "$WAIT_PROCESS" "pid $1 reaped" eval '[ ! -e /proc/$1 ]' || exit 1
( echo \$BASHPID >"$ROOT/other/cgroup.procs" && exec "$WITH_PID" $1 sleep 1000 ) </dev/null >/dev/null 2>&1 &
wait_for "$WAIT_PROCESS" "pid $1 had again" eval '[ "\$(cat /proc/$1/comm 2>/dev/null)" = sleep ]'
EOS
}
reused() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = sleep ] && grep -q "/other\$" "/proc/$1/cgroup"; }

# adopt checks the init's start time against its runtime's record, then
# reads the container's control group, cgroups and start time again: the
# pid reused in between (gdb stops adopt at stage_create) is not the
# container's, and nothing of it is recorded or moved.
test_adopt_reused_before_read() {
        local p1
        mount_emulator
        mkdir -p "$ROOT/c1" "$ROOT/other"
        sleeper p1
        in_cgroup c1 "$p1"
        runtime_record "$p1"
        write_config
        reuse_script "$p1"
        gdb -q -batch -ex "break stage_create" -ex run -ex "shell bash $WORK/reuse.sh" -ex continue \
                --args "$HOOK" --config "$CONFIG" --log-level info adopt >"$WORK/gdb.out" 2>>"$LOG"
        check "reused before the read: the id is another process now" reused "$p1"
        check "reused before the read: adopt says the container exited" \
                logged "container c1 exited while it was adopted"
        check "reused before the read: nothing recorded monitored" no_monitored_member
        check "reused before the read: no group, the other process not moved" [ ! -e "$G1" ]
        kill_cgroup_tree "$ROOT/other"
}

# gc's join of a member recorded without its cgroup (by 0.2): the threads
# are listed while its init is pinned, then the join waits for the resctrl
# lock; an id reused meanwhile (gdb stops gc once the list is read) names
# a thread outside the container's cgroup, which is left alone.
test_join_reused_after_list() {
        local p1 s2
        mount_emulator
        mkdir -p "$ROOT/c1" "$ROOT/other" "$STATE"
        chmod 0700 "$STATE"
        sleeper p1 s2
        in_cgroup c1 "$p1"
        in_cgroup c1 "$s2"
        mkdir "$G1" && echo "$p1" >"$G1/tasks"
        printf '{"version":1,"uid":"%s","namespace":"default","pod":"p","pid_ns":%s,"groups":[{"ctrl":"/","owned":true}],"members":[{"id":"c1","ctrl":"/","pid":%s,"start_time":%s,"monitored":true,"reason":null}]}\n' \
                "$UID1" "$(stat -L -c %i /proc/self/ns/pid)" "$p1" "$(start_of "$p1")" >"$STATE/$UID1.members"
        write_config
        reuse_script "$s2"
        gdb -q -batch -ex "break cgroup_container_threads" -ex run -ex finish \
                -ex "shell bash $WORK/reuse.sh" -ex continue \
                --args "$HOOK" --config "$CONFIG" gc >"$WORK/gdb.out" 2>>"$LOG"
        check "reused after the list: the id is another process now" reused "$s2"
        check "reused after the list: the init stays in the group" has_task "$G1" "$p1"
        check "reused after the list: the other process is not moved" not has_task "$G1" "$s2"
        kill_cgroup_tree "$ROOT/other"
        kill_cgroup_tree "$ROOT/c1"
}

# adopt of a container whose init another monitor placed: no group made and
# removed again (an RMID into limbo at every adopt), and, with the node's
# last RMID taken, recorded as elsewhere, not as waiting for an RMID.
test_adopt_elsewhere_first() { # [resctrlfs options]
        local p1
        mount_emulator "$@"
        mkdir -p "$ROOT/c1"
        sleeper p1
        in_cgroup c1 "$p1"
        runtime_record "$p1"
        write_config
        mkdir "$MNT/mon_groups/pqos-mon" && echo "$p1" >"$MNT/mon_groups/pqos-mon/tasks"
        strace -f -qq -e trace=mkdirat -o "$WORK/strace" \
                "$HOOK" --config "$CONFIG" adopt >/dev/null 2>>"$LOG"
        check "elsewhere ($*): no group made for it" not grep -q "mkdir.*\"$UID1\"" "$WORK/strace"
        check "elsewhere ($*): recorded as elsewhere" \
                [ "$(member_reason)" = "init in another monitoring or control group" ]
        check "elsewhere ($*): still in pqos-mon" has_task "$MNT/mon_groups/pqos-mon" "$p1"
        kill_cgroup_tree "$ROOT/c1"
}
test_adopt_elsewhere_full() { test_adopt_elsewhere_first --num-rmids 2; }

for t in ${TESTS:-test_adopt_reused_before_read test_join_reused_after_list test_adopt_elsewhere_first \
        test_adopt_elsewhere_full}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
