#!/bin/bash
# Concurrency: PODS pods x CONTAINERS containers, sleepers standing in for
# their inits, createRuntime and poststop fired all at once in random order
# (some twice, some poststops never), with gc looping beside them. After each
# wave, the invariants must hold:
#   - a group exists exactly for the pods with a live member;
#   - each live member's pid is in its pod's group;
#   - each member file lists exactly the pod's live members;
#   - no temp file, no lock file without a member file;
# and at the end nothing is left. Then HERD hooks on one pod at once must all
# finish within the lock timeout.
#   test_stress.sh HOOK RESCTRLFS [PODS] [CONTAINERS] [HERD]
set -u

PODS=${3:-20}
CONTAINERS=${4:-8}
HERD=${5:-64}
# The default lockTimeoutMs. Sanitizer builds run each hook several times
# slower and set STRESS_LOCK_TIMEOUT_MS higher (scripts/test.sh).
LOCK_TIMEOUT_MS=${STRESS_LOCK_TIMEOUT_MS:-2000}

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" stress
log_level=debug

declare -A POD_OF PID_OF ALIVE   # container id -> pod uid, init pid, "1" while it runs
declare -a UIDS
invocations=0

pod_uid() { printf '%08x-0000-4000-8000-%012x' "$1" "$1"; }

spawn() { # ID UID: starts the container's init
        sleep 1000 </dev/null >/dev/null 2>&1 &
        SLEEPERS+=("$!")
        POD_OF[$1]=$2
        PID_OF[$1]=$!
        ALIVE[$1]=1
}

kill_init() { # ID
        kill "${PID_OF[$1]}" 2>/dev/null
        wait "${PID_OF[$1]}" 2>/dev/null
        unset "ALIVE[$1]"
}

# Fires every command line of $WORK/wave, shuffled, at once; waits for all.
fire() {
        local line pids=()
        while read -r line; do
                eval "$line" &
                pids+=("$!")
                invocations=$((invocations + 1))
        done < <(shuf "$WORK/wave")
        wait "${pids[@]}"
        : >"$WORK/wave"
}

queue() { echo "$*" >>"$WORK/wave"; }
queue_create() { queue "create $1 ${PID_OF[$1]} ${POD_OF[$1]} || echo \"create $1: exit \$?\" >>$WORK/failures"; }
queue_poststop() { queue "poststop $1 ${POD_OF[$1]}"; }

# Until one gc pass found no pod busy: then every pod has been reconciled
# after the last hook, and the looping gc has nothing left to change.
settle() {
        wait_for "$WAIT_DAEMON" "a gc pass that found no pod busy" settled_pass ||
                echo "gc kept finding busy pods" >>"$WORK/failures"
}
settled_pass() {
        gc >"$WORK/settle.out" || echo "settle gc: exit $?" >>"$WORK/failures"
        ! grep -q "reason=busy" "$WORK/settle.out"
}

verify() { # WHAT
        local what=$1 uid c want got g n_groups=0 bad=0
        settle
        for uid in "${UIDS[@]}"; do
                want=$(for c in "${!ALIVE[@]}"; do [ "${POD_OF[$c]}" = "$uid" ] && echo "$c"; done |
                        sort | tr '\n' ' ')
                g=$MNT/mon_groups/$uid
                if [ -z "$want" ]; then
                        [ ! -e "$g" ] || { echo "$what: group of $uid without live member"; bad=1; }
                        no_state "$uid" || { echo "$what: state of $uid without live member"; bad=1; }
                        continue
                fi
                n_groups=$((n_groups + 1))
                got=$(member_ids "$uid")
                [ "$got" = "$want" ] || { echo "$what: $uid lists '$got', live '$want'"; bad=1; }
                for c in $want; do
                        has_task "$g" "${PID_OF[$c]}" 2>/dev/null ||
                                { echo "$what: $c (pid ${PID_OF[$c]}) not in $g"; bad=1; }
                done
        done
        [ "$(find "$MNT/mon_groups" -mindepth 1 -maxdepth 1 | wc -l)" -eq "$n_groups" ] ||
                { echo "$what: groups $(ls "$MNT/mon_groups" | wc -l), want $n_groups"; bad=1; }
        no_temp_files || { echo "$what: temp files left"; bad=1; }
        for f in "$STATE"/*.lock; do
                [ -e "$f" ] && [ ! -e "${f%.lock}.members" ] && { echo "$what: orphan $f"; bad=1; }
        done
        check "$what: invariants hold" [ "$bad" -eq 0 ]
}

not_logged() { ! grep -q "$1" "$LOG"; }

check_no_failures() { # $what: the wave
        local c
        check "$what: every createRuntime exited 0" [ ! -s "$WORK/failures" ]
        head -3 "$WORK/failures" >&2
        for c in $(sed -n 's/^create \([^:]*\):.*/\1/p' "$WORK/failures" | head -3); do
                grep "createRuntime $c:" "$LOG" >&2
        done
        check "$what: no hook failed to lock or save" not_logged "cannot"
        grep -m5 "cannot" "$LOG" >&2
        : >"$WORK/failures"
}

