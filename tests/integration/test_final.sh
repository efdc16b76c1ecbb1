#!/bin/bash
# Final counters (common/finished.h) on the resctrlfs emulator:
#   - a pod that lives between two status scrapes shows, in the next one, its
#     totals as they read right before its group went, baseline applied
#     (table, JSON, Prometheus), and no live series any more;
#   - a group made again after it went: its records add up in one entry
#     and one series a domain;
#   - a poststop killed between the record and the rmdir neither loses nor
#     doubles them: status passes the record over while the group is there,
#     and gc's removal writes it again;
#   - a group that is not removed (it still has tasks) leaves no record;
#   - past finalCountersSeconds a record is no longer shown and gc removes
#     it; with 0 none is written;
#   - a record that does not parse is passed over with a warning.
#   test_final.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" final
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
command -v promtool >/dev/null || { echo "needs promtool (Debian package prometheus)"; exit 77; }
command -v strace >/dev/null || { echo "needs strace"; exit 77; }

FINISHED=$WORK/state/finished
status() { "$HOOK" --config "$CONFIG" status "$@" 2>>"$LOG"; }
records() { find "$FINISHED" -maxdepth 1 -type f -name "$1.*" 2>/dev/null | wc -l; }
# The raw counter and the baseline of pod UID's group in the root, by "domain/event".
raw() { cat "$MNT/mon_groups/$1/mon_data/$2"; }
baseline() { jq -r --arg k "$2" '.groups[0].baseline[$k]' "$STATE/$1.members"; }

mount_emulator --l3-domains 2 --perf-pkg-domains 1
write_config

# --- a pod between two scrapes --------------------------------------------------

test_short_pod() {
        local p json prom mbm0 mbm1 energy total created removed
        status --json >"$WORK/before.json"
        check "before: the pod is not listed" \
                [ "$(jq --arg u "$UID1" '[.pods[], .finished[] | select(.uid == $u)] | length' "$WORK/before.json")" = 0 ]

        sleeper p
        check "create" create c1 "$p" "$UID1"
        sleep 2
        stop "$p" # the counts stop here: what the group holds is what the pod did
        mbm0=$(( $(raw "$UID1" mon_L3_00/mbm_total_bytes) - $(baseline "$UID1" mon_L3_00/mbm_total_bytes) ))
        mbm1=$(( $(raw "$UID1" mon_L3_01/mbm_total_bytes) - $(baseline "$UID1" mon_L3_01/mbm_total_bytes) ))
        energy=$(raw "$UID1" mon_PERF_PKG_00/core_energy)
        check "the pod counted" [ "$mbm0" -gt 0 ]
        check "poststop" poststop c1 "$UID1"
        check "the group is gone" [ ! -e "$MNT/mon_groups/$UID1" ]
        check "one record" [ "$(records "$UID1")" = 1 ]

        status --json >"$WORK/after.json"
        json=$(jq -c --arg u "$UID1" '.finished[] | select(.uid == $u)' "$WORK/after.json")
        check "json: listed as finished" [ -n "$json" ]
        check "json: no longer a live pod" \
                [ "$(jq --arg u "$UID1" '[.pods[] | select(.uid == $u)] | length' "$WORK/after.json")" = 0 ]
        check "json: identity" [ "$(jq -r '"\(.namespace)/\(.pod) \(.ctrl_group)"' <<<"$json")" = "default/demo /" ]
        check "json: domain 0, baseline applied" \
                [ "$(jq '.readings[] | select(.domain == "mon_L3_00" and .name == "mbm_total_bytes") | .delta' <<<"$json")" = "$mbm0" ]
        check "json: domain 1, baseline applied" \
                [ "$(jq '.readings[] | select(.domain == "mon_L3_01" and .name == "mbm_total_bytes") | .delta' <<<"$json")" = "$mbm1" ]
        total=$(jq '.counters[] | select(.name == "mbm_total_bytes") | .delta' <<<"$json")
        check "json: the total sums the domains" [ "$total" = $((mbm0 + mbm1)) ]
        check "json: energy as the kernel printed it" \
                [ "$(jq '.readings[] | select(.name == "core_energy") | .value' <<<"$json")" = "$(jq -n "$energy")" ]
        check "json: no gauge" [ "$(jq '[.readings[] | select(.name == "llc_occupancy")] | length' <<<"$json")" = 0 ]
        created=$(jq .created_at <<<"$json")
        removed=$(jq .removed_at <<<"$json")
        check "json: lived about 2 s" [ $((removed - created)) -ge 1 -a $((removed - created)) -le 10 ]
        check "json: removed just now" [ $(($(date +%s) - removed)) -le 10 ]

        prom=$WORK/after.prom
        status --prometheus >"$prom"
        check "prometheus: promtool check metrics" promtool check metrics <"$prom"
        check "prometheus: final bytes per domain, baseline applied" grep -qxF \
                "resctrl_pod_final_mbm_total_bytes_total{pod_uid=\"$UID1\",namespace=\"default\",pod=\"demo\",ctrl_group=\"/\",domain=\"mon_L3_00\"} $mbm0" "$prom"
        check "prometheus: final energy" grep -qxF \
                "resctrl_pod_final_core_energy_joules_total{pod_uid=\"$UID1\",namespace=\"default\",pod=\"demo\",ctrl_group=\"/\",domain=\"mon_PERF_PKG_00\"} $energy" "$prom"
        check "prometheus: when it ended" grep -qxF \
                "resctrl_pod_final_timestamp_seconds{pod_uid=\"$UID1\",namespace=\"default\",pod=\"demo\",ctrl_group=\"/\"} $removed" "$prom"
        check "prometheus: no live series of the pod" not grep -q "^resctrl_pod_mbm_total_bytes_total{pod_uid=\"$UID1\"" "$prom"

        status >"$WORK/after.txt"
        check "table: the finished pod" grep -q "^pod $UID1  default/demo  group / removed [0-9]* s ago, [0-9]* s after it was made" "$WORK/after.txt"
        check "table: its total" grep -Eq "^  mbm_total_bytes +cumulative +bytes +[0-9]+ +$((mbm0 + mbm1))\$" "$WORK/after.txt"
}
not() { ! "$@"; }

