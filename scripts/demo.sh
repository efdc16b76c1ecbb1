#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The quick start: on Debian 12, as root, installs the dependencies, builds, mounts
# resctrlfs (the resctrl emulator) on a temporary directory and runs a pod of two
# busybox containers with runc through the hook. Shows the pod's monitoring group,
# its tasks and counters, the hook's state and what `status` says, then deletes the
# containers and shows that both are gone. Exits non-zero when anything is not as
# expected; cleans up whatever happens.
#   scripts/demo.sh
set -u

E2E_TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

build=$E2E_TOP/build

heading() {
        printf '\n== %s\n' "$*"
}

heading "Dependencies"
"$E2E_TOP/scripts/install-deps.sh" || e2e_fail "cannot install the dependencies"
echo "all installed"

heading "Build ($build)"
cmake -S "$E2E_TOP" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null ||
        e2e_fail "cmake configure failed"
cmake --build "$build" -j "$(nproc)" --target resctrl-mon-hook resctrlfs >/dev/null ||
        e2e_fail "build failed"
hook=$(find "$build" -type f -name resctrl-mon-hook -perm -u+x | head -n 1)
emulator=$(find "$build" -type f -name resctrlfs -perm -u+x | head -n 1)
[ -n "$hook" ] || e2e_fail "no resctrl-mon-hook binary in $build"
[ -n "$emulator" ] || e2e_fail "no resctrlfs binary in $build"
echo "hook:      $hook"
echo "resctrlfs: $emulator"

heading "Mount resctrlfs"
e2e_init runc "$hook" "$emulator"
echo "resctrl emulator at $e2e_mnt"
echo "hook config $e2e_config:"
sed 's/^/  /' "$e2e_config"

uid=$(e2e_new_uid)
a=$(e2e_id web)
b=$(e2e_id sidecar)
heading "Run pod $uid: containers $a and $b"
echo "($b gets the pod UID in the compact upper-case form static pods use)"
e2e_run "$a" "$uid"
e2e_run "$b" "$(e2e_compact_upper "$uid")"
e2e_get_pid "$a"
pa=$e2e_pid
e2e_get_pid "$b"
pb=$e2e_pid
echo "$a: init pid $pa"
echo "$b: init pid $pb"

group=$(e2e_group "$uid")
heading "Monitoring group"
echo "$group"
e2e_assert_groups "$uid"
e2e_assert_tasks "$uid" "$pa" "$pb"
echo "tasks:"
sed 's/^/  /' "$group/tasks"
echo "counters:"
n=0
for f in "$group"/mon_data/*/*; do
        [ -f "$f" ] || continue
        printf '  %s: %s\n' "${f#"$group"/mon_data/}" "$(cat "$f")"
        n=$((n + 1))
done
[ "$n" -gt 0 ] || e2e_fail "no counters under $group/mon_data"

heading "Hook state"
e2e_assert_members "$uid" "$a" "$b"
echo "$e2e_state/$uid.members:"
sed 's/^/  /' "$e2e_state/$uid.members"

heading "resctrl-mon-hook status"
"$e2e_hook" --config "$e2e_config" status || e2e_fail "status failed"

heading "Delete $a"
e2e_delete "$a"
e2e_assert_groups "$uid"
e2e_assert_tasks "$uid" "$pb"
echo "group stays; running tasks: $(e2e_flat "$(e2e_running_tasks "$group/tasks")")"

heading "Delete $b"
e2e_delete "$b"
e2e_assert_no_group "$uid"
e2e_assert_no_state "$uid"
listing() {
        find "$1" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null
}
echo "mon_groups: [$(listing "$e2e_mnt/mon_groups")]"
echo "state directory: [$(listing "$e2e_state")] (outcome.*: run counts for status)"

heading "Done: the pod's group lived exactly as long as its containers"