max_latency_ms() { # the slowest hook run in $LOG, in ms
        sed -n 's/.*elapsed_us=\([0-9]*\).*/\1/p' "$LOG" | sort -n | tail -1 | awk '{ print int($1 / 1000) }'
}

mount_emulator --num-rmids 128
# stateDir on tmpfs, as /run is on a node: what the herd waits for is the
# hooks' work, not the fsyncs of the disk the test happens to run on.
mkdir -p "$STATE"
mount -t tmpfs -o mode=0700,size=64m tmpfs "$STATE"
write_config "failurePolicy: fail" "lockTimeoutMs: $LOCK_TIMEOUT_MS"
# Info level: one line per run with its elapsed time, nothing more.
sed -i 's/level: debug/level: info/' "$CONFIG"
bundle "$WORK/bundle-default" # before the waves: state() would make it racily
: >"$WORK/failures" >"$WORK/wave"
start=$(date +%s%N)

# gc loops beside every wave.
(while [ ! -e "$WORK/stop-gc" ]; do
        gc >/dev/null || echo "looping gc: exit $?" >>"$WORK/failures"
done) &
gc_loop=$!

# Wave 1: every container of every pod starts; a fifth of the createRuntimes twice.
for p in $(seq "$PODS"); do
        UIDS+=("$(pod_uid "$p")")
        for c in $(seq "$CONTAINERS"); do
                spawn "p$p-c$c" "$(pod_uid "$p")"
                queue_create "p$p-c$c"
                [ $((RANDOM % 5)) -eq 0 ] && queue_create "p$p-c$c"
        done
done
fire
what=start check_no_failures
verify "after the starts"

# Wave 2: a quarter of the pods stop entirely, every other pod loses about
# half its containers and restarts some; poststops come twice or never.
for p in $(seq "$PODS"); do
        for c in $(seq "$CONTAINERS"); do
                id=p$p-c$c
                if [ $((p % 4)) -eq 0 ] || [ $((RANDOM % 2)) -eq 0 ]; then
                        kill_init "$id"
                        case $((RANDOM % 5)) in
                        0) ;;                                           # lost: gc's job
                        1) queue_poststop "$id"; queue_poststop "$id" ;; # twice
                        *) queue_poststop "$id" ;;
                        esac
                fi
                if [ $((p % 4)) -ne 0 ] && [ $((RANDOM % 3)) -eq 0 ]; then
                        spawn "$id-r" "$(pod_uid "$p")"
                        queue_create "$id-r"
                fi
        done
done
fire
what=churn check_no_failures
verify "after the churn"

# Wave 3: everything stops.
for id in "${!ALIVE[@]}"; do
        kill_init "$id"
        [ $((RANDOM % 6)) -ne 0 ] && queue_poststop "$id"
done
fire
touch "$WORK/stop-gc"
wait "$gc_loop"
what=stop check_no_failures
verify "after the stops"
gc >/dev/null
check "nothing left in resctrl" [ -z "$(ls "$MNT/mon_groups")" ]
# Only the outcome counters, gc's last pass, the pods' final counters and
# the root control group's mark of its last removal stay: a record a
# removed group, every one whole, none half-written.
check "nothing left in stateDir" \
        [ -z "$(ls "$STATE" | grep -v '^outcome\.' | grep -vx gc.last-pass | grep -vx finished |
                grep -vx freed.af63a24c860189fe)" ]
check "final counters kept, every record whole" \
        jq -e .removed_ms "$STATE"/finished/* >/dev/null
check "final counters: no temp file" [ ! -e "$STATE/finished/.record.tmp" ]
elapsed=$((($(date +%s%N) - start) / 1000000))
echo "stress: $PODS pods x $CONTAINERS containers, $invocations hook runs in $elapsed ms," \
        "slowest run $(max_latency_ms) ms"

# The herd: HERD containers of one pod start at once, then stop at once.
: >"$LOG"
for c in $(seq "$HERD"); do
        spawn "herd-$c" "$UID1"
        queue_create "herd-$c"
done
fire
what=herd check_no_failures
slowest=$(max_latency_ms)
check "herd: all $HERD in one group" [ "$(tasks_of "$MNT/mon_groups/$UID1" | wc -w)" -eq "$HERD" ]
check "herd: all $HERD members" [ "$(member_count "$UID1")" -eq "$HERD" ]
check "herd: slowest ${slowest} ms, within the lock timeout" [ "$slowest" -lt "$LOCK_TIMEOUT_MS" ]
echo "herd: $HERD concurrent createRuntime on one pod, slowest $slowest ms"
for c in $(seq "$HERD"); do
        kill_init "herd-$c"
        queue_poststop "herd-$c"
done
: >"$LOG"
fire
what=herd-stop check_no_failures
echo "herd: $HERD concurrent poststop, slowest $(max_latency_ms) ms"
check "herd: group gone" test ! -e "$MNT/mon_groups/$UID1"
check "herd: state gone" no_state "$UID1"

harness_done
