#!/bin/bash
# Arm MPAM and Intel AET as the kernel does them, on the resctrlfs emulator:
# a full control group (the root's as any) said as such; limbo on MPAM,
# where a PMG in limbo makes mkdir say ENOSPC, waited for at createRuntime
# and taken up by watch once it frees; AET counters Unavailable when a group
# is made, whose first value becomes their baseline.
#   test_arch.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" arch
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
log_level=debug

G1=$MNT/mon_groups/$UID1
G2=$MNT/mon_groups/$UID2
WOUT=$WORK/watch.out
WATCH=

jqe() { jq -e "$@" >/dev/null; }
not() { ! "$@"; }
in_group() { grep -qsx "$2" "$1/tasks"; } # GROUP PID: quiet while the group is not there
status() { "$HOOK" --config "$CONFIG" status "$@" 2>>"$LOG"; }

# A stand-in init that runs on CPU only, its pid in VAR.
pinned_sleeper() { # VAR CPU
        taskset -c "$2" sleep 1000 </dev/null >/dev/null 2>&1 &
        SLEEPERS+=("$!")
        printf -v "$1" %s "$!"
}

# Starts watch (its actions in $WOUT, its log in $LOG); returns once its
# first pass is written.
start_watch() { # INTERVAL
        rm -f "$STATE/watch.state"
        "$HOOK" --config "$CONFIG" watch --interval "$1" >"$WOUT" 2>>"$LOG" &
        WATCH=$!
        wait_for "$WAIT_DAEMON" "watch's first pass written" \
                jqe '.passes >= 1' "$STATE/watch.state"
}
stop_watch() { kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null; WATCH=; }

# --- MPAM: a full control group, the root's as any --------------------------

# The root control group full while another has room: the line names the
# root control group, what it holds and the room the node has elsewhere, as
# do check and status; the container waits unmonitored.
test_root_full() {
        local p1 p2 out
        mount_emulator --mon-groups-per-ctrl 2 --num-closids 4 --ctrl-groups gold
        write_config "rmidBudget: ctrlGroup"
        sleeper p1 p2
        mkdir "$MNT/mon_groups/another-managers"
        create c1 "$p1" "$UID1"
        check "root full: the first pod's group" has_task "$G1" "$p1"
        check "root full: createRuntime of the next pod" create c2 "$p2" "$UID2"
        check "root full: the line names the root control group as full" \
                grep -q "cannot create group for pod $UID2: the root control group is full (Out of RMIDs)" "$LOG"
        check "root full: what it holds" \
                grep -q "the root control group is full.*: 2 of 2 monitoring groups in use, 1 of them pods' groups" "$LOG"
        check "root full: and the node as having room" \
                grep -q "the root control group is full.*; the node has room, free monitoring groups in other control groups (gold 2), which a pod's group cannot use; container starts unmonitored" "$LOG"
        check "root full: no node-wide count of groups at most" not grep -q "groups at most" "$LOG"
        check "root full: the container waits" jqe '.members[0].reason | startswith("out of RMIDs (ENOSPC)")' "$STATE/$UID2.members"
        out=$("$HOOK" --config "$CONFIG" check --only rmids 2>>"$LOG")
        check "root full: check names it and what it holds" \
                grep -q "warn *rmids .*; the root control group 2 in use (full: 1 pod's group, 1 other), gold 0 in use" <<<"$out"
        check "root full: check's fix speaks of the default class" grep -q "the root control group: every pod of the default class" <<<"$out"
        check "root full: status names it" \
                grep -q "^node: 2 monitoring groups in each control group .*: the root control group 2 in use (full: 1 pod's group, 1 other), gold 0 in use;" \
                <<<"$(status)"
        check "root full: status JSON, what it holds" \
                jqe '.node.ctrl_groups | map(select(.name == "/")) == [{"name": "/", "mon_groups": 2, "pod_groups": 1, "full": true}]' \
                <<<"$(status --json)"
        stop "$p1"; stop "$p2"
        gc >/dev/null
}

# --- MPAM: limbo is ENOSPC ----------------------------------------------------

