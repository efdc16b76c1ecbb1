#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Bad input: every file of the corpus next to this script (and a few generated
# ones) is fed to the hook. Each case checks the exit status the man page
# promises, exactly one error line naming the problem (plus the info summary
# where the hook got as far as a stage), and no change under stateDir or in
# the resctrl tree, which hold a live pod throughout.
#   test_bad_input.sh HOOK RESCTRLFS
set -u

CORPUS=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/harness.sh
. "$CORPUS/../lib/harness.sh"
harness_init "$1" "$2" bad-input

UID_LIVE=0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b
UID_NEW=9e8d7c6b-5a49-4838-a726-15f4e3d2c1b0

mount_emulator --ctrl-groups gold
write_config
sleeper PID_LIVE PID
create live "$PID_LIVE" "$UID_LIVE" || { echo "cannot set up the live pod" >&2; exit 1; }
[ -s "$STATE/$UID_LIVE.members" ] || { echo "no state for the live pod" >&2; exit 1; }
BEFORE=$(snapshot "$STATE" "$MNT")

unchanged() {
        [ "$BEFORE" = "$(snapshot "$STATE" "$MNT")" ]
}

# A pod whose group poststop removed leaves its final counters, one record,
# and the removal's mark of the root control group (statedir.h), and
# nothing else: both go before the comparison.
only_final_counters_left() {
        local records=("$STATE/finished/$UID_NEW".*) mark=$STATE/freed.af63a24c860189fe
        [ "${#records[@]}" -eq 1 ] && [ -f "${records[0]}" ] && [ -f "$mark" ] &&
                rm -r "$STATE/finished" "$mark" && unchanged
}

# A corpus file with its placeholders filled in: a live pid, a pod UID the
# hook has not seen (so anything it wrongly accepted would show as a new
# group) and a bundle.
instantiate() { # FILE BUNDLE
        LC_ALL=C sed -e "s|@PID@|$PID|g; s|@UID@|$UID_NEW|g; s|@BUNDLE@|$2|g" "$1" >"$WORK/in"
}

# One stage, then again with --log-level err, which must leave only the error line.
expect_error() { # WHAT STATUS STAGE PATTERN with_summary|no_summary
        run_hook "$3" "$WORK/in"
        check "$1: exit $2" [ "$rc" -eq "$2" ]
        check "$1: one error line matching '$4'" one_error_line "$4" "$5"
        run_hook "$3" "$WORK/in" --log-level err
        check "$1: that line is the only one at error level" one_error_line "$4" no_summary
}

# State JSON at createRuntime (ignore: 0, fail: 1) and at poststop (always 0).
state_case() { # NAME PATTERN [FILE]
        local name=$1 pattern=$2 file=${3:-$CORPUS/state/$1.json}
        instantiate "$file" "$WORK/bundle-default"
        write_config
        expect_error "state $name: createRuntime, ignore" 0 createRuntime "$pattern" with_summary
        write_config "failurePolicy: fail"
        expect_error "state $name: createRuntime, fail" 1 createRuntime "$pattern" with_summary
        expect_error "state $name: poststop" 0 poststop "$pattern" with_summary
        write_config
        check "state $name: nothing changed" unchanged
}

# A valid state whose bundle's config.json names a control group that must
# never reach a path. poststop does not read the bundle.
bundle_case() { # NAME PATTERN
        local b=$WORK/bundle-$1
        mkdir -p "$b"
        cp "$CORPUS/bundle/$1.json" "$b/config.json"
        state c1 @PID@ @UID@ "$b" >"$WORK/template"
        instantiate "$WORK/template" "$b"
        write_config
        expect_error "bundle $1: createRuntime, ignore" 0 createRuntime "$2" with_summary
        write_config "failurePolicy: fail"
        expect_error "bundle $1: createRuntime, fail" 1 createRuntime "$2" with_summary
        write_config
        check "bundle $1: nothing changed" unchanged
}

