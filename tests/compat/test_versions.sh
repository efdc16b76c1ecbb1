#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A rolling upgrade and a rollback: the previous release (built here from its
# git tag) and this build run against each other's state, in both
# directions, on resctrlfs:
#   test_versions.sh SOURCE_DIR HOOK RESCTRLFS
# Each version's gc and poststop must clean up what the other recorded, and
# neither may skip a pod as invalid. docs/design.md ("State across
# versions") says what keeps it so.
set -u

top=$1
# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$2" "$3" versions
NEW=$HOOK
PREVIOUS=v0.1.0
# The tag's commit, for a clone that did not fetch tags.
PREVIOUS_COMMIT=32ac87914407aaee3bcb8cd57ea1c4a7a7703ac3

if ! git -C "$top" rev-parse -q --verify "$PREVIOUS^{commit}" >/dev/null; then
        git -C "$top" rev-parse -q --verify "$PREVIOUS_COMMIT^{commit}" >/dev/null ||
                { echo "SKIP: $PREVIOUS is not in this checkout (a shallow clone or a tarball)"; exit 77; }
        PREVIOUS=$PREVIOUS_COMMIT
fi
echo "-- build $PREVIOUS"
mkdir -p "$WORK/old/src"
git -C "$top" archive "$PREVIOUS" | tar -x -C "$WORK/old/src" || { echo "FAIL: git archive"; exit 1; }
if ! cmake -S "$WORK/old/src" -B "$WORK/old/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DBUILD_TESTING=OFF >"$WORK/old/build.log" 2>&1 ||
        ! cmake --build "$WORK/old/build" -j "$(nproc)" --target resctrl-mon-hook \
                >>"$WORK/old/build.log" 2>&1; then
        cat "$WORK/old/build.log"
        echo "FAIL: cannot build $PREVIOUS"
        exit 1
fi
OLD=$WORK/old/build/hook/resctrl-mon-hook
check "the old binary is 0.1.0" [ "$("$OLD" --version)" = "resctrl-mon-hook 0.1.0" ]

UID2=2c1d8e0f-7a6b-4c5d-9e8f-0a1b2c3d4e5f
G1=$MNT/mon_groups/$UID1
G2=$MNT/mon_groups/$UID2
OUT=$WORK/gc.out

with() { # BINARY COMMAND...: runs a harness command with that version of the hook
        local saved=$HOOK rc
        HOOK=$1
        shift
        "$@"
        rc=$?
        HOOK=$saved
        return "$rc"
}
said() { grep -q -- "$1" "$OUT"; }
not() { ! "$@"; }

# WRITER records two pods, READER cleans them up: one by poststop, one by gc
# after its container died without one.
across() { # WRITER READER NAME
        local w=$1 r=$2 name=$3 p1 p2
        mount_emulator
        write_config
        sleeper p1 p2
        check "$name: createRuntime" with "$w" create c1 "$p1" "$UID1"
        check "$name: createRuntime of another pod" with "$w" create c2 "$p2" "$UID2"
        check "$name: both groups" [ -d "$G1" ] && [ -d "$G2" ]
        with "$r" gc >"$OUT" 2>>"$LOG"
        check "$name: gc by the other version, nothing to do" [ ! -s "$OUT" ]
        check "$name: no pod skipped" not grep -q "skipped\|invalid" "$LOG"
        stop "$p1"
        check "$name: poststop by the other version" with "$r" poststop c1 "$UID1"
        check "$name: its group removed" [ ! -e "$G1" ]
        check "$name: its state removed" no_state "$UID1"
        stop "$p2"
        with "$r" gc >"$OUT" 2>>"$LOG"
        check "$name: gc by the other version drops the dead member" \
                said "drop-member pod=$UID2 container=c2"
        check "$name: and removes its group" said "remove-group pod=$UID2 ctrl=/"
        check "$name: no group left" [ ! -e "$G2" ]
        check "$name: no state left" no_state "$UID2"
        check "$name: nothing skipped" not grep -q "skipped\|invalid\|unsupported" "$LOG"
}

# A pod of two containers across an upgrade: the old version recorded the
# first, the new one the second; a rollback's old poststop and gc finish.
mixed_pod() {
        local p1 p2
        mount_emulator
        write_config
        sleeper p1 p2
        check "mixed: old createRuntime" with "$OLD" create c1 "$p1" "$UID1"
        check "mixed: new createRuntime, same pod" with "$NEW" create c2 "$p2" "$UID1"
        check "mixed: one group, both inits" [ "$(tasks_of "$G1")" = "$(printf '%s\n' "$p1" "$p2" |
                sort -n | tr '\n' ' ')" ]
        stop "$p1"
        check "mixed: new poststop" with "$NEW" poststop c1 "$UID1"
        check "mixed: group kept for the other" [ -d "$G1" ]
        stop "$p2"
        check "mixed: old poststop (rolled back)" with "$OLD" poststop c2 "$UID1"
        check "mixed: group removed" [ ! -e "$G1" ]
        check "mixed: no state left" no_state "$UID1"
}

# Files of a pod whose group lingers (the new version keeps a group while
# kubelet's cgroup of the pod lives): the old version, which knows only
# removeDelaySeconds, reads it as emptied and removes it.
lingering() {
        local p1
        mount_emulator
        write_config "removeDelaySeconds: 3600"
        sleeper p1
        with "$NEW" create c1 "$p1" "$UID1"
        stop "$p1"
        with "$NEW" poststop c1 "$UID1"
        check "lingering: the new version keeps the group" [ -d "$G1" ]
        write_config
        with "$OLD" gc >"$OUT" 2>>"$LOG"
        check "lingering: the old version removes it" said "remove-group pod=$UID1 ctrl=/"
        check "lingering: no state left" no_state "$UID1"
}

: >"$LOG"
echo "-- new writes, old reads (a rollback)"
across "$NEW" "$OLD" rollback
echo "-- old writes, new reads (an upgrade)"
across "$OLD" "$NEW" upgrade
echo "-- one pod, both versions"
mixed_pod
echo "-- a lingering group after a rollback"
lingering
harness_done