# A PMG of the control group in limbo after a removal there: createRuntime
# waits for it as for EBUSY, within its deadline.
test_limbo_waited() {
        local p1 p2
        mount_emulator --mon-groups-per-ctrl 1 --limbo-ms 600
        write_config "rmidBudget: ctrlGroup"
        sleeper p1 p2
        create a1 "$p1" "$UID1"
        stop "$p1"
        check "limbo: the last poststop removes the group" poststop a1 "$UID1"
        check "limbo: its removal marked" test -f "$STATE/freed.af63a24c860189fe"
        : >"$LOG"
        check "limbo: createRuntime while its PMG is in limbo" create b1 "$p2" "$UID2"
        check "limbo: ENOSPC waited out, the group made" has_task "$G2" "$p2"
        check "limbo: recorded monitored" jqe '.members[0].monitored' "$STATE/$UID2.members"
        stop "$p2"
        gc >/dev/null
}

# Limbo longer than createRuntime's wait: the container waits unmonitored,
# and watch, whose passes are an hour apart, brings it in once the PMG is
# free.
test_limbo_watch() {
        local p1 p2
        # Limbo outlasts createRuntime's wait (1.1 s) however late it starts
        # on a loaded machine, and ends within watch's 10 s.
        mount_emulator --mon-groups-per-ctrl 1 --limbo-ms 5000
        write_config "rmidBudget: ctrlGroup"
        check "limbo watch: watch starts" start_watch 3600
        sleeper p1 p2
        create a1 "$p1" "$UID1"
        stop "$p1"
        poststop a1 "$UID1"
        check "limbo watch: createRuntime while its PMG is in limbo" create b1 "$p2" "$UID2"
        check "limbo watch: said, with watch to bring it in" \
                grep -q "a group there was removed [0-9]* ms ago, its PMG in limbo .*: watch brings the container in once it is free" "$LOG"
        check "limbo watch: recorded waiting" jqe '.members[0].monitored | not' "$STATE/$UID2.members"
        check "limbo watch: in its group once the PMG is free" \
                wait_for "$WAIT_PROCESS" "b1 in its pod's group" in_group "$G2" "$p2"
        check "limbo watch: recorded monitored" \
                wait_for "$WAIT_PROCESS" "b1 recorded monitored" jqe '.members[0].monitored' "$STATE/$UID2.members"
        check "limbo watch: no pass but the first" jqe '.passes == 1' "$STATE/watch.state"
        stop_watch
        stop "$p2"
        gc >/dev/null
}

# Where RMIDs are the node's (x86): every free one in limbo past
# createRuntime's wait (EBUSY), the container waits unmonitored, and watch
# brings it in once one is free, whichever control group the removal was in.
test_limbo_watch_node() {
        local p1 p2
        # gold's own RMID and a1's group's: none left for b1 in the root.
        # Limbo outlasts createRuntime's wait (1.1 s) however late it starts
        # on a loaded machine, and ends within watch's 10 s.
        mount_emulator --num-rmids 3 --limbo-ms 5000 --ctrl-groups gold
        write_config
        bundle "$WORK/gold" '{"closID": "gold"}'
        check "node limbo watch: watch starts" start_watch 3600
        sleeper p1 p2
        echo "$p1" >"$MNT/gold/tasks"
        create a1 "$p1" "$UID1" "$WORK/gold"
        stop "$p1"
        poststop a1 "$UID1"
        check "node limbo watch: createRuntime while every free RMID is in limbo" create b1 "$p2" "$UID2"
        # Said by createRuntime: watch's tries rewrite the record meanwhile.
        check "node limbo watch: recorded waiting out limbo" \
                grep -q "createRuntime b1: cannot create group for pod $UID2 in the root control group: Device or resource busy" "$LOG"
        check "node limbo watch: in its group once the RMID is free" \
                wait_for "$WAIT_PROCESS" "b1 in its pod's group" in_group "$G2" "$p2"
        check "node limbo watch: no pass but the first" jqe '.passes == 1' "$STATE/watch.state"
        stop_watch
        stop "$p2"
        gc >/dev/null
}

# --- AET: Unavailable when the group is made ---------------------------------