# stderr holds the config problem (matching the ERE) first, then only more
# problems of single keys, and the summary of a run that ended with OUTCOME.
problem_and_summary() { # PATTERN OUTCOME
        head -n 1 "$ERR" | grep -Eq -- "$1" && grep -q "outcome=$2 elapsed_us=" "$ERR" &&
                ! grep -v -e 'elapsed_us=' -e '(the key ' "$ERR" | grep -q .
}

# A config whose paths are in doubt (unreadable, a syntax error, a bad
# resctrlPath or stateDir): createRuntime makes nothing and exits 0 whatever
# the file says of failurePolicy; poststop goes on with what was read. One
# line on stderr names the problem (the rest goes where the file's log
# settings, here the defaults, say: syslog).
config_incomplete_case() { # NAME PATTERN [FILE]
        local name=$1 pattern=$2 file=${3:-$CORPUS/config/$1.yaml} stage
        state c1 "$PID" "$UID_NEW" >"$WORK/in"
        for stage in createRuntime poststop; do
                "$HOOK" --config "$file" "$stage" <"$WORK/in" 2>"$ERR"
                check "config $name: $stage: exit 0" [ "$?" -eq 0 ]
                check "config $name: $stage: one line matching '$pattern'" \
                        one_error_line "$pattern" no_summary
        done
        check "config $name: nothing changed" unchanged
}

# A bad or unknown key in an otherwise good config (the corpus file first,
# then the harness's paths): it costs that key only. createRuntime makes the
# group (OUTCOME monitored) or fails as the key's default makes it; poststop
# removes it again. One line names the problem.
config_key_case() { # NAME PATTERN OUTCOME
        local name=$1 pattern=$2 outcome=$3
        local keys
        # The harness's lines for what the corpus file does not set itself.
        keys=$(sed -n 's/^\([A-Za-z]*\):.*/\1/p' "$CORPUS/config/$name.yaml" | paste -sd '|')
        write_config
        { cat "$CORPUS/config/$name.yaml"; grep -Ev "^(${keys:-none}):" "$CONFIG"; } >"$WORK/mixed.yaml"
        mv "$WORK/mixed.yaml" "$CONFIG"
        local p
        sleeper p
        state c1 "$p" "$UID_NEW" >"$WORK/in"
        run_hook createRuntime "$WORK/in"
        check "config $name: createRuntime: exit 0" [ "$rc" -eq 0 ]
        stop "$p"
        if [ "$outcome" = monitored ]; then
                check "config $name: createRuntime: the problem, then the summary" \
                        problem_and_summary "$pattern" monitored
                check "config $name: the rest of the file is used" test -d "$MNT/mon_groups/$UID_NEW"
        else
                check "config $name: createRuntime: the problem first" grep -Eq -- "$pattern" "$ERR"
                check "config $name: createRuntime: outcome $outcome" grep -q "outcome=$outcome " "$ERR"
        fi
        run_hook poststop "$WORK/in"
        check "config $name: poststop: exit 0" [ "$rc" -eq 0 ]
        check "config $name: poststop: names the problem" grep -Eq -- "$pattern" "$ERR"
        write_config
        if [ "$outcome" = monitored ]; then
                check "config $name: nothing left but the final counters" only_final_counters_left
        else
                check "config $name: nothing left" unchanged
        fi
}

# --- state JSON --------------------------------------------------------------

INVALID="state: invalid JSON at line [0-9]+ column [0-9]+"
PID_RANGE="state: 'pid' is not an integer in \[0, 2147483647\]"
BAD_ID="state: 'id' is not a valid path component"
BAD_UID="pod UID annotation is not a 36-character dashed or 32-character hex UID"