# --- a kill between the record and the rmdir -------------------------------------------

# poststop of pod UID's container ID under strace, with strace's options.
# LeakSanitizer cannot run under ptrace: a sanitizer build checks no leaks
# there (the other suites do).
traced_poststop() { # ID UID STRACE-OPTIONS...
        local id=$1 uid=$2
        shift 2
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
                strace -f -qq "$@" "$HOOK" --config "$CONFIG" poststop 2>>"$LOG" >/dev/null \
                <<<"$(printf '{"ociVersion":"1.2.0","id":"%s","status":"stopped","annotations":{"io.kubernetes.pod.uid":"%s"}}' "$id" "$uid")"
}

test_killed_before_rmdir() {
        local p twin n
        # Which unlinkat is the group's rmdir: a twin pod's poststop, traced.
        twin=$(new_uid 1)
        sleeper p
        check "kill: create the twin" create c0 "$p" "$twin"
        stop "$p"
        traced_poststop c0 "$twin" -o "$WORK/twin.trace" -e trace=unlinkat
        n=$(grep '^[0-9]* *unlinkat(' "$WORK/twin.trace" | grep -n AT_REMOVEDIR | cut -d: -f1)
        check "kill: the twin's group went by unlinkat" [ -n "$n" ]
        check "kill: the twin's group is gone" [ ! -e "$MNT/mon_groups/$twin" ]

        sleeper p
        check "kill: create" create c2 "$p" "$UID2"
        stop "$p"
        traced_poststop c2 "$UID2" -o /dev/null -e inject=unlinkat:signal=KILL:when="${n:-1}" 2>/dev/null
        check "kill: the group is still there" [ -d "$MNT/mon_groups/$UID2" ]
        check "kill: its record was written" [ "$(records "$UID2")" = 1 ]
        status --json >"$WORK/killed.json"
        check "kill: status shows it live, not finished" \
                [ "$(jq -c --arg u "$UID2" '[([.pods[] | select(.uid == $u)] | length), ([.finished[] | select(.uid == $u)] | length)]' "$WORK/killed.json")" = "[1,0]" ]
        gc >/dev/null
        check "kill: gc removed the group" [ ! -e "$MNT/mon_groups/$UID2" ]
        check "kill: still one record" [ "$(records "$UID2")" = 1 ]
        check "kill: now finished" \
                [ "$(status --json | jq --arg u "$UID2" '[.finished[] | select(.uid == $u)] | length')" = 1 ]
}

# --- a group made again ---------------------------------------------------------

