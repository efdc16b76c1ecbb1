#!/bin/bash
# Integration tests of the operator commands on the resctrlfs emulator: status
# (table, JSON, Prometheus), baselines, check, the layout a Kepler reader
# that scans only the root's mon_groups expects, and what docs/readers.md
# says of the hook's output.
#   test_status.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" status
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
command -v promtool >/dev/null || { echo "needs promtool (Debian package prometheus)"; exit 77; }
log_level=debug
with_runtime_root

write_status_config() { # RESCTRL_PATH: the harness's config, pods of namespace "skipped" filtered out
        resctrl_path=$1 write_config "excludeNamespaces: [skipped]"
}

create_pod() { # ID PID UID NAMESPACE POD [BUNDLE]
        hook createRuntime "$(printf '{"ociVersion":"1.2.0","id":"%s","status":"creating","pid":%s,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s","io.kubernetes.pod.namespace":"%s","io.kubernetes.pod.name":"%s"}}' \
                "$1" "$2" "${6:-$WORK/b-root}" "$3" "$4" "$5")"
}

status() { "$HOOK" --config "$CONFIG" status "$@" 2>>"$LOG"; }
hook_check() { "$HOOK" --config "$CONFIG" check "$@" 2>>"$LOG"; }
not() { ! "$@"; }

# UID1 (the harness's): two containers, root and gold.
# UID2 (the harness's): adopts a group that already counted.
UID3=$(new_uid 3) # out of RMIDs
UID4=$(new_uid 5) # filtered out
UID5=$(new_uid 7) # compact upper-case UID, default class
FOREIGN=$(new_uid 1)

# 7 RMIDs less the root's leave 6 groups: gold, another manager's group in
# gold, UID2's, UID1's in root and in gold, UID5's; none is left for UID3.
mount_emulator --num-rmids 7 --ctrl-groups gold --l3-domains 2 --perf-pkg-domains 2
write_status_config "$MNT"
bundle "$WORK/b-root"
bundle "$WORK/b-gold" '{"closID":"gold"}'
sleeper a1 a2 b1 other c1 d1 e1
echo "$a2" >"$MNT/gold/tasks"
mkdir "$MNT/gold/mon_groups/$FOREIGN"

# A group of UID2's name that already holds a task and has counted.
mkdir "$MNT/mon_groups/$UID2"
echo "$other" >"$MNT/mon_groups/$UID2/tasks"
counting() { [ "$(cat "$1/mon_data/mon_L3_00/mbm_total_bytes")" -gt 0 ] 2>/dev/null; } # GROUP
wait_for "$WAIT_PROCESS" "$UID2's group counting" counting "$MNT/mon_groups/$UID2" || exit 1