state_case empty "$INVALID: '\[' or '\{' expected near end of file"
state_case truncated "$INVALID: premature end of input"
state_case array "state: not a JSON object"
state_case string "$INVALID: '\[' or '\{' expected"
state_case number "$INVALID: '\[' or '\{' expected"
state_case pid-string "$PID_RANGE"
state_case pid-negative "$PID_RANGE"
state_case pid-over-int-max "$PID_RANGE"
state_case pid-huge "$INVALID: too big integer"
state_case pid-float "$PID_RANGE"
state_case pid-exponent "$PID_RANGE"
state_case pid-null "$PID_RANGE"
state_case id-missing "state: 'id' is missing"
state_case id-number "$BAD_ID"
state_case id-empty "$BAD_ID"
state_case id-slash "$BAD_ID"
state_case id-dotdot "$BAD_ID"
state_case id-newline "$BAD_ID"
state_case bundle-relative "state: 'bundle' is not an absolute path"
state_case annotations-array "state: 'annotations' is not an object"
state_case annotations-string "state: 'annotations' is not an object"
state_case annotation-not-string "state: annotation 'io.kubernetes.pod.uid' is not a string"
state_case nul-escape "$INVALID: .u0000 is not allowed"
state_case nul-byte "$INVALID: control character 0x0"
state_case invalid-utf8 "$INVALID: unable to decode byte 0xff"
state_case utf8-surrogate "$INVALID: unable to decode byte 0xed"
state_case duplicate-key "$INVALID: duplicate object key"
state_case duplicate-annotation "$INVALID: duplicate object key"
state_case uid-traversal "$BAD_UID"
state_case uid-traversal-36 "$BAD_UID"
state_case uid-short "$BAD_UID"
state_case uid-long "$BAD_UID"
state_case uid-non-hex "$BAD_UID"
state_case uid-dashes-misplaced "$BAD_UID"
state_case uid-compact-slash "$BAD_UID"
state_case uid-empty "$BAD_UID"

# Nesting far past jansson's depth limit, inside an otherwise valid state.
{
        printf '{"id":"c1","pid":@PID@,"annotations":{"io.kubernetes.pod.uid":"@UID@"},"x":'
        head -c 100000 /dev/zero | tr '\0' '['
} >"$WORK/deep.json"
state_case deep-nesting "$INVALID: maximum parsing depth reached" "$WORK/deep.json"

# 20 MiB on stdin: drained and refused; the writer sees neither EPIPE nor a block.
twenty_mib() {
        printf '{"id":"c1","pid":%s,"annotations":{"io.kubernetes.pod.uid":"%s"},"pad":"' \
                "$PID" "$UID_NEW"
        head -c $((20 * 1024 * 1024)) /dev/zero | tr '\0' 'a'
        printf '"}'
}
for policy in ignore fail; do
        write_config "failurePolicy: $policy"
        twenty_mib | "$HOOK" --config "$CONFIG" createRuntime 2>"$ERR"
        statuses=("${PIPESTATUS[@]}")
        expected=0
        [ "$policy" = fail ] && expected=1
        check "20 MiB, $policy: the writer completed" [ "${statuses[0]}" -eq 0 ]
        check "20 MiB, $policy: exit $expected" [ "${statuses[1]}" -eq "$expected" ]
        check "20 MiB, $policy: one error line" \
                one_error_line "state on stdin is larger than 4194304 bytes" with_summary
done
write_config
check "20 MiB: nothing changed" unchanged

# --- control-group names from config.json ------------------------------------

BAD_CTRL="is not a valid resctrl group name"
bundle_case closid-dotdot "config.json: '..' $BAD_CTRL"
bundle_case closid-traversal "config.json: '../../gold' $BAD_CTRL"
bundle_case closid-absolute "config.json: '/etc' $BAD_CTRL"
bundle_case closid-nested "config.json: 'gold/mon_groups' $BAD_CTRL"
bundle_case closid-info "config.json: 'info' $BAD_CTRL"
bundle_case closid-mon-groups "config.json: 'mon_groups' $BAD_CTRL"
bundle_case closid-mon-data "config.json: 'mon_data' $BAD_CTRL"
bundle_case closid-newline "config.json: 'gold\\\\x0a' $BAD_CTRL"
bundle_case closid-number "config.json: 'linux.intelRdt.closID' is not a string"
bundle_case intelrdt-string "config.json: 'linux.intelRdt' is not an object"

only_line() { # PATTERN
        [ "$(wc -l <"$ERR")" -eq 1 ] && grep -q -- "$1" "$ERR"
}

