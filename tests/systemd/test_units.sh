#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The systemd units, checked offline (no systemd needs to run here):
#   test_units.sh SOURCE_DIR BUILD_DIR
# the resctrl mount and the timer load cleanly, and the gc service is
# sandboxed: systemd-analyze security scores it at most 2.0 ("OK").
set -u
top=$1
build=$2

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

command -v systemd-analyze >/dev/null 2>&1 || { echo "SKIP: no systemd-analyze"; exit 77; }
service=$build/systemd/resctrl-mon-hook-gc.service
[ -f "$service" ] || fail "$service was not generated"

echo "-- the mount unit and the timer load"
out=$(systemd-analyze verify --man=no "$top/systemd/sys-fs-resctrl.mount" \
        "$top/systemd/resctrl-mon-hook-gc.timer" 2>&1) || fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify says: $out"

echo "-- the gc service's exposure"
out=$(systemd-analyze security --offline=yes "$service" 2>&1) || fail "systemd-analyze security: $out"
score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
[ -n "$score" ] || fail "no score in: $out"
echo "exposure $score"
awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }' ||
        fail "exposure $score is above 2.0: $(printf '%s\n' "$out" | grep '✗')"
# Hardening that would break gc: it writes resctrl and stateDir, and reads
# every process's /proc/<pid>/stat.
grep -qx 'ReadWritePaths=/sys/fs/resctrl -/run/resctrl-mon-hook' "$service" ||
        fail "gc may not write resctrl and stateDir"
! grep -Eq '^(ProtectProc|ProcSubset|PrivatePIDs|PrivateUsers)=' "$service" ||
        fail "gc would not see the host's processes"
echo "PASS"
