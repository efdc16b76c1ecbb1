#!/bin/bash
# gc on the resctrlfs emulator: what it drops, removes, re-creates and leaves alone.
#   test_gc.sh HOOK RESCTRLFS IDLE_THREADS
set -u
IDLE_THREADS=$3

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" gc
log_level=debug

OUT=$WORK/gc.out
G1=$MNT/mon_groups/$UID1

gc_out() { gc "$@" >"$OUT"; }
jqe() { jq -e "$@" >/dev/null; }
said() { grep -q -- "$1" "$OUT"; }

# --- members whose process is gone, reused or a zombie -----------------------

test_dead_members() {
        mount_emulator
        write_config
        local p1 p2 p3 p4 parent zombie
        sleeper p1 p2 p3 p4
        # A child that exits while its parent (exec'd into sleep) never reaps it.
        bash -c 'sleep 0.3 & exec sleep 1000' </dev/null >/dev/null 2>&1 &
        parent=$!
        SLEEPERS+=("$parent")
        wait_for "$WAIT_PROCESS" "the parent's child" pgrep -P "$parent" -x sleep >/dev/null
        zombie=$(pgrep -P "$parent" -x sleep)
        for c in 1 2 3 4; do
                local v=p$c
                create "c$c" "${!v}" "$UID1"
        done
        create cz "$zombie" "$UID1"
        check "five members" [ "$(member_count "$UID1")" -eq 5 ]
        stop "$p1"
        # c2's pid now names another process: same pid, another start time.
        jq -c '(.members[] | select(.id == "c2") | .start_time) |= . + 1' "$STATE/$UID1.members" \
                >"$WORK/m" && cat "$WORK/m" >"$STATE/$UID1.members"
        wait_for "$WAIT_PROCESS" "the child a zombie" grep -q '^State:.*Z' "/proc/$zombie/status"
        check "gc runs" gc_out
        check "gone member dropped" said "drop-member pod=$UID1 container=c1 pid=$p1 reason=gone"
        check "reused pid dropped" said "drop-member pod=$UID1 container=c2 pid=$p2 reason=\"pid reused\""
        check "zombie dropped" said "drop-member pod=$UID1 container=cz pid=$zombie reason=exited"
        check "live members kept" [ "$(member_ids "$UID1")" = "c3 c4 " ]
        check "group kept for the live" has_task "$G1" "$p3"
        check "a second gc finds nothing" [ -z "$(gc)" ]
        stop "$p2"; stop "$p3"; stop "$p4"   # p2 still ran in the group, as a stray task
        check "gc after the last" gc_out
        check "group removed" said "remove-group pod=$UID1 ctrl=/"
        check "state removed" said "remove-state pod=$UID1"
        check "no group" test ! -e "$G1"
        check "no state files" no_state "$UID1"
        kill "$parent"
}

# --- a group kept while a task still runs in it ------------------------------

test_group_with_tasks() {
        mount_emulator
        write_config
        local p1 stray
        sleeper p1 stray
        create c1 "$p1" "$UID1"
        echo "$stray" >"$G1/tasks"   # a process the pod forked, as the kernel would track it
        stop "$p1"
        check "gc with a live task" gc_out
        check "kept, and said why" said "keep-group pod=$UID1 ctrl=/ reason=\"still has tasks\""
        check "group still there" has_task "$G1" "$stray"
        check "state kept: the group is still the hook's" grep -q '"ctrl":"/"' "$STATE/$UID1.members"
        stop "$stray"
        check "gc after the task ended" gc_out
        check "removed" test ! -e "$G1"
        check "state gone" no_state "$UID1"
}

# --- debris of killed runs ---------------------------------------------------

test_debris() {
        mount_emulator
        write_config
        local p1 holder
        sleeper p1
        create c1 "$p1" "$UID1"
        echo '{"half' >"$STATE/$UID1.members.tmp"
        : >"$STATE/$UID2.lock"
        echo '{"half' >"$STATE/$UID2.members.tmp"
        : >"$STATE/not-a-pod.lock"
        check "gc" gc_out
        check "temp file of a live pod removed" said "remove-temp pod=$UID1"
        check "temp file of a pod without state removed" said "remove-temp pod=$UID2"
        check "orphaned lock removed" said "remove-lock pod=$UID2"
        check "no temp files" no_temp_files
        check "no state of UID2" no_state "$UID2"
        check "live pod untouched" has_task "$G1" "$p1"
        check "live pod's lock kept" test -e "$STATE/$UID1.lock"
        check "other files left alone" test -e "$STATE/not-a-pod.lock"

        # A lock someone holds is never taken from under them.
        : >"$STATE/$UID2.lock"
        (exec 9>"$STATE/$UID2.lock"; flock 9; touch "$WORK/held"; exec sleep 1000) \
                </dev/null >/dev/null 2>&1 &
        holder=$!
        SLEEPERS+=("$holder")
        wait_for "$WAIT_PROCESS" "a holder of $UID2's pod lock" [ -e "$WORK/held" ]
        check "gc beside a held lock" gc_out
        check "busy pod skipped" said "skip-pod pod=$UID2 reason=busy"
        check "held lock kept" test -e "$STATE/$UID2.lock"
        kill "$holder"
        stop "$p1"; poststop c1 "$UID1"
}

# --- a group removed by another tool while members live ----------------------

test_recreate() {
        mount_emulator
        write_config
        local p1 p2
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        create c2 "$p2" "$UID1"
        rmdir "$G1"
        check "gc" gc_out
        check "said re-created" said "recreate-group pod=$UID1 ctrl=/"
        check "warned" grep -q "removed by someone else" "$LOG"
        check "c1 back" has_task "$G1" "$p1"
        check "c2 back" has_task "$G1" "$p2"
        check "both rejoins said" [ "$(grep -c rejoin-member "$OUT")" -eq 2 ]
        # A member missing from its group (a hook killed before its tasks write) is put back.
        echo "$p2" >"$MNT/tasks"
        check "gc" gc_out
        check "c2 rejoined" said "rejoin-member pod=$UID1 container=c2 pid=$p2"
        check "c2 in the group again" has_task "$G1" "$p2"
        stop "$p1"; stop "$p2"
        gc >/dev/null
        check "removed at the end" test ! -e "$G1"
}

