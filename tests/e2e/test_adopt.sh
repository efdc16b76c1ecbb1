#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# adopt with runc, then crun: containers that started before the hook.
#   test_adopt.sh HOOK RESCTRLFS RUNTIME
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

[ $# -eq 3 ] || e2e_fail "usage: $0 HOOK RESCTRLFS RUNTIME"
e2e_init "$3" "$1" "$2"
e2e_scenario_adopt
e2e_say "PASS"
