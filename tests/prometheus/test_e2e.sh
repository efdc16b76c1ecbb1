#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# watch's /metrics scraped by a real Prometheus (Debian's), which loads
# deploy/prometheus/*.rules.yaml as shipped and answers deploy/grafana's
# queries:
#   test_e2e.sh SOURCE_DIR HOOK RESCTRLFS
# On the emulator (two L3 domains with ABMC counters, one PERF_PKG domain):
# pod A (shop/web) with bandwidth counters, pod C (batch/job) with them too,
# pod B (shop/db) left without (the counters ran out). watch serves
# /metrics on 127.0.0.1 (--metrics-listen); Prometheus on 127.0.0.1, its
# storage in the run's directory, scrapes it and evaluates the rules every
# second. Through Prometheus' HTTP API:
#   - up is 1, and every resctrl_pod_* series `status --prometheus` prints
#     for the pods is in Prometheus with its labels, plus job and instance;
#   - every query of every dashboard panel, its variables set to values the
#     variables' own queries return, has a non-empty result;
#   - the recording rules' sums equal the per-domain series added up (live
#     pods);
#   - pod C ends (poststop of its last container: its group goes): its final
#     series appear with the values status prints, its live ones go, and
#     the recorded sums equal the final series, not below the live ones;
#   - watch stopped: ResctrlWatchNotRunning, inactive before, is pending
#     within seconds (as shipped, for: 10m), and firing in a test copy
#     whose for: is 2 s;
#   - watch started again with --web-config (a self-signed certificate and
#     a bcrypt basic-auth user): after Prometheus reloads its config, up is
#     1 over TLS with the user's password, 0 with a wrong one and 0 in the
#     clear; the alert is inactive again.
# Waits are conditions bounded by tests/lib/wait.sh (Prometheus takes a few
# scrapes and evaluations). Prometheus and watch are the run's jobs: the
# harness kills them at exit, INT and TERM included, and removes the run's
# directory with Prometheus' storage.
set -u

top=$(cd "$1" && pwd)
# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$2" "$3" prom-e2e
for cmd in prometheus curl jq openssl htpasswd python3; do
        command -v "$cmd" >/dev/null || { echo "needs $cmd (scripts/install-deps.sh)"; exit 77; }
done
"$HOOK" watch --help 2>&1 | grep -q -- '--metrics-listen' ||
        { echo "FAIL: watch has no --metrics-listen" >&2; exit 1; }
rules_dir=$top/deploy/prometheus
dashboard=$top/deploy/grafana/resctrl-mon-hook.json
job=resctrl-mon-hook
# Grafana's $__rate_interval at a 1 s scrape interval: 4 scrapes, and one more.
rate_interval=5s

UIDA=$UID1
UIDB=$UID2
UIDC=$(new_uid 3)

# --- helpers ---------------------------------------------------------------

# A port on 127.0.0.1 that nothing listens on now (the kernel's pick).
free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

create_pod() { # ID PID UID NAMESPACE POD
        hook createRuntime "$(printf '{"ociVersion":"1.2.0","id":"%s","status":"creating","pid":%s,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s","io.kubernetes.pod.namespace":"%s","io.kubernetes.pod.name":"%s"}}' \
                "$1" "$2" "$WORK/bundle" "$3" "$4" "$5")"
}

# start_watch [OPTIONS...]: watch serving /metrics on a free port of
# 127.0.0.1, in $WATCH, its port in $WATCH_PORT; true once it answers
# (with curl options $CURL_AUTH, for a web config). A port taken between
# free_port and watch's bind is tried again with another.
WATCH=
CURL_AUTH=()
start_watch() {
        local try
        for try in 1 2 3; do
                WATCH_PORT=$(free_port)
                "$HOOK" --config "$CONFIG" watch --interval 3600 --metrics-listen "127.0.0.1:$WATCH_PORT" "$@" \
                        >/dev/null 2>>"$WORK/watch.log" &
                WATCH=$!
                wait_for "$WAIT_DAEMON" "watch serving /metrics on $WATCH_PORT" watch_serving && return 0
                stop_watch
        done
        echo "watch does not serve: $(tail -n 5 "$WORK/watch.log")" >&2
        return 1
}
watch_serving() { # true once /metrics answers; false at once when watch is gone
        kill -0 "$WATCH" 2>/dev/null || return 1
        metrics_scrape >/dev/null
}
metrics_scrape() {
        local scheme=http
        [ "${#CURL_AUTH[@]}" -eq 0 ] || scheme=https
        curl -sf --max-time 5 ${CURL_AUTH[@]+"${CURL_AUTH[@]}"} "$scheme://127.0.0.1:$WATCH_PORT/metrics"
}
stop_watch() {
        [ -n "$WATCH" ] || return 0
        kill "$WATCH" 2>/dev/null
        wait "$WATCH" 2>/dev/null
        WATCH=
}