# The pod's counters read Unavailable at creation (a new RMID has no data on
# any package): each one's first readable value becomes its baseline, taken
# under the pod's lock by the next gc pass or hook run of the pod; the delta
# starts then. A package the pod never ran on stays Unavailable, and waits.
test_aet_late_baseline() {
        local p0 p1 j=$WORK/status.json
        if [ "$(nproc)" -lt 2 ]; then
                echo "SKIP: one CPU, no second package"
                return
        fi
        mount_emulator --perf-pkg-domains 2 --perf-pkg-by-cpu
        write_config
        pinned_sleeper p0 0
        pinned_sleeper p1 1
        create c1 "$p0" "$UID1"
        check "aet: Unavailable at creation: no baseline, pending" \
                jqe '.groups[0] | ([.baseline | keys[] | select(startswith("mon_PERF_PKG"))] == []) and .baseline_pending ==
                        ["mon_PERF_PKG_00/activity", "mon_PERF_PKG_00/core_energy", "mon_PERF_PKG_01/activity", "mon_PERF_PKG_01/core_energy"]' \
                "$STATE/$UID1.members"
        prom_has_sample() { # DOMAIN
                "$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG" |
                        grep -q "^resctrl_pod_core_energy_joules_total{pod_uid=\"$UID1\".*domain=\"$1\"} "
        }
        reading() { jq -c --arg d "$1" '.pods[0].groups[0].counters[] | select(.domain == $d and .name == "core_energy") | [.state, .baseline, (.delta != null)]' "$j"; }
        status --json >"$j"
        check "aet: Unavailable on a package it never ran on" [ "$(reading mon_PERF_PKG_01)" = '["Unavailable",null,false]' ]
        check "aet: readable where it runs, no delta yet" [ "$(reading mon_PERF_PKG_00)" = '["ok",null,false]' ]
        # Its raw value now, then a delta near 0, would be a counter reset.
        check "aet: no Prometheus sample until its baseline is taken" not prom_has_sample mon_PERF_PKG_00
        gc >/dev/null
        check "aet: the first readable value becomes the baseline" \
                jqe '.groups[0] | [.baseline | keys[] | select(startswith("mon_PERF_PKG"))] == ["mon_PERF_PKG_00/activity", "mon_PERF_PKG_00/core_energy"] and
                        .baseline_pending == ["mon_PERF_PKG_01/activity", "mon_PERF_PKG_01/core_energy"]' \
                "$STATE/$UID1.members"
        status --json >"$j"
        check "aet: the delta starts then" \
                jqe '[.pods[0].groups[0].counters[] | select(.domain == "mon_PERF_PKG_00" and .name == "core_energy")][0] |
                        .baseline > 0 and .delta >= 0 and (.value - .baseline - .delta | fabs) < 0.000001' "$j"
        check "aet: a Prometheus sample once it is" prom_has_sample mon_PERF_PKG_00
        "$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG" |
                sed -n "s/^resctrl_pod_core_energy_joules_total{pod_uid=\"$UID1\".*domain=\"mon_PERF_PKG_00\"} //p" >"$WORK/sample"
        # Read after the sample: the count since the baseline then is at least the sample.
        check "aet: Prometheus gives the count since that baseline" \
                awk -v raw="$(cat "$G1/mon_data/mon_PERF_PKG_00/core_energy")" \
                        -v base="$(jq -r '.groups[0].baseline["mon_PERF_PKG_00/core_energy"]' "$STATE/$UID1.members")" \
                        'NR == 1 && base ~ /^[0-9]+[.][0-9]+$/ && base > 0 && $1 <= raw - base + 0.000001 { ok = 1 } END { exit !ok }' "$WORK/sample"
        check "aet: the pod's total: that delta, the other package left out" \
                jqe '.pods[0] | (.counters[] | select(.name == "core_energy")) as $t |
                        (.groups[0].counters[] | select(.domain == "mon_PERF_PKG_00" and .name == "core_energy")) as $r |
                        $t.delta == $r.delta and $t.unreadable == 1' "$j"
        # The pod's next container runs on the other package.
        check "aet: a container on the other package" create c2 "$p1" "$UID1"
        status --json >"$j"
        gc >/dev/null
        check "aet: its baseline taken in turn, none pending" \
                jqe '.groups[0] | ([.baseline | keys[] | select(startswith("mon_PERF_PKG"))] | length) == 4 and (has("baseline_pending") | not)' "$STATE/$UID1.members"
        status --json >"$j"
        check "aet: the pod's total has a delta again" \
                jqe '.pods[0].counters[] | select(.name == "core_energy") | .delta >= 0' "$j"
        stop "$p0"; stop "$p1"
        gc >/dev/null
}

for t in ${TESTS:-test_root_full test_limbo_waited test_limbo_watch test_limbo_watch_node test_aet_late_baseline}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
