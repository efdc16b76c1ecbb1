#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bounded time: another process holds the pod lock, the resctrl-root lock, or
# the state pipe without closing it; the hook gives up within its deadline
# (lockTimeoutMs, or 2 s for stdin). A container whose locks were busy is
# left known and starts, whatever failurePolicy says: as an intake record
# (the pod lock), or recorded waiting (the resctrl lock), the resctrl tree
# as it was. A state never read follows failurePolicy and changes nothing.
# The upper bounds are generous: the machine may be busy.
#   test_bounded_time.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" bounded-time

TIMEOUT_MS=300
BOUND_MS=15000

# A process that holds an exclusive flock on PATH (file or directory) until
# killed: one process, so killing it releases the lock.
hold_lock() { # PATH
        local ready=$WORK/ready
        rm -f "$ready"
        (
                if [ -d "$1" ]; then exec 9<"$1"; else exec 9>>"$1"; fi
                flock -x 9 && : >"$ready" && exec sleep 1000
        ) &
        HOLDER=$!
        HOLDERS+=("$HOLDER")
        wait_for "$WAIT_PROCESS" "a holder of $1's lock" [ -e "$ready" ] || exit 1
}

release() {
        kill "$HOLDER"
        wait "$HOLDER" 2>/dev/null
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Runs a hook command; sets $rc and $elapsed (ms).
timed() {
        local t0
        t0=$(now_ms)
        "$@"
        rc=$?
        elapsed=$(($(now_ms) - t0))
}

between() { # MIN_MS MAX_MS: the hook took at least MIN_MS and less than MAX_MS
        [ "$elapsed" -ge "$1" ] && [ "$elapsed" -lt "$2" ]
}

within() { # MIN_MS: the hook waited at least MIN_MS and gave up well before BOUND_MS
        [ "$elapsed" -ge "$1" ] && [ "$elapsed" -lt "$BOUND_MS" ]
}

unchanged() {
        [ "$BEFORE" = "$(snapshot "$STATE" "$MNT")" ]
}

# Nothing changed but the intake record of container ID of pod UID1, there.
unchanged_but_intake() { # ID
        [ -f "$STATE/$UID1.intake.$1" ] &&
                [ "$BEFORE" = "$(snapshot "$STATE" "$MNT" | grep -v "/$UID1\.intake\.$1 ")" ]
}

test_pod_lock() {
        mount_emulator
        write_config "lockTimeoutMs: $TIMEOUT_MS"
        local p1 p2
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        hold_lock "$STATE/$UID1.lock"
        BEFORE=$(snapshot "$STATE" "$MNT")

        write_config "lockTimeoutMs: $TIMEOUT_MS" "failurePolicy: fail"
        timed create c2 "$p2" "$UID1"
        check "pod lock held, fail: exit 0, the container left for gc and watch" [ "$rc" -eq 0 ]
        check "pod lock held, fail: gave up after ${TIMEOUT_MS} ms, in time ($elapsed ms)" within "$TIMEOUT_MS"
        check "pod lock held: logged" grep -q "pod $UID1 busy past lockTimeoutMs ($TIMEOUT_MS ms); container c2 left in stateDir as $UID1.intake.c2" "$ERR"

        write_config "lockTimeoutMs: $TIMEOUT_MS"
        timed create c2 "$p2" "$UID1"
        check "pod lock held, ignore: exit 0" [ "$rc" -eq 0 ]
        check "pod lock held, ignore: in time ($elapsed ms)" within "$TIMEOUT_MS"

        timed poststop c1 "$UID1"
        check "pod lock held, poststop: exit 0" [ "$rc" -eq 0 ]
        check "pod lock held, poststop: in time ($elapsed ms)" within "$TIMEOUT_MS"
        check "pod lock held, poststop: logged" grep -q "cannot lock pod $UID1" "$ERR"
        check "pod lock held: nothing changed but c2's intake record" unchanged_but_intake c2

        release
        check "lock released: createRuntime proceeds" create c2 "$p2" "$UID1"
        check "lock released: c2 monitored" grep -qx "$p2" "$MNT/mon_groups/$UID1/tasks"
}

test_resctrl_lock() {
        mount_emulator
        write_config "lockTimeoutMs: $TIMEOUT_MS"
        local p1 p2
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        hold_lock "$MNT"
        BEFORE=$(snapshot "$STATE" "$MNT")

        write_config "lockTimeoutMs: $TIMEOUT_MS" "failurePolicy: fail"
        timed create c2 "$p2" "$UID2"
        check "resctrl lock held, fail: exit 0, the container recorded waiting" [ "$rc" -eq 0 ]
        check "resctrl lock held, fail: in time ($elapsed ms)" within "$TIMEOUT_MS"
        check "resctrl lock held: logged" grep -q "resctrl lock busy past lockTimeoutMs ($TIMEOUT_MS ms); container c2 of pod $UID2 recorded as waiting" "$ERR"
        write_config "lockTimeoutMs: $TIMEOUT_MS"
        timed create c2 "$p2" "$UID2"
        check "resctrl lock held, ignore: exit 0" [ "$rc" -eq 0 ]
        check "resctrl lock held, ignore: in time ($elapsed ms)" within "$TIMEOUT_MS"
        check "resctrl lock held: c2 recorded waiting for the locks" \
                jq -e '.members == [{"ctrl": "/", "id": "c2", "monitored": false,
                        "pid": .members[0].pid, "reason": "locks busy past lockTimeoutMs",
                        "start_time": .members[0].start_time}] and .groups == []' \
                "$STATE/$UID2.members"
        check "resctrl lock held: resctrl and pod 1 unchanged" \
                [ "$BEFORE" = "$(snapshot "$STATE" "$MNT" | grep -v "$UID2")" ]

        # The last member goes, but its group cannot be checked and removed: kept, still recorded.
        stop "$p1"
        timed poststop c1 "$UID1"
        check "resctrl lock held, poststop: exit 0" [ "$rc" -eq 0 ]
        check "resctrl lock held, poststop: in time ($elapsed ms)" within "$TIMEOUT_MS"
        check "resctrl lock held, poststop: group kept" test -d "$MNT/mon_groups/$UID1"
        check "resctrl lock held, poststop: group still recorded" \
                jq -e '.members == [] and ([.groups[] | [.ctrl, .owned]] == [["/", true]])' \
                "$STATE/$UID1.members"

        release
        check "lock released: createRuntime proceeds" create c2 "$p2" "$UID2"
        check "lock released: c2 monitored" grep -qx "$p2" "$MNT/mon_groups/$UID2/tasks"
}

