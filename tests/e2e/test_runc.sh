#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# End to end with runc: test_runc.sh HOOK RESCTRLFS
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

[ $# -eq 2 ] || e2e_fail "usage: $0 HOOK RESCTRLFS"
e2e_init runc "$1" "$2"
e2e_scenario_pod
e2e_scenario_forks
e2e_scenario_watch
e2e_say "PASS"
