#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Debian package, end to end: test_deb.sh HOOK RESCTRLFS
# Builds it with dpkg-buildpackage from a copy of the source tree, runs lintian,
# installs it on this machine, runs a Podman container through the installed
# hooks.d files against resctrlfs, then purges it and checks nothing is left.
# HOOK (the build tree's) only satisfies the e2e harness; the installed one runs.
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

pkg=resctrl-mon-hook
installed_hook=/usr/libexec/resctrl-mon-hook/resctrl-mon-hook
hooks_dir=/usr/share/containers/oci/hooks.d
conffile=/etc/resctrl-mon-hook/config.yaml
run_dir=/run/resctrl-mon-hook

[ $# -eq 2 ] || e2e_fail "usage: $0 HOOK RESCTRLFS"
[ "$(id -u)" -eq 0 ] || e2e_skip "needs root"
command -v dpkg-buildpackage >/dev/null 2>&1 || command -v apt-get >/dev/null 2>&1 ||
        e2e_skip "neither dpkg-buildpackage nor apt-get: not Debian"

# Never touch an installation this test did not make.
pkg_status() {
        dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null
}
case $(pkg_status) in
'' | not-installed) ;;
*) e2e_fail "$pkg is already installed ($(pkg_status)); purge it first" ;;
esac
for p in "$run_dir" /etc/resctrl-mon-hook "$hooks_dir/50-resctrl-mon-hook-createruntime.json"; do
        [ ! -e "$p" ] || e2e_fail "$p exists without the package; remove it first"
done

e2e_init podman "$1" "$2"
pkg_installed=""
pkg_watch=""

# Removes the containers while the hook is still there to see them go, then the package.
pkg_cleanup() {
        pkg_rc=$?
        trap - EXIT
        [ -z "$pkg_watch" ] || { kill "$pkg_watch"; wait "$pkg_watch"; } 2>/dev/null
        e2e_delete_leftovers
        if [ -n "$pkg_installed" ]; then
                dpkg --purge "$pkg" >/dev/null 2>&1 || e2e_say "cannot purge $pkg"
        fi
        (exit "$pkg_rc")
        e2e_cleanup
}
trap pkg_cleanup EXIT

e2e_step "build dependencies"
src=$e2e_tmp/pkg/src
mkdir -p "$src" || e2e_fail "mkdir $src"
if ! (cd "$E2E_TOP" && dpkg-checkbuilddeps) >/dev/null 2>&1; then
        "$E2E_TOP/scripts/install-deps.sh" || e2e_fail "install-deps.sh"
        (cd "$E2E_TOP" && dpkg-checkbuilddeps) || e2e_fail "build dependencies still unmet"
fi
command -v lintian >/dev/null 2>&1 || e2e_fail "lintian is not installed (scripts/install-deps.sh)"

e2e_step "copy the source tree (without build directories) and build the package"
if git -C "$E2E_TOP" rev-parse --git-dir >/dev/null 2>&1; then
        (cd "$E2E_TOP" && git ls-files -z -co --exclude-standard) |
                tar -C "$E2E_TOP" --null -T - -cf - | tar -C "$src" -xf - || e2e_fail "copy the tree"
else
        tar -C "$E2E_TOP" --exclude='./build*' --exclude=./.git --exclude='./obj-*' \
                --exclude=./debian/"$pkg" --exclude=./debian/.debhelper -cf - . |
                tar -C "$src" -xf - || e2e_fail "copy the tree"
fi
start=$(date +%s)
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$e2e_tmp/pkg/build.log" 2>&1 || {
        cat "$e2e_tmp/pkg/build.log" >&2
        e2e_fail "dpkg-buildpackage"
}
e2e_say "   built in $(($(date +%s) - start)) s"
version=$(cd "$src" && dpkg-parsechangelog -S Version) || e2e_fail "dpkg-parsechangelog"
deb=$e2e_tmp/pkg/${pkg}_${version}_$(dpkg --print-architecture).deb
changes=${deb%.deb}.changes
[ -f "$deb" ] || e2e_fail "no $deb: $(ls "$e2e_tmp/pkg")"