# A writer that sends part of the state and never closes the pipe.
test_stdin_held_open() {
        mount_emulator
        local p policy expected
        sleeper p
        mkfifo "$WORK/fifo"
        BEFORE=$(snapshot "$STATE" "$MNT")
        for policy in fail ignore; do
                write_config "failurePolicy: $policy"
                expected=0
                [ "$policy" = fail ] && expected=1
                (exec 9>"$WORK/fifo" && state c1 "$p" "$UID1" >&9 && exec sleep 1000) &
                HOLDERS+=("$!")
                timed run_hook createRuntime "$WORK/fifo"
                check "stdin held open, $policy: exit $expected" [ "$rc" -eq "$expected" ]
                check "stdin held open, $policy: gave up after 2 s, in time ($elapsed ms)" within 2000
                check "stdin held open: logged" grep -q "no end of the state on stdin within 2000 ms" "$ERR"
        done
        check "stdin held open: nothing changed" unchanged
}


# One deadline for the whole run: a runtime slow to close stdin (1.4 s) and a
# held pod lock together cost lockTimeoutMs, not the sum of two waits: a run
# that gave the lock wait its own lockTimeoutMs would take 1.4 s more. The
# deadline leaves the writer of stdin 1.6 s to spare on a loaded machine.
test_one_deadline() {
        mount_emulator
        local p deadline=3000
        sleeper p
        write_config "lockTimeoutMs: $deadline"
        state c1 "$p" "$UID1" >"$WORK/in.json"
        mkdir -m 0700 "$STATE"
        : >"$STATE/$UID1.lock"
        hold_lock "$STATE/$UID1.lock"
        BEFORE=$(snapshot "$STATE" "$MNT")
        rm -f "$WORK/slow"
        mkfifo "$WORK/slow"
        (exec 9>"$WORK/slow" && sleep 1.4 && cat "$WORK/in.json" >&9) &
        HOLDERS+=("$!")
        timed run_hook createRuntime "$WORK/slow"
        check "slow stdin, pod lock held: exit 0" [ "$rc" -eq 0 ]
        check "slow stdin, pod lock held: the lock wait took what was left ($elapsed ms)" \
                between "$deadline" $((deadline + 1400 - 300))
        check "slow stdin, pod lock held: logged" grep -q "pod $UID1 busy past lockTimeoutMs" "$ERR"
        check "slow stdin, pod lock held: nothing changed but its intake record" unchanged_but_intake c1
        release
}

for t in test_pod_lock test_resctrl_lock test_stdin_held_open test_one_deadline; do
        echo "== $t"
        $t
done

harness_done
