#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# deploy/prometheus's alert rules and deploy/grafana's dashboard:
#   test_prometheus.sh SOURCE_DIR HOOK RESCTRLFS
# the rules load and their unit tests pass (promtool test rules: a firing and
# a non-firing case per alert); the dashboard has a dashboard's shape and
# every query of it parses; both name only metrics the hook exports, as
# status --prometheus prints them on the emulator with every kind of
# counter (L3, PERF_PKG, ABMC) and a gc pass done.
set -u

top=$1
# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$2" "$3" prometheus
command -v promtool >/dev/null || { echo "needs promtool (Debian package prometheus)"; exit 77; }
rules=$top/deploy/prometheus/resctrl-mon-hook.rules.yaml
dashboard=$top/deploy/grafana/resctrl-mon-hook.json

jqe() { jq -e "$@" >/dev/null; }
names() { grep -oE '\b(resctrl|node)_[a-z0-9_]+' "$@" | sort -u; }

echo "-- the metrics the hook exports"
mount_emulator --perf-pkg-domains 1 --mbm-counters 4
write_config
sleeper p1 p2 p3 p4
create c1 "$p1" "$UID1"
create c2 "$p2" "$UID2"
create c3 "$p3" 3d4e5f60-8b7c-4d6e-af01-1b2c3d4e5f60
# A finished pod: its final series too.
create c4 "$p4" 5d4e5f60-8b7c-4d6e-af01-1b2c3d4e5f60
stop "$p4"
poststop c4 5d4e5f60-8b7c-4d6e-af01-1b2c3d4e5f60
gc >/dev/null
# A watch running: its series too.
"$HOOK" --config "$CONFIG" watch --interval 3600 >/dev/null 2>>"$LOG" &
watch=$!
wait_for "$WAIT_DAEMON" "watch writing watch.state" [ -s "$STATE/watch.state" ] || exit 1
"$HOOK" --config "$CONFIG" status --prometheus >"$WORK/metrics.prom" 2>>"$LOG"
kill "$watch"
wait "$watch" 2>/dev/null
sed -n 's/^\([a-z_][a-z0-9_]*\)[{ ].*/\1/p' "$WORK/metrics.prom" | sort -u >"$WORK/exported"
check "the hook exports metrics" [ "$(wc -l <"$WORK/exported")" -gt 10 ]
# node_exporter's own, for the textfile the metrics come in.
echo node_textfile_mtime_seconds >>"$WORK/exported"

undocumented=$(grep -v '^node_' "$WORK/exported" | while read -r m; do
        grep -q "\b${m%_total}" "$top/docs/operations.md" || echo "$m"
done)
check "every exported metric is in docs/operations.md (not: $(echo $undocumented))" \
        [ -z "$undocumented" ]

echo "-- alert rules"
check "rules load" promtool check rules "$rules"
check "rules' unit tests" promtool test rules "$top/deploy/prometheus/resctrl-mon-hook.rules.test.yaml"
unknown=$(grep "^ *expr:" "$rules" | names - | grep -vxF -f "$WORK/exported")
check "rules name only exported metrics (not: $(echo $unknown))" [ -z "$unknown" ]
check "every alert has a summary, a description and a runbook" \
        [ "$(grep -c '^      - alert:' "$rules")" -eq "$(grep -c '^          runbook_url:' "$rules")" ] &&
        [ "$(grep -c '^      - alert:' "$rules")" -eq "$(grep -c '^          summary:' "$rules")" ] &&
        [ "$(grep -c '^      - alert:' "$rules")" -eq "$(grep -c '^          description:' "$rules")" ]
for anchor in $(sed -n 's/.*runbook_url: "docs\/operations.md#\([a-z0-9-]*\)".*/\1/p' "$rules" | sort -u); do
        # GitHub's anchors: the heading lowercased, spaces to '-', other punctuation dropped.
        check "runbook #$anchor is a heading of docs/operations.md" \
                grep -qx "$anchor" <(sed -n 's/^#\{2,4\} //p' "$top/docs/operations.md" |
                        tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9_\n-')
done

echo "-- the dashboard"
check "dashboard is JSON of a dashboard's shape" jqe '
        (.title | type) == "string" and (.uid | type) == "string" and
        (.panels | length) > 0 and
        all(.panels[]; (.title | type) == "string" and (.type | type) == "string" and
                (.gridPos | has("x") and has("y") and has("w") and has("h")) and
                (.targets | length) > 0 and all(.targets[]; (.expr | type) == "string"))' \
        "$dashboard"
# Grafana's variables as a rule file's queries would have them, then each
# query as a recording rule: promtool parses them all.
jq -r '.panels[].targets[].expr' "$dashboard" |
        sed -e 's/\$__rate_interval/5m/g' -e 's/\$instance/.*/g' |
        awk 'BEGIN { print "groups:\n  - name: dashboard\n    rules:" }
                { gsub(/\x27/, "\x27\x27"); printf "      - record: dashboard:query%d\n        expr: \x27%s\x27\n", NR, $0 }' \
                >"$WORK/dashboard.rules.yaml"
check "every query parses" promtool check rules "$WORK/dashboard.rules.yaml"
unknown=$(jq -r '.panels[].targets[].expr' "$dashboard" | names - | grep -vxF -f "$WORK/exported")
check "queries name only exported metrics (not: $(echo $unknown))" [ -z "$unknown" ]

stop "$p1"; stop "$p2"; stop "$p3"
harness_done
