#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The hook under valgrind memcheck on a representative set of invocations:
# every stage and outcome, and every kind of error path. Each must exit with
# its usual status, and memcheck must report no error and no leak of any kind
# (not even "still reachable"). The fuzz targets' replay drivers run their
# seed corpora under memcheck too.
#   test_valgrind.sh HOOK RESCTRLFS FUZZ_BIN_DIR
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
command -v valgrind >/dev/null || { echo "needs valgrind"; exit 77; }
REAL_HOOK=$1
FUZZ_BIN=$3
TOP=$(cd "$(dirname "$0")/../.." && pwd)
harness_init "$1" "$2" valgrind

VG_LOGS=$WORK/vg
mkdir -p "$VG_LOGS"
VALGRIND=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=all
        --errors-for-leak-kinds=all --track-fds=no --error-exitcode=99
        --log-file="$VG_LOGS/%p.log")
# The harness runs $HOOK: make that the hook under memcheck.
HOOK=$WORK/hook-under-valgrind
printf '#!/bin/sh\nexec %s %q "$@"\n' "$(printf '%q ' "${VALGRIND[@]}")" "$REAL_HOOK" >"$HOOK"
chmod +x "$HOOK"
invocations=0

expect() { # WHAT STATUS COMMAND...: the command's exit status
        local what=$1 status=$2
        shift 2
        "$@"
        local got=$?
        invocations=$((invocations + 1))
        check "$what: exit $status (got $got)" [ "$got" -eq "$status" ]
}

# UID1 and UID2: the harness's.
UID3=$(new_uid 1)

mount_emulator --num-rmids 3 --ctrl-groups gold,silver
write_config
sleeper p1 p2 p3 p4 p5
bundle "$WORK/b-gold" '{"closID":"gold"}'
bundle "$WORK/b-monitored" '{"closID":"gold","enableMonitoring":true}'
bundle "$WORK/b-bad" '{"closID":"../gold"}'
echo "$p4" >"$MNT/silver/tasks"

# --- every stage and outcome ---------------------------------------------------
expect "createRuntime: new group" 0 create c1 "$p1" "$UID1"
expect "createRuntime: second member" 0 create c2 "$p2" "$UID1"
expect "createRuntime: already recorded" 0 create c2 "$p2" "$UID1"
expect "prestart" 0 hook prestart "$(state c2 "$p2" "$UID1")"
expect "createRuntime: other control group" 0 create c3 "$p3" "$UID2" "$WORK/b-gold"
expect "createRuntime: out of RMIDs" 0 create c5 "$p5" "$UID3"
expect "createRuntime: class mismatch" 0 create c4 "$p4" "$UID2" "$WORK/b-gold"
expect "createRuntime: runtime monitors it" 0 create c6 "$p1" "$UID3" "$WORK/b-monitored"
printf '{"id":"x","pid":%s,"annotations":{}}' "$p1" >"$WORK/in.json"
expect "createRuntime: not a pod" 0 run_hook createRuntime "$WORK/in.json"
write_config "namespaces: [prod]" "labelSelector: {app: web}"
expect "createRuntime: filtered" 0 create c7 "$p1" "$UID3"
write_config
expect "poststop: member dropped" 0 poststop c2 "$UID1"
expect "poststop: group kept (tasks left)" 0 poststop c1 "$UID1"
expect "poststop: not recorded" 0 poststop ghost "$UID3"
kill "$p3"; wait "$p3" 2>/dev/null
expect "poststop: group removed" 0 poststop c3 "$UID2"

