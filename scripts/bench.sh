#!/bin/bash
# Benchmark: the hook's median wall time at createRuntime and poststop on
# resctrlfs, next to /bin/true run the same way, and its peak RSS.
# Targets: within 2x of /bin/true; peak RSS under 4 MiB.
#   scripts/bench.sh [BUILD_DIR]        default: build
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$top/build"}
runs=${RUNS:-200}

"$top/scripts/install-deps.sh"
for p in hyperfine time; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$p" >/dev/null
done
cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" >/dev/null

hook=$build/hook/resctrl-mon-hook
work=$(mktemp -d /tmp/rmh-bench.XXXXXX)
mnt=$work/resctrl
sleep 100000 &
init=$!
cleanup() {
        kill "$init" 2>/dev/null || true
        mountpoint -q "$mnt" && fusermount3 -u "$mnt"
        mountpoint -q "$work/state" && umount "$work/state"
        rm -rf "$work"
}
trap cleanup EXIT

# The state directory on tmpfs, as /run/resctrl-mon-hook is on a node.
mkdir -p "$mnt" "$work/bundle" "$work/state"
mount -t tmpfs -o mode=0700 tmpfs "$work/state"
"$build/tests/resctrlfs/resctrlfs" "$mnt"
echo '{"ociVersion":"1.2.0","linux":{}}' >"$work/bundle/config.json"
cat >"$work/config.yaml" <<EOF
resctrlPath: $mnt
stateDir: $work/state
requireResctrlFs: false
log: {level: info, syslog: false, stderr: false}
EOF
uid=0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b
annotations="\"annotations\":{\"io.kubernetes.pod.uid\":\"$uid\",\"io.kubernetes.pod.namespace\":\"default\",\"io.kubernetes.pod.name\":\"bench\"}"
echo "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"creating\",\"pid\":$init,\"bundle\":\"$work/bundle\",$annotations}" >"$work/create.json"
echo "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"stopped\",\"bundle\":\"$work/bundle\",$annotations}" >"$work/poststop.json"

create="$hook --config $work/config.yaml createRuntime <$work/create.json"
poststop="$hook --config $work/config.yaml poststop <$work/poststop.json"

# Each timed createRuntime starts from an empty pod and each timed poststop
# from a recorded member; the other stage restores that between runs. The
# init never exits, so poststop finds its group's tasks non-empty and keeps
# the group: its timing covers the state update and the tasks check.
# hyperfine subtracts the cost of the shell that applies the redirection.
median() { # NAME COMMAND PREPARE
        hyperfine --runs "$runs" --warmup 10 --prepare "$3" --export-json "$work/$1.json" \
                --style none "$2" >/dev/null 2>&1
        sed -n 's/.*"median": *\([0-9.e-]*\).*/\1/p' "$work/$1.json" | head -n 1
}

printf '%-28s %12s\n' "median wall time" "microseconds"
for stage in createRuntime poststop; do
        if [ "$stage" = createRuntime ]; then
                cmd=$create prep=$poststop input=$work/create.json
        else
                cmd=$poststop prep=$create input=$work/poststop.json
        fi
        hook_s=$(median "hook-$stage" "$cmd" "$prep")
        true_s=$(median "true-$stage" "/bin/true <$input" "$prep")
        awk -v h="$hook_s" -v t="$true_s" -v s="$stage" 'BEGIN {
                printf "%-28s %12.0f\n", "hook " s, h * 1e6
                printf "%-28s %12.0f\n", "/bin/true (same way)", t * 1e6
                printf "%-28s %12.2fx\n", "ratio", h / t
        }'
done

sh -c "$poststop" || true
rss_create=$(/usr/bin/time -f %M sh -c "exec $create" 2>&1 >/dev/null | tail -n 1)
rss_poststop=$(/usr/bin/time -f %M sh -c "exec $poststop" 2>&1 >/dev/null | tail -n 1)
printf '%-28s %12s KiB\n' "peak RSS createRuntime" "$rss_create" "peak RSS poststop" "$rss_poststop"
