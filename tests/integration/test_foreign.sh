#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gc beside a nested runtime (kind, Docker-in-Docker sharing /run): a
# stateDir whose only pod was recorded in another pid namespace.
#   test_foreign.sh HOOK RESCTRLFS
# In the initial pid namespace such a pod can only be a nested runtime's:
# gc skips it, touching nothing of it, and its pass succeeds, a dry run too
# (what the DaemonSet, hostPID, runs). In a pid namespace of its own gc may
# itself be the one in the wrong namespace: it refuses, saying so.
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" foreign

# PROC_PID_INIT_INO (include/linux/proc_ns.h): /proc/self/ns/pid's inode in
# the initial pid namespace, on every boot.
[ "$(stat -L -c %i /proc/self/ns/pid)" -eq $((0xEFFFFFFC)) ] ||
        { echo "SKIP: not in the initial pid namespace"; exit 77; }
command -v unshare >/dev/null || { echo "SKIP: needs unshare"; exit 77; }

OUT=$WORK/gc.out
UIDF=$(new_uid 5)
GF=$MNT/mon_groups/$UIDF

# The nested runtime's pod: a member file as pod_state.h has it, its pids in
# pid namespace 4026531837, the initial user namespace's inode, which no pid
# namespace can have (nsfs inodes are unique across namespace types); its
# group, holding nothing of ours.
foreign_pod() {
        mkdir -m 0700 "$STATE" && mkdir "$GF" &&
                printf '{"version":1,"uid":"%s","namespace":"kind","pod":"nested","pid_ns":4026531837,"groups":[{"ctrl":"/","owned":true}],"members":[{"id":"nested-c1","ctrl":"/","pid":7,"start_time":1234,"monitored":true,"reason":null}]}\n' \
                        "$UIDF" >"$STATE/$UIDF.members" && cp "$STATE/$UIDF.members" "$WORK/foreign.before"
}

untouched() {
        cmp -s "$WORK/foreign.before" "$STATE/$UIDF.members" && [ -d "$GF" ]
}

# gc in a pid namespace of its own, with its /proc: ARGS... its options.
nested_gc() {
        unshare -p -f --mount-proc "$HOOK" --config "$CONFIG" gc "$@" >"$OUT" 2>>"$LOG"
}

said() { grep -q -- "$1" "$OUT"; }
logged() { grep -q -- "$1" "$LOG"; }
not() { ! "$@"; }

test_initial_ns() {
        mount_emulator
        write_config
        foreign_pod || exit 1
        "$HOOK" --config "$CONFIG" gc --dry-run >"$OUT" 2>>"$LOG"
        check "initial pid ns, only a foreign pod: gc --dry-run exits 0" [ "$?" -eq 0 ]
        check "initial pid ns: the dry run skips the pod, saying why" \
                said "skip-pod pod=$UIDF reason=\"another pid namespace\""
        "$HOOK" --config "$CONFIG" gc >"$OUT" 2>>"$LOG"
        check "initial pid ns, only a foreign pod: gc exits 0" [ "$?" -eq 0 ]
        check "initial pid ns: the pass skips the pod, saying why" \
                said "skip-pod pod=$UIDF reason=\"another pid namespace\""
        check "initial pid ns: no refusal" not logged "refusing"
        check "initial pid ns: the foreign pod's file and group untouched" untouched
}

test_nested_ns() {
        local rc
        mount_emulator
        write_config
        foreign_pod || exit 1
        nested_gc --dry-run
        rc=$?
        check "own pid ns, only a foreign pod: gc --dry-run refuses, exit 1" [ "$rc" -eq 1 ]
        check "own pid ns: says to run gc in the host pid namespace" \
                logged "run gc in the host pid namespace (hostPID), where the hook runs; refusing"
        : >"$LOG"
        nested_gc
        rc=$?
        check "own pid ns, only a foreign pod: gc refuses, exit 1" [ "$rc" -eq 1 ]
        check "own pid ns: gc says why" logged "run gc in the host pid namespace (hostPID)"
        check "own pid ns: the foreign pod's file and group untouched" untouched
}

for t in ${TESTS:-test_initial_ns test_nested_ns}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
