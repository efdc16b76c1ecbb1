#!/bin/sh
# The one test command (Debian 12, as root). Stages, each under a "== " heading
# that also shows how long the stages before it took:
#   deps    install what building and testing needs (scripts/install-deps.sh)
#   build   gcc, warnings as errors                                   BUILD_DIR
#   asan    clang with ASan+UBSan, warnings as errors, every suite    BUILD_DIR-asan
#           but the crash tests;
#           no sanitizer report may appear, not even from a hook run by a runtime
#   static  clang-tidy over common/ and hook/ (.clang-tidy); clang-format check of every C file
#   fuzz    each libFuzzer target for FUZZ_SECONDS (default 20)       BUILD_DIR-fuzz
#   test    every suite of the gcc build, valgrind memcheck included; last, so that
#           the output ends with ctest's summary, then a line "== end" with
#           every stage's time (also after a stage failed)
#   scripts/test.sh [BUILD_DIR]        default: build
# asan and test fail, too, when ctest leaves something of its run on the machine
# (a cgroup, a mount, a process: scripts/leftovers.sh, the naming rule in
# tests/lib/harness.sh); what an earlier, killed run left does not count.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-"$top/build"}")
fuzz_seconds=${FUZZ_SECONDS:-20}
jobs=$(nproc)
times=""

stage() { # NAME
        now=$(date +%s)
        [ -n "${stage_name:-}" ] && times="$times $stage_name ${stage_time}$((now - stage_start))s"
        stage_name=$1
        stage_start=$now
        stage_time=""
        echo "== $1${times:+ (so far:$times)}"
}

trap 'stage end' EXIT

stage deps
"$top/scripts/install-deps.sh"

stage build
cmake -S "$top" -B "$build" -DWERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs" >/dev/null

stage asan
CC=clang cmake -S "$top" -B "$build-asan" -DWERROR=ON -DENABLE_SANITIZERS=ON \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build-asan" -j "$jobs" >/dev/null
reports=$build-asan/sanitizer-reports
rm -f "$reports"/*
leftovers=$top/scripts/leftovers.sh
"$leftovers" snapshot "$build-asan/leftovers.before" "$build-asan"
# The crash tests are left to the gcc build: under ASan the sanitizer's own
# system calls triple its injection points (about 1100 hook runs). ASan hooks
# run about ten times slower, and the stress test starts some 190 of them at
# once: the last waits for all the others' turns under the resctrl lock (7 to
# 10 s on two cores), so its lockTimeoutMs is 30 s there.
if ! (cd "$build-asan" &&
        ASAN_OPTIONS=detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 STRESS_LOCK_TIMEOUT_MS=30000 \
        ctest --output-on-failure -j "$jobs" -E '^crash' >ctest.log 2>&1); then
        cat "$build-asan/ctest.log"
        "$leftovers" check "$build-asan/leftovers.before" "$build-asan" || true
        exit 1
fi
"$leftovers" check "$build-asan/leftovers.before" "$build-asan"
grep -E "tests passed|tests failed" "$build-asan/ctest.log"
if [ -n "$(ls -A "$reports")" ]; then
        cat "$reports"/*
        echo "sanitizer reports in $reports" >&2
        exit 1
fi

stage static
# One file per clang-tidy process: batches make the analyzer report what it
# does not for each file alone.
# Its "N warnings generated." lines count what .clang-tidy filters out.
cd "$top"
if ! ls common/*.c hook/*.c | xargs -P "$jobs" -n 1 clang-tidy -p "$build-asan" --quiet \
        >"$build-asan/clang-tidy.log" 2>&1; then
        grep -v 'warnings\{0,1\} generated\.$' "$build-asan/clang-tidy.log"
        exit 1
fi
echo "clang-tidy: $(ls common/*.c hook/*.c | wc -l) files clean"
sources=$(find common hook tests -name '*.[ch]')
# shellcheck disable=SC2086
clang-format --dry-run --Werror $sources
echo "clang-format: $(echo "$sources" | wc -l) files formatted as .clang-format says"

stage fuzz
"$top/scripts/fuzz.sh" "$fuzz_seconds" "$build-fuzz"

stage test
cd "$build"
"$leftovers" snapshot "$build/leftovers.before" "$build"
rc=0
ctest --output-on-failure -j "$jobs" || rc=$?
"$leftovers" check "$build/leftovers.before" "$build" || rc=1
exit "$rc"