# Prometheus' config: the rules as shipped (a glob over deploy/prometheus,
# which the unit tests' *.rules.test.yaml does not match), the test copy of
# ResctrlWatchNotRunning, and the scrape jobs given on stdin.
prom_config() {
        {
                cat <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - $rules_dir/*.rules.yaml
  - $WORK/shortened.rules.yaml
scrape_configs:
EOF
                cat
        } >"$WORK/prometheus.yml.tmp" && mv "$WORK/prometheus.yml.tmp" "$WORK/prometheus.yml"
}

PROM=
start_prometheus() {
        local try
        for try in 1 2 3; do
                PROM_PORT=$(free_port)
                prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
                        --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
                        >>"$WORK/prometheus.log" 2>&1 &
                PROM=$!
                wait_for "$WAIT_DAEMON" "Prometheus ready on $PROM_PORT" prom_ready && return 0
                kill "$PROM" 2>/dev/null
                wait "$PROM" 2>/dev/null
        done
        echo "Prometheus does not start: $(tail -n 5 "$WORK/prometheus.log")" >&2
        return 1
}
prom_ready() {
        kill -0 "$PROM" 2>/dev/null || return 1
        curl -sf --max-time 5 "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null
}

# paced COMMAND...: COMMAND's answer, asked at most every 0.5 s (Prometheus
# scrapes and evaluates once a second), false at once in between: a
# wait_for's looks stay cheap, so that its bound stays about its seconds
# even where each question takes a few HTTP requests.
paced_next=0
paced() {
        local now=${EPOCHREALTIME/./}
        [ "$now" -ge "$paced_next" ] || return 1
        "$@"
        local rc=$?
        paced_next=$((${EPOCHREALTIME/./} + 500000))
        return "$rc"
}

# prom_wait WHAT COMMAND...: wait_for, bounded by WAIT_DAEMON, of a question
# to Prometheus.
prom_wait() { wait_for "$WAIT_DAEMON" "$1" paced "${@:2}"; }

# q EXPR [TIME]: an instant query's result (the array), or false.
q() {
        local out
        out=$(curl -sfG --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/query" \
                --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}) || return 1
        jq -ce 'select(.status == "success") | .data.result' <<<"$out"
}
# has EXPR: true once the query's result is not empty.
has() { q "$1" | jq -e 'length > 0' >/dev/null 2>&1; }
# none EXPR: true once it is empty.
none() { q "$1" | jq -e 'length == 0' >/dev/null 2>&1; }
# value EXPR [TIME]: the one sample's value.
value() { q "$@" | jq -er 'if length == 1 then .[0].value[1] else error("\(length) samples") end'; }

# The state of alert ALERTNAME's rule whose labels have LABEL=VALUE (or
# have no such label, with VALUE empty) in /api/v1/rules: inactive,
# pending or firing.
alert_state() { # ALERTNAME LABEL VALUE
        curl -sf --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/rules?type=alert" |
                jq -er --arg n "$1" --arg l "$2" --arg v "$3" '
                        [.data.groups[].rules[] | select(.name == $n and (.labels[$l] // "") == $v) | .state]
                        | if length == 1 then .[0] else error("\(length) rules") end'
}
alert_is() { [ "$(alert_state "$1" "$2" "$3")" = "$4" ]; } # ALERTNAME LABEL VALUE STATE

# The resctrl_pod_* series of pods A, B, C that TEXT (the exposition format)
# holds, as "name{labels sorted}", one a line, sorted.
series_of_text() {
        grep -E '^resctrl_pod_[a-z_]+\{' | sed 's/} .*/}/' |
                grep -E "pod_uid=\"($UIDA|$UIDB|$UIDC)\"" |
                python3 -c '
import re, sys
for line in sys.stdin:
    name, labels = line.strip().split("{", 1)
    pairs = sorted(re.findall(r"([a-z_]+)=\"([^\"]*)\"", labels))
    print(name + "{" + ",".join("%s=\"%s\"" % p for p in pairs) + "}")' | sort
}
# The same of Prometheus' answer to EXPR, job and instance left out.
series_of_prom() { # EXPR
        q "$1" | jq -r '.[].metric | del(.job, .instance) | .__name__ as $n | del(.__name__)
                | "\($n){" + ([to_entries[] | "\(.key)=\"\(.value)\""] | sort | join(",")) + "}"' | sort
}

