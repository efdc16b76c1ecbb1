#!/bin/bash
# Crash consistency: strace kills the hook (signal=KILL), or fails the call
# (error=EIO, error=ENOSPC), at every system call of one kind of run in turn.
# SCENARIO "own" (the default): createRuntime of a pod's first container,
# poststop of its last, and a gc pass that cleans up after it; the container
# in its own cgroup below its pod's, both of which createRuntime records. After each, gc
# runs and the invariants must hold:
#   - no member file is torn (each parses, and gc does not skip it);
#   - no temp file is left;
#   - every live monitored member's init is in its pod's group;
#   - every group has a live monitored member;
#   - no lock file without a member file;
#   - every record of final counters (stateDir/finished/) parses, none is
#     left half-written, and a group has one at most;
# and once the member's process is gone, one more gc leaves nothing behind
# but the pod's final counters: after a kill in its poststop or the gc
# pass that removes its group, exactly one record of them.
# SCENARIO "foreign": the same runs with mon_groups/<uid> made beforehand by
# another manager; after the runtime's remaining calls and two gc passes the
# foreign group must still be there, and nothing the hook made may be left.
# SCENARIO "join": a gc pass that joins the processes a runtime exec'd into
# a live container (in its cgroup, one of them in another control group);
# after the next pass every one is in the group but that one, which stays
# where it was, and the member is still recorded.
# SCENARIO "adopt": the same container, never seen by createRuntime, found by
# adopt in a runc state root; after the next adopt and a gc pass it is a
# member and every process of its cgroup is in the group.
# SCENARIO "waiting": the same container, left unmonitored by createRuntime
# for want of an RMID, and a gc pass that brings it in once one is free;
# after the next pass it is as "join" has it.
# SCENARIO "intake": the same container, whose createRuntime found its
# pod's lock busy and left an intake record; killed at every call of that
# createRuntime, then of the gc pass that takes the record in. After the
# lock is free and gc has run, the container is a member once or, killed
# before its record was linked, not at all; no record is left, none is
# taken in twice; a pass killed while taking one in leaves it to the next.
# SCENARIO "abmc": "own" with assignable bandwidth counters (8 in the domain)
# and mbmEvents [mbm_total_bytes], so that createRuntime gives up a counter
# after mkdir; after gc no group of the hook's holds an mbm_local_bytes
# counter, and once the pod is gone every counter it held is free again.
# The injection points are listed from a run under strace, so they grow with
# the code; only the calls main makes count (not the dynamic loader's), and of
# those each fault only where it can tell something (injection_points).
#   test_crash.sh HOOK RESCTRLFS [FAULTS [SCENARIO]]
#     FAULTS default: "signal=KILL error=EIO error=ENOSPC";
#     SCENARIO: own | foreign | join | adopt | waiting | intake | abmc
set -u

FAULTS=${3:-signal=KILL error=EIO error=ENOSPC}
SCENARIO=${4:-own}

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" crash
log_level=debug

command -v strace >/dev/null || { echo "needs strace"; exit 77; }
strace -qq -o /dev/null -e inject=getpid:error=EIO:when=1 true 2>/dev/null ||
        { echo "strace cannot inject faults here"; exit 77; }

# A bystander pod whose group must come through every run untouched.
BYSTANDER_UID=$UID2

