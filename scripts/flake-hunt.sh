#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hunts flaky tests: runs the ctest suites of a build N times (default 3)
# with stress-ng loading the machine alongside (--cpu 2 --io 1 --vm 1
# --vm-bytes 256M), then prints each suite's failures out of N, and its
# skips. A suite that passes only on an idle machine tests the machine, not
# the code.
#   scripts/flake-hunt.sh [-b BUILD_DIR] [N] [ctest args...]
#     BUILD_DIR   a configured and built build directory (default build)
#     ctest args  passed on, such as -R '^watch$' or -E '^crash' to hunt a few
# False if any suite failed in any run or was not run, or there was none.
# Each run's ctest output is kept in BUILD_DIR/flake-hunt/run-I.log.
# stress-ng is stopped at the end, on an interrupt too.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/build
if [ "${1:-}" = -b ]; then
        build=$(realpath "$2")
        shift 2
fi
runs=3
case ${1:-} in [1-9]*) runs=$1 && shift ;; esac
[ -f "$build/CTestTestfile.cmake" ] || { echo "no ctest build directory: $build" >&2; exit 2; }
command -v stress-ng >/dev/null || { echo "needs stress-ng (scripts/install-deps.sh)" >&2; exit 2; }

logs=$build/flake-hunt
mkdir -p "$logs"
rm -f "$logs"/run-*.log

# The suites the runs are to run, as ctest lists them ("  Test #35: watch"):
# one that no run reached counts as failed.
(cd "$build" && ctest -N "$@") >"$logs/suites.txt" 2>&1 ||
        { cat "$logs/suites.txt" >&2; exit 2; }

# stress-ng and each ctest run in sessions of their own: a signal to a
# session's group reaches every process of it. ctest runs in the background,
# so that a signal here is handled at once. Then ctest is stopped, not
# signalled (on a signal it kills its suites, cutting their cleanup short),
# and its suites get SIGTERM, which their cleanup takes (not SIGINT, ignored
# throughout where a non-interactive shell started this in the background),
# and a minute to end; then SIGKILL; then stress-ng is stopped. A second
# signal does not cut that short; and should this script be killed, a
# watcher stops stress-ng.
setsid stress-ng --cpu 2 --io 1 --vm 1 --vm-bytes 256M --quiet </dev/null >"$logs/stress-ng.log" 2>&1 &
stress=$!
# The watcher, in a session of its own too: a signal to this script's group
# does not reach it.
setsid sh -c 'while kill -0 "$1"; do sleep 1; done; kill -TERM "-$2"' sh $$ "$stress" \
        </dev/null >/dev/null 2>&1 &
run=
# The run's live processes but ctest (a stopped ctest reaps none: its
# suites' zombies do not count).
suites_running() { pgrep -g "$run" -r D,R,S,T,t | grep -qvx "$run"; }
wait_while() { # SECONDS CONDITION...: true once CONDITION is not
        local deadline=$((SECONDS + $1))
        shift
        while "$@"; do
                [ "$SECONDS" -lt "$deadline" ] || return 1
                sleep 0.1
        done
}
stop() {
        trap '' HUP INT TERM
        if [ -n "$run" ]; then
                kill -STOP "$run" 2>/dev/null
                pgrep -g "$run" | grep -vx "$run" | xargs -r kill -TERM 2>/dev/null
                wait_while 60 suites_running
                kill -KILL -- "-$run" 2>/dev/null
        fi
        kill -TERM -- "-$stress" 2>/dev/null
        wait "$stress" 2>/dev/null
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

for i in $(seq "$runs"); do
        start=$(date +%s)
        (cd "$build" && exec setsid ctest --output-on-failure -j "$(nproc)" "$@") >"$logs/run-$i.log" 2>&1 &
        run=$!
        wait "$run"
        rc=$?
        run=
        echo "run $i of $runs: $(grep -E 'tests passed|tests failed' "$logs/run-$i.log" ||
                echo "no summary, ctest's status $rc") ($(($(date +%s) - start)) s)"
        kill -0 "$stress" 2>/dev/null || { echo "stress-ng stopped: $logs/stress-ng.log" >&2; exit 2; }
done

# ctest's result lines: "12/61 Test #35: watch ....   Passed   8.78 sec".
# A failure is any result but Passed and a skip, or a run that has no result
# for a suite it was to run; skips are counted apart (a suite skipped in
# every run was not tested).
awk -v runs="$runs" -v suites="$logs/suites.txt" '
        FILENAME == suites && /^ +Test +#[0-9]+: / { order[n++] = $3; next }
        FILENAME != suites && / Test +#[0-9]+: / {
                sub(/.*Test +#[0-9]+: /, "")
                name = $1
                ran[name]++
                if ($0 ~ /Skipped/) skipped[name]++
                else if ($0 !~ /[.] +Passed +[0-9.]+ sec$/) failed[name]++
                if ($NF == "sec" && $(NF - 1) > slowest[name]) slowest[name] = $(NF - 1)
        }
        END {
                if (n == 0) { print "no suite to run" > "/dev/stderr"; exit 2 }
                printf "%-24s %9s %8s %12s\n", "suite", "failures", "skipped", "slowest (s)"
                for (i = 0; i < n; i++) {
                        s = order[i]
                        failed[s] += runs - ran[s]
                        printf "%-24s %6d/%-2d %8d %12.1f\n", s, failed[s], runs, skipped[s], slowest[s]
                        bad += failed[s]
                }
                exit bad > 0
        }' "$logs/suites.txt" "$logs"/run-*.log