# --- the node: the emulator and the pods ------------------------------------

# Six bandwidth counters per L3 domain: the root group's two, pod A's two,
# pod C's two; pod B, made last, gets none.
mount_emulator --l3-domains 2 --perf-pkg-domains 1 --mbm-counters 6
write_config
bundle "$WORK/bundle"
sleeper pa pb pc
check "create pod A (shop/web)" create_pod a1 "$pa" "$UIDA" shop web
check "create pod C (batch/job)" create_pod c1 "$pc" "$UIDC" batch job
check "create pod B (shop/db)" create_pod b1 "$pb" "$UIDB" shop db
check "pod B has no bandwidth counters" grep -q "pod_uid=\"$UIDB\".*} 4\$" \
        <("$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG" | grep '^resctrl_pod_bandwidth_counters_missing')
: >"$ERR" # the hook's words so far are no failure's

# The test copy of ResctrlWatchNotRunning: for: 2s, and a label that tells
# its alerts from the shipped rule's.
awk '
        /^      - (alert|record):/ { inrule = ($0 == "      - alert: ResctrlWatchNotRunning") }
        /^  - name:/ { inrule = 0 }
        inrule && /^        for:/ { print "        for: 2s"; next }
        inrule && /^        labels:/ { print; print "          rmh_test: shortened"; next }
        inrule { print }
' "$rules_dir/resctrl-mon-hook.rules.yaml" >"$WORK/rule.part"
{ printf 'groups:\n  - name: rmh-test-shortened\n    rules:\n'; cat "$WORK/rule.part"; } >"$WORK/shortened.rules.yaml"
# Its expr is the shipped one's, and its for: is 2 s.
copy_is_shortened() {
        [ "$(sed -n '/^        expr:/,/^        for:/p' "$WORK/rule.part")" = \
                "$(sed -n '/^      - alert: ResctrlWatchNotRunning$/,/^        for:/p' "$rules_dir/resctrl-mon-hook.rules.yaml" |
                        sed -n '/^        expr:/,$p' | sed 's/^        for: .*/        for: 2s/')" ] &&
                grep -q '^        for: 2s$' "$WORK/rule.part" && grep -q '^        expr:' "$WORK/rule.part"
}
check "the test copy is the shipped rule with for: 2s" copy_is_shortened