e2e_step "lintian: no error or warning, overrides only where justified"
lintian_rc=0
lintian -I --fail-on error,warning "$changes" >"$e2e_tmp/pkg/lintian.log" 2>&1 || lintian_rc=$?
grep -v 'running with root privileges' "$e2e_tmp/pkg/lintian.log" >&2
[ "$lintian_rc" -eq 0 ] || e2e_fail "lintian reports errors or warnings"

e2e_step "install"
pkg_installed=yes
dpkg -i "$deb" >"$e2e_tmp/pkg/install.log" 2>&1 || {
        cat "$e2e_tmp/pkg/install.log" >&2
        e2e_fail "dpkg -i $deb"
}
[ "$(pkg_status)" = installed ] || e2e_fail "$pkg is '$(pkg_status)' after dpkg -i"
dpkg -L "$pkg" >"$e2e_tmp/pkg/files" || e2e_fail "dpkg -L"
[ -x "$installed_hook" ] || e2e_fail "$installed_hook is not installed"
"$installed_hook" --version | grep -qx "resctrl-mon-hook $version" ||
        e2e_fail "$installed_hook --version: $("$installed_hook" --version)"
for stage in createruntime poststop; do
        f=$hooks_dir/50-resctrl-mon-hook-$stage.json
        grep -qF "\"path\": \"$installed_hook\"" "$f" || e2e_fail "$f does not name $installed_hook"
done
dpkg-query -W -f='${Conffiles}\n' "$pkg" | grep -q "^ $conffile " ||
        e2e_fail "$conffile is not a conffile"
man_page=$(man -w 8 resctrl-mon-hook) || e2e_fail "man cannot find resctrl-mon-hook(8)"
warnings=$(MANWIDTH=80 man --warnings -l "$man_page" 2>&1 >/dev/null)
[ -z "$warnings" ] || e2e_fail "man warns: $warnings"
if command -v systemd-tmpfiles >/dev/null 2>&1; then
        [ "$(stat -c '%a %U' "$run_dir" 2>/dev/null)" = "700 root" ] ||
                e2e_fail "tmpfiles.d did not make $run_dir 0700 root"
fi

e2e_step "run a container with Podman through the installed hooks.d files"
# The installed hooks.d files run the hook with the default config: point it at the emulator.
cat >"$conffile" <<EOF
resctrlPath: $e2e_mnt
requireResctrlFs: false
log: {level: debug, syslog: false, stderr: true}
EOF
e2e_state=$run_dir
e2e_podman_hooks_dir=$hooks_dir
mkdir -p "$e2e_tmp/podman" || e2e_fail "mkdir $e2e_tmp/podman"
uid=$(e2e_new_uid)
name=$(e2e_id pkg)
e2e_podman_run "$name" "$uid"
e2e_podman_get "$name"
e2e_assert_groups "$uid"
e2e_assert_tasks "$uid" "$e2e_pid"
e2e_assert_members "$uid" "$e2e_cid"

e2e_step "check from a shell: on PATH, one row per check"
check_rc=0
env PATH=/usr/sbin:/usr/bin:/sbin:/bin resctrl-mon-hook check >"$e2e_tmp/pkg/check.out" 2>&1 ||
        check_rc=$?
[ "$check_rc" -le 1 ] || e2e_fail "resctrl-mon-hook check exited $check_rc: $(cat "$e2e_tmp/pkg/check.out")"
grep -q "mount" "$e2e_tmp/pkg/check.out" || e2e_fail "check printed no mount row: $(cat "$e2e_tmp/pkg/check.out")"

