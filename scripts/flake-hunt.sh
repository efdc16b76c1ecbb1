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
# False if any suite failed in any run or was not run, if a run left a
# cgroup, mount or process of the tests behind (scripts/leftovers.sh), or if
# there was no suite.
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

# stress-ng and each ctest run in sessions of their own: what a run started
# is what is in its session, whatever process groups its suites made (a
# libcheck suite's runner has one of its own). ctest runs in the background,
# so that a signal here is handled at once. On one, ctest is not signalled
# (it would kill its suites, cutting their cleanup short): each suite it
# runs, those it goes on to start included, gets SIGTERM once, which its
# cleanup takes (not SIGINT, ignored throughout where a non-interactive
# shell started this in the background). ctest reaps them and reads their
# output meanwhile. Once no process of the run is left, or after the
# longest a cleanup waits for its events (tests/lib/wait.sh), the rest gets
# SIGKILL; then stress-ng is stopped. A second signal does not cut that
# short; and should this script be killed, a watcher stops stress-ng.
# shellcheck source=../tests/lib/wait.sh
. "$top/tests/lib/wait.sh"
cleanup_bound=$((WAIT_RUNTIME + WAIT_DAEMON + WAIT_PROCESS))
# Both from /: working in the build directory, they would count as what a
# run left behind.
(cd / && exec setsid stress-ng --cpu 2 --io 1 --vm 1 --vm-bytes 256M --quiet) </dev/null \
        >"$logs/stress-ng.log" 2>&1 &
stress=$!
# The watcher, in a session of its own too: a signal to this script's group
# does not reach it. It signals stress-ng's group only while stress-ng
# leads it: once stopped and reaped, its pid may be another's.
(cd / && exec setsid sh -c 'while kill -0 "$1" && kill -0 "$2"; do sleep 1; done
        s=$(cat "/proc/$2/stat") && set -- "$2" ${s##*) } && [ "$4" = "$1" ] &&
                [ "$(cat "/proc/$1/comm")" = stress-ng ] && kill -TERM "-$1"' sh $$ "$stress") \
        </dev/null >/dev/null 2>&1 &
run=
# A process of the run other than a zombie is left.
run_left() { pgrep -s "$run" -r D,R,S,T,t >/dev/null; }
# Each suite that ctest runs, as "PID:START" (its start time tells a pid
# reused since apart); one whose parent is no longer ctest is not.
suites() {
        local p stat fields
        for p in $(pgrep -P "$run"); do
                read -r stat 2>/dev/null <"/proc/$p/stat" || continue
                read -ra fields <<<"${stat##*) }" # from the 3rd field on: the 4th, ppid; the 22nd, start time
                [ "${fields[1]}" = "$run" ] && echo "$p:${fields[19]}"
        done
}
stop() {
        local s signalled=" " deadline
        trap '' HUP INT TERM
        if [ -n "$run" ]; then
                deadline=$((SECONDS + cleanup_bound))
                while run_left && [ "$SECONDS" -lt "$deadline" ]; do
                        for s in $(suites); do
                                case $signalled in *" $s "*) continue ;; esac
                                kill -TERM "${s%%:*}" 2>/dev/null
                                signalled="$signalled$s "
                        done
                        sleep 0.2
                done
                pkill -KILL -s "$run"
                wait "$run" 2>/dev/null
                # What the cut-short run left (a daemon in a session of its
                # own, as the emulator's): said.
                "$top/scripts/leftovers.sh" check "$logs/leftovers.before" "$build"
        fi
        kill -TERM -- "-$stress" 2>/dev/null
        wait "$stress" 2>/dev/null
}
trap stop EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

# What a run leaves on the machine (scripts/leftovers.sh: a cgroup, mount or
# process of the tests) fails the hunt: a suite must be hermetic under load.
left=0
for i in $(seq "$runs"); do
        start=$(date +%s)
        "$top/scripts/leftovers.sh" snapshot "$logs/leftovers.before" "$build"
        (cd "$build" && exec setsid ctest --output-on-failure -j "$(nproc)" "$@") >"$logs/run-$i.log" 2>&1 &
        run=$!
        wait "$run"
        rc=$?
        run=
        echo "run $i of $runs: $(grep -E 'tests passed|tests failed' "$logs/run-$i.log" ||
                echo "no summary, ctest's status $rc") ($(($(date +%s) - start)) s)"
        kill -0 "$stress" 2>/dev/null || { echo "stress-ng stopped: $logs/stress-ng.log" >&2; exit 2; }
        "$top/scripts/leftovers.sh" check "$logs/leftovers.before" "$build" || left=1
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
                # Once a run, whatever ctest repeated (--repeat).
                if (!((FILENAME, name) in ran)) { ran[FILENAME, name]; runs_of[name]++ }
                if ($0 ~ /Skipped/) {
                        if (!((FILENAME, name) in skip)) { skip[FILENAME, name]; skipped[name]++ }
                } else if ($0 !~ /[.] +Passed +[0-9.]+ sec$/) {
                        if (!((FILENAME, name) in fail)) { fail[FILENAME, name]; failed[name]++ }
                }
                if ($NF == "sec" && $(NF - 1) > slowest[name]) slowest[name] = $(NF - 1)
        }
        END {
                if (n == 0) { print "no suite to run" > "/dev/stderr"; exit 2 }
                printf "%-24s %9s %8s %12s\n", "suite", "failures", "skipped", "slowest (s)"
                for (i = 0; i < n; i++) {
                        s = order[i]
                        failed[s] += runs - runs_of[s]
                        printf "%-24s %6d/%-2d %8d %12.1f\n", s, failed[s], runs, skipped[s], slowest[s]
                        bad += failed[s]
                }
                exit bad > 0
        }' "$logs/suites.txt" "$logs"/run-*.log || exit
[ "$left" -eq 0 ] || { echo "a run left something behind (above)" >&2; exit 1; }