echo "-- watch serving /metrics, Prometheus scraping it"
start_watch || exit 1
check "watch's /healthz says ok" [ "$(curl -sf --max-time 5 "http://127.0.0.1:$WATCH_PORT/healthz")" = ok ]
prom_config <<EOF
  - job_name: $job
    static_configs:
      - targets: ["127.0.0.1:$WATCH_PORT"]
EOF
start_prometheus || exit 1
# The names of the rules Prometheus loaded from the shipped file, and those
# the file has, sorted, one a line.
loaded_rules() {
        curl -sf --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/rules" |
                jq -r --arg f "$rules_dir/resctrl-mon-hook.rules.yaml" '.data.groups[] | select(.file == $f) | .rules[].name' |
                sort
}
shipped_rules() { sed -n 's/^      - \(alert\|record\): //p' "$rules_dir/resctrl-mon-hook.rules.yaml" | sort; }
rules_loaded() { [ "$(loaded_rules)" = "$(shipped_rules)" ]; }
check "Prometheus loaded every rule of the shipped file ($(shipped_rules | wc -l))" \
        prom_wait "the shipped rules loaded" rules_loaded
check "up == 1" prom_wait "up == 1" has "up{job=\"$job\",instance=\"127.0.0.1:$WATCH_PORT\"} == 1"
check "the pods' series scraped" prom_wait "pod B's series" \
        has "resctrl_pod_core_energy_joules_total{pod_uid=\"$UIDB\"}"

echo "-- the per-pod series, with their labels"
"$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG" | series_of_text >"$WORK/status.series"
check "status prints the pods' series" [ "$(grep -c . "$WORK/status.series")" -ge 20 ]
# What a scrape after status's has: the same series (their values differ).
series_match() {
        series_of_prom "{__name__=~\"resctrl_pod_.+\",job=\"$job\"}" >"$WORK/prom.series" &&
                cmp -s "$WORK/status.series" "$WORK/prom.series"
}
prom_wait "Prometheus holding status's series" series_match
check "Prometheus holds every series status prints for the pods, and no other (diff: $(diff "$WORK/status.series" \
        "$WORK/prom.series" | head -n 6 | tr '\n' ' '))" cmp -s "$WORK/status.series" "$WORK/prom.series"
check "pod A's bandwidth in both domains, with its labels" [ "$(q "resctrl_pod_mbm_total_bytes_total{pod_uid=\"$UIDA\"}" |
        jq -c '[.[].metric] | sort_by(.domain)')" = "$(jq -nc --arg u "$UIDA" --arg i "127.0.0.1:$WATCH_PORT" --arg j "$job" '
        [0, 1] | map({__name__: "resctrl_pod_mbm_total_bytes_total", ctrl_group: "/", domain: "mon_L3_0\(.)",
                instance: $i, job: $j, namespace: "shop", pod: "web", pod_uid: $u})')" ]
check "pod B's energy, with its labels" [ "$(q "resctrl_pod_core_energy_joules_total{pod_uid=\"$UIDB\"}" |
        jq -c '[.[].metric]')" = "$(jq -nc --arg u "$UIDB" --arg i "127.0.0.1:$WATCH_PORT" --arg j "$job" '
        [{__name__: "resctrl_pod_core_energy_joules_total", ctrl_group: "/", domain: "mon_PERF_PKG_00",
                instance: $i, job: $j, namespace: "shop", pod: "db", pod_uid: $u}]')" ]
check "pod B has no bandwidth series" none "resctrl_pod_mbm_total_bytes_total{pod_uid=\"$UIDB\"}"

echo "-- every dashboard query answers"
# Each variable of the dashboard: its query's values (label_values(METRIC,
# LABEL), as Grafana's Prometheus data source asks the series API), as
# Grafana puts them into a regex: escaped, joined by |.
vars_ok=true
declare -A var_value=()
while IFS=$'\t' read -r name type definition; do
        case $type in
        datasource) continue ;;
        query) ;;
        *) echo "FAIL: dashboard variable \$$name of type $type, which the test does not know" >&2; vars_ok=false; continue ;;
        esac
        if [[ ! $definition =~ ^label_values\(([a-z_:]+),\ *([a-z_]+)\)$ ]]; then
                echo "FAIL: dashboard variable \$$name's query '$definition' is not label_values(METRIC, LABEL)" >&2
                vars_ok=false
                continue
        fi
        vals=$(curl -sfG --max-time 10 "http://127.0.0.1:$PROM_PORT/api/v1/label/${BASH_REMATCH[2]}/values" \
                --data-urlencode "match[]=${BASH_REMATCH[1]}" | jq -r '.data[]')
        if [ -z "$vals" ]; then
                echo "FAIL: dashboard variable \$$name's query '$definition' has no values" >&2
                vars_ok=false
                continue
        fi
        var_value[$name]=$(printf '%s\n' "$vals" | sed 's/[][\\.^$*+?(){}|]/\\\\&/g' | paste -sd '|')
done < <(jq -r '.templating.list[] | [.name, .type,
        (.definition // (.query | if type == "object" then .query else . end) // "")] | @tsv' "$dashboard")
check "the dashboard's variables have values" $vars_ok
check "\$instance is the target" [ "${var_value[instance]-}" = "127\\\\.0\\\\.0\\\\.1:$WATCH_PORT" ]
n=0
while IFS=$'\t' read -r panel expr; do
        n=$((n + 1))
        e=${expr//\$__rate_interval/$rate_interval}
        e=${e//\$\{__rate_interval\}/$rate_interval}
        for name in "${!var_value[@]}"; do
                e=${e//\$\{$name\}/"${var_value[$name]}"}
                e=${e//\$$name/"${var_value[$name]}"}
        done
        if [[ $e == *'$'* ]]; then
                check "panel '$panel': no variable the test does not know in $e" false
                continue
        fi
        check "panel '$panel': $e answers" prom_wait "an answer to $e" has "$e"
done < <(jq -r '.panels[] | recurse(.panels[]?) | .title as $t | .targets[]? | [$t, .expr] | @tsv' "$dashboard")
check "every panel's query was run ($n)" [ "$n" -eq "$(jq '[.panels[] | recurse(.panels[]?) | .targets[]?] | length' "$dashboard")" -a "$n" -gt 0 ]

echo "-- the recording rules' sums"
# sum_equals RECORD METRIC... UID: the recorded sum at its latest
# evaluation equals, at that time, the series of METRICs of pod UID added
# up. A scrape that started before that evaluation but was stored after it
# is in the series and not in the sum: the next evaluation is looked at then.
sum_equals() {
        local record=$1 uid=${*: -1} t rec raw m
        local -a metrics=("${@:2:$#-2}")
        t=$(value "timestamp($record{pod_uid=\"$uid\"})") || return 1
        rec=$(value "$record{pod_uid=\"$uid\"}" "$t") || return 1
        raw=$(for m in "${metrics[@]}"; do q "$m{pod_uid=\"$uid\"}" "$t" | jq -r '.[].value[1]'; done |
                awk 'NF { s += $1; n++ } END { if (n) printf "%.17g\n", s }')
        [ -n "$raw" ] && awk -v a="$rec" -v b="$raw" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * (b < 0 ? -b : b)) }'
}
ENERGY=namespace_pod:resctrl_pod_core_energy_joules:sum
MBM=namespace_pod:resctrl_pod_mbm_total_bytes:sum
check "the energy sum recorded for pod A, B and C" prom_wait "three energy sums" \
        has "count($ENERGY{pod_uid=~\"$UIDA|$UIDB|$UIDC\"}) == 3"
check "the bandwidth sum recorded for pods A and C" prom_wait "two bandwidth sums" \
        has "count($MBM{pod_uid=~\"$UIDA|$UIDC\"}) == 2"
check "no bandwidth sum for pod B, which has no bandwidth series" none "$MBM{pod_uid=\"$UIDB\"}"
check "the sums keep the pods' labels" [ "$(q "$MBM{pod_uid=\"$UIDA\"}" | jq -c '.[0].metric')" = \
        "$(jq -nc --arg u "$UIDA" --arg i "127.0.0.1:$WATCH_PORT" \
                '{__name__: "namespace_pod:resctrl_pod_mbm_total_bytes:sum", instance: $i, namespace: "shop", pod: "web", pod_uid: $u}')" ]
for u in "$UIDA" "$UIDC"; do
        check "pod $u: the bandwidth sum is its two domains' series added up" \
                prom_wait "pod $u's bandwidth sum equal to its series" \
                sum_equals "$MBM" resctrl_pod_mbm_total_bytes_total resctrl_pod_final_mbm_total_bytes_total "$u"
done
for u in "$UIDA" "$UIDB" "$UIDC"; do
        check "pod $u: the energy sum is its series" \
                prom_wait "pod $u's energy sum equal to its series" \
                sum_equals "$ENERGY" resctrl_pod_core_energy_joules_total resctrl_pod_final_core_energy_joules_total "$u"
done

echo "-- pod C ends: its final counters"
stop "$pc"
# What Prometheus last recorded of the live pod: the sums go on from there.
prom_wait "a scrape and an evaluation after pod C's end" \
        has "timestamp($MBM{pod_uid=\"$UIDC\"}) > $(date +%s.%N) + 1"
live_mbm=$(value "$MBM{pod_uid=\"$UIDC\"}")
live_energy=$(value "$ENERGY{pod_uid=\"$UIDC\"}")
check "poststop of its last container" poststop c1 "$UIDC"
check "its group is gone" [ ! -e "$MNT/mon_groups/$UIDC" ]
"$HOOK" --config "$CONFIG" status --prometheus 2>>"$LOG" | grep "^resctrl_pod_final_.*pod_uid=\"$UIDC\"" >"$WORK/final.prom"
check "status prints its final series" [ "$(grep -c . "$WORK/final.prom")" -ge 4 ]
check "its final series in Prometheus" prom_wait "pod C's final series scraped" \
        has "resctrl_pod_final_mbm_total_bytes_total{pod_uid=\"$UIDC\",domain=\"mon_L3_01\"}"
check "its live series gone from Prometheus" prom_wait "pod C's live series gone" \
        none "{__name__=~\"resctrl_pod_(llc|mbm|core|activity).*\",pod_uid=\"$UIDC\"}"
final_ok=true
while read -r series val; do
        got=$(value "$series") || got=none
        awk -v a="$got" -v b="$val" 'BEGIN { exit !(a == b + 0) }' ||
                { echo "FAIL: $series is $got in Prometheus, $val in status" >&2; final_ok=false; }
done <"$WORK/final.prom"
check "each final series' value in Prometheus is status's" $final_ok
check "the bandwidth sum is its final series added up" prom_wait "pod C's final bandwidth sum" \
        sum_equals "$MBM" resctrl_pod_mbm_total_bytes_total resctrl_pod_final_mbm_total_bytes_total "$UIDC"
check "the energy sum is its final series" prom_wait "pod C's final energy sum" \
        sum_equals "$ENERGY" resctrl_pod_core_energy_joules_total resctrl_pod_final_core_energy_joules_total "$UIDC"
check "the sums go on across its end (bandwidth $live_mbm, energy $live_energy before)" \
        has "$MBM{pod_uid=\"$UIDC\"} >= $live_mbm and on() $ENERGY{pod_uid=\"$UIDC\"} >= $live_energy"

echo "-- watch stopped: ResctrlWatchNotRunning"
check "inactive while watch runs (shipped)" alert_is ResctrlWatchNotRunning rmh_test "" inactive
check "inactive while watch runs (copy)" alert_is ResctrlWatchNotRunning rmh_test shortened inactive
stop_watch
t0=$(date +%s)
check "pending within seconds, as shipped" prom_wait "ResctrlWatchNotRunning pending" \
        alert_is ResctrlWatchNotRunning rmh_test "" pending
echo "pending after $(($(date +%s) - t0)) s"
check "firing within seconds, for: 2s" prom_wait "ResctrlWatchNotRunning firing" \
        alert_is ResctrlWatchNotRunning rmh_test shortened firing
echo "firing after $(($(date +%s) - t0)) s"

echo "-- TLS and basic auth: watch with --web-config"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
        -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
        -keyout "$WORK/tls.key" -out "$WORK/tls.crt" >/dev/null 2>&1 || { echo "FAIL: openssl" >&2; exit 1; }
password=$(new_uid)
hash=$(htpasswd -nbBC 5 prometheus "$password" | sed -n 's/^prometheus://p')
check "a bcrypt hash" grep -q '^\$2[aby]\$05\$' <<<"$hash"
cat >"$WORK/web.yml" <<EOF
tls_server_config:
  cert_file: $WORK/tls.crt
  key_file: $WORK/tls.key
basic_auth_users:
  prometheus: '$hash'
EOF
CURL_AUTH=(--cacert "$WORK/tls.crt" -u "prometheus:$password")
start_watch --web-config "$WORK/web.yml" || exit 1
check "curl: no password, 401" [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$WORK/tls.crt" \
        "https://127.0.0.1:$WATCH_PORT/metrics")" = 401 ]
tls_job() { # JOB SCHEME PASSWORD
        cat <<EOF
  - job_name: $1
    scheme: $2
    tls_config:
      ca_file: $WORK/tls.crt
    basic_auth:
      username: prometheus
      password: '$3'
    static_configs:
      - targets: ["127.0.0.1:$WATCH_PORT"]
EOF
}
{
        tls_job "$job" https "$password"
        tls_job rmh-wrong-password https "not-$password"
        tls_job rmh-in-the-clear http "$password"
} | prom_config
kill -HUP "$PROM"
check "up == 1 over TLS with basic auth" prom_wait "up == 1 over TLS" \
        has "up{job=\"$job\",instance=\"127.0.0.1:$WATCH_PORT\"} == 1"
check "up == 0 with a wrong password" prom_wait "up == 0 with a wrong password" \
        has "up{job=\"rmh-wrong-password\"} == 0"
check "up == 0 in the clear" prom_wait "up == 0 in the clear" has "up{job=\"rmh-in-the-clear\"} == 0"
check "the pods' series over TLS" prom_wait "pod A's series over TLS" \
        has "resctrl_pod_core_energy_joules_total{pod_uid=\"$UIDA\",instance=\"127.0.0.1:$WATCH_PORT\"}"
check "ResctrlWatchNotRunning inactive again" prom_wait "ResctrlWatchNotRunning inactive" \
        alert_is ResctrlWatchNotRunning rmh_test "" inactive
check "no sample of the rejected scrapes" none "scrape_samples_scraped{job=~\"rmh-wrong-password|rmh-in-the-clear\"} > 0"

stop_watch
kill "$PROM" 2>/dev/null
wait "$PROM" 2>/dev/null
[ "$failed" -eq 0 ] || { echo "--- Prometheus' log:"; tail -n 20 "$WORK/prometheus.log"; echo "--- watch's log:"; tail -n 20 "$WORK/watch.log"; } >&2
stop "$pa"; stop "$pb"
harness_done
