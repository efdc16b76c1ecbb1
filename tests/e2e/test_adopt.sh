#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# adopt with runc, then crun: containers that started before the hook.
#   test_adopt.sh HOOK RESCTRLFS RUNTIME WITH_PID
# WITH_PID: tests/with_pid.c, which gives an exited init's pid to another
# process.
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

[ $# -eq 4 ] || e2e_fail "usage: $0 HOOK RESCTRLFS RUNTIME WITH_PID"
e2e_init "$3" "$1" "$2"
e2e_need_file "$4"
e2e_with_pid=$(readlink -f "$4")
e2e_scenario_adopt
e2e_say "PASS"
