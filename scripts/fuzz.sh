#!/bin/sh
# Builds the libFuzzer targets (clang, ASan, UBSan) and runs each for SECONDS,
# starting from its seed corpus in tests/fuzz/corpus/<target>. New inputs go to
# BUILD_DIR/corpus/<target>, never into the source tree. Any crash, leak,
# sanitizer report or failed assertion fails the script; the input that caused
# it is left in BUILD_DIR/artifacts/.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]    defaults: 60, build-fuzz
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${2:-"$top/build-fuzz"}
targets="state config members abmc"

CC=clang cmake -S "$top" -B "$build" -DENABLE_FUZZING=ON -DBUILD_TESTING=OFF \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWERROR=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target $(printf 'fuzz_%s ' $targets) >/dev/null

mkdir -p "$build/artifacts"
for t in $targets; do
        case $t in
        config) dict=yaml.dict ;;
        *) dict=json.dict ;;
        esac
        mkdir -p "$build/corpus/$t"
        echo "-- fuzz_$t: $seconds s"
        # Inputs above 64 KiB add time, not paths: every parser refuses far larger input whole.
        "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
                -rss_limit_mb=2048 -print_final_stats=1 -dict="$top/tests/fuzz/$dict" \
                -artifact_prefix="$build/artifacts/$t-" \
                "$build/corpus/$t" "$top/tests/fuzz/corpus/$t" >"$build/fuzz_$t.log" 2>&1 || {
                tail -n 60 "$build/fuzz_$t.log"
                echo "fuzz_$t FAILED; reproducer in $build/artifacts/" >&2
                exit 1
        }
        # The final "#N DONE cov: ... ft: ... corp: ..." line and the execs/s figure.
        grep -E '^#[0-9]+[[:space:]]+DONE' "$build/fuzz_$t.log" | tail -n 1
        grep -E 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' \
                "$build/fuzz_$t.log" | tr '\n' ' '
        echo
done
