#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End to end with Podman and the repository's oci-hooks(5) files: test_podman.sh HOOK RESCTRLFS
# Podman puts the createRuntime hook into config.json for runc, but runs the
# poststop hook itself, after the runtime's delete, with the environment of the
# hooks.d file only.
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

[ $# -eq 2 ] || e2e_fail "usage: $0 HOOK RESCTRLFS"
e2e_init podman "$1" "$2"
e2e_podman_hooks

uid=$(e2e_new_uid)
a=$(e2e_id a)
b=$(e2e_id b)
n=$(e2e_id nopod)

e2e_step "container without a pod UID: runs, no group, no state"
e2e_podman_run "$n" ""
e2e_assert_groups
e2e_assert_no_pods

e2e_step "pod $uid: two containers, UID compact upper-case in the first"
e2e_podman_run "$a" "$(e2e_compact_upper "$uid")"
e2e_podman_run "$b" "$uid"
e2e_podman_get "$a"
pa=$e2e_pid
ida=$e2e_cid
e2e_podman_get "$b"
pb=$e2e_pid
idb=$e2e_cid
e2e_assert_groups "$uid"
e2e_assert_tasks "$uid" "$pa" "$pb"
e2e_assert_members "$uid" "$ida" "$idb"

e2e_step "watch runs: a process podman exec'd into the second joins at once"
e2e_uid=$uid
e2e_watch_start
e2e_exec_joined "sleep 1007" e2e_podman exec -d "$b" sleep 1007
e2e_watch_stop
e2e_assert_tasks "$uid" "$pa" "$pb" "$e2e_exec"

e2e_step "podman rm -f the first container: the group stays with the second"
e2e_podman rm -f -t 0 "$a" >/dev/null || e2e_fail "podman rm $a"
e2e_assert_groups "$uid"
e2e_assert_tasks "$uid" "$pb" "$e2e_exec"
e2e_assert_members "$uid" "$idb"
e2e_assert_not_member "$uid" "$ida"

e2e_step "podman rm -f the second container: group and state gone"
e2e_podman rm -f -t 0 "$b" >/dev/null || e2e_fail "podman rm $b"
e2e_assert_groups
e2e_assert_no_state "$uid"

e2e_step "podman rm -f the container without a pod UID"
e2e_podman rm -f -t 0 "$n" >/dev/null || e2e_fail "podman rm $n"
e2e_assert_groups
e2e_assert_no_pods
[ -z "$(e2e_podman ps -aq)" ] || e2e_fail "containers left: $(e2e_podman ps -aq)"
e2e_say "PASS"
