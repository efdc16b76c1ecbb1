#!/bin/sh
# The one test command: installs the dependencies (Debian 12, as root), builds
# with warnings as errors and runs every suite with ctest.
#   scripts/test.sh [BUILD_DIR]        default: build
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$top/build"}

"$top/scripts/install-deps.sh"
cmake -S "$top" -B "$build" -DWERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)"
cd "$build"
ctest --output-on-failure -j 2
