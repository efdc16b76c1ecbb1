#!/bin/bash
# watch --metrics-listen on the resctrlfs emulator: /metrics is what status
# --prometheus prints, /healthz follows watch's loop, the index, 404, 405,
# HEAD; a run of status slower than a scrape's timeout serves the last
# output; oversized, slow and flooding clients are cut off while watch's
# joins and createRuntimes go on, and a flood from another node (a network
# namespace) leaves kubelet's probe, on the loopback, room; the server's
# threads at a low priority; TLS and basic auth from a web config, /healthz
# open on the loopback alone, and a web config that is refused leaves
# nothing listening.
#   test_metrics_http.sh HOOK RESCTRLFS SOURCE_DIR WATCH_UNIT
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" metrics-http
TOP=$3
UNIT=$4
for tool in curl openssl htpasswd ss python3 strace; do
        command -v "$tool" >/dev/null || { echo "needs $tool (scripts/install-deps.sh)"; exit 77; }
done

G1=$MNT/mon_groups/$UID1
WOUT=$WORK/watch.out
WERR=$WORK/watch.err
WATCH=
PORT=
URL=

# A TCP port of 127.0.0.1 that nothing listens on now.
free_port() {
        python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The HTTP status of a request (000 when none came); curl's options after the URL.
code() { # URL [CURL OPTIONS...]
        curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$@"
}
answers() { [ "$(code "$@")" = "$HTTP_WANT" ]; } # URL...: with $HTTP_WANT
serves_at() { HTTP_WANT=200 answers "$@"; } # URL [CURL OPTIONS...]
serves() { serves_at "$URL/healthz" "$@"; } # [CURL OPTIONS...]

watch_says() { jq -r "$1" "$STATE/watch.state" 2>/dev/null; } # JQ
watch_at_least() { [ "$(watch_says "$1")" -ge "$2" ] 2>/dev/null; } # JQ N

# Starts watch with --metrics-listen on a free port of 127.0.0.1 and the
# options given; waits for its first pass and for /healthz to answer
# (CURL_OPTS: how, for TLS and auth).
start_watch() { # INTERVAL [WATCH OPTIONS...]
        local interval=$1
        shift
        PORT=$(free_port)
        URL=${SCHEME:-http}://127.0.0.1:$PORT
        : >"$WOUT"
        : >"$WERR"
        rm -f "$STATE/watch.state"
        env ${WATCH_ENV[@]+"${WATCH_ENV[@]}"} "$HOOK" --config "$CONFIG" watch --interval "$interval" \
                --metrics-listen "127.0.0.1:$PORT" "$@" >"$WOUT" 2>"$WERR" &
        WATCH=$!
        wait_for "$WAIT_DAEMON" "watch's first pass written" watch_at_least .passes 1 &&
                wait_for "$WAIT_DAEMON" "watch serving $URL" serves ${CURL_OPTS[@]+"${CURL_OPTS[@]}"}
}
stop_watch() { kill -KILL "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null; WATCH=; }

# A container c1 of pod UID1 in its own cgroup v2, its init $p1.
setup_pod() {
        root=$(private_cgroup v2) || return 1
        mount_emulator
        write_config
        mkdir -p "$root/c1"
        sleeper p1
        echo "$p1" >"$root/c1/cgroup.procs"
        create c1 "$p1" "$UID1"
}
teardown_pod() {
        stop_watch
        remove_cgroup_tree "$root/c1"
        wait "$p1" 2>/dev/null
}

# The Prometheus text without its values: each sample's name and labels,
# and the HELP and TYPE lines, sorted.
series() { sed -E '/^#/!s/ [^ ]+$//' | sort; }
# What /metrics adds to status's output: when the run that made it began.
STAMP=resctrl_metrics_timestamp_seconds
stamp_of() { sed -n "s/^$STAMP //p"; } # < BODY
without_stamp() { grep -v "$STAMP"; }  # < BODY

# The name and nice value of each of process PID's threads but the first,
# "NAME NICE" a line.
thread_nices() { # PID
        local t stat fields
        for t in /proc/"$1"/task/*; do
                [ "${t##*/}" = "$1" ] && continue
                read -r stat 2>/dev/null <"$t/stat" || continue
                read -ra fields <<<"${stat##*) }"
                echo "$(cat "$t/comm") ${fields[16]}"
        done
}

# --- /metrics, /healthz, the index, 404, 405, HEAD --------------------------

test_endpoints() {
        local body again headers
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        check "watch serves" start_watch 3600
        body=$(curl -s --max-time 10 -D "$WORK/headers" "$URL/metrics")
        again=$(curl -s --max-time 10 "$URL/metrics") # within the 2 s a text is kept
        headers=$(tr -d '\r' <"$WORK/headers")
        check "/metrics: 200" grep -q '^HTTP/1.1 200' <<<"$headers"
        check "/metrics: the exposition format's content type" \
                grep -qx 'Content-Type: text/plain; version=0.0.4; charset=utf-8' <<<"$headers"
        "$HOOK" --config "$CONFIG" status --prometheus >"$WORK/status.prom"
        check "/metrics: the series of status --prometheus, each of them" \
                diff <(series <"$WORK/status.prom") <(without_stamp <<<"$body" | series)
        check "/metrics: ends with when its run of status began, within a minute of now" \
                awk -v now="$(date +%s)" '{ exit !($1 > now - 60 && $1 <= now + 1) }' <<<"$(stamp_of <<<"$body")"
        check "the HTTP server's threads at nice 10, but the one that runs status" \
                awk '$1 == "http-refresher" { r = ($2 == 0) } $1 ~ /^(MHD-|http-reaper)/ { n++; if ($2 != 10) bad = 1 }
                        END { exit !(r && n >= 2 && !bad) }' <<<"$(thread_nices "$WATCH")"
        check "watch's loop at nice 0" [ "$(awk '{ print $19 }' "/proc/$WATCH/stat")" = 0 ]
        check "/metrics: the pod's series" grep -q "^resctrl_pod_threads{pod_uid=\"$UID1\"" <<<"$body"
        check "/metrics: watch runs" grep -qx 'resctrl_watch_running 1' <<<"$body"
        check "/metrics: promtool takes it" sh -c \
                "! command -v promtool >/dev/null || promtool check metrics >/dev/null 2>&1" <<<"$body"
        check "/metrics again within 2 s: the same text, kept" [ "$again" = "$body" ]
        check "/healthz: 200 ok" [ "$(curl -s --max-time 10 "$URL/healthz")" = ok ]
        body=$(curl -s --max-time 10 -D "$WORK/headers" "$URL/")
        check "/: an HTML index" grep -qi '^Content-Type: text/html' "$WORK/headers"
        check "/: linking /metrics" grep -q 'href="/metrics"' <<<"$body"
        check "/: and /healthz" grep -q 'href="/healthz"' <<<"$body"
        check "/nope: 404" [ "$(code "$URL/nope")" = 404 ]
        check "/metrics/: 404" [ "$(code "$URL/metrics/")" = 404 ]
        check "/metrics?x=1: 200 (a query is not the path)" [ "$(code "$URL/metrics?x=1")" = 200 ]
        local m
        for m in POST PUT DELETE OPTIONS PATCH TRACE; do
                check "$m /metrics: 405" [ "$(code "$URL/metrics" -X "$m")" = 405 ]
        done
        curl -s --max-time 10 -o /dev/null -D "$WORK/headers" -X POST --data x "$URL/metrics"
        check "405: Allow: GET, HEAD" grep -q $'^Allow: GET, HEAD\r$' "$WORK/headers"
        curl -s --max-time 10 -I "$URL/metrics" >"$WORK/head"
        check "HEAD /metrics: 200" grep -q '^HTTP/1.1 200' "$WORK/head"
        check "HEAD /metrics: the length of the body it does not send" \
                grep -qx "Content-Length: [1-9][0-9]*"$'\r' "$WORK/head"
        check "HEAD /healthz: 200" [ "$(code "$URL/healthz" -I)" = 200 ]
        check "one connection for two requests (keep-alive)" sh -c \
                "curl -sv --max-time 10 '$URL/healthz' '$URL/healthz' 2>&1 | grep -q 'Re-using existing connection'"
        check "watch logged nothing" [ ! -s "$WERR" ]
        teardown_pod
}

# Ten scrapes at once, from ten addresses (as ten Prometheus servers: one
# address has 8 connections at most), with the output of the last run of
# status no longer fresh: one run of status for all of them.
test_one_run_for_ten() {
        local i runs
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        # LeakSanitizer cannot run under ptrace: a sanitizer build's status,
        # traced, would report that instead of ending quietly.
        WATCH_ENV=(ASAN_OPTIONS=detect_leaks=0)
        check "watch serves" start_watch 3600
        WATCH_ENV=()
        strace -f -qq -e trace=execve -e signal=none -o "$WORK/strace" -p "$WATCH" &
        local tracer=$!
        wait_for "$WAIT_PROCESS" "strace attached" grep -q "TracerPid:.*$tracer" "/proc/$WATCH/status"
        sleep 2.1 # what is tested: the cache's 2 s gone by
        for i in $(seq 10); do
                curl -s --max-time 20 --interface "127.0.0.$((i + 1))" -o "$WORK/scrape.$i" "$URL/metrics" &
        done
        wait_for "$WAIT_PROCESS" "ten scrapes done" sh -c "[ \$(cat '$WORK'/scrape.* 2>/dev/null | grep -c '^resctrl_watch_running 1') = 10 ]"
        kill "$tracer"
        wait "$tracer" 2>/dev/null
        runs=$(grep -c 'execve(.*"status", "--prometheus"]' "$WORK/strace")
        check "ten scrapes, one run of status (ran $runs)" [ "$runs" = 1 ]
        teardown_pod
}

# /healthz follows the loop: watch's pass stuck in a resctrl that does not
# answer (the emulator stopped) makes it 503 after 2 x interval + 10 s;
# once it answers again, 200.
test_healthz_stale() {
        local emulator body
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        check "watch serves (interval 1 s)" start_watch 1
        emulator=$(emulator_pid)
        check "the emulator's pid" [ -n "$emulator" ]
        kill -STOP "$emulator"
        HTTP_WANT=503
        check "/healthz: 503 once the passes are late" \
                wait_for "$WAIT_DAEMON" "/healthz saying 503" answers "$URL/healthz"
        body=$(curl -s --max-time 10 "$URL/healthz")
        check "saying why" grep -q "watch's last gc pass ended [0-9]* s ago; one is due every 1 s" <<<"$body"
        check "the index still answers" [ "$(code "$URL/")" = 200 ]
        kill -CONT "$emulator"
        check "/healthz: 200 again once a pass ends" \
                wait_for "$WAIT_DAEMON" "/healthz saying 200" serves
        teardown_pod
}

# --- bounds -------------------------------------------------------------------

test_oversized() {
        local big
        mount_emulator
        write_config
        check "watch serves" start_watch 3600
        big=$(head -c 20000 /dev/zero | tr '\0' a)
        check "a 20 KB header: 431" [ "$(code "$URL/metrics" -H "X-Big: $big")" = 431 ]
        check "a 20 KB path: 414" [ "$(code "$URL/$big")" = 414 ]
        check "200 headers of 100 bytes: 431" \
                [ "$(code "$URL/metrics" $(for i in $(seq 200); do printf -- "-H X-$i:%s " "${big:0:100}"; done))" = 431 ]
        check "still serves" serves
        stop_watch
}

# A client that sends its request a byte a second is never idle: the
# request's own bound (10 s) closes it. Meanwhile a createRuntime takes its
# usual time and an exec'd process joins.
test_slowloris() {
        local t p2 elapsed
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        check "watch serves" start_watch 3600
        (
                exec 3<>"/dev/tcp/127.0.0.1/$PORT" || exit 1
                start=$EPOCHREALTIME
                { printf 'GET /metrics HTTP/1.1\r\nHost: x\r\n' && while printf 'a'; do sleep 1; done; } >&3 2>/dev/null &
                cat <&3 >/dev/null
                kill $! 2>/dev/null
                awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f\n", b - a }' >"$WORK/slow"
        ) &
        wait_for "$WAIT_PROCESS" "the slow client connected" sh -c "ss -tn state established '( dport = :$PORT )' | grep -q ."
        mkdir "$root/c2"
        sleeper p2
        echo "$p2" >"$root/c2/cgroup.procs"
        check "createRuntime beside it" create c2 "$p2" "$UID1"
        elapsed=$(sed -n 's/.*outcome=monitored elapsed_us=\([0-9]*\).*/\1/p' "$ERR")
        check "monitored, within 1 s (took ${elapsed:-?} us)" [ "${elapsed:-9999999}" -lt 1000000 ]
        sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$root/c1" </dev/null &
        local x=$!
        check "an exec'd process joins beside it" wait_for "$WAIT_PROCESS" "task $x in $G1" has_task "$G1" "$x"
        check "the slow client cut off" wait_for $((10 + WAIT_PROCESS)) "the slow client's end" test -s "$WORK/slow"
        t=$(cat "$WORK/slow" 2>/dev/null)
        check "by the request's 10 s bound, not before (after ${t:-?} s)" \
                awk -v t="${t:-0}" -v w="$WAIT_PROCESS" 'BEGIN { exit !(t >= 9.5 && t <= 10 + w) }'
        check "still serves" serves
        remove_cgroup_tree "$root/c2"
        teardown_pod
}

# 100 scrapes at once, then 100 connections that send nothing: those past
# the limits (8 from one address) are refused at once, the others served or
# closed; an exec'd process joins meanwhile, and afterwards watch serves as
# before.
test_flood() {
        local i x ok
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        check "watch serves" start_watch 3600
        for i in $(seq 100); do
                curl -s --max-time 30 -o /dev/null -w '%{http_code}\n' "$URL/metrics" >>"$WORK/codes" &
        done
        sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$root/c1" </dev/null &
        x=$!
        check "an exec'd process joins during 100 scrapes" wait_for "$WAIT_PROCESS" "task $x in $G1" has_task "$G1" "$x"
        check "the scrapes all end" wait_for $((30 + WAIT_PROCESS)) "100 scrapes ending" \
                sh -c "[ \$(wc -l <'$WORK/codes') -ge 100 ]"
        ok=$(grep -c '^200$' "$WORK/codes")
        check "some scrapes served ($ok of 100)" [ "$ok" -gt 0 ]
        check "the others refused, none hung" [ -z "$(grep -vx '200\|000' "$WORK/codes")" ]
        for i in $(seq 100); do
                (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && sleep 60) 2>/dev/null &
        done
        sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$root/c1" </dev/null &
        x=$!
        check "an exec'd process joins beside 100 idle connections" \
                wait_for "$WAIT_PROCESS" "task $x in $G1" has_task "$G1" "$x"
        check "serves once the idle ones are closed (10 s)" \
                wait_for $((10 + WAIT_DAEMON)) "watch serving again" serves
        teardown_pod
}

# --- clients from elsewhere ---------------------------------------------------

# A network namespace as another node: a veth pair whose end here has
# NODE_IP, and whose other end, in a namespace held by job $NS, has the
# twelve addresses REMOTE_IPS (one address holds 8 connections at most).
# Its processes work in $WORK, so that the harness finds them.
REMOTE_IPS=()
remote_setup() {
        local x=$((RANDOM % 512)) net i
        net=198.$((18 + x / 256)).$((x % 256))
        NODE_IP=$net.1
        REMOTE_IPS=()
        for i in $(seq 2 13); do REMOTE_IPS+=("$net.$i"); done
        VETH=rmh-m$RANDOM
        (cd "$WORK" && exec unshare -n sleep 100000) &
        NS=$!
        wait_for "$WAIT_PROCESS" "a network namespace of its own" \
                sh -c "[ \"\$(readlink /proc/$NS/ns/net)\" != \"\$(readlink /proc/self/ns/net)\" ]" || return 1
        ip link add "$VETH" type veth peer name "${VETH}p" &&
                ip link set "${VETH}p" netns "$NS" &&
                ip addr add "$NODE_IP/28" dev "$VETH" &&
                ip link set "$VETH" up || return 1
        remote ip link set "${VETH}p" up || return 1
        for i in "${REMOTE_IPS[@]}"; do remote ip addr add "$i/28" dev "${VETH}p" || return 1; done
}
remote() { (cd "$WORK" && exec nsenter -t "$NS" -n "$@"); } # COMMAND...: run on the other node
remote_teardown() { # the pair goes with the namespace
        kill "$NS" 2>/dev/null
        wait "$NS" 2>/dev/null
        ip link del "$VETH" 2>/dev/null
        REMOTE_IPS=()
}

# Connections from the other node to NODE_IP:PORT, 8 from each of
# REMOTE_IPS, each sending a request it never ends; a connection closed is
# opened again at once, for as long as it runs: more than watch takes.
flood_from_remote() { # PORT
        cat >"$WORK/flood.py" <<'PY'
import socket, sys, time
node, port, srcs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
socks = {}
def closed(s):
    try:
        return s.recv(1, socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
while True:
    for src in srcs:
        for k in range(8):
            s = socks.get((src, k))
            if s is not None and not closed(s):
                continue
            if s is not None:
                s.close()
            s = socket.socket()
            s.settimeout(5)
            try:
                s.bind((src, 0))
                s.connect((node, port))
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            except OSError:
                pass
            socks[(src, k)] = s
    time.sleep(0.05)
PY
        (cd "$WORK" && exec nsenter -t "$NS" -n python3 "$WORK/flood.py" "$NODE_IP" "$1" "${REMOTE_IPS[@]}") &
        FLOOD=$!
}
# Whether N connections or more to PORT from the other node are established.
flooded() { # PORT N
        [ "$(ss -Htn state established "( sport = :$1 )" | grep -c " ${NODE_IP%.*}\.[0-9]*:")" -ge "$2" ]
}

# Given the node's address, watch listens on the loopback too, for the
# node's own clients: kubelet's liveness probe asks /healthz there without
# a password, which every other client needs, even while a flood from
# elsewhere holds every connection watch takes on the node's address (and
# that socket's queue); joins go on.
test_remote_clients() {
        local hash x i lo listening
        setup_pod || { echo "no cgroup v2: nothing to test"; return; }
        remote_setup || { remote_teardown; check "a network namespace with a veth pair" false; return; }
        hash=$(htpasswd -nbBC 10 prometheus pw | cut -d: -f2-)
        printf 'basic_auth_users:\n  prometheus: %s\n' "$hash" >"$WORK/web.yml"
        PORT=$(free_port)
        URL=http://$NODE_IP:$PORT
        lo=http://127.0.0.1:$PORT
        "$HOOK" --config "$CONFIG" watch --interval 3600 --metrics-listen "$NODE_IP:$PORT" \
                --web-config "$WORK/web.yml" >"$WOUT" 2>"$WERR" &
        WATCH=$!
        check "watch serves kubelet's probe on the loopback, without a password" \
                wait_for "$WAIT_DAEMON" "watch serving $lo" serves_at "$lo/healthz"
        listening=$(ss -Hltn "sport = :$PORT" | awk '{ print $4 }' | sort | tr '\n' ' ')
        check "listening on the node's address and the loopback alone ($listening)" \
                [ "$listening" = "127.0.0.1:$PORT $NODE_IP:$PORT " ]
        check "the node's address, from this node: /healthz needs the password" [ "$(code "$URL/healthz")" = 401 ]
        check "the loopback: /metrics needs it" [ "$(code "$lo/metrics")" = 401 ]
        check "from elsewhere, /metrics with the password: 200" \
                [ "$(remote curl -s -o /dev/null -w '%{http_code}' --max-time 10 -u prometheus:pw "$URL/metrics")" = 200 ]
        check "from elsewhere, /healthz without it: 401" \
                [ "$(remote curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$URL/healthz")" = 401 ]
        flood_from_remote "$PORT"
        check "the flood holds every connection watch takes on the node's address (32)" \
                wait_for "$WAIT_DAEMON" "32 connections from elsewhere" flooded "$PORT" 32
        for i in 1 2 3; do
                check "during the flood, kubelet's probe: 200 within its 5 s ($i of 3)" \
                        [ "$(code "$lo/healthz" --max-time 5)" = 200 ]
        done
        sh -c 'echo $$ >"$1/cgroup.procs" && exec sleep 1000' sh "$root/c1" </dev/null &
        x=$!
        check "an exec'd process joins during the flood" wait_for "$WAIT_PROCESS" "task $x in $G1" has_task "$G1" "$x"
        kill "$FLOOD"
        wait "$FLOOD" 2>/dev/null
        check "watch logged nothing" [ ! -s "$WERR" ]
        remote_teardown
        teardown_pod
}

# --- TLS and basic auth --------------------------------------------------------

test_tls_auth() {
        local hash h
        mount_emulator
        write_config
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
                -addext subjectAltName=IP:127.0.0.1 -keyout "$WORK/server.key" \
                -out "$WORK/server.crt" 2>/dev/null
        hash=$(htpasswd -nbBC 10 prometheus 's3cret:pass' | cut -d: -f2-)
        printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: %s\n' \
                "$hash" >"$WORK/web.yml"
        SCHEME=https
        CURL_OPTS=(--cacert "$WORK/server.crt" -u 'prometheus:s3cret:pass')
        check "watch serves over TLS" start_watch 3600 --web-config "$WORK/web.yml"
        check "the right password: 200" [ "$(code "$URL/metrics" "${CURL_OPTS[@]}")" = 200 ]
        check "again (remembered): 200" [ "$(code "$URL/metrics" "${CURL_OPTS[@]}")" = 200 ]
        check "a wrong password: 401" [ "$(code "$URL/metrics" --cacert "$WORK/server.crt" -u prometheus:wrong)" = 401 ]
        check "an unknown user: 401" [ "$(code "$URL/metrics" --cacert "$WORK/server.crt" -u nobody:s3cret:pass)" = 401 ]
        h=$(curl -s --max-time 10 -o /dev/null -D - --cacert "$WORK/server.crt" "$URL/metrics" | tr -d '\r')
        check "none: 401" grep -q '^HTTP/1.1 401' <<<"$h"
        check "with WWW-Authenticate: Basic" grep -q '^WWW-Authenticate: Basic realm="resctrl-mon-hook"' <<<"$h"
        check "every path behind it" [ "$(code "$URL/" --cacert "$WORK/server.crt")" = 401 ]
        check "but /healthz, from this node (kubelet's probe): 200 without a password" \
                [ "$(code "$URL/healthz" --cacert "$WORK/server.crt")" = 200 ]
        check "plain HTTP to the TLS port: no answer" [ "$(code "http://127.0.0.1:$PORT/healthz")" = 000 ]
        check "watch logged nothing" [ ! -s "$WERR" ]
        stop_watch
        SCHEME=http
        CURL_OPTS=()
}

# A web config that is refused: one line naming the problem, exit 2, and
# nothing listens. So does a bad address; an address in use exits 1.
test_refused() {
        local port out rc
        mount_emulator
        write_config
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=x -keyout "$WORK/server.key" \
                -out "$WORK/server.crt" 2>/dev/null
        port=$(free_port)
        refused() { # WHAT STATUS PATTERN WATCH OPTIONS...
                local what=$1 status=$2 pattern=$3
                shift 3
                out=$(timeout "$WAIT_PROCESS" "$HOOK" --config "$CONFIG" watch --interval 3600 "$@" 2>&1 >/dev/null)
                rc=$?
                check "$what: exit $status" [ "$rc" = "$status" ]
                check "$what: one line" [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]
                check "$what: saying '$pattern'" grep -q -- "$pattern" <<<"$out"
                check "$what: nothing listens" sh -c "! ss -ltn | grep -q ':$port '"
        }
        web() { printf "$1" >"$WORK/web.yml"; }
        web 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13\n'
        refused "an unknown key" 2 "tls_server_config: unknown key 'min_version'" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        web 'tls_server_config:\n  cert_file: server.crt\n  key_file: missing.key\n'
        refused "a missing key file" 2 "key_file '.*missing.key': No such file" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        web 'tls_server_config:\n  cert_file: server.crt\n'
        refused "no key_file" 2 "key_file is missing" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        web 'basic_auth_users:\n  prometheus: "{SHA}W6ph5Mm5Pz8GgiULbPgzG37mj9g="\n'
        refused "a hash not bcrypt's" 2 "'prometheus': not a bcrypt hash" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        web 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n'
        refused "client certificates" 2 "client_auth_type 'RequireAndVerifyClientCert' is not supported" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        refused "a web config that is not there" 2 "No such file" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/none.yml"
        refused "--web-config alone" 2 "--web-config is for --metrics-listen" --web-config "$WORK/web.yml"
        refused "no port" 2 "not IPv4:PORT" --metrics-listen 127.0.0.1
        refused "a host name" 2 "not IPv4:PORT" --metrics-listen "localhost:$port"
        refused "port 0" 2 "not IPv4:PORT" --metrics-listen 127.0.0.1:0
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=y -keyout "$WORK/other.key" \
                -out "$WORK/other.crt" 2>/dev/null
        web 'tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n'
        refused "a key that is not the certificate's" 1 "do not match" \
                --metrics-listen "127.0.0.1:$port" --web-config "$WORK/web.yml"
        python3 -c 'import socket, sys, time; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(60)' "$port" &
        local holder=$!
        wait_for "$WAIT_PROCESS" "port $port taken" sh -c "ss -ltn | grep -q ':$port '"
        out=$(timeout "$WAIT_PROCESS" "$HOOK" --config "$CONFIG" watch --metrics-listen "127.0.0.1:$port" 2>&1 >/dev/null)
        rc=$?
        check "an address in use: exit 1" [ "$rc" = 1 ]
        check "an address in use: one line saying so" \
                [ "$(printf '%s\n' "$out" | grep -c 'cannot listen: Address already in use')" = 1 ]
        kill "$holder"
        wait "$holder" 2>/dev/null
}

# :PORT is every address, IPv6 and IPv4; [::1]:PORT IPv6's loopback alone.
test_addresses() {
        local port
        mount_emulator
        write_config
        [ -e /proc/net/if_inet6 ] && ip -6 addr show lo | grep -q '::1' ||
                { echo "no IPv6 loopback: nothing to test"; return; }
        port=$(free_port)
        "$HOOK" --config "$CONFIG" watch --interval 3600 --metrics-listen ":$port" 2>"$WERR" >/dev/null &
        WATCH=$!
        check ":PORT: IPv4" wait_for "$WAIT_DAEMON" "watch serving on 127.0.0.1" \
                serves_at "http://127.0.0.1:$port/healthz"
        check ":PORT: IPv6" [ "$(code "http://[::1]:$port/healthz")" = 200 ]
        check ":PORT: one socket, every address" sh -c "ss -ltn | grep -Eq '(\\[::\\]|\\*):$port '"
        stop_watch
        port=$(free_port)
        "$HOOK" --config "$CONFIG" watch --interval 3600 --metrics-listen "[::1]:$port" 2>"$WERR" >/dev/null &
        WATCH=$!
        check "[::1]:PORT: IPv6" wait_for "$WAIT_DAEMON" "watch serving on [::1]" \
                serves_at "http://[::1]:$port/healthz"
        check "[::1]:PORT: not IPv4" [ "$(code "http://127.0.0.1:$port/healthz")" = 000 ]
        stop_watch
}

# The default port is the one #define: watch --help, the package's unit and
# the documents' examples say the same.
test_default_port() {
        local port
        port=$("$HOOK" watch --help | sed -n 's/.*DaemonSet is \([0-9]*\).*/\1/p')
        check "watch --help names the default port" [ -n "$port" ]
        check "the watch unit listens on 127.0.0.1:$port" \
                grep -q -- "--metrics-listen 127.0.0.1:$port\\b" "$UNIT"
        check "operations.md's examples use $port" sh -c \
                "grep -q ':$port' '$TOP/docs/operations.md' && ! grep -Eo ':(9[0-9]{3}|1[0-9]{4})/metrics' '$TOP/docs/operations.md' | grep -v ':$port/'"
        check "the man page names $port" grep -q "port $port" "$TOP/docs/resctrl-mon-hook.8.md"
}

hung_status_gone() { ! kill -0 "$(cat "$WORK/hung")" 2>/dev/null; }

# /metrics gives a timestamp later than $1.
serves_newer_than() { # TIMESTAMP
        local t
        t=$(curl -s --max-time 20 "$URL/metrics" | stamp_of)
        [ -n "$t" ] && awk -v t="$t" -v than="$1" 'BEGIN { exit !(t > than) }'
}

# A run of status slower than a scrape's timeout (as on a node of many
# pods): the scrape gets the last run's output, its timestamp unchanged,
# rather than nothing; once the slow run is done, its output is served.
# watch stopped during a run kills it, and says nothing of it.
test_slow_status() {
        local hook=$HOOK first second
        mount_emulator
        write_config
        mkdir -p "$WORK/bin"
        cp "$hook" "$WORK/bin/resctrl-mon-hook"
        cp "$hook" "$WORK/bin/real"
        HOOK=$WORK/bin/resctrl-mon-hook
        check "watch serves" start_watch 3600
        HOOK=$hook
        first=$(curl -s --max-time 20 "$URL/metrics" | stamp_of)
        check "a first output, with its timestamp" [ -n "$first" ]
        # status from now on: waits for $WORK/go, then runs.
        printf '#!/bin/sh\necho $$ >"%s"\nwhile [ ! -e "%s" ]; do sleep 0.1; done\nexec "%s" "$@"\n' \
                "$WORK/hung" "$WORK/go" "$WORK/bin/real" >"$WORK/bin/new"
        chmod 0755 "$WORK/bin/new"
        mv "$WORK/bin/new" "$WORK/bin/resctrl-mon-hook"
        sleep 2.1 # what is tested: the first output no longer fresh
        second=$(curl -s --max-time 20 -w '%{http_code}\n' -H 'X-Prometheus-Scrape-Timeout-Seconds: 2' \
                "$URL/metrics")
        check "a scrape with a 2 s timeout: 200" [ "$(tail -n 1 <<<"$second")" = 200 ]
        check "with the first run's output, its timestamp unchanged" \
                [ "$(sed '$d' <<<"$second" | stamp_of)" = "$first" ]
        touch "$WORK/go"
        check "the slow run done: its output" wait_for "$WAIT_DAEMON" "a later timestamp" serves_newer_than "$first"
        rm -f "$WORK/go" "$WORK/hung"
        sleep 2.1 # what is tested: the output no longer fresh
        curl -s --max-time 20 -o /dev/null -H 'X-Prometheus-Scrape-Timeout-Seconds: 2' "$URL/metrics"
        wait_for "$WAIT_PROCESS" "a slow run started" test -s "$WORK/hung"
        kill "$WATCH"
        check "watch stopped during a run: it exits" wait_for "$WAIT_DAEMON" "watch's exit" \
                sh -c "! kill -0 $WATCH 2>/dev/null"
        check "the run killed" wait_for "$WAIT_PROCESS" "the slow status killed" hung_status_gone
        check "nothing said of it" [ ! -s "$WERR" ]
        stop_watch
}

# A status that closes its pipes and hangs (a binary replaced under watch,
# as an upgrade does; an exit that waits on a FUSE resctrl which does not
# answer) is killed at the run's bound all the same; the scrape gets 503 at
# its wait's bound, and /healthz answers meanwhile.
test_status_hangs_closed() {
        local hook=$HOOK code_file=$WORK/metrics.code
        mount_emulator
        write_config
        mkdir -p "$WORK/bin"
        cp "$hook" "$WORK/bin/resctrl-mon-hook"
        HOOK=$WORK/bin/resctrl-mon-hook
        check "watch serves" start_watch 3600
        HOOK=$hook
        printf '#!/bin/sh\necho $$ >"%s"\nexec >&- 2>&-\nexec sleep 100\n' "$WORK/hung" >"$WORK/bin/new"
        chmod 0755 "$WORK/bin/new"
        mv "$WORK/bin/new" "$WORK/bin/resctrl-mon-hook"
        code "$URL/metrics" --max-time 60 >"$code_file" &
        local scrape=$!
        wait_for "$WAIT_PROCESS" "the hung status started" test -s "$WORK/hung"
        check "a hung status: /healthz answers" serves
        wait "$scrape"
        check "a hung status: the scrape gets 503 (got $(cat "$code_file"))" [ "$(cat "$code_file")" = 503 ]
        check "a hung status: killed at its run's bound (30 s)" \
                wait_for $((30 + WAIT_PROCESS)) "the hung status killed" hung_status_gone
        stop_watch
}

for t in ${TESTS:-test_endpoints test_one_run_for_ten test_healthz_stale test_status_hangs_closed test_slow_status test_oversized \
        test_slowloris test_flood test_remote_clients test_tls_auth test_refused test_addresses test_default_port}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
