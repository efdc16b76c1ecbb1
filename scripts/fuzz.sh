#!/bin/sh
# Builds the libFuzzer targets (clang, ASan, UBSan) and runs each for SECONDS,
# starting from its seed corpus in tests/fuzz/corpus/<target> and the other
# suites' files tests/fuzz/seeds.txt names for it. New inputs go to
# BUILD_DIR/corpus/<target>, never into the source tree. Any crash, leak,
# sanitizer report or failed assertion fails the script; the input that caused
# it is left in BUILD_DIR/artifacts/.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]    defaults: 60, build-fuzz
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${2:-"$top/build-fuzz"}
targets="state config pod_state finished abmc proc_events"

CC=clang cmake -S "$top" -B "$build" -DENABLE_FUZZING=ON -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target $(printf 'fuzz_%s ' $targets) >/dev/null

mkdir -p "$build/artifacts"

fuzz() { # TARGET: fuzzes it for SECONDS, its output in BUILD_DIR/fuzz_TARGET.log
        case $1 in
        config) dict=yaml.dict ;;
        *) dict=json.dict ;;
        esac
        mkdir -p "$build/corpus/$1"
        # libFuzzer reads seed directories, not files: a file named in
        # seeds.txt goes in through a directory of its own.
        mkdir -p "$build/seeds/$1"
        set -- "$1"
        [ ! -d "$top/tests/fuzz/corpus/$1" ] || set -- "$@" "$top/tests/fuzz/corpus/$1"
        for path in $(sed -n "s/^$1 //p" "$top/tests/fuzz/seeds.txt"); do
                if [ -d "$top/$path" ]; then
                        set -- "$@" "$top/$path"
                else
                        cp "$top/$path" "$build/seeds/$1/"
                fi
        done
        # Inputs above 64 KiB add time, not paths: every parser refuses far larger input whole.
        target=$1
        shift
        "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
                -rss_limit_mb=2048 -print_final_stats=1 -dict="$top/tests/fuzz/$dict" \
                -artifact_prefix="$build/artifacts/$target-" \
                "$build/corpus/$target" "$build/seeds/$target" "$@" >"$build/fuzz_$target.log" 2>&1
}

report() { # TARGET STATUS
        echo "-- fuzz_$1: $seconds s"
        if [ "$2" -ne 0 ]; then
                tail -n 60 "$build/fuzz_$1.log"
                echo "fuzz_$1 FAILED; reproducer in $build/artifacts/" >&2
                return 1
        fi
        # The final "#N DONE cov: ... ft: ... corp: ..." line and the execs/s figure.
        grep -E '^#[0-9]+[[:space:]]+DONE' "$build/fuzz_$1.log" | tail -n 1
        grep -E 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
                "$build/fuzz_$1.log" | tr '\n' ' '
        echo
}

# One target a core at a time: each fuzzer is a single process.
# shellcheck disable=SC2086
set -- $targets
while [ $# -gt 0 ]; do
        batch=""
        for _ in $(seq "$(nproc)"); do
                [ $# -gt 0 ] || break
                fuzz "$1" &
                batch="$batch $1:$!"
                shift
        done
        for job in $batch; do
                rc=0
                wait "${job#*:}" || rc=$?
                report "${job%:*}" "$rc"
        done
done