# --- config YAML ---------------------------------------------------------------
# (config.h: which problems cost a key, and which leave the config incomplete)

config_incomplete_case tab ":3: found character that cannot start any token"
config_incomplete_case state-dir-relative ":1: key 'stateDir': 'run/resctrl-mon-hook' is not an absolute path"
config_incomplete_case top-level-list ":1: expected a mapping at the top level, found a list"
config_incomplete_case two-documents ":2: more than one YAML document"
config_incomplete_case tag ":1: key 'stateDir': tags are not allowed"
config_incomplete_case nul-escape ":1: key 'stateDir': contains a NUL character"
config_incomplete_case invalid-utf8 ":1: invalid leading UTF-8 octet"

config_key_case lock-timeout-string ":1: key 'lockTimeoutMs': expected an integer, found a string" monitored
config_key_case lock-timeout-negative ":1: key 'lockTimeoutMs': '-1' is not an integer" monitored
config_key_case lock-timeout-huge ":1: key 'lockTimeoutMs': '99999999999999999999' is not an integer" monitored
config_key_case failure-policy-list ":1: key 'failurePolicy': expected a string, found a list" monitored
config_key_case failure-policy-unknown ":1: key 'failurePolicy': 'abort' is not ignore or fail" monitored
config_key_case namespaces-scalar ":1: key 'namespaces': expected a list, found a scalar" monitored
config_key_case selector-list ":1: key 'annotationSelector': expected a mapping, found a list" monitored
config_key_case unknown-key ":1: key 'resctrlpath': unknown key, skipped" monitored
config_key_case unknown-nested-key ":1: key 'log.colour': unknown key, skipped" monitored
config_key_case duplicate-key ":2: key 'failurePolicy': duplicate key, skipped" monitored
config_key_case alias-bomb-known-key ":2: key 'namespaces': anchors and aliases are not allowed" monitored
# Billion laughs under unknown keys: skipped unread, the rest of the file used.
write_config
grep -v '^namespaces:' "$CORPUS/config/alias-bomb.yaml" | cat - "$CONFIG" >"$WORK/mixed.yaml"
mv "$WORK/mixed.yaml" "$CONFIG"
sleeper p
state c1 "$p" "$UID_NEW" >"$WORK/in"
run_hook createRuntime "$WORK/in"
stop "$p"
check "config alias-bomb: createRuntime: exit 0" [ "$rc" -eq 0 ]
check "config alias-bomb: each unknown key named" [ "$(grep -c "unknown key, skipped" "$ERR")" -eq \
        "$(grep -c '^[a-z]*: &' "$CORPUS/config/alias-bomb.yaml")" ]
check "config alias-bomb: the rest of the file is used" test -d "$MNT/mon_groups/$UID_NEW"
run_hook poststop "$WORK/in"
write_config
check "config alias-bomb: nothing left but the final counters" only_final_counters_left
# The default of requireResctrlFs (true) then refuses the emulator, which is no resctrl mount.
config_key_case bool-yes ":1: key 'requireResctrlFs': 'yes' is not true or false" error

# Over the 1 MiB limit, though every line is a valid comment.
yes '# padding padding padding padding padding padding padding padding padding' |
        head -c $((2 * 1024 * 1024)) >"$WORK/huge.yaml"
config_incomplete_case huge "cannot read config '$WORK/huge.yaml': File too large" "$WORK/huge.yaml"
config_incomplete_case missing "cannot read config '$WORK/missing.yaml': No such file or directory" \
        "$WORK/missing.yaml"

# An unknown key alone: every stage runs as the rest of the file says, and a
# warning (not an error) names it.
cp "$CORPUS/config/unknown-key.yaml" "$WORK/corpus.yaml"
write_config "failurePolicy: fail"
cat "$WORK/corpus.yaml" >>"$CONFIG"
sleeper p
state c1 "$p" "$UID_NEW" >"$WORK/in"
run_hook createRuntime "$WORK/in" --log-level err
stop "$p"
check "unknown key: createRuntime, fail: exit 0" [ "$rc" -eq 0 ]
check "unknown key: no error line, one warning" only_line "unknown key, skipped"
run_hook poststop "$WORK/in"
write_config
check "unknown key: nothing left but the final counters" only_final_counters_left