# A group made again by a createRuntime puts the other members' threads
# back, under the resctrl lock: past the run's deadline (lockTimeoutMs) it
# stops, saying so, so that the container still starts in time, monitored,
# and the next gc pass joins the rest.
test_rejoin_deadline() {
        mount_emulator
        write_config # an init of 2000 threads: its own createRuntime moves them all
        local p1 p2 threads=2000
        "$IDLE_THREADS" "$threads" &
        p1=$!
        SLEEPERS+=("$p1")
        wait_for "$WAIT_PROCESS" "$threads threads started" threads_at_least "$p1" "$threads"
        sleeper p2
        create c1 "$p1" "$UID1"
        check "c1: every thread in the group" [ "$(wc -l <"$G1/tasks")" -eq "$threads" ]
        rmdir "$G1"
        write_config "lockTimeoutMs: 200"
        check "c2 monitored" create c2 "$p2" "$UID1"
        check "c2 in the group" has_task "$G1" "$p2"
        # A fast machine puts them all back within the 200 ms; a slower one
        # stops at the deadline and says so.
        check "c2: c1's threads back, or it said it ran out of time" rejoined_or_said "$threads"
        check "c2: within its deadline and the watchdog's time" \
                grep -q "createRuntime c2: .*outcome=monitored elapsed_us=[1-6]\?[0-9]\{1,5\}$" "$LOG"
        write_config
        check "gc" gc_out
        check "gc: every thread back" [ "$(wc -l <"$G1/tasks")" -eq $((threads + 1)) ]
        stop "$p1"; stop "$p2"
        gc >/dev/null
        check "removed at the end" test ! -e "$G1"
}

rejoined_or_said() { # THREADS
        [ "$(wc -l <"$G1/tasks")" -eq $(($1 + 1)) ] || grep -q \
                "out of time (lockTimeoutMs) joining the threads of container c1 of pod $UID1" "$LOG"
}

# --- groups that are not the hook's ------------------------------------------