e2e_step "watch as its unit runs it: /metrics on 127.0.0.1, on no other address"
unit=/lib/systemd/system/resctrl-mon-hook-watch.service
exec_start=$(sed -n 's/^ExecStart=//p' "$unit")
port=$(printf '%s\n' "$exec_start" | sed -n 's/.* --metrics-listen 127\.0\.0\.1:\([0-9]*\)\( .*\)\{0,1\}$/\1/p')
[ -n "$port" ] || e2e_fail "$unit's watch does not serve on 127.0.0.1: $exec_start"
listeners() { ss -ltnH "sport = :$port" | awk '{ print $4 }'; }
# Where systemd runs, the package started the unit; here, as its ExecStart says.
if [ -z "$(listeners)" ]; then
        $exec_start >"$e2e_tmp/pkg/watch.log" 2>&1 &
        pkg_watch=$!
fi
metrics_up() { curl -sf --max-time 5 "http://127.0.0.1:$port/metrics" >"$e2e_tmp/pkg/metrics"; }
wait_for "$WAIT_DAEMON" "/metrics on 127.0.0.1:$port" metrics_up ||
        e2e_fail "no /metrics on 127.0.0.1:$port: $(cat "$e2e_tmp/pkg/watch.log" 2>/dev/null)"
grep -q "^resctrl_pod_threads{pod_uid=\"$uid\"" "$e2e_tmp/pkg/metrics" ||
        e2e_fail "/metrics has no series of pod $uid: $(head -c 2000 "$e2e_tmp/pkg/metrics")"
[ "$(listeners)" = "127.0.0.1:$port" ] || e2e_fail "port $port is bound on: $(listeners | tr '\n' ' ')"
for addr in $(hostname -I 2>/dev/null); do
        case $addr in *:*) url="http://[$addr]:$port/" ;; *) url="http://$addr:$port/" ;; esac
        ! curl -s --max-time 5 -o /dev/null "$url" || e2e_fail "$url answers"
done
if [ -n "$pkg_watch" ]; then
        kill "$pkg_watch"
        wait "$pkg_watch" 2>/dev/null
        pkg_watch=""
fi

e2e_step "removal refused while the container runs, its binary kept"
if dpkg -r "$pkg" >"$e2e_tmp/pkg/remove.log" 2>&1; then
        pkg_installed=""
        e2e_fail "dpkg -r removed the hook under a running container"
fi
grep -q "pods with running containers use the hook: $uid" "$e2e_tmp/pkg/remove.log" ||
        e2e_fail "the refusal does not name the pod: $(cat "$e2e_tmp/pkg/remove.log")"
[ "$(pkg_status)" = installed ] || e2e_fail "$pkg is '$(pkg_status)' after a refused removal"
[ -x "$installed_hook" ] || e2e_fail "$installed_hook is gone after a refused removal"

e2e_step "podman rm -f: group and state gone"
e2e_podman rm -f -t 0 "$name" >/dev/null || e2e_fail "podman rm $name"
e2e_assert_groups
e2e_assert_no_state "$uid"

e2e_step "purge: no file of the package left, the empty state directory removed"
dpkg --purge "$pkg" >"$e2e_tmp/pkg/purge.log" 2>&1 || {
        cat "$e2e_tmp/pkg/purge.log" >&2
        e2e_fail "dpkg --purge"
}
pkg_installed=""
case $(pkg_status) in
'' | not-installed) ;;
*) e2e_fail "$pkg is '$(pkg_status)' after purge" ;;
esac
# Directories other packages own (/usr/share/man/man8, /lib: a symlink to
# usr/lib on a merged /usr, ...) stay.
while read -r f; do
        [ "$f" = /. ] && continue
        [ -e "$f" ] || [ -L "$f" ] || continue
        [ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1 && continue
        e2e_fail "$f is left after purge"
done <"$e2e_tmp/pkg/files"
for f in /etc/resctrl-mon-hook "$run_dir"; do
        [ ! -e "$f" ] || e2e_fail "$f is left after purge: $(ls -la "$f")"
done
e2e_say "PASS"