# --- error paths ---------------------------------------------------------------
write_config "failurePolicy: fail"
printf '{"id":"c1","pid":"12"}' >"$WORK/in.json"
expect "bad state JSON" 1 run_hook createRuntime "$WORK/in.json"
expect "bad state JSON at poststop" 0 run_hook poststop "$WORK/in.json"
state c1 "$p1" "../../etc" >"$WORK/in.json"
expect "bad pod UID" 1 run_hook createRuntime "$WORK/in.json"
expect "bad control group name" 1 create c1 "$p1" "$UID1" "$WORK/b-bad"
{
        printf '{"id":"c1","pad":"'
        head -c $((6 * 1024 * 1024)) /dev/zero | tr '\0' a
        printf '"}'
} >"$WORK/big.json"
expect "state over 4 MiB" 1 run_hook createRuntime "$WORK/big.json"
mkfifo "$WORK/fifo"
(exec 9>"$WORK/fifo" && printf '{"id":' >&9 && exec sleep 1000) &
HOLDERS+=("$!")
expect "stdin held open" 1 run_hook createRuntime "$WORK/fifo"
echo '{"version":1}' >"$STATE/$UID1.members"
expect "invalid member file" 1 create c9 "$p1" "$UID1"
expect "invalid member file at poststop" 0 poststop c1 "$UID1"
rm "$STATE/$UID1.members"
(exec 9>>"$STATE/$UID2.lock" && flock -x 9 && exec sleep 1000) &
HOLDERS+=("$!")
wait_for "$WAIT_PROCESS" "a holder of $UID2's pod lock" lock_held "$STATE/$UID2.lock" || exit 1
# Long enough for the hook under memcheck to reach the lock wait: its
# container left for gc and watch as an intake record, exit 0.
write_config "failurePolicy: fail" "lockTimeoutMs: 2000"
expect "pod lock timeout" 0 create c8 "$p1" "$UID2"
check "pod lock timeout: the intake record" [ -f "$STATE/$UID2.intake.c8" ]
resctrl_path=$WORK/nowhere write_config "failurePolicy: fail"
expect "resctrl missing" 1 create c1 "$p1" "$UID1"
state_dir=$WORK/state/ write_config "failurePolicy: fail"
expect "stateDir refused" 1 create c1 "$p1" "$UID1"
echo "lockTimeoutMs: [1]" >"$CONFIG"
state c1 "$p1" "$UID1" >"$WORK/in.json"
expect "invalid config" 0 run_hook createRuntime "$WORK/in.json"
expect "missing config" 0 "$HOOK" --config "$WORK/missing.yaml" createRuntime <"$WORK/in.json"
expect "usage: unknown stage" 0 "$HOOK" --config "$CONFIG" bogus </dev/null
expect "usage: unknown option" 0 "$HOOK" --config "$CONFIG" --bogus createRuntime </dev/null
expect "usage: bad log level" 0 "$HOOK" --config "$CONFIG" --log-level loud createRuntime </dev/null
expect "usage: gc's unknown option" 2 "$HOOK" --config "$CONFIG" gc --bogus </dev/null
expect "--help" 0 "$HOOK" --help </dev/null >/dev/null
expect "--version" 0 "$HOOK" --version </dev/null >/dev/null

# --- the fuzz targets on their seeds ---------------------------------------------
# A target's seeds: its corpus, and the other suites' files tests/fuzz/seeds.txt names.
seeds_of() { # TARGET
        [ ! -d "$TOP/tests/fuzz/corpus/$1" ] || echo "$TOP/tests/fuzz/corpus/$1"
        sed -n "s/^$1 //p" "$TOP/tests/fuzz/seeds.txt" | tr ' ' '\n' | sed "s|^|$TOP/|"
}
for t in state config pod_state; do
        mapfile -t seeds < <(seeds_of "$t")
        expect "fuzz_$t on its seeds" 0 "${VALGRIND[@]}" "$FUZZ_BIN/fuzz_$t" "${seeds[@]}" >/dev/null
done

# --- watch's HTTP server (--metrics-listen) -----------------------------------------
# Its runs keep the libraries they open (hook/http_libs.h) until they exit:
# the loader's records of them, and their thread-local blocks, are still
# reachable then by design (dlopen.supp), nothing else. The runs that end
# (a refused web config, a key that is not the certificate's, an address in
# use) are checked for leaks; the one that serves until killed, for errors, in
# every thread, while it answers TLS, basic auth, 404, 405 and 431.
VG_HTTP_LOGS=$WORK/vg-http
mkdir -p "$VG_HTTP_LOGS"
VG_HTTP=(valgrind --tool=memcheck --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all
        --track-fds=no --num-callers=40 --child-silent-after-fork=yes
        --suppressions="$TOP/tests/valgrind/dlopen.supp"
        --log-file="$VG_HTTP_LOGS/%p.log")
