#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# gc as the systemd unit runs it: its capability bounding set, as the unit
# names it (setpriv), no new privileges, its umask. On the emulator, whose
# root and mon_groups/ are 0555 like the kernel's, gc removes the group of
# a pod that ended and makes again the group of a live pod someone removed,
# readable by every reader (0755) like the groups createRuntime makes. Then
# watch as its unit runs it: it receives the kernel's process events.
#   test_gc_sandbox.sh HOOK RESCTRLFS GC_SERVICE WATCH_SERVICE
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" gc-sandbox
gc_service=$3
watch_service=$4
command -v setpriv >/dev/null || { echo "needs setpriv"; exit 77; }

not() { ! "$@"; }
# Execs COMMAND... in SERVICE's sandbox: its CapabilityBoundingSet= as
# setpriv's --bounding-set (-all,+cap...), no new privileges, its umask.
# Run it in a subshell: the subshell's pid is then COMMAND's.
sandboxed() { # SERVICE COMMAND...
        local caps=-all c umask_
        for c in $(sed -n 's/^CapabilityBoundingSet=//p' "$1"); do
                c=${c#CAP_}
                caps="$caps,+${c,,}"
        done
        umask_=$(sed -n 's/^UMask=//p' "$1")
        shift
        exec setpriv --no-new-privs --bounding-set="$caps" --inh-caps=-all \
                bash -c 'umask "$1"; shift; exec "$@"' _ "${umask_:-0022}" "$@"
}
sandboxed_gc() { (sandboxed "$gc_service" "$HOOK" --config "$CONFIG" gc >"$WORK/gc.out" 2>>"$LOG"); }

mount_emulator
write_config
sleeper p1 p2
create c1 "$p1" "$UID1"
create c2 "$p2" "$UID2"
stop "$p1"
check "gc in the unit's sandbox" sandboxed_gc
check "it removes the group of the pod that ended" test ! -e "$MNT/mon_groups/$UID1"
check "and its state" no_state "$UID1"
check "nothing refused" not grep -q "Permission denied\|Operation not permitted" "$LOG"
rmdir "$MNT/mon_groups/$UID2"
check "gc again, a live pod's group removed by someone" sandboxed_gc
check "it makes the group again" has_task "$MNT/mon_groups/$UID2" "$p2"
check "readable by every reader, whatever the unit's umask" \
        [ "$(stat -c %a "$MNT/mon_groups/$UID2")" = 755 ]
stop "$p2"
sandboxed_gc
check "nothing left" [ -z "$(ls "$MNT/mon_groups")" ]

(sandboxed "$watch_service" "$HOOK" --config "$CONFIG" watch --interval 3600 >/dev/null 2>>"$LOG") &
watch=$!
check "watch in the unit's sandbox writes watch.state" \
        wait_for "$WAIT_DAEMON" "watch writing watch.state" [ -s "$STATE/watch.state" ]
check "watch in the unit's sandbox receives the kernel's process events" \
        jq -e .events "$STATE/watch.state" >/dev/null
kill "$watch"
wait "$watch" 2>/dev/null
harness_done