check "create a1 (root)" create_pod a1 "$a1" "$UID1" shop web
check "create a2 (gold)" create_pod a2 "$a2" "$UID1" shop web "$WORK/b-gold"
check "create b1 (adopts)" create_pod b1 "$b1" "$UID2" shop db
check "create e1 (compact UID)" create_pod e1 "$e1" "$(echo "${UID5//-/}" | tr a-f A-F)" shop cache
check "create c1 (out of RMIDs)" create_pod c1 "$c1" "$UID3" shop batch
check "create d1 (filtered)" create_pod d1 "$d1" "$UID4" skipped job
check "c1 unmonitored" grep -q '"monitored":false' "$STATE/$UID3.members"
sleep 0.2

# --- baselines ---------------------------------------------------------------

test_baselines() {
        local base
        base=$(jq -r '.groups[0].baseline["mon_L3_00/mbm_total_bytes"]' "$STATE/$UID1.members")
        check "new group: baseline recorded at creation" [ "$base" = 0 ]
        check "new group: fixed-point baseline kept as text" \
                [ "$(jq -r '.groups[0].baseline["mon_PERF_PKG_01/core_energy"]' "$STATE/$UID1.members")" = 0.000000 ]
        base=$(jq -r '.groups[0].baseline["mon_L3_00/mbm_total_bytes"]' "$STATE/$UID2.members")
        check "adopted group: baseline holds what it had counted" [ "$base" -gt 0 ]
        check "no baseline for the gauge" \
                [ "$(jq '.groups[0].baseline | has("mon_L3_00/llc_occupancy")' "$STATE/$UID2.members")" = false ]
}

# --- status ------------------------------------------------------------------

test_status_table() {
        local out
        out=$(status)
        check "table: exit 0" [ $? -eq 0 ]
        echo "$out" >"$WORK/table.txt"
        check "table: pod line" grep -q "^pod $UID1  shop/web" "$WORK/table.txt"
        check "table: gold group path" grep -q "group gold  $MNT/gold/mon_groups/$UID1" "$WORK/table.txt"
        check "table: alive member" grep -Eq "^    a2 +pid $a2 +alive" "$WORK/table.txt"
        check "table: unmonitored with reason" grep -q "unmonitored c1  pid $c1 alive  enospc: out of RMIDs (ENOSPC)" "$WORK/table.txt"
        check "table: adopted group marked" grep -q "mon_groups/$UID2  (not ours)" "$WORK/table.txt"
        check "table: energy in joules" grep -Eq '^  core_energy +cumulative +joules +[0-9]+\.[0-9]{6} +[0-9]+\.[0-9]{6}$' "$WORK/table.txt"
        check "table: occupancy gauge" grep -Eq '^  llc_occupancy +gauge +bytes +[0-9]+ +-$' "$WORK/table.txt"
        check "table: node line" grep -q "node: 6 RMIDs for groups, 6 in use, 3 groups owned" "$WORK/table.txt"
        check "table: filtered counted" grep -Eq "createRuntime +filtered +1" "$WORK/table.txt"
        check "table: canonical UID" grep -q "^pod $UID5  shop/cache" "$WORK/table.txt"
}

test_status_json() {
        local j
        status --json >"$WORK/status.json"
        check "json: exit 0" [ $? -eq 0 ]
        j=$WORK/status.json
        check "json: four pods with state (not the filtered one)" [ "$(jq '.pods | length' "$j")" -eq 4 ]
        check "json: rmids" [ "$(jq -c '.node | [.rmids_total, .rmids_in_use, .groups_owned]' "$j")" = "[6,6,3]" ]
        check "json: enospc counted" [ "$(jq '.node.unmonitored.enospc' "$j")" -eq 1 ]
        check "json: outcomes" [ "$(jq '[.node.hook_outcomes[] | select(.stage == "createRuntime" and .result == "monitored") | .count][0]' "$j")" -eq 4 ]
        check "json: two control groups for UID1" \
                [ "$(jq -c --arg u "$UID1" '[.pods[] | select(.uid == $u) | .groups[].ctrl_group]' "$j")" = '["/","gold"]' ]
        check "json: member pid and alive" \
                [ "$(jq -c --arg u "$UID1" '.pods[] | select(.uid == $u) | .groups[1].members[0] | [.id, .alive]' "$j")" = '["a2",true]' ]
        check "json: unmonitored reason" \
                [ "$(jq -r --arg u "$UID3" '.pods[] | select(.uid == $u) | .unmonitored[0].reason' "$j")" = enospc ]
        # Per pod sums over domains and control groups equal the sum of the readings.
        check "json: per-pod sum" [ "$(jq --arg u "$UID1" '.pods[] | select(.uid == $u) |
                ([.groups[].counters[] | select(.name == "mbm_total_bytes") | .value] | add) ==
                (.counters[] | select(.name == "mbm_total_bytes") | .value)' "$j")" = true ]
        check "json: 2 groups x 2 domains summed" [ "$(jq --arg u "$UID1" '[.pods[] | select(.uid == $u) | .groups[].counters[] | select(.name == "core_energy")] | length' "$j")" -eq 4 ]
        check "json: kinds and units" [ "$(jq -c --arg u "$UID1" '[.pods[] | select(.uid == $u) | .counters[] | [.name, .kind, .unit]] | sort' "$j")" = \
                '[["activity","cumulative","farads"],["core_energy","cumulative","joules"],["llc_occupancy","gauge","bytes"],["mbm_local_bytes","cumulative","bytes"],["mbm_total_bytes","cumulative","bytes"]]' ]
        # The adopted group's delta is its value less what it had before the pod joined.
        check "json: delta = value - baseline" [ "$(jq --arg u "$UID2" '[.pods[] | select(.uid == $u) | .groups[0].counters[] | select(.name == "mbm_total_bytes") | .value - .baseline == .delta and .delta < .value] | all' "$j")" = true ]
        check "json: gauges have no delta" [ "$(jq -c '[.pods[].groups[].counters[] | select(.kind == "gauge") | .delta] | unique' "$j")" = '[null]' ]
}

test_prometheus() {
        local prom=$WORK/textfile/resctrl.prom
        mkdir -p "$WORK/textfile"
        check "prometheus: exit 0" status --prometheus --output "$prom"
        check "prometheus: promtool check metrics" promtool check metrics <"$prom"
        check "prometheus: readable by node_exporter" [ "$(stat -c %a "$prom")" = 644 ]
        check "prometheus: no temp file left" [ "$(ls -A "$WORK/textfile")" = resctrl.prom ]
        check "prometheus: energy series" grep -Eq "^resctrl_pod_core_energy_joules_total\{pod_uid=\"$UID1\",namespace=\"shop\",pod=\"web\",ctrl_group=\"gold\",domain=\"mon_PERF_PKG_01\"\} [0-9]+\.[0-9]{6}$" "$prom"
        check "prometheus: HELP and TYPE once" [ "$(grep -c '^# TYPE resctrl_pod_mbm_total_bytes_total counter$' "$prom")" -eq 1 ]
        check "prometheus: rmids" grep -q '^resctrl_rmids_capacity 6$' "$prom"
        check "prometheus: unmonitored by reason" grep -q '^resctrl_unmonitored_containers{reason="enospc"} 1$' "$prom"
        check "prometheus: outcomes" grep -q '^resctrl_hook_outcomes_total{stage="createRuntime",result="filtered"} 1$' "$prom"
        status --prometheus | promtool check metrics
        check "prometheus: stdout passes promtool too" [ $? -eq 0 ]
        # The adopted group reports its count since the pod joined, not the raw residue.
        local raw since
        raw=$(cat "$MNT/mon_groups/$UID2/mon_data/mon_L3_00/mbm_total_bytes")
        since=$(sed -n "s/^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$UID2\".*domain=\"mon_L3_00\"} //p" "$prom")
        check "prometheus: counter starts at the baseline" [ "$since" -lt "$raw" ]
}

# --- the Kepler contract -----------------------------------------------------

# What Kepler's passive resctrl reader does: list only <resctrl>/mon_groups,
# keep lowercase dashed UUIDs, read each mon_PERF_PKG_*/core_energy.
kepler_discover() {
        ls "$MNT/mon_groups" | grep -E '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' | sort
}
kepler_energy() { # UID: joules summed over packages, as a float
        cat "$MNT/mon_groups/$1"/mon_data/mon_PERF_PKG_*/core_energy | awk '{ s += $1 } END { print s }'
}

test_kepler_layout() {
        local found
        found=$(kepler_discover | tr '\n' ' ')
        check "kepler: default-class pods found at the root" [ "$found" = "$(printf '%s\n' "$UID1" "$UID2" "$UID5" | sort | tr '\n' ' ')" ]
        check "kepler: compact UID appears lowercase dashed" test -d "$MNT/mon_groups/$UID5"
        check "kepler: energy readable as a float" awk -v e="$(kepler_energy "$UID5")" 'BEGIN { exit !(e > 0) }'
        check "kepler: a class pod's group is under its control group" test -d "$MNT/gold/mon_groups/$UID1"
        check "kepler: which a root-only reader misses" [ -z "$(ls "$MNT/mon_groups" | grep -v -e "$UID1" -e "$UID2" -e "$UID5")" ]
        check "kepler: a mixed pod's root group holds only its root containers" \
                only_root_tasks "$MNT/mon_groups/$UID1"
        check "kepler: no group for a pod out of RMIDs" [ -z "$(find "$MNT" -name "$UID3")" ]
        check "kepler: no group for a filtered pod" [ -z "$(find "$MNT" -name "$UID4")" ]
}
# A reader's shared lock on $MNT, held until release_after lets it go;
# returns once it is held.
hold_shared() {
        touch "$WORK/hold"
        flock -s "$MNT" sh -c 'while [ -e "$1" ]; do sleep 0.05; done' sh "$WORK/hold" &
        HOLDERS+=("$!")
        wait_for "$WAIT_PROCESS" "a reader holding $MNT's shared lock" lock_held "$MNT"
}
release_after() { (sleep "$1" && rm -f "$WORK/hold") & } # SECONDS
only_root_tasks() { has_task "$1" "$a1" && ! has_task "$1" "$a2"; }
same_rmid() { [ -n "$2" ] && [ "$(cat "$1/mon_hw_id")" = "$2" ]; } # GROUP RMID

# --- the readers' contract (docs/readers.md) ---------------------------------

# What docs/readers.md says of the hook's output, where the checks above do
# not: on a node of its own, a static pod, a class pod, a lingering group, a
# reader's shared lock; and the counter states Unavailable, Error and
# Unassigned and baselines that are missing or above the count, which the
# emulator does not produce: a plain directory shaped like resctrl stands in.
test_readers() {
        local s1 l1 l2 k1 uids static uidl uidk hw before dirs_before g
        local prom=$WORK/readers.prom j=$WORK/readers.json plain=$WORK/plain
        mount_emulator --num-rmids 8 --ctrl-groups gold --l3-domains 2 --perf-pkg-domains 2 --debug
        resctrl_path=$MNT write_config "removeDelaySeconds: 30"
        dirs_before=$(find "$MNT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)
        sleeper s1 l1 l2 k1
        echo "$k1" >"$MNT/gold/tasks"

        # A static pod: kubelet's UID is 32 lower-case hex digits.
        uids=$(new_uid b)
        static=${uids//-/}
        check "static pod: create" create_pod s1 "$s1" "$static" kube-system etcd-node1
        check "static pod: group named by the dashed UID" test -d "$MNT/mon_groups/$uids"
        check "kepler: a static pod's group name is not kubelet's UID" not test -e "$MNT/mon_groups/$static"
        sleep 0.2
        status --prometheus >"$prom"
        check "static pod: Prometheus labels it with the dashed UID" \
                grep -q "^resctrl_pod_core_energy_joules_total{pod_uid=\"$uids\",namespace=\"kube-system\",pod=\"etcd-node1\",ctrl_group=\"/\",domain=\"mon_PERF_PKG_00\"} " "$prom"
        check "static pod: no series names kubelet's UID string" not grep -q "$static" "$prom"
        status --json >"$j"
        check "static pod: JSON uid is the dashed UID" \
                [ "$(jq -r '[.pods[] | select(.pod == "etcd-node1") | .uid] | join(" ")' "$j")" = "$uids" ]

        # A class pod: its group is under its control group, never at the root.
        uidk=$(new_uid c)
        check "class pod: create" create_pod k1 "$k1" "$uidk" shop gold "$WORK/b-gold"
        check "class pod: group under its control group only" \
                eval "test -d '$MNT/gold/mon_groups/$uidk' && test ! -e '$MNT/mon_groups/$uidk'"
        check "hook: makes no control group" \
                [ "$(find "$MNT" -mindepth 1 -maxdepth 1 -type d -printf '%f\n' | sort)" = "$dirs_before" ]
        status --prometheus >"$prom"
        check "class pod: Prometheus labels its control group" \
                grep -q "^resctrl_pod_core_energy_joules_total{pod_uid=\"$uidk\",namespace=\"shop\",pod=\"gold\",ctrl_group=\"gold\"" "$prom"

        # A lingering group (removeDelaySeconds): where it was, the same RMID,
        # its counters going on when the pod's next container joins.
        uidl=$(new_uid d)
        create_pod l1 "$l1" "$uidl" shop linger
        g=$MNT/mon_groups/$uidl
        hw=$(cat "$g/mon_hw_id")
        sleep 0.2
        stop "$l1"
        check "linger: last poststop" poststop l1 "$uidl"
        check "linger: the group stays where it was" test -d "$g"
        status --json >"$j"
        check "linger: status marks it lingering" \
                jq -e --arg u "$uidl" '.pods[] | select(.uid == $u) | .groups[0].lingering' "$j" >/dev/null
        status --prometheus >"$prom"
        check "linger: its live series go on" grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidl\"" "$prom"
        check "linger: no final series while it lingers" not grep -q "^resctrl_pod_final_.*pod_uid=\"$uidl\"" "$prom"
        before=$(cat "$g/mon_data/mon_L3_00/mbm_total_bytes")
        check "linger: the pod's next container" create_pod l2 "$l2" "$uidl" shop linger
        check "linger: the same group and RMID" same_rmid "$g" "$hw"
        check "linger: its counters go on, not from zero" [ "$(cat "$g/mon_data/mon_L3_00/mbm_total_bytes")" -ge "$before" ]

        # Counter states, on a plain directory: the pod's group there (made
        # beforehand, so that the hook uses it) reads what this test writes.
        local uidp p1
        uidp=$(new_uid e)
        sleeper p1
        mkdir -p "$plain/info" "$plain/mon_groups/$uidp/mon_data"
        : >"$plain/info/last_cmd_status"
        : >"$plain/mon_groups/$uidp/tasks"
        put() { mkdir -p "$plain/mon_groups/$uidp/mon_data/${1%/*}" && echo "$2" >"$plain/mon_groups/$uidp/mon_data/$1"; }
        put mon_L3_00/llc_occupancy 4096
        put mon_L3_00/mbm_total_bytes 1000
        put mon_L3_01/mbm_total_bytes 2000
        put mon_L3_00/mbm_local_bytes Unassigned
        put mon_L3_01/mbm_local_bytes Unassigned
        put mon_PERF_PKG_00/core_energy 1.500000
        put mon_PERF_PKG_01/core_energy Unavailable
        resctrl_path=$plain write_config
        check "states: create" create_pod p1 "$p1" "$uidp" shop states
        check "states: no baseline for an Unavailable counter" \
                [ "$(jq -c '.groups[0].baseline | [.["mon_L3_00/mbm_total_bytes"], .["mon_PERF_PKG_00/core_energy"], has("mon_PERF_PKG_01/core_energy")]' "$STATE/$uidp.members")" = '["1000","1.500000",false]' ]
        put mon_L3_00/mbm_total_bytes 5000
        put mon_L3_01/mbm_total_bytes Error
        put mon_PERF_PKG_00/core_energy 2.750000
        status --json >"$j"
        reading() { jq -c --arg u "$uidp" --arg d "$1" --arg n "$2" \
                '.pods[] | select(.uid == $u) | .groups[0].counters[] | select(.domain == $d and .name == $n) | [.state, .value, .delta]' "$j"; }
        total() { jq -c --arg u "$uidp" --arg n "$1" '.pods[] | select(.uid == $u) | .counters[] | select(.name == $n) | [.state, .value, .delta, .unreadable]' "$j"; }
        check "states: JSON Unavailable: state, null value" [ "$(reading mon_PERF_PKG_01 core_energy)" = '["Unavailable",null,null]' ]
        check "states: JSON Error: state, null value" [ "$(reading mon_L3_01 mbm_total_bytes)" = '["Error",null,null]' ]
        check "states: JSON Unassigned: state, null value" [ "$(reading mon_L3_00 mbm_local_bytes)" = '["Unassigned",null,null]' ]
        check "states: JSON readable: value and delta" [ "$(reading mon_L3_00 mbm_total_bytes)" = '["ok",5000,4000]' ]
        check "states: totals leave them out" [ "$(total mbm_total_bytes)" = '["ok",5000,4000,1]' ]
        check "states: a counter readable nowhere has no total" [ "$(total mbm_local_bytes)" = '["Unassigned",null,null,2]' ]
        status >"$WORK/readers.txt"
        check "states: the table says the state" grep -Eq '^  mbm_local_bytes +cumulative +bytes +Unassigned +-$' "$WORK/readers.txt"
        check "states: the table marks a partial sum" grep -q '^  mbm_total_bytes .* 5000 .*4000  (some domains unreadable)$' "$WORK/readers.txt"
        status --prometheus >"$prom"
        check "states: Prometheus passes promtool" promtool check metrics <"$prom"
        check "states: Prometheus gives the count since the baseline" \
                grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidp\".*domain=\"mon_L3_00\"} 4000$" "$prom"
        check "states: no sample for Unavailable" not grep -q "^resctrl_pod_core_energy_joules_total{pod_uid=\"$uidp\".*domain=\"mon_PERF_PKG_01\"}" "$prom"
        check "states: no sample for Error" not grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidp\".*domain=\"mon_L3_01\"}" "$prom"
        check "states: no sample for Unassigned" not grep -q "^resctrl_pod_mbm_local_bytes_total{pod_uid=\"$uidp\"" "$prom"
        check "states: never a zero" not grep -Eq "^resctrl_pod_(llc_occupancy|mbm_[a-z]+_bytes|core_energy|activity)_[a-z_]*\{pod_uid=\"$uidp\".*\} 0(\.0*)?$" "$prom"
        # A counter that was Unavailable when the hook took the group has no
        # baseline until its first value is taken as one: no delta for it or
        # the pod's total, and no Prometheus sample (its raw value, then a
        # delta near 0, would be a counter reset).
        put mon_PERF_PKG_01/core_energy 0.250000
        status --prometheus >"$prom"
        check "states: no baseline: no Prometheus sample until it has one" \
                not grep -q "^resctrl_pod_core_energy_joules_total{pod_uid=\"$uidp\".*domain=\"mon_PERF_PKG_01\"} " "$prom"
        status --json >"$j"
        check "states: no baseline: no delta" [ "$(reading mon_PERF_PKG_01 core_energy)" = '["ok",0.25,null]' ]
        check "states: no baseline: the pod's total has no delta" [ "$(total core_energy)" = '["ok",3,null,0]' ]
        # A counter that went back (its RMID was reset): no delta, the raw value.
        put mon_L3_00/mbm_total_bytes 500
        status --json >"$j"
        check "states: went back: no delta" [ "$(reading mon_L3_00 mbm_total_bytes)" = '["ok",500,null]' ]
        status --prometheus >"$prom"
        check "states: went back: Prometheus gives the raw value" \
                grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidp\".*domain=\"mon_L3_00\"} 500$" "$prom"
        # A file that does not parse costs that counter only.
        put mon_L3_01/mbm_total_bytes '12 bytes'
        put mon_L3_00/mbm_local_bytes 'not a number'
        put mon_L3_01/mbm_local_bytes "$(printf '9%.0s' $(seq 100))" # longer than any counter
        status --json >"$j"
        check "bad file: JSON says error for it, no value" [ "$(reading mon_L3_01 mbm_total_bytes)" = '["error",null,null]' ]
        check "bad file: the group's other counters stay" [ "$(reading mon_L3_00 mbm_total_bytes)" = '["ok",500,null]' ] &&
                [ "$(reading mon_PERF_PKG_00 core_energy)" = '["ok",2.75,1.25]' ]
        check "bad file: the group is not unreadable" \
                [ "$(jq -c --arg u "$uidp" '.pods[] | select(.uid == $u) | .groups[0].error' "$j")" = null ]
        check "bad file: a counter bad everywhere has error as its total's state" [ "$(total mbm_local_bytes)" = '["error",null,null,2]' ]
        status >"$WORK/readers.txt"
        check "bad file: the table says error" grep -Eq '^  mbm_local_bytes +cumulative +bytes +error +-$' "$WORK/readers.txt"
        check "bad file: the table keeps the others" grep -Eq '^  core_energy +cumulative +joules +3\.000000 +-$' "$WORK/readers.txt"
        status --prometheus >"$prom"
        check "bad file: Prometheus passes promtool" promtool check metrics <"$prom"
        check "bad file: Prometheus has no sample for it" not grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidp\".*domain=\"mon_L3_01\"}" "$prom"
        check "bad file: Prometheus says error for it" \
                grep -q "^resctrl_pod_event_error{pod_uid=\"$uidp\",.*,domain=\"mon_L3_01\",event=\"mbm_total_bytes\"} 1$" "$prom"
        check "bad file: Prometheus keeps the group's others" \
                grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$uidp\".*domain=\"mon_L3_00\"} 500$" "$prom"
        stop "$p1"
        poststop p1 "$uidp"

        # A reader's shared lock on the resctrl root holds off the hook's
        # changes: no group appears or goes while the reader reads.
        local h1 uidh started waited
        resctrl_path=$MNT write_config "lockTimeoutMs: $((WAIT_PROCESS * 1000))"
        sleeper h1
        uidh=$(new_uid f)
        check "lock: a reader holds it" hold_shared
        started=$(date +%s%N)
        release_after 0.6
        create_pod h1 "$h1" "$uidh" shop held
        waited=$((($(date +%s%N) - started) / 1000000))
        check "lock: a group is made only once the reader's shared lock is gone" \
                eval "[ $waited -ge 500 ] && test -d '$MNT/mon_groups/$uidh'"
        stop "$h1"
        check "lock: a reader holds it again" hold_shared
        started=$(date +%s%N)
        release_after 0.6
        poststop h1 "$uidh"
        waited=$((($(date +%s%N) - started) / 1000000))
        check "lock: a group is removed only once the reader's shared lock is gone" \
                eval "[ $waited -ge 500 ] && test ! -e '$MNT/mon_groups/$uidh'"
}

# --- check -------------------------------------------------------------------

hooks_file() { # DIR NAME PATH STAGE
        mkdir -p "$1"
        printf '{"version":"1.0.0","hook":{"path":"%s","args":["resctrl-mon-hook","%s"]},"when":{"always":true},"stages":["%s"]}\n' \
                "$3" "$4" "$4" >"$1/$2"
}

test_check() {
        local out rc hooks=$WORK/hooks.d
        hooks_file "$hooks" 50-create.json "$HOOK" createRuntime
        hooks_file "$hooks" 50-poststop.json "$HOOK" poststop
        echo '{"hook":{"path":"/usr/bin/other"},"stages":["prestart"]}' >"$hooks/10-other.json"

        out=$(hook_check --hooks-dir "$hooks"); rc=$?
        echo "$out" >"$WORK/check.txt"
        check "check: no failure, exit 0" [ $rc -eq 0 ]
        check "check: config ok" grep -q "^ok    config " "$WORK/check.txt"
        check "check: emulator is not a resctrl mount" grep -q "^warn  resctrl-mount " "$WORK/check.txt"
        check "check: monitoring lists events" grep -q "^ok    monitoring      L3_MON (llc_occupancy" "$WORK/check.txt"
        check "check: rmids exhausted" grep -q "^warn  rmids           6 groups at most.*, 6 in use, 0 free" "$WORK/check.txt"
        check "check: a fix follows a warning" grep -q "fix: monitor fewer pods" "$WORK/check.txt"
        check "check: state dir" grep -q "^ok    state-dir .* mode 0700" "$WORK/check.txt"
        check "check: hooks.d files" [ "$(grep -c "^ok    hooks.d .* runs '$HOOK'" "$WORK/check.txt")" -eq 2 ]
        # UID2 uses a group it found: counted as the other manager's it is.
        check "check: other manager's groups" grep -q -- "^warn  other-managers  2 pod-UID-named groups are not this hook's (mon_groups/$UID2, gold/mon_groups/$FOREIGN); 3 are" "$WORK/check.txt"

        hook_check --json --hooks-dir "$hooks" >"$WORK/check.json"
        check "check --json: exit 0" [ $? -eq 0 ]
        check "check --json: ok and results" [ "$(jq -c '[.ok, ([.checks[] | select(.check == "rmids") | .result][0])]' "$WORK/check.json")" = '[true,"warn"]' ]

        hooks_file "$hooks" 50-poststop.json "$WORK/nowhere/resctrl-mon-hook" poststop
        out=$(hook_check --hooks-dir "$hooks"); rc=$?
        check "check: missing hook binary fails" [ $rc -eq 1 ]
        check "check: says why and how" grep -q "^fail  hooks.d .*50-poststop.json points at '$WORK/nowhere/resctrl-mon-hook', which does not exist" <<<"$out"
        check "check: no hooks.d file warns" bash -c "'$HOOK' --config '$CONFIG' check --hooks-dir '$WORK/none' 2>/dev/null | grep -q '^warn  hooks.d         no oci-hooks file'"

        mkdir -p "$WORK/empty"
        write_status_config "$WORK/empty"
        out=$(hook_check --hooks-dir "$WORK/none"); rc=$?
        check "check: no monitoring fails" [ $rc -eq 1 ]
        check "check: monitoring line" grep -q "^fail  monitoring      no monitoring at '$WORK/empty'" <<<"$out"
        require_fs=true write_status_config "$WORK/empty"
        out=$(hook_check --hooks-dir "$WORK/none"); rc=$?
        check "check: not mounted fails" [ $rc -eq 1 ]
        check "check: mount line" grep -q "^fail  resctrl-mount   '$WORK/empty' is not a resctrl mount" <<<"$out"
        check "check: mount fix" grep -q "fix: mount -t resctrl resctrl $WORK/empty" <<<"$out"
        check "check: nothing more said of a missing resctrl" \
                [ "$(grep "^fail" <<<"$out" | awk '{ print $2 }' | sort | tr '\n' ' ')" = "monitoring node-resctrl resctrl-mount " ]
        # A key this binary does not know: check fails naming file, line and
        # key, and says what the hook does; the rest of the file is in force.
        write_status_config "$MNT"
        echo "counterPolicy: [oldest]" >>"$CONFIG"
        out=$(hook_check --hooks-dir "$WORK/none"); rc=$?
        check "check: unknown key fails" [ $rc -eq 1 ]
        check "check: config line names file, line and key" \
                grep -q "^fail  config          $CONFIG:7: key 'counterPolicy': unknown key, skipped$" <<<"$out"
        check "check: says what the hook does" \
                grep -q "fix: correct the file; until then the key is skipped; the rest of the file is used" <<<"$out"
        check "check: claims no defaults" not grep -q "default" <<<"$out"
        check "check: the rest of the file is used" grep -q "^ok    monitoring " <<<"$out"
        status >/dev/null
        check "status: an unknown key does not stop it" [ $? -eq 0 ]
        # A run with that config counts the problem where status shows it.
        create_pod x1 "$a1" "$UID1" shop web
        status --prometheus >"$WORK/prom.txt"
        check "prometheus: the config problem counted" \
                grep -q '^resctrl_hook_outcomes_total{stage="config",result="unknown_key"} 1$' "$WORK/prom.txt"
        # The run's deadline must end before the runtime's timeout (5 s in the file).
        write_status_config "$MNT"
        echo "lockTimeoutMs: 4500" >>"$CONFIG"
        printf '{"version":"1.0.0","hook":{"path":"%s","args":["resctrl-mon-hook","createRuntime"],"timeout":5},"stages":["createRuntime"]}\n' \
                "$HOOK" >"$hooks/50-create.json"
        out=$(hook_check --hooks-dir "$hooks"); rc=$?
        check "check: lockTimeoutMs near the hook's timeout fails" [ $rc -eq 1 ]
        check "check: says which file and by how much" \
                grep -q "^fail  hooks.d         $hooks/50-create.json: timeout 5 s leaves less than 1000 ms after lockTimeoutMs (4500 ms)" <<<"$out"
        "$HOOK" status --bogus >/dev/null 2>&1
        check "status: usage error exits 2" [ $? -eq 2 ]
        write_status_config "$MNT"
}

# --- coverage: every thread of the pod's containers in its groups ----------

# e1's container gets a cgroup of its own, and a process that a runtime
# exec'd into it, outside the group: status, Prometheus and check say so, and
# after one gc pass they say all is in.
test_coverage() {
        local root cg x1
        root=$(private_cgroup any) || { echo "no cgroup hierarchy mounted: nothing to test"; return; }
        cg=$root/e1
        mkdir "$cg"
        sleeper x1
        echo "$e1" >"$cg/cgroup.procs"
        echo "$x1" >"$cg/cgroup.procs"
        status >"$WORK/cov.txt"
        check "coverage: the pod's threads, and those in its group" \
                grep -q "^  threads: 2 in its containers, 1 in its groups$" "$WORK/cov.txt"
        check "coverage: the node's" grep -q "^coverage: [0-9]* of [0-9]* threads" "$WORK/cov.txt"
        status --json >"$WORK/cov.json"
        check "coverage: JSON per pod" [ "$(jq -c --arg u "$UID5" '.pods[] | select(.uid == $u) | .threads' \
                "$WORK/cov.json")" = '{"containers":2,"in_groups":1,"elsewhere":0}' ]
        status --prometheus >"$WORK/cov.prom"
        check "coverage: Prometheus per pod" grep -q \
                "^resctrl_pod_unmonitored_threads{pod_uid=\"$UID5\",namespace=\"shop\",pod=\"cache\"} 1$" \
                "$WORK/cov.prom"
        check "coverage: Prometheus for the node" grep -q '^resctrl_node_unmonitored_threads 1$' "$WORK/cov.prom"
        hook_check --hooks-dir "$WORK/none" >"$WORK/cov-check.txt"
        check "coverage: check warns, naming the pod" \
                grep -q "^warn  coverage .*pods short: $UID5 (shop/cache) 1 of 2" "$WORK/cov-check.txt"
        "$HOOK" --config "$CONFIG" gc >/dev/null 2>>"$LOG"
        status --prometheus >"$WORK/cov.prom"
        check "coverage: after gc, nothing outside" grep -q '^resctrl_node_unmonitored_threads 0$' "$WORK/cov.prom"
        hook_check --hooks-dir "$WORK/none" >"$WORK/cov-check.txt"
        check "coverage: check is content" grep -q "^ok    coverage " "$WORK/cov-check.txt"
        stop "$x1"
        echo "$e1" >"$root/cgroup.procs"
        rmdir "$cg"
}

# --- stateDir's file system ---------------------------------------------------

# On tmpfs with room: ok. On a disk: a warning (its state outlives a reboot).
# Full or read-only: a failure; and a poststop there says which directory.
test_state_fs() {
        local dir=$WORK/state-fs f1 f2 f3 u2
        mkdir -m 0700 "$dir"
        state_dir=$dir write_status_config "$MNT"
        if [ "$(stat -f -c %T "$WORK")" != tmpfs ]; then
                check "state-fs: a disk warns" \
                        grep -q "^warn  state-fs .*'$dir' is not on tmpfs" <(hook_check --only state-fs)
        fi
        mount -t tmpfs -o mode=0700,size=2m tmpfs "$dir"
        check "state-fs: tmpfs with room" grep -q "^ok    state-fs .*is on tmpfs, writable" \
                <(hook_check --only state-fs)
        sleeper f1 f2 f3
        u2=$(new_uid)
        check "state-fs: a pod recorded there" create_pod f1 "$f1" "$(new_uid)" shop fs
        check "state-fs: and another, of two containers" create_pod f2 "$f2" "$u2" shop fs2
        create_pod f3 "$f3" "$u2" shop fs2
        dd if=/dev/zero of="$dir/fill" bs=64k 2>/dev/null
        hook_check --only state-fs >"$WORK/fs.txt"
        check "state-fs: full fails" [ $? -eq 1 ]
        check "state-fs: ... saying so" grep -q "^fail  state-fs .*'$dir' is full" "$WORK/fs.txt"
        stop "$f2"
        : >"$LOG"
        hook poststop "$(printf '{"ociVersion":"1.2.0","id":"f2","status":"stopped","annotations":{"io.kubernetes.pod.uid":"%s"}}' "$u2")"
        check "state-fs: a poststop that must save there names the directory" \
                grep -q "in stateDir '$dir': No space left on device" "$LOG"
        rm "$dir/fill"
        stop "$f3"
        "$HOOK" --config "$CONFIG" gc >/dev/null 2>>"$LOG"
        mount -o remount,ro "$dir"
        hook_check --only state-fs >"$WORK/fs.txt"
        check "state-fs: read-only fails" [ $? -eq 1 ]
        check "state-fs: ... saying so" grep -q "^fail  state-fs .*'$dir' is on a read-only file system" "$WORK/fs.txt"
        stop "$f1"
        : >"$LOG"
        hook poststop "$(printf '{"ociVersion":"1.2.0","id":"f1","status":"stopped","annotations":{"io.kubernetes.pod.uid":"%s"}}' "$(jq -r 'select(.members[0].id == "f1") | .uid' "$dir"/*.members)")"
        check "state-fs: poststop names the directory" grep -q "cannot lock pod .* in stateDir '$dir': Read-only file system" "$LOG"
        umount "$dir"
        write_status_config "$MNT"
}

test_baselines
test_status_table
test_status_json
test_prometheus
test_kepler_layout
test_check
test_coverage
test_state_fs
test_readers

harness_done
