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
# and once the member's process is gone, one more gc leaves nothing behind.
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
# SCENARIO "abmc": "own" with assignable bandwidth counters (8 in the domain)
# and mbmEvents [mbm_total_bytes], so that createRuntime gives up a counter
# after mkdir; after gc no group of the hook's holds an mbm_local_bytes
# counter, and once the pod is gone every counter it held is free again.
# The injection points are listed from a run under strace, so they grow with
# the code.
#   test_crash.sh HOOK RESCTRLFS [FAULTS [SCENARIO]]
#     FAULTS default: "signal=KILL error=EIO error=ENOSPC";
#     SCENARIO: own | foreign | join | adopt | abmc
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

group_dir() { # UID CTRL
        if [ "$2" = / ]; then echo "$MNT/mon_groups/$1"; else echo "$MNT/$2/mon_groups/$1"; fi
}

# Checks every invariant of the header; gc has just run with its report in $WORK/gc.out.
check_invariants() {
        local f uid id ctrl pid start monitored g members=() files
        ok=1
        grep -q "skip-pod" "$WORK/gc.out" && { fail "gc skipped a pod: $(cat "$WORK/gc.out")"; ok=0; }
        [ -z "$(find "$STATE" -name '*.tmp')" ] || { fail "temp file left"; ok=0; }
        for f in "$STATE"/*.lock; do
                [ -e "$f" ] || continue
                [ -e "${f%.lock}.members" ] || { fail "lock file without state: $f"; ok=0; }
        done
        # One jq for every file: "uid id ctrl pid start_time monitored" per member.
        files=$(find "$STATE" -name '*.members')
        [ -n "$files" ] && mapfile -t members < <(jq -r '.uid as $u | .members[] |
                "\($u) \(.id) \(.ctrl) \(.pid) \(.start_time) \(.monitored)"' $files 2>/dev/null ||
                echo torn)
        [ "${members[-1]:-}" != torn ] || { fail "torn member file"; ok=0; }
        # The emulator has RMIDs to spare: only a failed mkdir may say they ran out.
        if [ -n "$files" ] && [ "${point%%:*}:${fault:-}" != mkdirat:error=ENOSPC ] &&
                jq -e 'select(.members[].reason // "" | startswith("out of RMIDs"))' $files \
                        >/dev/null 2>&1; then
                fail "a failure that was not mkdir's recorded as out of RMIDs"
                ok=0
        fi
        declare -A live_group=()
        for f in "${members[@]}"; do
                read -r uid id ctrl pid start monitored <<<"$f"
                [ "$monitored" = true ] && live "$pid" "$start" || continue
                g=$(group_dir "$uid" "$ctrl")
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
        [ "$ok" = 1 ] && passed=$((passed + 1))
}

# The hook's system calls at STAGE, as "name:N" (the Nth call of that name),
# from one undisturbed run in the same starting position.
injection_points() { # STAGE JSON
        strace -f -qq -o "$WORK/trace" "$HOOK" --config "$CONFIG" "$1" <<<"$2" 2>>"$LOG" >/dev/null
        sed -n 's/^[0-9]* *\([a-z0-9_]*\)(.*/\1/p' "$WORK/trace" | awk '{ print $1 ":" ++n[$1] }'
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
        local stage=$1 fault=$2 p
        shift 2
        for point in "$@"; do
                reset
                container p
                create c1 "$p" "$UID1" "$BUNDLE" || fail "setup create"
                stop "$p"
                injected "$stage" "$(poststop_json c1 "$UID1")" "${point%%:*}:$fault:when=${point#*:}"
                gc >"$WORK/gc.out"
                check_invariants
                check_pod_gone "after $stage"
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
else
        mount_emulator --ctrl-groups gold
        write_config
fi
sleeper bystander
create b1 "$bystander" "$BYSTANDER_UID"

if [ "$SCENARIO" = join ] || [ "$SCENARIO" = adopt ]; then
        root=$(private_cgroup any) || { echo "no cgroup hierarchy mounted"; exit 77; }
        CG=$root/c1
        mkdir "$CG"
fi
if [ "$SCENARIO" = join ] || [ "$SCENARIO" = adopt ]; then
        stage=gc setup=join_setup
        if [ "$SCENARIO" = adopt ]; then
                RUNC_ROOT=$WORK/runc
                mkdir -p -m 0700 "$RUNC_ROOT"
                write_config "runtimeRoots: [$RUNC_ROOT]"
                stage=adopt setup=adopt_setup
        fi
        "$setup"
        mapfile -t points < <(injection_points "$stage" "")
        has_task "$MNT/mon_groups/$UID1" "$JOIN_X1" || { echo "FAIL: $stage did not join"; exit 1; }
        join_teardown
        echo "injection points ($SCENARIO): $stage ${#points[@]}"
        [ "${#points[@]}" -gt 50 ] || { echo "FAIL: too few system calls listed"; exit 1; }
        for fault in $FAULTS; do
                before=$failed
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
mapfile -t create_points < <(injection_points createRuntime "$(state c1 "$p" "$UID1" "$BUNDLE")")
jq -e '.members[0].cgroup and .pod_cgroup' "$STATE/$UID1.members" >/dev/null ||
        { echo "FAIL: createRuntime recorded no cgroups"; exit 1; }
stop "$p"
gc >/dev/null
reset
container p
create c1 "$p" "$UID1" "$BUNDLE"
stop "$p"
mapfile -t poststop_points < <(injection_points poststop "$(poststop_json c1 "$UID1")")
reset
container p
create c1 "$p" "$UID1" "$BUNDLE"
stop "$p"
mapfile -t gc_points < <(injection_points gc "")
echo "injection points ($SCENARIO): createRuntime ${#create_points[@]}," \
        "poststop ${#poststop_points[@]}, gc ${#gc_points[@]}"
[ "${#create_points[@]}" -gt 50 ] && [ "${#poststop_points[@]}" -gt 50 ] &&
        [ "${#gc_points[@]}" -gt 50 ] || { echo "FAIL: too few system calls listed"; exit 1; }

for fault in $FAULTS; do
        before=$failed
        crash_create "$fault" "${create_points[@]}"
        crash_cleanup poststop "$fault" "${poststop_points[@]}"
        crash_cleanup gc "$fault" "${gc_points[@]}"
        echo "$fault: $((failed - before)) failures"
done
has_task "$MNT/mon_groups/$BYSTANDER_UID" "$bystander" || fail "bystander moved out of its group"

harness_done
