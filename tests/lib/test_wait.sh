#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/lib/wait.sh itself: wait_for sees a condition that comes true later,
# and gives up no sooner than its bound, nor later by the clock, saying what
# did not happen;
# lock_held and lock_waited_on see a lock held, and one waited for.
#   test_wait.sh
set -u
# shellcheck source=wait.sh
. "$(cd "$(dirname "$0")" && pwd)/wait.sh"

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

tmp=$(mktemp -d /tmp/rmh-wait.XXXXXX) || fail "mktemp"
holder=
cleanup() {
        [ -z "$holder" ] || kill "$holder" 2>/dev/null
        wait
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

(sleep 0.3 && touch "$tmp/later") &
wait_for "$WAIT_PROCESS" "a file made 0.3 s later" [ -e "$tmp/later" ] ||
        fail "wait_for did not see a file made 0.3 s later"
start=$(date +%s%N)
wait_for 1 "a file never made" [ -e "$tmp/never" ] 2>"$tmp/err" && fail "wait_for true for what never was"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -ge 1000 ] || fail "wait_for gave up after $took ms, before its bound of 1 s"
[ "$(cat "$tmp/err")" = "a file never made did not happen within 1 s" ] ||
        fail "wait_for said: $(cat "$tmp/err")"
# Bounded by the clock, however long each look takes: looks of 0.4 s each
# fit 1 s three times at most (counting looks, as a bound of 1 s allows 50
# looks of 20 ms, would take 20 s).
slow_look() { echo >>"$tmp/looks" && sleep 0.4 && false; }
wait_for 1 "a slow condition" slow_look 2>/dev/null && fail "wait_for true for a false condition"
looks=$(wc -l <"$tmp/looks")
[ "$looks" -le 3 ] || fail "wait_for looked $looks times at a condition taking 0.4 s, in a bound of 1 s"

: >"$tmp/lock"
! lock_held "$tmp/lock" || fail "lock_held: a lock on a file nobody locked"
(exec 9>"$tmp/lock" && flock 9 && touch "$tmp/held" && exec sleep 1000) &
holder=$!
wait_for "$WAIT_PROCESS" "a lock holder" [ -e "$tmp/held" ] || fail "no lock holder"
lock_held "$tmp/lock" || fail "lock_held does not see the lock held"
! lock_waited_on "$tmp/lock" || fail "lock_waited_on: a waiter where there is none"
flock "$tmp/lock" true &
wait_for "$WAIT_PROCESS" "a waiter for the lock" lock_waited_on "$tmp/lock" ||
        fail "lock_waited_on does not see the waiter"
echo "wait: PASS"
