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

# SERVICE's exposure is at most MAX, and it may do what gc does: write
# resctrl and stateDir, read every process's /proc/<pid>/stat.
sandboxed() { # SERVICE MAX
        local out score
        out=$(systemd-analyze security --offline=yes "$1" 2>&1) || fail "systemd-analyze security: $out"
        score=$(printf '%s\n' "$out" | sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
        [ -n "$score" ] || fail "no score in: $out"
        echo "exposure $score"
        awk -v s="$score" -v max="$2" 'BEGIN { exit !(s <= max) }' ||
                fail "exposure $score is above $2: $(printf '%s\n' "$out" | grep '✗')"
        grep -qx 'ReadWritePaths=/sys/fs/resctrl -/run/resctrl-mon-hook' "$1" ||
                fail "$1 may not write resctrl and stateDir"
        ! grep -Eq '^(ProtectProc|ProcSubset|PrivatePIDs|PrivateUsers)=' "$1" ||
                fail "$1 would not see the host's processes"
}

echo "-- the gc service's exposure"
sandboxed "$service" 2.0
# watch needs the host's network namespace and CAP_NET_ADMIN for the proc
# connector (2.1), and IPv4 sockets, IP to the loopback alone, for its
# /metrics (0.3 more); nothing more than gc besides.
echo "-- the watch service's exposure"
sandboxed "$build/systemd/resctrl-mon-hook-watch.service" 2.4
grep -qx 'RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET' "$build/systemd/resctrl-mon-hook-watch.service" ||
        fail "watch may not open the proc connector, or serve /metrics"
# /metrics on the loopback, which alone IP may reach.
grep -q '^ExecStart=.* watch .*--metrics-listen 127\.0\.0\.1:[0-9]*$' "$build/systemd/resctrl-mon-hook-watch.service" ||
        fail "watch does not serve /metrics on 127.0.0.1"
grep -qx 'IPAddressDeny=any' "$build/systemd/resctrl-mon-hook-watch.service" &&
        grep -qx 'IPAddressAllow=localhost' "$build/systemd/resctrl-mon-hook-watch.service" ||
        fail "watch's IP traffic is not the loopback's alone"
echo "PASS"