fail() { # WHAT: one failed invariant, with what the system looked like
        failed=$((failed + 1))
        echo "FAIL [$point]: $1" >&2
        ls -l "$STATE" >&2
        for f in "$STATE"/*.members; do [ -e "$f" ] && cat "$f" >&2; done
        ls "$MNT/mon_groups" >&2
        tail -n 5 "$LOG" >&2
}

live() { # PID START_TIME: the process runs and is the one recorded
        local stat
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
        stat=${stat##*) }
        set -- "$2" $stat
        [ "$2" != Z ] && [ "$2" != X ] && [ "${21}" = "$1" ]
}

# Checks every invariant of the header; gc has just run with its report in $WORK/gc.out.
check_invariants() {
        local f uid id ctrl pid start monitored rmids_out g gc_out members=() files
        ok=1
        read -rd '' gc_out <"$WORK/gc.out"
        [[ $gc_out != *skip-pod* ]] || { fail "gc skipped a pod: $gc_out"; ok=0; }
        # Globs, not find: a check runs some thousand times, a process each would double its time.
        files=("$STATE"/*.tmp)
        [ ! -e "${files[0]}" ] || { fail "temp file left"; ok=0; }
        for f in "$STATE"/*.lock; do
                [ -e "$f" ] || continue
                [ -e "${f%.lock}.members" ] || { fail "lock file without state: $f"; ok=0; }
        done
        # One jq for every file: "uid id ctrl pid start_time monitored out-of-RMIDs" per member.
        files=("$STATE"/*.members)
        [ -e "${files[0]}" ] && mapfile -t members < <(jq -r '.uid as $u | .members[] |
                "\($u) \(.id) \(.ctrl) \(.pid) \(.start_time) \(.monitored)" +
                " \(.reason // "" | startswith("out of RMIDs"))"' "${files[@]}" 2>/dev/null ||
                echo torn)
        [ "${members[-1]:-}" != torn ] || { fail "torn member file"; ok=0; }
        declare -A live_group=()
        for f in "${members[@]}"; do
                read -r uid id ctrl pid start monitored rmids_out <<<"$f"
                # The emulator has RMIDs to spare: only a failed mkdir may say they ran out.
                if [ "$rmids_out" = true ] && [ "${point%%:*}:${fault:-}" != mkdirat:error=ENOSPC ]; then
                        fail "a failure that was not mkdir's recorded as out of RMIDs"
                        ok=0
                fi
                [ "$monitored" = true ] && live "$pid" "$start" || continue
                g=$MNT/mon_groups/$uid
                [ "$ctrl" = / ] || g=$MNT/$ctrl/mon_groups/$uid
                live_group[$g]=1
                grep -qx "$pid" "$g/tasks" 2>/dev/null ||
                        { fail "live member $id (pid $pid) not in $g"; ok=0; }
        done
        for g in "$MNT"/mon_groups/*; do
                [ -d "$g" ] || continue
                # The other manager's group lives by its own rules.
                [ "$SCENARIO" = foreign ] && [ "$g" = "$MNT/mon_groups/$UID1" ] && continue
                [ -n "${live_group[$g]:-}" ] || { fail "group $g without a live member"; ok=0; }
                if [ "$SCENARIO" = abmc ] && grep -q "mbm_local_bytes:0=e" "$g/mbm_L3_assignments"; then
                        fail "group $g kept a counter mbmEvents does not want"
                        ok=0
                fi
        done
        check_final_counters || ok=0
        [ "$ok" = 1 ] && passed=$((passed + 1))
}

# Every record whole, one a group at most (names are per group), and no temp file.
check_final_counters() {
        local files
        files=("$STATE"/finished/*)
        [ ! -e "$STATE/finished/.record.tmp" ] || { fail "temp file of final counters left"; return 1; }
        [ -e "${files[0]}" ] || return 0
        jq -e .removed_ms "${files[@]}" >/dev/null 2>&1 || { fail "torn final counters"; return 1; }
}

# The pod's final counters once its group is gone: exactly one record after a
# kill (the group's removal writes it before the rmdir, and again after a kill
# between the two), at most one after a failed call (which may cost it); a
# record says what the group counted, WANT, read once its task had stopped.
check_final_kept() { # WHEN WANT
        local records=("$STATE/finished/$UID1".*) n=0 got
        [ -e "${records[0]}" ] && n=${#records[@]}
        if [ "$fault" = signal=KILL ]; then
                [ "$n" = 1 ] || fail "$n records of the pod's final counters $1"
        else
                [ "$n" -le 1 ] || fail "$n records of the pod's final counters $1"
        fi
        [ "$n" = 1 ] || return 0
        got=$(jq -r '.counters["mon_L3_00/mbm_total_bytes"]' "${records[0]}")
        [ "$got" = "$2" ] || fail "the final counters say $got bytes, the group counted $2 $1"
}

# The hook's system calls at STAGE from one undisturbed run in the same
# starting position, written to FILE a line each as "NAME:N FAULT...", the Nth
# call of that name (strace's when=) and the faults worth injecting there:
#   signal=KILL  before a call that leaves something behind the process (a
#                write, a directory or file made, removed or renamed): a kill
#                before any other call leaves just what a kill before the next
#                of these does, as descriptors, locks and memory die with it;
#   error=EIO    the calls on files and directories, which can fail with it
#                (not close: the descriptor is gone either way);
#   error=ENOSPC the calls that can run out of space (RMIDs for mkdir).
# Only calls with main on their stack count: the dynamic loader's fail the
# exec, before the hook has done anything.
injection_points() { # STAGE JSON FILE
        strace -f -k -qq -o "$WORK/trace" "$HOOK" --config "$CONFIG" "$1" <<<"$2" 2>>"$LOG" >/dev/null
        awk 'BEGIN {
                split("write pwrite64 mkdir mkdirat unlinkat renameat renameat2 linkat utimensat", a)
                for (i in a) leaves[a[i]]
                split("write pwrite64 mkdir mkdirat renameat renameat2 linkat fsync fdatasync", a)
                for (i in a) fills[a[i]]
                split("openat read pread64 readv write pwrite64 writev getdents64 mkdir mkdirat " \
                      "rmdir unlinkat renameat renameat2 linkat fsync fdatasync newfstatat fstat " \
                      "statx faccessat faccessat2 access readlinkat utimensat ftruncate", a)
                for (i in a) io[a[i]]
        }
        function list() {
                if (point == "" || !ours) return
                made = name ~ /^open/ && call ~ /O_CREAT/
                print point ((name in leaves) || made ? " signal=KILL" : "") \
                        ((name in io) ? " error=EIO" : "") \
                        ((name in fills) || made ? " error=ENOSPC" : "")
        }
        /^[0-9]+ +[a-z0-9_]+\(/ {
                list()
                name = $2
                sub(/\(.*/, "", name)
                point = name ":" ++calls[name]
                call = $0
                ours = 0
                next
        }
        /^ > .*\(main\+/ { ours = 1; next }
        /^ > / { next }
        { list(); point = "" }
        END { list() }' "$WORK/trace" >"$3"
}