# A pod whose group went, and was made again for a container that started
# later (a CrashLoopBackOff past emptyPodLingerSeconds): two records, one
# entry in status with their counts added up, one series a domain.
test_made_again() {
        local p uid first second prom
        uid=$(new_uid 4)
        sleeper p
        check "again: create" create a1 "$p" "$uid"
        sleep 0.5
        stop "$p"
        first=$(raw "$uid" mon_L3_00/mbm_total_bytes)
        check "again: poststop" poststop a1 "$uid"
        sleep 0.01 # another millisecond: another incarnation
        sleeper p
        check "again: create again" create a2 "$p" "$uid"
        sleep 0.5
        stop "$p"
        second=$(raw "$uid" mon_L3_00/mbm_total_bytes)
        check "again: poststop again" poststop a2 "$uid"
        check "again: two records" [ "$(records "$uid")" = 2 ]
        status --json >"$WORK/again.json"
        check "again: one entry" \
                [ "$(jq --arg u "$uid" '[.finished[] | select(.uid == $u)] | length' "$WORK/again.json")" = 1 ]
        check "again: the counts of both" \
                [ "$(jq --arg u "$uid" '.finished[] | select(.uid == $u) | .readings[] | select(.domain == "mon_L3_00" and .name == "mbm_total_bytes") | .delta' "$WORK/again.json")" = $((first + second)) ]
        prom=$WORK/again.prom
        status --prometheus >"$prom"
        check "again: one series, their sum" [ "$(grep -c "^resctrl_pod_final_mbm_total_bytes_total{pod_uid=\"$uid\",.*domain=\"mon_L3_00\"}" "$prom")" = 1 ]
        check "again: its value" grep -q "^resctrl_pod_final_mbm_total_bytes_total{pod_uid=\"$uid\",.*domain=\"mon_L3_00\"} $((first + second))\$" "$prom"
        check "again: one timestamp" [ "$(grep -c "^resctrl_pod_final_timestamp_seconds{pod_uid=\"$uid\"" "$prom")" = 1 ]
        check "again: promtool check metrics" promtool check metrics <"$prom"
}

# --- a group that stays -------------------------------------------------------------------

test_group_kept() {
        local p q uid
        uid=$(new_uid 3)
        sleeper p q
        check "kept: create" create c3 "$p" "$uid"
        echo "$q" >"$MNT/mon_groups/$uid/tasks" # a task of the pod's the hook does not know
        stop "$p"
        check "kept: poststop" poststop c3 "$uid"
        check "kept: the group stays for its task" [ -d "$MNT/mon_groups/$uid" ]
        check "kept: no record" [ "$(records "$uid")" = 0 ]
        stop "$q"
        gc >/dev/null
        check "kept: gc removed it later, with its record" [ "$(records "$uid")" = 1 ]
}

# --- retention --------------------------------------------------------------------------------

test_retention() {
        local p uid
        write_config "finalCountersSeconds: 1"
        sleep 2.1 # every record so far is past the window
        check "retention: status shows none" [ "$(status --json | jq '.finished | length')" = 0 ]
        check "retention: until gc, the files stay" [ "$(records '*')" -gt 0 ]
        gc >/dev/null
        check "retention: gc removed them" [ "$(records '*')" = 0 ]

        write_config "finalCountersSeconds: 0"
        uid=$(new_uid 5)
        sleeper p
        check "off: create" create c5 "$p" "$uid"
        stop "$p"
        check "off: poststop" poststop c5 "$uid"
        check "off: the group is gone" [ ! -e "$MNT/mon_groups/$uid" ]
        check "off: no record" [ "$(records '*')" = 0 ]
        write_config
}

# --- a record that does not parse ---------------------------------------------------------

test_bad_record() {
        local p uid out
        uid=$(new_uid 7)
        sleeper p
        check "bad: create" create c7 "$p" "$uid"
        stop "$p"
        check "bad: poststop" poststop c7 "$uid"
        printf '{"version":1,' >"$FINISHED/$UID1.5.0123456789abcdef"
        : >"$LOG"
        out=$(status --json)
        check "bad: status runs" [ $? -eq 0 ]
        check "bad: the good one listed" [ "$(jq --arg u "$uid" '[.finished[] | select(.uid == $u)] | length' <<<"$out")" = 1 ]
        check "bad: one warning" grep -q "1 records of final counters in .* do not parse; passed over" "$LOG"
}

test_short_pod
test_made_again
test_killed_before_rmdir
test_group_kept
test_retention
test_bad_record
harness_done