# --- hostile HTTP requests to watch --metrics-listen ---------------------------
# Each file of http/ is sent whole as it is, and the answer's status must be
# the one below ("closed": the connection ends without one): refused,
# answered or dropped, never a crash or a hang; then watch still serves.
# auth-*: with basic auth (a web config), each is a 401.

http_status() { # FILE: the status of the answer to FILE's bytes, or "closed"
        python3 - "$HTTP_PORT" "$1" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=15)
s.sendall(open(sys.argv[2], "rb").read())
resp = b""
try:
    while b"\r\n\r\n" not in resp:
        chunk = s.recv(65536)
        if not chunk:
            break
        resp += chunk
except OSError:
    pass
line = resp.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
print(line[1] if len(line) > 1 and line[0].startswith("HTTP/") else "closed")
PY
}
http_case() { # NAME STATUS
        local got
        got=$(http_status "$CORPUS/http/$1.req")
        check "http $1: $2 (got $got)" [ "$got" = "$2" ]
}
http_serves() { [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 -u "${HTTP_USER:-x:x}" "http://127.0.0.1:$HTTP_PORT/healthz")" = 200 ]; }
http_watch() { # [WATCH OPTIONS...]: watch serving on $HTTP_PORT, its pid in $HTTP_WATCH
        HTTP_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
        "$HOOK" --config "$CONFIG" watch --interval 3600 --metrics-listen "127.0.0.1:$HTTP_PORT" "$@" \
                >/dev/null 2>"$WORK/watch.err" &
        HTTP_WATCH=$!
        wait_for "$WAIT_DAEMON" "watch serving on $HTTP_PORT" http_serves
}
if command -v curl >/dev/null && command -v python3 >/dev/null && command -v htpasswd >/dev/null; then
        write_config
        http_watch
        http_case garbage closed
        http_case version-9 505
        http_case http-0.9 400
        http_case no-host 400
        http_case header-no-colon 400
        http_case space-before-colon 400
        http_case absolute-form 404
        http_case dotdot 404
        http_case percent-encoded 200 # libmicrohttpd decodes the path: /metrics
        http_case non-ascii-path 404
        http_case lowercase-method 405
        http_case connect 405
        http_case post-huge-length 405 # answered before any body is read
        http_case negative-length 400
        http_case length-and-chunked 200 # chunked wins; a GET's body is dropped
        http_case transfer-encoding-gzip closed
        http_case many-headers 431
        http_case long-method 414
        check "http: watch still serves" http_serves
        check "http: watch logged nothing" [ ! -s "$WORK/watch.err" ]
        kill "$HTTP_WATCH"
        wait "$HTTP_WATCH" 2>/dev/null
        printf 'basic_auth_users:\n  u: %s\n' "$(htpasswd -nbBC 4 u p | cut -d: -f2-)" >"$WORK/web.yml"
        HTTP_USER=u:p
        http_watch --web-config "$WORK/web.yml"
        for f in "$CORPUS"/http/auth-*.req; do
                f=${f##*/}
                http_case "${f%.req}" 401
        done
        check "http: watch with basic auth still serves" http_serves
        kill "$HTTP_WATCH"
        wait "$HTTP_WATCH" 2>/dev/null
        rm -f "$STATE/watch.state" "$STATE/watch.lock"
else
        echo "no curl, python3 or htpasswd: the HTTP requests are not sent"
fi

# --- the live pod is still intact --------------------------------------------

check "live pod still monitored" grep -qx "$PID_LIVE" "$MNT/mon_groups/$UID_LIVE/tasks"
check "no group for the new UID" test ! -e "$MNT/mon_groups/$UID_NEW"
check "no state for the new UID" test ! -e "$STATE/$UID_NEW.members"

harness_done