points() { # FILE FAULT: the points of FILE for FAULT
        awk -v fault="$2" '{ for (i = 2; i <= NF; i++) if ($i == fault) print $1 }' "$1"
}

# Prints how many calls of main FILE lists at STAGE, and how many points each
# fault of FAULTS has; false if main made few calls or a fault has no point
# (as when strace could not unwind a stack).
listed() { # STAGE FILE
        local fault n ok=0
        printf 'injection points (%s): %s, %s calls of main' "$SCENARIO" "$1" "$(wc -l <"$2")"
        [ "$(wc -l <"$2")" -gt 50 ] || ok=1
        for fault in $FAULTS; do
                n=$(points "$2" "$fault" | wc -l)
                printf ', %s at %s' "$fault" "$n"
                [ "$n" -gt 0 ] || ok=1
        done
        echo
        return "$ok"
}

injected() { # STAGE JSON INJECTION: runs the hook with the fault injected at that point
        { strace -f -qq -o /dev/null -e inject="$3" "$HOOK" --config "$CONFIG" "$1" <<<"$2" \
                2>>"$LOG" >/dev/null; } 2>/dev/null # not bash's "Killed"
}

reset() { # a clean slate with the bystander in place (and, for "foreign", the other manager's group)
        local g
        : >"$LOG"
        for g in "$MNT"/mon_groups/*; do [ -d "$g" ] && [ "$g" != "$MNT/mon_groups/$BYSTANDER_UID" ] && rmdir "$g"; done
        find "$STATE" -mindepth 1 ! -name "$BYSTANDER_UID.*" -delete 2>/dev/null
        [ "$SCENARIO" = foreign ] && mkdir "$MNT/mon_groups/$UID1"
}

# The runtime's poststop of a container whose createRuntime failed, and two gc
# passes: the other manager's group is still there, and the hook left nothing.
check_foreign_kept() {
        local kept=1
        poststop c1 "$UID1"
        gc >"$WORK/gc.out"
        gc >>"$WORK/gc.out"
        [ -d "$MNT/mon_groups/$UID1" ] || { fail "the other manager's group was removed"; kept=0; }
        [ ! -e "$STATE/$UID1.members" ] && [ ! -e "$STATE/$UID1.lock" ] ||
                { fail "the hook's record of the pod left behind"; kept=0; }
        [ "$(find "$MNT/mon_groups" -mindepth 1 -maxdepth 1 | wc -l)" -eq 2 ] ||
                { fail "a group of the hook's left behind"; kept=0; }
        [ "$kept" = 0 ] || passed=$((passed + 1))
}

# The pod is gone once its member is, or for "foreign", the other manager's
# group is kept and nothing of the hook's is left.
check_pod_gone() { # WHEN
        if [ "$SCENARIO" = foreign ]; then
                check_foreign_kept
                return
        fi
        [ ! -e "$MNT/mon_groups/$UID1" ] && [ ! -e "$STATE/$UID1.members" ] &&
                [ ! -e "$STATE/$UID1.lock" ] || fail "pod left behind $1"
        # 8 counters: 2 the default group's, 2 gold's, 1 the bystander's mbm_total_bytes.
        [ "$SCENARIO" != abmc ] || [ "$(cat "$MNT/info/L3_MON/available_mbm_cntrs")" = 0=3 ] ||
                fail "counters not freed $1: $(cat "$MNT/info/L3_MON/available_mbm_cntrs")"
}

# A container init in its own cgroup below its pod's, as kubelet and a
# runtime lay them out, with linux.cgroupsPath saying so: createRuntime
# records both cgroups, and poststop and gc read the pod's (kept empty
# between containers: emptyPodLingerSeconds 0 lets the group go).
container() { # VAR
        sleeper "$1"
        echo "${!1}" >"$POD/c1/cgroup.procs"
}

# Kills or fails createRuntime of the first container of a pod at every call.
crash_create() { # FAULT POINTS...
        local fault=$1 p json
        shift
        for point in "$@"; do
                reset
                container p
                json=$(state c1 "$p" "$UID1" "$BUNDLE")
                injected createRuntime "$json" "${point%%:*}:$fault:when=${point#*:}"
                gc >"$WORK/gc.out"
                check_invariants
                stop "$p"
                if [ "$SCENARIO" != foreign ]; then
                        gc >"$WORK/gc.out"
                        check_invariants
                fi
                check_pod_gone "after its member died"
        done
}

# Kills or fails, at every call, what cleans up after the last container of a
# pod has stopped: its poststop, or a gc pass.
crash_cleanup() { # STAGE FAULT POINTS...
        local stage=$1 fault=$2 p counted
        shift 2
        for point in "$@"; do
                reset
                container p
                create c1 "$p" "$UID1" "$BUNDLE" || fail "setup create"
                stop "$p"
                counted=$(cat "$MNT/mon_groups/$UID1/mon_data/mon_L3_00/mbm_total_bytes" 2>/dev/null)
                injected "$stage" "$(poststop_json c1 "$UID1")" "${point%%:*}:$fault:when=${point#*:}"
                gc >"$WORK/gc.out"
                check_invariants
                check_pod_gone "after $stage"
                [ "$SCENARIO" != own ] || check_final_kept "after $stage" "$counted"
        done
}

# A live container whose cgroup holds its init, two exec'd processes and one
# the kernel keeps in another control group: JOIN_P (the init), JOIN_X1,
# JOIN_X2, JOIN_OTHER; not recorded yet.
container_setup() {
        reset
        sleeper JOIN_P JOIN_X1 JOIN_X2 JOIN_OTHER
        for p in "$JOIN_P" "$JOIN_X1" "$JOIN_X2" "$JOIN_OTHER"; do echo "$p" >"$CG/cgroup.procs"; done
        echo "$JOIN_OTHER" >"$MNT/gold/tasks"
}

# The same container, through createRuntime.
join_setup() {
        container_setup
        create c1 "$JOIN_P" "$UID1" || fail "setup create"
}

join_teardown() {
        local p
        for p in "$JOIN_P" "$JOIN_X1" "$JOIN_X2" "$JOIN_OTHER"; do stop "$p"; done
        rm -rf "${RUNC_ROOT:-/nonexistent}/c1"
        gc >/dev/null
}

# After the killed run, the one that follows and a gc pass: every process of
# the container in its group, but the one in another control group, which has
# not moved; the member recorded once.
check_joined() { # WHAT
        local g=$MNT/mon_groups/$UID1
        check_invariants
        { has_task "$g" "$JOIN_P" && has_task "$g" "$JOIN_X1" && has_task "$g" "$JOIN_X2"; } ||
                fail "$1 did not finish the work"
        has_task "$MNT/gold" "$JOIN_OTHER" || fail "a task of another control group moved"
        [ "$(jq '.members | length' "$STATE/$UID1.members" 2>/dev/null)" = 1 ] ||
                fail "the member was lost"
}

# The same container, recorded by createRuntime while another pod held the
# last RMID; that pod has ended since: an RMID is free for gc to bring it in.
waiting_setup() {
        local filler
        container_setup
        sleeper filler
        create f1 "$filler" "$FILLER_UID" || fail "setup: the filler pod"
        create c1 "$JOIN_P" "$UID1" || fail "setup create"
        grep -q 'out of RMIDs' "$STATE/$UID1.members" || fail "setup: the container does not wait"
        stop "$filler"
        poststop f1 "$FILLER_UID"
}

# The pod's lock held (its lock file made first, as a busy pod has one)
# until release_pod_lock.
hold_pod_lock() {
        : >>"$STATE/$UID1.lock"
        (exec 9>>"$STATE/$UID1.lock" && flock 9 && exec sleep 1000) &
        POD_LOCK_HOLDER=$!
        HOLDERS+=("$POD_LOCK_HOLDER")
        wait_for "$WAIT_PROCESS" "the pod's lock held" lock_held "$STATE/$UID1.lock" || exit 1
}
release_pod_lock() { stop "$POD_LOCK_HOLDER"; }

# The same container, left by createRuntime as an intake record: its pod's
# lock was busy.
intake_setup() {
        container_setup
        hold_pod_lock
        create c1 "$JOIN_P" "$UID1" || fail "setup create"
        release_pod_lock
        [ -e "$STATE/$UID1.intake.c1" ] || fail "setup: no intake record"
}

# Kills or fails, at every call, the createRuntime that leaves the intake
# record; once the lock is free, two gc passes: the container a member once,
# in the group, or (killed before the link) not recorded at all.
crash_intake_create() { # FAULT POINTS...
        local fault=$1 n
        shift
        for point in "$@"; do
                container_setup
                hold_pod_lock
                injected createRuntime "$(state c1 "$JOIN_P" "$UID1")" "${point%%:*}:$fault:when=${point#*:}"
                release_pod_lock
                gc >/dev/null
                gc >"$WORK/gc.out"
                check_invariants
                [ -z "$(ls "$STATE"/*.intake.* 2>/dev/null)" ] || fail "an intake record is left"
                n=$(jq '.members | length' "$STATE/$UID1.members" 2>/dev/null)
                [ "${n:-0}" -le 1 ] || fail "the container recorded twice"
                [ "${n:-0}" -eq 0 ] || has_task "$MNT/mon_groups/$UID1" "$JOIN_P" ||
                        fail "recorded, not brought in"
                join_teardown
                check_pod_gone "after createRuntime"
        done
}

# The container of container_setup, not created but written down as runc
# would have: RUNC_ROOT/c1/state.json.
adopt_setup() {
        container_setup
        mkdir -p "$RUNC_ROOT/c1"
        printf '{"id":"c1","init_process_pid":%s,"init_process_start":%s,"config":{"labels":["io.kubernetes.pod.uid=%s","bundle=%s"]}}\n' \
                "$JOIN_P" "$(awk '{ print $22 }' "/proc/$JOIN_P/stat")" "$UID1" "$WORK" \
                >"$RUNC_ROOT/c1/state.json"
}

# Kills or fails STAGE (gc: the pass that joins the exec'd processes; adopt)
# at every call, after SETUP; the same STAGE again then finishes the work.
crash_join() { # STAGE SETUP FAULT POINTS...
        local stage=$1 setup=$2 fault=$3
        shift 3
        for point in "$@"; do
                "$setup"
                injected "$stage" "" "${point%%:*}:$fault:when=${point#*:}"
                "$HOOK" --config "$CONFIG" "$stage" >/dev/null 2>>"$LOG"
                gc >"$WORK/gc.out"
                check_joined "the next $stage"
                join_teardown
                check_pod_gone "after $stage"
        done
}

poststop_json() {
        echo "{\"ociVersion\":\"1.2.0\",\"id\":\"$1\",\"status\":\"stopped\",\"bundle\":\"$WORK\",\"annotations\":{\"io.kubernetes.pod.uid\":\"$2\"}}"
}

if [ "$SCENARIO" = abmc ]; then
        mount_emulator --ctrl-groups gold --mbm-counters 8
        write_config "mbmEvents: [mbm_total_bytes]"
elif [ "$SCENARIO" = intake ]; then
        mount_emulator --ctrl-groups gold
        write_config "lockTimeoutMs: 200"
elif [ "$SCENARIO" = waiting ]; then
        # RMIDs for the root, gold, the bystander and one pod.
        mount_emulator --ctrl-groups gold --num-rmids 4
        write_config
        FILLER_UID=$(new_uid)
else
        mount_emulator --ctrl-groups gold
        write_config
fi
sleeper bystander
create b1 "$bystander" "$BYSTANDER_UID"

if [ "$SCENARIO" = join ] || [ "$SCENARIO" = adopt ] || [ "$SCENARIO" = waiting ] ||
        [ "$SCENARIO" = intake ]; then
        root=$(private_cgroup any) || { echo "no cgroup hierarchy mounted"; exit 77; }
        CG=$root/c1
        mkdir "$CG"
        stage=gc setup=join_setup
        [ "$SCENARIO" = waiting ] && setup=waiting_setup
        if [ "$SCENARIO" = intake ]; then
                setup=intake_setup
                container_setup
                hold_pod_lock
                injection_points createRuntime "$(state c1 "$JOIN_P" "$UID1")" "$WORK/create.points"
                release_pod_lock
                [ -e "$STATE/$UID1.intake.c1" ] || { echo "FAIL: createRuntime left no intake record"; exit 1; }
                join_teardown
                listed createRuntime "$WORK/create.points" || { echo "FAIL: too few system calls listed"; exit 1; }
                for fault in $FAULTS; do
                        before=$failed
                        mapfile -t points < <(points "$WORK/create.points" "$fault")
                        crash_intake_create "$fault" "${points[@]}"
                        echo "createRuntime, $fault: $((failed - before)) failures"
                done
        fi
        if [ "$SCENARIO" = adopt ]; then
                RUNC_ROOT=$WORK/runc
                mkdir -p -m 0700 "$RUNC_ROOT"
                write_config "runtimeRoots: [$RUNC_ROOT]"
                stage=adopt setup=adopt_setup
        fi
        "$setup"
        injection_points "$stage" "" "$WORK/points"
        has_task "$MNT/mon_groups/$UID1" "$JOIN_X1" || { echo "FAIL: $stage did not join"; exit 1; }
        join_teardown
        listed "$stage" "$WORK/points" || { echo "FAIL: too few system calls listed"; exit 1; }
        for fault in $FAULTS; do
                before=$failed
                mapfile -t points < <(points "$WORK/points" "$fault")
                crash_join "$stage" "$setup" "$fault" "${points[@]}"
                echo "$fault: $((failed - before)) failures"
        done
        has_task "$MNT/mon_groups/$BYSTANDER_UID" "$bystander" || fail "bystander moved out of its group"
        harness_done
        exit
fi

POD=$(private_cgroup any)/kubepods/pod$UID1 || { echo "no cgroup hierarchy mounted"; exit 77; }
mkdir -p "$POD/c1"
BUNDLE=$WORK/bundle-c1
mkdir -p "$BUNDLE"
printf '{"ociVersion":"1.2.0","linux":{"cgroupsPath":"%s"}}\n' \
        "${POD#"$(hierarchy any)"}/c1" >"$BUNDLE/config.json"
if [ "$SCENARIO" = abmc ]; then
        write_config "mbmEvents: [mbm_total_bytes]" "emptyPodLingerSeconds: 0"
else
        write_config "emptyPodLingerSeconds: 0"
fi
reset
container p
injection_points createRuntime "$(state c1 "$p" "$UID1" "$BUNDLE")" "$WORK/createRuntime.points"
jq -e '.members[0].cgroup and .pod_cgroup' "$STATE/$UID1.members" >/dev/null ||
        { echo "FAIL: createRuntime recorded no cgroups"; exit 1; }
stop "$p"
gc >/dev/null
reset
container p
create c1 "$p" "$UID1" "$BUNDLE"
stop "$p"
injection_points poststop "$(poststop_json c1 "$UID1")" "$WORK/poststop.points"
reset
container p
create c1 "$p" "$UID1" "$BUNDLE"
stop "$p"
injection_points gc "" "$WORK/gc.points"
for stage in createRuntime poststop gc; do
        listed "$stage" "$WORK/$stage.points" || { echo "FAIL: too few system calls listed"; exit 1; }
done

for fault in $FAULTS; do
        before=$failed
        mapfile -t create_points < <(points "$WORK/createRuntime.points" "$fault")
        mapfile -t poststop_points < <(points "$WORK/poststop.points" "$fault")
        mapfile -t gc_points < <(points "$WORK/gc.points" "$fault")
        crash_create "$fault" "${create_points[@]}"
        crash_cleanup poststop "$fault" "${poststop_points[@]}"
        crash_cleanup gc "$fault" "${gc_points[@]}"
        echo "$fault: $((failed - before)) failures"
done
has_task "$MNT/mon_groups/$BYSTANDER_UID" "$bystander" || fail "bystander moved out of its group"

harness_done