http_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
vg_watch() { "${VG_HTTP[@]}" "$REAL_HOOK" --config "$CONFIG" watch "$@" </dev/null >/dev/null 2>>"$LOG"; }
http_expect() { # WHAT STATUS WATCH OPTIONS...
        local what=$1 status=$2
        shift 2
        vg_watch "$@"
        local got=$?
        check "$what: exit $status (got $got)" [ "$got" -eq "$status" ]
}
if command -v curl >/dev/null && command -v openssl >/dev/null && command -v htpasswd >/dev/null; then
        write_config
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
                -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/server.key" -out "$WORK/server.crt" 2>/dev/null
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=x -keyout "$WORK/other.key" \
                -out "$WORK/other.crt" 2>/dev/null
        printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13\n' >"$WORK/web-bad.yml"
        http_expect "watch: a web config refused" 2 --metrics-listen "127.0.0.1:$(http_port)" --web-config "$WORK/web-bad.yml"
        printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n' >"$WORK/web-other.yml"
        http_expect "watch: a key not the certificate's" 1 --metrics-listen "127.0.0.1:$(http_port)" --web-config "$WORK/web-other.yml"
        printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  u: %s\n' \
                "$(htpasswd -nbBC 4 u p | cut -d: -f2-)" >"$WORK/web.yml"
        port=$(http_port)
        "${VG_HTTP[@]}" --leak-check=no "$REAL_HOOK" --config "$CONFIG" watch --interval 3600 \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml" </dev/null >/dev/null 2>>"$LOG" &
        serving=$!
        url=https://127.0.0.1:$port
        tls=(--cacert "$WORK/server.crt" --max-time 60)
        answers() { [ "$(curl -s -o /dev/null -w '%{http_code}' "${tls[@]}" "$@")" = "$HTTP_WANT" ]; }
        HTTP_WANT=200
        check "watch under memcheck serves" wait_for $((WAIT_DAEMON * 4)) "watch serving under memcheck" \
                answers -u u:p "$url/healthz"
        check "its /metrics" answers -u u:p "$url/metrics"
        check "its /metrics kept" answers -u u:p "$url/metrics"
        check "its index" answers -u u:p "$url/"
        HTTP_WANT=401
        check "a wrong password" answers -u u:x "$url/metrics"
        HTTP_WANT=404
        check "a 404" answers -u u:p "$url/nope"
        HTTP_WANT=405
        check "a 405" answers -u u:p -X POST --data x "$url/metrics"
        HTTP_WANT=431
        check "a 431" answers -u u:p -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" "$url/metrics"
        http_expect "watch: the address in use" 1 --metrics-listen "127.0.0.1:$port"
        kill "$serving"
        wait "$serving" 2>/dev/null
        serving_log=$VG_HTTP_LOGS/$serving.log
        for log in "$VG_HTTP_LOGS"/*.log; do
                cmd=$(sed -n 's/^==[0-9]*== Command: //p' "$log" | cut -c1-120)
                if ! grep -q "ERROR SUMMARY: 0 errors from 0 contexts" "$log" || { [ "$log" != "$serving_log" ] &&
                        ! grep -q "still reachable: 0 bytes in 0 blocks" "$log"; }; then
                        check "memcheck clean: $cmd" false
                        grep -v '^==[0-9]*== *$' "$log" | head -80 >&2
                else
                        check "memcheck clean: $cmd" true
                fi
        done
        check "one memcheck log per watch" [ "$(find "$VG_HTTP_LOGS" -name '*.log' | wc -l)" -eq 4 ]
else
        echo "no curl, openssl or htpasswd: watch's HTTP server is not run under memcheck"
fi

# --- what memcheck found ----------------------------------------------------------
logs=$(find "$VG_LOGS" -name '*.log' | wc -l)
check "one memcheck log per invocation ($logs for $invocations)" [ "$logs" -eq "$invocations" ]
for log in "$VG_LOGS"/*.log; do
        cmd=$(sed -n 's/^==[0-9]*== Command: //p' "$log" | cut -c1-100)
        if ! grep -q "ERROR SUMMARY: 0 errors from 0 contexts" "$log" ||
                ! grep -q "All heap blocks were freed -- no leaks are possible" "$log"; then
                check "memcheck clean: $cmd" false
                sed -n '/HEAP SUMMARY/,$p' "$log" | head -40 >&2
        else
                check "memcheck clean: $cmd" true
        fi
done

harness_done