test_foreign_groups() {
        mount_emulator
        write_config
        local p1 kepler
        kepler=$(new_uid 5)
        mkdir "$MNT/mon_groups/$kepler"   # Kepler active mode, an NRI plugin: no state here
        mkdir "$G1"                      # made by someone else before the pod started
        sleeper p1
        create c1 "$p1" "$UID1"
        stop "$p1"
        check "gc" gc_out
        check "forgot the group it did not make" said "forget-group pod=$UID1 ctrl=/"
        check "never removed it" test -d "$G1"
        check "never touched a group without state" test -d "$MNT/mon_groups/$kepler"
        check "no state left" no_state "$UID1"
        check "nothing more to do" [ -z "$(gc)" ]
        rm -rf "$STATE"/*
        check "an empty stateDir is fine" gc_out
        check "and needs nothing" [ ! -s "$OUT" ]
}

# --- --dry-run and --json ----------------------------------------------------

test_dry_run_json() {
        mount_emulator
        write_config
        local p1 p2 before
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        create c2 "$p2" "$UID2"
        stop "$p1"
        : >"$STATE/$UID2.members.tmp"
        before=$(cat "$STATE/$UID1.members")
        check "dry run" gc_out --dry-run
        check "dry run says it would drop" said "drop-member pod=$UID1 container=c1"
        check "dry run says it would remove" said "remove-group pod=$UID1"
        check "dry run says the temp file" said "remove-temp pod=$UID2"
        check "state unchanged" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "group still there" test -d "$G1"
        check "temp file still there" test -e "$STATE/$UID2.members.tmp"
        check "json dry run" gc_out --dry-run --json
        check "one JSON document" jqe '.dry_run == true and (.actions | length) == 4' "$OUT"
        check "json" gc_out --json
        check "valid JSON, not a dry run" jqe '.dry_run == false' "$OUT"
        check "json actions" [ "$(jq -r '[.actions[].action] | join(",")' "$OUT")" = \
                "drop-member,remove-group,remove-state,remove-temp" ]
        check "json fields" jqe ".actions[0] == {action: \"drop-member\", pod: \"$UID1\", container: \"c1\", pid: $p1, reason: \"gone\"}" "$OUT"
        check "json when nothing to do" gc_out --json
        check "empty actions" jqe '.actions == []' "$OUT"
        stop "$p2"; poststop c2 "$UID2"
}

# --- removeDelaySeconds: reuse within the delay, removal after it ------------

counter() { cat "$G1/mon_data/mon_L3_00/mbm_total_bytes"; }

test_remove_delay() {
        mount_emulator
        write_config "removeDelaySeconds: 30"
        local p1 p2 before
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        stop "$p1"
        check "last poststop" poststop c1 "$UID1"
        check "logged as lingering" grep -q "outcome=group lingers" "$LOG"
        check "group left in place" test -d "$G1"
        check "emptied_at recorded" jqe '.groups[0].emptied_at > 0 and (.members | length) == 0' \
                "$STATE/$UID1.members"
        check "gc keeps it" gc_out
        check "gc says it lingers" said "linger-group pod=$UID1 ctrl=/ remaining_s="
        before=$(counter)
        check "the pod's next container" create c2 "$p2" "$UID1"
        check "same group, counters continue" [ "$(counter)" -ge "$before" ]
        check "in the group" has_task "$G1" "$p2"
        check "emptied_at cleared" jqe '.groups[0] | has("emptied_at") | not' "$STATE/$UID1.members"
        stop "$p2"

        write_config "removeDelaySeconds: 1"
        check "gc starts the delay for a member gone without poststop" gc_out
        check "drop, then linger" [ "$(cut -d' ' -f1 "$OUT" | tr '\n' ' ')" = "drop-member linger-group " ]
        check "still there within the delay" test -d "$G1"
        sleep 2.1
        check "gc after the delay" gc_out
        check "removed after the delay" said "remove-group pod=$UID1"
        check "group gone" test ! -e "$G1"
        check "state gone" no_state "$UID1"
}

# --- a pod's group lives as long as kubelet's cgroup of the pod -------------

# Kubelet's cgroup of pod UID1 in KIND's hierarchy (v2: the unified one, v1:
# the pids controller's), as its cgroupfs driver lays it out below a
# --cgroup-root of the run's own (the private cgroup); "" when KIND is not
# mounted here.
pod_cgroup() { # KIND
        local root
        root=$(private_cgroup "$1") && echo "$root/kubelet/kubepods/burstable/pod$UID1"
}

# Its cgroups, leaves first, as kubelet removes a pod's.
remove_pod_cgroup() { # POD_CGROUP
        remove_cgroup_tree "$1"
}

# A crash-looping container keeps its pod's group (one RMID) while the pod's
# cgroup lives: populated by a sandbox that no hook sees (containerd), or
# empty for at most emptyPodLingerSeconds (CRI-O's dropped infra container);
# gc removes it once kubelet removed the pod cgroup. The pod's cgroup is the
# one createRuntime recorded (the parent of the container's), wherever it is.
test_pod_lifetime() { # KIND
        local kind=$1 pod p0 p1 p2 p3 hw
        pod=$(pod_cgroup "$kind")
        [ -n "$pod" ] || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator --debug
        write_config
        mkdir -p "$pod/sandbox" "$pod/c1"
        sleeper p0 p1 p2 p3
        echo "$p0" >"$pod/sandbox/cgroup.procs"
        echo "$p1" >"$pod/c1/cgroup.procs"
        create c1 "$p1" "$UID1"
        check "$kind: the pod's cgroup recorded" jqe ".pod_cgroup.path == \"${pod#"$(hierarchy "$kind")"}\"" \
                "$STATE/$UID1.members"
        hw=$(cat "$G1/mon_hw_id")
        stop "$p1"
        check "$kind: last poststop" poststop c1 "$UID1"
        check "$kind: lingers for the pod" grep -q "outcome=group lingers" "$LOG"
        check "$kind: group kept" test -d "$G1"
        "$HOOK" --config "$CONFIG" status >"$WORK/status.txt" 2>>"$LOG"
        check "$kind: status shows it lingering" grep -q "(lingers: no container)" "$WORK/status.txt"
        "$HOOK" --config "$CONFIG" status --json >"$WORK/status.json" 2>>"$LOG"
        check "$kind: so does its JSON" jqe '.pods[0].groups[0].lingering' "$WORK/status.json"
        check "$kind: gc keeps it" gc_out
        check "$kind: and says why" said "linger-group pod=$UID1 ctrl=/ reason=\"pod cgroup\""
        echo "$p2" >"$pod/c1/cgroup.procs"
        check "$kind: the restarted container" create c1b "$p2" "$UID1"
        check "$kind: same group, same RMID" [ "$(cat "$G1/mon_hw_id")" = "$hw" ]
        check "$kind: taken back" jqe '.groups[0] | has("emptied_at") | not' "$STATE/$UID1.members"
        stop "$p2"
        check "$kind: poststop again" poststop c1b "$UID1"
        stop "$p0" # no process left in the pod's cgroup
        check "$kind: gc within emptyPodLingerSeconds" gc_out
        check "$kind: still kept" said "linger-group pod=$UID1 ctrl=/ reason=\"pod cgroup\""
        echo "$p3" >"$pod/c1/cgroup.procs"
        check "$kind: and taken back" create c1c "$p3" "$UID1"
        check "$kind: still the same RMID" [ "$(cat "$G1/mon_hw_id")" = "$hw" ]
        stop "$p3"
        poststop c1c "$UID1"
        write_config "emptyPodLingerSeconds: 0"
        check "$kind: gc once an empty pod may not linger" gc_out
        check "$kind: removed" said "remove-group pod=$UID1 ctrl=/"
        check "$kind: gone" test ! -e "$G1"

        write_config
        sleeper p1
        echo "$p1" >"$pod/c1/cgroup.procs"
        create c2 "$p1" "$UID1"
        stop "$p1"
        poststop c2 "$UID1"
        check "$kind: lingers again" test -d "$G1"
        remove_pod_cgroup "$pod"
        check "$kind: gc after kubelet removed the pod's cgroup" gc_out
        check "$kind: removed with the pod" said "remove-group pod=$UID1 ctrl=/"
        check "$kind: no state left" no_state "$UID1"
}
test_pod_lifetime_v2() { test_pod_lifetime v2; }
test_pod_lifetime_v1() { test_pod_lifetime v1; }

# CRI-O runs poststop at RemoveContainer, not StopContainer: a restarted
# container's createRuntime comes before its old instance's poststop, and
# all of a pod's poststops may come after kubelet removed the pod's cgroup.
# A pod of one container beside its pause (which CRI-O runs without hooks).
# First the old instance still recorded when the restart comes; then one
# that gc dropped before, its group lingering for the pod. Each late
# poststop leaves the group to the restart; once the pod is gone, the late
# poststop leaves nothing.
test_late_poststop() { # KIND
        local kind=$1 pod p0 p1 p2 p3 hw
        pod=$(pod_cgroup "$kind")
        [ -n "$pod" ] || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator --debug # mon_hw_id: the RMID
        write_config
        mkdir -p "$pod/pause" "$pod/c1a" "$pod/c1b" "$pod/c1c"
        sleeper p0 p1 p2 p3
        echo "$p0" >"$pod/pause/cgroup.procs"
        echo "$p1" >"$pod/c1a/cgroup.procs"
        create c1a "$p1" "$UID1"
        hw=$(cat "$G1/mon_hw_id")
        stop "$p1" # the first instance exits; its poststop waits for RemoveContainer
        echo "$p2" >"$pod/c1b/cgroup.procs"
        check "$kind: the restart's createRuntime first" create c1b "$p2" "$UID1"
        check "$kind: the old instance's poststop after it" poststop c1a "$UID1"
        check "$kind: the group stays, the same RMID" [ "$(cat "$G1/mon_hw_id")" = "${hw:-none}" ]
        check "$kind: the restart in it" has_task "$G1" "$p2"
        check "$kind: recorded: the restart" [ "$(member_ids "$UID1")" = "c1b " ]

        stop "$p2" # the second instance exits; gc runs before the next restart
        check "$kind: gc meanwhile" gc_out
        check "$kind: ... drops the old instance" said "drop-member pod=$UID1 container=c1b"
        check "$kind: ... the group lingers for the pod" said "linger-group pod=$UID1 ctrl=/ reason=\"pod cgroup\""
        echo "$p3" >"$pod/c1c/cgroup.procs"
        check "$kind: the next restart's createRuntime" create c1c "$p3" "$UID1"
        check "$kind: the late poststop after it" poststop c1b "$UID1"
        check "$kind: the group still stays, the same RMID" [ "$(cat "$G1/mon_hw_id")" = "${hw:-none}" ]
        check "$kind: the last restart in it" has_task "$G1" "$p3"
        check "$kind: gc" gc_out
        check "$kind: ... removes nothing" not said "remove-group"
        rmdir "$pod/c1a" "$pod/c1b"

        # The pod ends: its processes stop and kubelet removes its cgroup; then the poststop.
        stop "$p3"; stop "$p0"
        remove_pod_cgroup "$pod"
        check "$kind: poststop after the pod's cgroup went" poststop c1c "$UID1"
        check "$kind: the group is gone" test ! -e "$G1"
        check "$kind: and the pod's state" no_state "$UID1"
        check "$kind: gc finds nothing to do" [ -z "$(gc)" ]
}
test_late_poststop_v2() { test_late_poststop v2; }
test_late_poststop_v1() { test_late_poststop v1; }

# A pod cgroup that cannot be trusted counts as gone, said in one line. The
# hook runs in a mount namespace where kubepods/ is a tmpfs laid out as
# $WORK/layout: a symlink on the way, a cgroup.events that does not parse.
test_pod_cgroup_untrusted() {
        local hier real=$HOOK p1 what
        hier=$(hierarchy v2)
        [ -n "$hier" ] || { echo "no cgroup v2 hierarchy mounted: nothing to test"; return; }
        mkdir -p "$hier/kubepods" "$WORK/layout" "$WORK/elsewhere/pod$UID1"
        echo "populated 1" >"$WORK/elsewhere/pod$UID1/cgroup.events"
        printf '%s\n' '#!/bin/sh' \
                "exec unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs \"\$0\" &&" \
                "        cp -a \"$WORK/layout/.\" \"\$0/\" && exec \"$real\" \"\$@\"' \"$hier/kubepods\" \"\$@\"" \
                >"$WORK/hook-in-ns"
        chmod +x "$WORK/hook-in-ns"
        HOOK=$WORK/hook-in-ns
        mount_emulator
        write_config
        for what in symlink events; do
                rm -rf "${WORK:?}/layout" && mkdir "$WORK/layout"
                if [ "$what" = symlink ]; then
                        ln -s "$WORK/elsewhere" "$WORK/layout/burstable"
                else
                        mkdir "$WORK/layout/pod$UID1"
                        echo "populated maybe" >"$WORK/layout/pod$UID1/cgroup.events"
                fi
                : >"$LOG"
                sleeper p1
                create c1 "$p1" "$UID1"
                stop "$p1"
                check "$what: poststop" poststop c1 "$UID1"
                check "$what: one line about it" [ "$(grep -c \
                        "cannot tell from cgroup /kubepods/.*pod$UID1 whether pod $UID1 lives" "$LOG")" -eq 1 ]
                check "$what: the group goes, as for any pod" test ! -e "$G1"
        done
        HOOK=$real
        rmdir "$hier/kubepods" 2>/dev/null
        true
}

# --- assignable bandwidth counters (ABMC) -------------------------------------

UID3=$(new_uid 3)
assignments() { tr '\n' ' ' <"$MNT/mon_groups/$1/mbm_L3_assignments"; }
outcomes() { cat "$STATE/outcome.bandwidth.$1" 2>/dev/null | wc -c; }

# 4 counters in the domain, the default group holding 2: the first pod's
# group gets both events, the next ones none, each container monitored all
# the same; mbmEvents [mbm_total_bytes] gives twice as many groups
# bandwidth; a pod's end frees counters that one gc pass hands to the pod
# that has waited longest.
test_abmc() {
        local p1 p2 p3
        mount_emulator --mbm-counters 4
        write_config
        sleeper p1 p2
        sleep 0.05 # a later start time (clock ticks): the younger pod
        sleeper p3
        create c1 "$p1" "$UID1"
        create c2 "$p2" "$UID2"
        create c3 "$p3" "$UID3"
        check "abmc: the first group counts both events" \
                [ "$(assignments "$UID1")" = "mbm_total_bytes:0=e mbm_local_bytes:0=e " ]
        check "abmc: the next ones none" \
                [ "$(assignments "$UID2")" = "mbm_total_bytes:0=_ mbm_local_bytes:0=_ " ]
        check "abmc: counted" [ "$(outcomes full)" -eq 1 ] && [ "$(outcomes none)" -eq 2 ]
        check "abmc: said what is missing" \
                grep -q "pod $UID2 .* counts no bandwidth: no hardware counter was left for mbm_total_bytes in domain 0, mbm_local_bytes in domain 0" "$LOG"
        check "abmc: every container monitored" \
                jqe '[.members[].monitored] == [true]' "$STATE/$UID3.members"
        check "abmc: Unassigned never a 0 baseline" \
                jqe '.groups[0] | has("baseline") | not' "$STATE/$UID2.members"

        stop "$p1"
        check "abmc: gc after the first pod's end" gc_out
        check "abmc: its group removed" said "remove-group pod=$UID1"
        check "abmc: its counters to the pod that waited longest" \
                said "assign-counter pod=$UID2 ctrl=/ event=mbm_total_bytes domain=0"
        check "abmc: both of them" \
                [ "$(assignments "$UID2")" = "mbm_total_bytes:0=e mbm_local_bytes:0=e " ]
        check "abmc: its counters count from zero" \
                jqe '.groups[0].baseline["mon_L3_00/mbm_total_bytes"] == "0"' "$STATE/$UID2.members"
        check "abmc: none for the last one yet" \
                [ "$(assignments "$UID3")" = "mbm_total_bytes:0=_ mbm_local_bytes:0=_ " ]
        "$HOOK" --config "$CONFIG" status >"$WORK/status.txt" 2>>"$LOG"
        check "abmc: status shows the budget" \
                grep -q "bandwidth counters (mbm_event mode): domain 0 0 of 4 free" "$WORK/status.txt"
        check "abmc: and the starved group" grep -q "(bandwidth: none)" "$WORK/status.txt"
        "$HOOK" --config "$CONFIG" status --json >"$WORK/status.json" 2>>"$LOG"
        check "abmc: JSON" jqe --arg u "$UID3" '(.pods[] | select(.uid == $u) | .groups[0].bandwidth)
                == "none" and .node.mbm_counters == [{"domain": 0, "total": 4, "available": 0}]' \
                "$WORK/status.json"
        "$HOOK" --config "$CONFIG" status --prometheus >"$WORK/status.prom" 2>>"$LOG"
        check "abmc: Prometheus" grep -q "^resctrl_pod_bandwidth_counters_missing{pod_uid=\"$UID3\".*} 2$" \
                "$WORK/status.prom"
        check "abmc: promtool check metrics" promtool check metrics <"$WORK/status.prom"
        "$HOOK" --config "$CONFIG" check >"$WORK/check.txt" 2>>"$LOG"
        check "abmc: check warns that groups wait with no counter free" \
                grep -q "^warn  counters .*domain 0 0 of 4 free; 1 of 2 monitoring groups lack" \
                "$WORK/check.txt"
        check "abmc: a second pass changes nothing" [ -z "$(gc)" ]
        stop "$p2"; stop "$p3"
        gc >/dev/null

        mount_emulator --mbm-counters 4
        write_config "mbmEvents: [mbm_total_bytes]"
        sleeper p1 p2 p3
        create c1 "$p1" "$UID1"
        create c2 "$p2" "$UID2"
        create c3 "$p3" "$UID3"
        check "abmc total only: the first group gave up mbm_local_bytes" \
                [ "$(assignments "$UID1")" = "mbm_total_bytes:0=e mbm_local_bytes:0=_ " ]
        check "abmc total only: so the second one counts too" \
                [ "$(assignments "$UID2")" = "mbm_total_bytes:0=e mbm_local_bytes:0=_ " ]
        check "abmc total only: two full, one none" \
                [ "$(outcomes full)" -eq 2 ] && [ "$(outcomes none)" -eq 1 ]
        check "abmc: the mode never written" [ "$(head -n 1 "$MNT/info/L3_MON/mbm_assign_mode")" = "[mbm_event]" ]
        stop "$p1"; stop "$p2"; stop "$p3"
        gc >/dev/null
        check "abmc: nothing left" no_state "$UID1" && no_state "$UID2" && no_state "$UID3"
}

# Arm MPAM limits monitoring groups per control group: ENOSPC in one while
# the node has RMIDs for others is said as such, not as the node's RMIDs.
test_ctrl_group_full() {
        local p1 p2
        mount_emulator --ctrl-groups gold --mon-groups-per-ctrl 1
        write_config
        bundle "$WORK/gold" '{"closID": "gold"}'
        sleeper p1 p2
        echo "$p1" >"$MNT/gold/tasks"
        echo "$p2" >"$MNT/gold/tasks"
        create c1 "$p1" "$UID1" "$WORK/gold"
        create c2 "$p2" "$UID2" "$WORK/gold"
        check "ctrl full: the first pod's group in gold" [ -d "$MNT/gold/mon_groups/$UID1" ]
        check "ctrl full: said of the control group" \
                grep -q "control group 'gold' is full (Out of RMIDs): 1 of 1 monitoring groups in use, 1 of them pods' groups .*; the node has room, free monitoring groups in other control groups (the root control group 1)" "$LOG"
        check "ctrl full: recorded unmonitored" \
                jqe '.members[0].monitored == false' "$STATE/$UID2.members"
        stop "$p1"; stop "$p2"
        gc >/dev/null
}

# Arm MPAM's budget (rmidBudget: ctrlGroup, as "auto" is on arm64): check
# and status give each control group's, and it is what mkdir allows in each;
# the node's rule ("auto" here) says it is the node's.
test_budget_per_ctrl() {
        local out ctrl n
        mount_emulator --ctrl-groups gold --mon-groups-per-ctrl 3 --num-closids 4
        write_config "rmidBudget: ctrlGroup"
        out=$("$HOOK" --config "$CONFIG" check --only rmids 2>>"$LOG")
        check "budget: check says 3 a control group, and the rule" \
                grep -q "ok *rmids *3 monitoring groups in each control group at most (per control group" <<<"$out"
        for ctrl in "" gold/; do
                n=0
                while mkdir "$MNT/${ctrl}mon_groups/b$n" 2>/dev/null; do n=$((n + 1)); done
                check "budget: mkdir allows 3 in ${ctrl:-the root}" [ "$n" = 3 ]
        done
        out=$("$HOOK" --config "$CONFIG" check --only rmids 2>>"$LOG")
        check "budget: check warns, naming the full ones" \
                grep -q "warn *rmids .*; the root control group 3 in use (full: 0 pods' groups, 3 others), gold 3 in use (full: 0 pods' groups, 3 others)" <<<"$out"
        "$HOOK" --config "$CONFIG" status --json >"$WORK/status.json" 2>>"$LOG"
        check "budget: status JSON says the rule and each control group's use" \
                jqe '.node.rmid_budget == "ctrl_group" and .node.mon_groups_per_ctrl == 3 and .node.rmids_total == null and
                     (.node.ctrl_groups | map("\(.name)=\(.mon_groups),\(.pod_groups),\(.full)") | sort) == ["/=3,0,true", "gold=3,0,true"]' "$WORK/status.json"
        check "budget: status table" grep -q "^node: 3 monitoring groups in each control group .*: the root control group 3 in use (full: 0 pods' groups, 3 others), gold 3 in use (full: 0 pods' groups, 3 others);" \
                <<<"$("$HOOK" --config "$CONFIG" status 2>>"$LOG")"
        check "budget: prometheus" grep -qx "resctrl_ctrl_group_mon_groups_capacity 3" \
                <<<"$("$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG")"
        write_config
        check "budget: the node's rule on x86" grep -q "rmids *[0-9]* groups at most (for the node" \
                <<<"$("$HOOK" --config "$CONFIG" check --only rmids 2>>"$LOG")"
        check "budget: status JSON, the node's" jqe '.node.rmid_budget == "node" and .node.ctrl_groups == null' \
                <<<"$("$HOOK" --config "$CONFIG" status --json 2>>"$LOG")"
        rmdir "$MNT"/mon_groups/b* "$MNT"/gold/mon_groups/b*
}

# SNC: a domain's files already sum its nodes' mon_sub_L3_* subdirectories;
# status reads the domain's alone, never adding the nodes on top.
test_snc() {
        local p1
        mount_emulator --snc 2
        write_config
        sleeper p1
        create c1 "$p1" "$UID1"
        "$HOOK" --config "$CONFIG" status --json >"$WORK/status.json" 2>>"$LOG"
        check "snc: only the domain's files" \
                jqe '[.pods[0].groups[0].counters[].domain] | unique == ["mon_L3_00"]' "$WORK/status.json"
        check "snc: occupancy as the domain says" \
                jqe --argjson v "$(cat "$G1/mon_data/mon_L3_00/llc_occupancy")" \
                '.pods[0].groups[0].counters[] | select(.name == "llc_occupancy") | (.value | tostring) == ($v | tostring)' \
                "$WORK/status.json"
        check "snc: which the nodes' sum to" [ $(( $(cat "$G1/mon_data/mon_L3_00/mon_sub_L3_00/llc_occupancy") + \
                $(cat "$G1/mon_data/mon_L3_00/mon_sub_L3_01/llc_occupancy") )) -eq \
                "$(cat "$G1/mon_data/mon_L3_00/llc_occupancy")" ]
        stop "$p1"
        gc >/dev/null
}

# Each pass (not a dry run) leaves its time, for an alert on gc not running.
test_last_pass() {
        local t
        mount_emulator
        write_config
        gc_last() { "$HOOK" --config "$CONFIG" status --json 2>>"$LOG" | jq '.node.gc_last_pass'; }
        check "last pass: none yet" [ "$(gc_last)" = null ]
        gc --dry-run >/dev/null
        check "last pass: a dry run leaves none" [ "$(gc_last)" = null ]
        gc >/dev/null
        t=$(gc_last)
        check "last pass: now" [ "$t" -le "$(date +%s)" ] && [ "$t" -ge $(($(date +%s) - 5)) ]
        check "last pass: exported" grep -q "^resctrl_gc_last_pass_timestamp_seconds $t$" \
                <("$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG")
}

# --- state of another pid namespace ------------------------------------------

test_pid_namespace() {
        mount_emulator
        write_config
        local p1 before rc
        sleeper p1
        create c1 "$p1" "$UID1"
        before=$(cat "$STATE/$UID1.members")
        unshare -p -f --mount-proc "$HOOK" --config "$CONFIG" gc >"$OUT" 2>>"$LOG"
        rc=$?
        check "refused with exit 1" [ "$rc" -eq 1 ]
        check "said why" grep -q "pid namespace.*refusing" "$LOG"
        check "state untouched" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "group untouched" has_task "$G1" "$p1"
        check "in our namespace it runs" gc_out
        stop "$p1"; poststop c1 "$UID1"
}

# A member file of another pid namespace (a runtime in a container sharing
# /run) sorting first: gc skips that pod, says why, and cleans the pods
# after it; a createRuntime here does not relabel that pod's members; with
# only such state left, each pass refuses but gc --interval keeps running.
test_foreign_pid_ns() {
        mount_emulator
        write_config
        local pf p2 p3 before loop
        sleeper pf p2 p3
        create c1 "$pf" "$UID1"
        create c2 "$p2" "$UID2"
        jq -c '.pid_ns += 1' "$STATE/$UID1.members" >"$WORK/foreign" &&
                cat "$WORK/foreign" >"$STATE/$UID1.members"
        before=$(cat "$STATE/$UID1.members")
        stop "$p2" # no poststop: gc's to clean
        check "foreign first: gc runs" gc_out
        check "foreign first: skipped, saying why" said "skip-pod pod=$UID1 reason=\"another pid namespace\""
        check "foreign first: logged" grep -q "state of pod $UID1 was written in pid namespace" "$LOG"
        check "foreign first: its state untouched" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "foreign first: its group untouched" has_task "$G1" "$pf"
        check "foreign first: the pod after it cleaned" said "remove-group pod=$UID2"
        check "foreign first: its state gone" no_state "$UID2"
        create c3 "$p3" "$UID1"
        check "createRuntime here: not recorded, saying why" grep -q \
                "createRuntime c3: state of pod $UID1 was written in pid namespace .*; not recorded" "$LOG"
        check "createRuntime here: no relabelling" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "createRuntime here: nothing moved" not has_task "$G1" "$p3"
        write_config "failurePolicy: fail"
        check "createRuntime here, failurePolicy fail: the container starts" create c3 "$p3" "$UID1"
        write_config
        # Only the other namespace's pod is left: a gc outside the initial
        # pid namespace (where it may be gc that runs in the wrong one)
        # refuses each pass, and says so, but gc --interval waits for pods
        # of its own. (In the initial one such a pod can only be a nested
        # runtime's: tests/integration/test_foreign.sh.)
        : >"$LOG"
        unshare -p -f --kill-child --mount-proc "$HOOK" --config "$CONFIG" gc --interval 1 \
                >/dev/null 2>>"$LOG" &
        loop=$!
        check "only foreign state: each pass refuses, saying why" wait_for "$WAIT_DAEMON" "two passes" \
                logged_at_least 2 "the state of every pod here was written in another pid namespace"
        check "only foreign state: gc --interval keeps running" kill -0 "$loop"
        # unshare --fork ignores SIGTERM; its SIGKILL takes gc with it (--kill-child).
        kill -KILL "$loop"
        wait "$loop" 2>/dev/null
        jq -c '.pid_ns -= 1' "$STATE/$UID1.members" >"$WORK/foreign" &&
                cat "$WORK/foreign" >"$STATE/$UID1.members"
        stop "$pf"
        stop "$p3"
        poststop c1 "$UID1"
        check "nothing left" no_state "$UID1"
}

# The same pod with no container left, its group lingering (a crash-looping
# pod whose sandbox no hook sees), its pod cgroup recorded in the other
# runtime's cgroup namespace, so not seen here: gc leaves group and state
# alone however short removeDelaySeconds is, and a createRuntime here
# relabels nothing.
test_foreign_lingering() {
        mount_emulator
        write_config "removeDelaySeconds: 3600"
        local p1 p2 before
        sleeper p1 p2
        create c1 "$p1" "$UID1"
        stop "$p1"
        poststop c1 "$UID1"
        check "foreign, lingering: set up" jqe '(.members | length) == 0' "$STATE/$UID1.members"
        jq -c '.pid_ns += 1 | .pod_cgroup = {"hierarchy": "unified",
                "path": "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod'"${UID1//-/_}"'.slice"}' \
                "$STATE/$UID1.members" >"$WORK/foreign" && cat "$WORK/foreign" >"$STATE/$UID1.members"
        before=$(cat "$STATE/$UID1.members")
        write_config "removeDelaySeconds: 0"
        check "foreign, lingering: gc runs" gc_out
        check "foreign, lingering: skipped, saying why" said "skip-pod pod=$UID1 reason=\"another pid namespace\""
        check "foreign, lingering: no refusal" not grep -q "refusing" "$LOG"
        check "foreign, lingering: its group stays" test -d "$G1"
        check "foreign, lingering: its state untouched" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        create c2 "$p2" "$UID1"
        check "foreign, lingering: createRuntime here not recorded" grep -q \
                "createRuntime c2: state of pod $UID1 was written in pid namespace .*; not recorded" "$LOG"
        check "foreign, lingering: no relabelling" [ "$before" = "$(cat "$STATE/$UID1.members")" ]
        check "foreign, lingering: nothing moved" not has_task "$G1" "$p2"
        stop "$p2"
        jq -c '.pid_ns -= 1 | del(.pod_cgroup)' "$STATE/$UID1.members" >"$WORK/foreign" &&
                cat "$WORK/foreign" >"$STATE/$UID1.members"
        check "ours again: gc removes it" gc_out
        check "nothing left" no_state "$UID1"
}

# --- invalid state, usage, --interval ----------------------------------------

test_misc() {
        mount_emulator
        write_config
        local p1 loop
        mkdir -p -m 0700 "$STATE"
        echo '{"version":1,' >"$STATE/$UID2.members"
        check "invalid state is skipped, gc still succeeds" gc_out
        check "skip said" said "skip-pod pod=$UID2 reason=\"invalid state\""
        check "invalid state left for a human" test -s "$STATE/$UID2.members"
        rm -f "$STATE/$UID2.members" "$STATE/$UID2.lock"
        gc bogus
        check "usage error exits 2" [ $? -eq 2 ]
        gc --interval 0
        check "bad interval exits 2" [ $? -eq 2 ]
        resctrl_path=$WORK/nowhere write_config
        gc
        check "no resctrl: exit 1" [ $? -eq 1 ]
        write_config

        sleeper p1
        create c1 "$p1" "$UID1"
        "$HOOK" --config "$CONFIG" gc --interval 1 >"$OUT" 2>>"$LOG" & # the hook itself: kill stops it
        loop=$!
        stop "$p1"
        # Its report is written at the end of the pass: the kill waits for it.
        check "the loop said it removed the group" wait_for "$WAIT_DAEMON" "the loop's remove-group line" \
                said "remove-group pod=$UID1"
        check "the loop removed the group" test ! -e "$G1"
        kill "$loop"; wait "$loop" 2>/dev/null
}

threads_at_least() { [ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -ge "$2" ]; } # PID N
logged_at_least() { [ "$(grep -c -- "$2" "$LOG")" -ge "$1" ]; } # N PATTERN

# gc --interval on a node whose resctrl is not mounted yet: each pass says it
# cannot run and the loop goes on; once resctrl is there, it does its work.
test_interval_waits() {
        local p1 loop passes
        mount_emulator
        write_config
        sleeper p1
        create c1 "$p1" "$UID1"
        stop "$p1"
        check "resctrl unmounted" unmount_emulator
        : >"$LOG"
        "$HOOK" --config "$CONFIG" gc --interval 1 >"$OUT" 2>>"$LOG" & # the hook itself: kill stops it
        loop=$!
        check "no resctrl: passes" wait_for "$WAIT_DAEMON" "two passes" \
                logged_at_least 2 "resctrl at '$MNT' has no monitoring"
        check "no resctrl: the loop still runs" kill -0 "$loop"
        passes=$(grep -c "resctrl at '$MNT' has no monitoring" "$LOG")
        check "no resctrl: a pass every second, each said once ($passes)" \
                [ "$passes" -ge 2 -a "$passes" -eq "$(wc -l <"$LOG")" ]
        # The loop stopped while resctrl comes back with what the first mount
        # held: a pass between the mount and the mkdir would drop the state.
        kill -STOP "$loop"
        "$RESCTRLFS" "$MNT" || { echo "cannot mount resctrlfs" >&2; exit 1; }
        mkdir "$MNT/mon_groups/$UID1"
        kill -CONT "$loop"
        check "resctrl back: the loop removed the group" wait_for "$WAIT_DAEMON" "$G1 removed" [ ! -e "$G1" ]
        check "resctrl back: no state left" wait_for "$WAIT_PROCESS" "state of $UID1 removed" no_state "$UID1"
        kill "$loop"; wait "$loop" 2>/dev/null
}

# gc finishes a createRuntime that was killed after recording its intent and
# before its mkdir: the group is made, the live container put in and recorded
# as monitored, and the log says what happened.
test_interrupted_create() {
        mount_emulator
        write_config
        local p1
        sleeper p1
        { strace -f -qq -o /dev/null -e inject=mkdirat:signal=KILL:when=1 \
                "$HOOK" --config "$CONFIG" createRuntime <<<"$(state c1 "$p1" "$UID1")" \
                2>>"$LOG"; } 2>/dev/null
        check "killed run: no group" test ! -e "$G1"
        : >"$LOG"
        check "gc" gc_out
        check "said made, and why" said "recreate-group pod=$UID1 ctrl=/ reason=\"createRuntime did not finish\""
        check "said completed" said "complete-member pod=$UID1 container=c1 pid=$p1"
        check "c1 in the group" has_task "$G1" "$p1"
        check "c1 recorded as monitored" jqe '[.members[].monitored] == [true]' "$STATE/$UID1.members"
        check "no blame on someone else" not grep -q "removed by someone else" "$LOG"
        check "a second gc finds nothing" [ -z "$(gc)" ]
        stop "$p1"
        gc >/dev/null
        check "removed at the end" test ! -e "$G1"
}

not() { ! "$@"; }

# A member file a newer version wrote, with keys this one does not know: read,
# cleaned up as usual, and not skipped (a rolling upgrade, a rollback).
test_newer_state() {
        mount_emulator
        write_config
        local p1
        sleeper p1
        create c1 "$p1" "$UID1"
        jq -c '.future = {"a": 1} | .groups[0].bandwidth = "partial" |
                .members[0].sandbox = "/kubepods/pod1/c1"' "$STATE/$UID1.members" >"$WORK/m" &&
                cat "$WORK/m" >"$STATE/$UID1.members"
        check "newer state: gc does not skip it" gc_out
        check "newer state: nothing to do while it runs" not said "skip-pod"
        stop "$p1"
        check "newer state: gc after the member died" gc_out
        check "newer state: its group removed" said "remove-group pod=$UID1 ctrl=/"
        check "newer state: no state left" no_state "$UID1"
}

# The threads a runtime puts in a container's cgroup behind the hook's back
# (runc exec, kubectl exec): gc joins them all to the pod's group, never one
# in another control group, and puts the whole cgroup back into a group made
# again. KIND v2 uses the unified hierarchy, v1 the pids controller's.
test_join_cgroup() { # KIND
        local kind=$1 root cg p1 p2 p3 p4
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        cg=$root/c1
        mount_emulator --ctrl-groups gold
        write_config
        mkdir "$cg"
        sleeper p1 p2 p3 p4
        for p in "$p1" "$p2" "$p3" "$p4"; do echo "$p" >"$cg/cgroup.procs"; done
        echo "$p4" >"$MNT/gold/tasks" # another control group: not the hook's to move
        create c1 "$p1" "$UID1"
        check "$kind: createRuntime moves the init only" [ "$(tasks_of "$G1")" = "$p1 " ]
        check "$kind: gc" gc_out
        check "$kind: said how many joined, and left elsewhere" \
                said "join-tasks pod=$UID1 container=c1 count=2 elsewhere=1"
        check "$kind: every thread of the cgroup in the group" \
                [ "$(tasks_of "$G1")" = "$(printf '%s\n' "$p1" "$p2" "$p3" | sort -n | tr '\n' ' ')" ]
        check "$kind: the one in another control group left there" has_task "$MNT/gold" "$p4"
        local ino
        ino=$(stat -c %i "$STATE/$UID1.members")
        check "$kind: a second pass writes nothing" [ -z "$(gc)" ]
        check "$kind: not even the state file" [ "$(stat -c %i "$STATE/$UID1.members")" = "$ino" ]
        rmdir "$G1"
        check "$kind: gc after the group was removed" gc_out
        check "$kind: made again" said "recreate-group pod=$UID1 ctrl=/"
        check "$kind: the whole cgroup back in one pass" [ "$(tasks_of "$G1" | wc -w)" -eq 3 ]
        stop "$p1"; stop "$p2"; stop "$p3"; stop "$p4"
        gc >/dev/null
        check "$kind: removed at the end" test ! -e "$G1"
        rmdir "$cg"
}
test_join_cgroup_v2() { test_join_cgroup v2; }
test_join_cgroup_v1() { test_join_cgroup v1; }

# --- containers waiting for an RMID ------------------------------------------

# Two pods wait for the one RMID a third holds; once it ends, the first gc
# pass brings in the one whose container started first, and only it: the
# other waits for the next RMID. status, check and the metrics say who waits.
test_waiting_enospc() {
        mount_emulator --num-rmids 2   # RMID 0 is the root's: one group fits
        write_config
        local p1 p2 p3 uid3
        sleeper p1 p2
        sleep 0.05   # a later start time, in clock ticks
        sleeper p3
        create a1 "$p1" "$UID1"
        uid3=$(new_uid 1) # before UID2 by UID, after it by age
        create c1 "$p3" "$uid3"   # p3 started after p2: the younger of the waiting
        create b1 "$p2" "$UID2"
        check "both wait" jqe '.members[0].reason | startswith("out of RMIDs")' \
                "$STATE/$UID2.members" "$STATE/$uid3.members"
        check "a pass without a free RMID changes nothing" gc_out
        check "... and brings none in" not said "bring-in-member"
        "$HOOK" --config "$CONFIG" status >"$WORK/status" 2>>"$LOG"
        check "status says how long it waited" grep -q "b1 .*waiting for an RMID for [0-9]* s" "$WORK/status"
        "$HOOK" --config "$CONFIG" status --prometheus >"$WORK/prom" 2>>"$LOG"
        check "a waiting-seconds series a container" \
                [ "$(grep -c '^resctrl_container_waiting_seconds{' "$WORK/prom")" -eq 2 ]
        "$HOOK" --config "$CONFIG" check --only waiting >"$WORK/check" 2>>"$LOG"
        check "check counts who waits" grep -q "warn *waiting *2 containers" "$WORK/check"
        stop "$p1"; poststop a1 "$UID1"
        check "the first pass after the pod ended" gc_out
        check "brings in the older" said "bring-in-member pod=$UID2 container=b1"
        check "... into its own group" has_task "$MNT/mon_groups/$UID2" "$p2"
        check "... monitored" jqe '.members[0].monitored' "$STATE/$UID2.members"
        check "the younger still waits" jqe '.members[0].monitored | not' "$STATE/$uid3.members"
        check "no group for it" test ! -e "$MNT/mon_groups/$uid3"
        stop "$p2"; poststop b1 "$UID2"
        check "the next RMID" gc_out
        check "... goes to the younger" has_task "$MNT/mon_groups/$uid3" "$p3"
        "$HOOK" --config "$CONFIG" check --only waiting >"$WORK/check" 2>>"$LOG"
        check "check: nobody waits" grep -q "ok *waiting" "$WORK/check"
        stop "$p3"; gc >/dev/null
        check "nothing left" [ -z "$(ls "$MNT/mon_groups")" ]
}

# A waiting container whose pod's file records a group that is not there (a
# createRuntime killed after its mkdir failed, before it saved that; another
# manager's rmdir): it waits in line like any, the one that waited longest
# brought in first, and no pass makes it a group while no RMID is free.
test_waiting_stale_record() {
        mount_emulator --num-rmids 2   # RMID 0 is the root's: one group fits
        write_config
        local p1 p2 p3 uidb uidc
        sleeper p1 p3
        sleep 0.05   # a later start time, in clock ticks
        sleeper p2
        uidb=$(new_uid 1) uidc=$(new_uid e) # the younger sorts first
        create a1 "$p1" "$UID1"
        create c1 "$p3" "$uidc"
        create b1 "$p2" "$uidb"
        jq --slurpfile a "$STATE/$UID1.members" '.groups = $a[0].groups' "$STATE/$uidb.members" \
                >"$WORK/stale" && mv "$WORK/stale" "$STATE/$uidb.members"
        check "stale: a pass with no RMID free" gc_out
        check "stale: brings none in" not said "bring-in-member"
        stop "$p1"; poststop a1 "$UID1"
        check "stale: the first pass after the pod ended" gc_out
        check "stale: brings in the one that waited longest" has_task "$MNT/mon_groups/$uidc" "$p3"
        check "stale: the younger waits" test ! -e "$MNT/mon_groups/$uidb"
        check "stale: ... unmonitored" jqe '.members[0].monitored | not' "$STATE/$uidb.members"
        stop "$p3"; poststop c1 "$uidc"
        check "stale: the next RMID" gc_out
        check "stale: ... goes to the younger" has_task "$MNT/mon_groups/$uidb" "$p2"
        stop "$p2"; gc >/dev/null
        check "stale: nothing left" [ -z "$(ls "$MNT/mon_groups")" ]
}

# A container waiting while a sibling made the pod's group, which lingers
# once that sibling ended: the first gc pass puts it into that group, with
# no RMID free on the node, and the group lingers no more.
test_waiting_pod_group() {
        mount_emulator --num-rmids 2   # RMID 0 is the root's: one group fits
        write_config
        local p1 p2 p3
        sleeper p1 p2 p3
        create a1 "$p1" "$UID1"
        create b1 "$p2" "$UID2"
        check "it waits" grep -q 'out of RMIDs' "$STATE/$UID2.members"
        stop "$p1"; poststop a1 "$UID1"
        write_config "removeDelaySeconds: 600"
        check "a sibling makes the pod's group" create b2 "$p3" "$UID2"
        stop "$p3"; poststop b2 "$UID2"
        check "which lingers, holding the last RMID" test -d "$MNT/mon_groups/$UID2"
        check "gc" gc_out
        check "brings the waiting container in" said "bring-in-member pod=$UID2 container=b1"
        check "... into the pod's group" has_task "$MNT/mon_groups/$UID2" "$p2"
        check "... monitored" jqe '.members[0].monitored' "$STATE/$UID2.members"
        check "the group lingers no more" jqe '.groups[0] | has("emptied_at") | not' "$STATE/$UID2.members"
        stop "$p2"; poststop b1 "$UID2"
        write_config
        gc >/dev/null
}

# A container that found every free RMID in limbo (EBUSY) past its run's
# deadline: the first gc pass once limbo drained brings it in.
test_waiting_ebusy() {
        mount_emulator --num-rmids 2 --limbo-ms 2500
        write_config "lockTimeoutMs: 500"
        local p1 p2
        sleeper p1 p2
        create a1 "$p1" "$UID1"
        stop "$p1"; poststop a1 "$UID1"   # its RMID goes to limbo for 2.5 s
        create b1 "$p2" "$UID2"
        check "recorded as waiting out limbo" grep -q 'limbo' "$STATE/$UID2.members"
        sleep 2.5
        check "the first pass after limbo drained" gc_out
        check "brings it in" has_task "$MNT/mon_groups/$UID2" "$p2"
        check "... monitored" jqe '.members[0].monitored' "$STATE/$UID2.members"
        stop "$p2"; gc >/dev/null
}

# --- state of an earlier boot (a stateDir not on tmpfs) ----------------------

# Rewrites the pod's recorded boot as another's, as a reboot would leave it.
earlier_boot() { # UID
        jq -c '.boot_id = "00000000-0000-4000-8000-000000000001"' "$STATE/$1.members" >"$WORK/m" &&
                cat "$WORK/m" >"$STATE/$1.members"
}

test_earlier_boot() {
        mount_emulator
        write_config
        local p1 p2 p3
        sleeper p1 p2 p3
        create c1 "$p1" "$UID1"
        check "this boot recorded" jqe ".boot_id == \"$(cat /proc/sys/kernel/random/boot_id)\"" \
                "$STATE/$UID1.members"
        # After a reboot resctrl is empty; the pid and start time may match a process again.
        earlier_boot "$UID1"
        rmdir "$G1"
        check "gc" gc_out
        check "a live pid of an earlier boot is not this boot's: the state goes" \
                said "remove-state pod=$UID1"
        check "no state files" no_state "$UID1"
        check "logged" grep -q "pod $UID1 was written in an earlier boot" "$LOG"
        check "no group made for it" test ! -e "$G1"

        create c2 "$p2" "$UID2"
        earlier_boot "$UID2"
        rmdir "$MNT/mon_groups/$UID2"
        check "createRuntime in such a pod" create c3 "$p3" "$UID2"
        check "starts afresh: only its container" [ "$(member_ids "$UID2")" = "c3 " ]
        check "recorded in this boot" \
                jqe ".boot_id == \"$(cat /proc/sys/kernel/random/boot_id)\"" "$STATE/$UID2.members"
        check "in its group" has_task "$MNT/mon_groups/$UID2" "$p3"
        stop "$p1"; stop "$p2"; stop "$p3"
        gc >/dev/null
}

for t in ${TESTS:-test_dead_members test_group_with_tasks test_debris test_recreate \
        test_rejoin_deadline test_foreign_groups test_dry_run_json test_remove_delay test_pid_namespace test_foreign_pid_ns test_foreign_lingering test_misc \
        test_interval_waits test_interrupted_create test_join_cgroup_v2 test_join_cgroup_v1 test_newer_state \
        test_pod_lifetime_v2 test_pod_lifetime_v1 test_pod_cgroup_untrusted test_abmc \
        test_ctrl_group_full test_budget_per_ctrl test_snc test_last_pass test_waiting_enospc test_waiting_ebusy test_waiting_pod_group test_waiting_stale_record \
        test_earlier_boot test_late_poststop_v2 test_late_poststop_v1}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
