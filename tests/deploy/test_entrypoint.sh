#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deploy/entrypoint.sh with temporary directories standing in for the DaemonSet's
# hostPaths and a stub standing in for the hook's watch:
#   test_entrypoint.sh SOURCE_DIR BUILD_HOOKS_D
# BUILD_HOOKS_D holds the hooks.d files CMake renders: the entrypoint must install
# files of the same names. strace records the order of the renames.
set -u
top=$1
build_hooks=$2
entry=$top/deploy/entrypoint.sh
. "$top/tests/lib/wait.sh"

say() {
        printf '%s\n' "$*" >&2
}

exited() { ! kill -0 "$1" 2>/dev/null; } # PID

fail() {
        say "FAIL: $*"
        exit 1
}

command -v strace >/dev/null 2>&1 || { say "SKIP: strace is not installed"; exit 77; }

# The cleanup, on a signal too (sh's default action skips the EXIT trap, and
# would leave the entrypoints running), and not cut short by another.
tmp=
cleanup() {
        rc=$?
        trap - EXIT
        trap '' HUP INT TERM
        [ -n "$tmp" ] || exit "$rc"
        # What the entrypoints a failure left (their watch, a readiness
        # loop, which strace would wait for): every process given RUN, not
        # pids from their files, which may be another's by now. Pass after
        # pass, as one may fork while a pass reads /proc, until none is left.
        wait_for "$WAIT_PROCESS" "the end of the entrypoints' processes" none_left_running ||
                rc=1
        rm -rf "$tmp"
        exit "$rc"
}
# One pass: SIGKILL to each process given RUN; true when there was none.
none_left_running() {
        none=true
        for p in /proc/[0-9]*; do
                grep -qzx "RUN=$tmp/run[0-9]*" "$p/environ" 2>/dev/null || continue
                kill -KILL "${p#/proc/}" 2>/dev/null
                none=false
        done
        $none
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rmh-entry.XXXXXX") || fail "mktemp"

node_dir=/opt/resctrl-mon-hook
mkdir -p "$tmp/image" "$tmp/node/install" "$tmp/node/hooks.d" "$tmp/node/state" || fail "mkdir"
chmod 0755 "$tmp/node/state"
printf 'failurePolicy: ignore\n' >"$tmp/image/config.yaml"

# The stub hook. check --only ROWS prints those rows as the hook does (each
# with its fix when it fails), from files standing for the node:
#   $tmp/usable      the node has resctrl mounted, with monitoring
#                    (node-resctrl), and this pod sees it (resctrl-mount)
#   $tmp/pod-blind   ... but this pod does not see it (its manifest hides it)
#   $tmp/pod-empty   ... and this pod sees an empty directory there, which
#                    requireResctrlFs: false accepts (resctrl-mount warns)
#                    and which has no monitoring
#   $tmp/nomon       ... mounted without monitoring
#   $tmp/node-blind  node-resctrl fails although this pod sees resctrl (pid 1
#                    is not the node's init: no hostPID, or a test machine)
#   $tmp/hidden      the node's cgroups hidden from this pod (node-cgroups)
#   $tmp/bad-config  this pod's config is not valid (config)
#   $tmp/old         a hook without --only: fails as one does
# and exits 1 when a row fails, 2 for a row it does not know. gc --dry-run
# always refuses, as gc does where every pod is another pid namespace's:
# the entrypoint must not ask it. adopt records that it ran (after the hooks
# were registered) and returns; watch records who ran it and with what, then
# waits to be killed. Each call is recorded in $RUN/calls: a test waits for
# the entrypoint's next retries by their calls.
cat >"$tmp/image/resctrl-mon-hook" <<'EOF'
#!/bin/sh
echo "$3 $4 ${5:-}" >>"$RUN/calls"
node=$RUN/..
row() { # LEVEL NAME MESSAGE [FIX]
        printf '%-5s %-15s %s\n' "$1" "$2" "$3"
        [ "$1" = ok ] || [ -z "${4:-}" ] || printf '%-5s %-15s fix: %s\n' "" "" "$4"
        [ "$1" != fail ] || failed=1
}
if [ "$3" = check ]; then
        if [ -e "$node/old" ]; then
                echo "resctrl-mon-hook: unrecognized option '--only'" >&2
                exit 2
        fi
        [ "$4" = --only ] && [ $# -eq 5 ] || { echo "stub: check $*" >&2; exit 2; }
        failed=0
        for name in $(echo "$5" | tr , ' '); do
                case $name in
                config)
                        if [ -e "$node/bad-config" ]; then
                                row fail config "'/etc/resctrl-mon-hook/config.yaml' line 1: resctrlPath: 'sys' is not an absolute path" \
                                        "correct the file; until then the built-in default"
                        else
                                row ok config "'/etc/resctrl-mon-hook/config.yaml' is valid"
                        fi ;;
                node-resctrl)
                        if [ -e "$node/usable" ] && [ ! -e "$node/node-blind" ]; then
                                row ok node-resctrl "the node has resctrl mounted at '/sys/fs/resctrl'"
                        else
                                row fail node-resctrl "the node has no mount at '/sys/fs/resctrl'" \
                                        "mount -t resctrl resctrl /sys/fs/resctrl on the node"
                        fi ;;
                resctrl-mount)
                        if [ -e "$node/pod-empty" ]; then
                                row warn resctrl-mount "'/sys/fs/resctrl' is not a resctrl mount; accepted because requireResctrlFs is false" \
                                        "set requireResctrlFs: true on a real node"
                        elif [ -e "$node/usable" ] && [ ! -e "$node/pod-blind" ]; then
                                row ok resctrl-mount "resctrl is mounted at '/sys/fs/resctrl'"
                        else
                                row fail resctrl-mount "'/sys/fs/resctrl' is not a resctrl mount" \
                                        "mount -t resctrl resctrl /sys/fs/resctrl"
                        fi ;;
                monitoring) # as the hook: only where resctrl-mount opened something
                        if [ ! -e "$node/usable" ] || [ -e "$node/pod-blind" ]; then
                                :
                        elif [ -e "$node/nomon" ] || [ -e "$node/pod-empty" ]; then
                                row fail monitoring "no monitoring at '/sys/fs/resctrl': no mon_groups directory" \
                                        "use a CPU and kernel with RDT monitoring"
                        else
                                row ok monitoring "L3_MON (llc_occupancy)"
                        fi ;;
                state-dir) row ok state-dir "'/run/resctrl-mon-hook' is owned by uid 0, mode 0700" ;;
                node-cgroups)
                        if [ -e "$node/hidden" ]; then
                                row fail node-cgroups "the unified hierarchy is seen only from /, this process's cgroup namespace: kubelet's pod cgroups are not there" \
                                        "mount the node's /sys/fs/cgroup (read-only) at /sys/fs/cgroup"
                        else
                                row ok node-cgroups "the unified hierarchy is seen from its root"
                        fi ;;
                runtime-roots) row ok runtime-roots "adopt reads /run/runc" ;;
                *)
                        echo "resctrl-mon-hook: check --only: no check is named '$name'" >&2
                        exit 2 ;;
                esac
        done
        exit "$failed"
fi
if [ "$4" = --dry-run ]; then
        echo "resctrl-mon-hook: gc -: the state of every pod here was written in another pid namespace (4026532999), gc runs in 4026531836: run gc in the host pid namespace (hostPID), where the hook runs; refusing" >&2
        exit 1
fi
if [ "$3" = adopt ]; then
        ls "$RUN/../node/hooks.d" >"$RUN/adopt.saw"
        exit 0
fi
[ ! -e "$RUN/../watch-fails" ] || exit 3
echo "$PPID" >"$RUN/entry.pid"
printf '%s\n' "$@" >"$RUN/watch.args.tmp"
mv "$RUN/watch.args.tmp" "$RUN/watch.args"
echo "$$" >"$RUN/watch.pid"
exec sleep 1000
EOF
chmod 0755 "$tmp/image/resctrl-mon-hook"

# entry [COMMAND]: the entrypoint with the stand-in paths.
entry() {
        RUN=$run RMH_BIN=$tmp/image/resctrl-mon-hook RMH_TEMPLATE=$top/hooks.d/resctrl-mon-hook.json.in \
                RMH_CONFIG=$tmp/image/config.yaml RMH_NODE_DIR=$node_dir \
                RMH_INSTALL_DIR=$tmp/node/install RMH_HOOKS_DIR=$tmp/node/hooks.d \
                RMH_STATE_DIR=$tmp/node/state RMH_GC_INTERVAL=60 RMH_RETRY_SECONDS=1 \
                "$@"
}

# run_entry N: starts the entrypoint under strace in $tmp/runN; sets run and trace_pid.
run_entry() {
        run=$tmp/run$1
        mkdir -p "$run" || fail "mkdir $run"
        entry strace -f -qq -e trace=openat,open,creat,rename,renameat,renameat2,unlink,unlinkat \
                -o "$run/trace" sh "$entry" </dev/null >"$run/out" 2>&1 &
        trace_pid=$!
        wait_for "$WAIT_DAEMON" "the entrypoint starting watch" watch_or_exit "$trace_pid" ||
                fail "watch did not start: $(cat "$run/out")"
        kill -0 "$trace_pid" 2>/dev/null || fail "the entrypoint exited before starting watch: $(cat "$run/out")"
}
watch_or_exit() { # PID
        { [ -f "$run/watch.args" ] && [ -f "$run/watch.pid" ]; } || ! kill -0 "$1" 2>/dev/null
}

# Line number of the first successful rename onto $1 in the trace.
renamed_at() {
        grep -n "rename[a-z0-9]*(.*\"$1\".*= 0$" "$run/trace" | head -n 1 | cut -d: -f1
}

check_installed() {
        cmp -s "$tmp/image/resctrl-mon-hook" "$tmp/node/install/resctrl-mon-hook" ||
                fail "the binary was not installed"
        [ -x "$tmp/node/install/resctrl-mon-hook" ] || fail "the installed binary is not executable"
        cmp -s "$tmp/image/config.yaml" "$tmp/node/install/config.yaml" ||
                fail "the config was not installed"
        [ "$(stat -c %a "$tmp/node/state")" = 700 ] || fail "the state directory is not 0700"
        want=$(cd "$build_hooks" && ls -- *.json)
        have=$(cd "$tmp/node/hooks.d" && ls -A)
        [ -n "$want" ] && [ "$have" = "$want" ] ||
                fail "hooks.d holds [$(echo $have)], expected [$(echo $want)]"
        for stage in createRuntime poststop; do
                f=$tmp/node/hooks.d/50-resctrl-mon-hook-$(echo "$stage" | tr '[:upper:]' '[:lower:]').json
                grep -qF "\"path\": \"$node_dir/resctrl-mon-hook\"," "$f" ||
                        fail "$f does not name the node path: $(cat "$f")"
                grep -qF "\"args\": [\"resctrl-mon-hook\", \"--config\", \"$node_dir/config.yaml\", \"$stage\"]," "$f" ||
                        fail "$f has not the expected args: $(cat "$f")"
                grep -qF "\"stages\": [\"$stage\"]" "$f" || fail "$f is not for $stage"
                ! grep -qF "$tmp" "$f" || fail "$f names a container path"
                # Written only under a temporary name, renamed last.
                ! grep -q "open[a-z]*(.*\"$f\".*O_CREAT" "$run/trace" || fail "$f was written in place"
                json=$(renamed_at "$f")
                bin=$(renamed_at "$tmp/node/install/resctrl-mon-hook")
                cfg=$(renamed_at "$tmp/node/install/config.yaml")
                [ -n "$json" ] && [ -n "$bin" ] && [ -n "$cfg" ] ||
                        fail "no rename onto $f, the binary or the config in the trace"
                [ "$bin" -lt "$json" ] && [ "$cfg" -lt "$json" ] ||
                        fail "$f was renamed into place before the binary or the config"
        done
        ! grep -q "open[a-z]*(.*\"$tmp/node/install/resctrl-mon-hook\".*O_CREAT" "$run/trace" ||
                fail "the binary was written in place (a running hook would see it change)"
        [ "$(cat "$run/watch.args")" = "$(printf '%s\n' --config "$tmp/image/config.yaml" watch --interval 60 \
                --metrics-listen 127.0.0.1:10123)" ] ||
                fail "watch ran with [$(tr "\n" " " <"$run/watch.args")]"
        # adopt ran before watch, once both hooks were registered: nothing falls between.
        [ "$(wc -l <"$run/adopt.saw" 2>/dev/null)" -eq 2 ] ||
                fail "adopt did not run after the hooks were registered"
}

# reap_on_term PID: the entrypoint PID, sent SIGTERM, exits within
# WAIT_DAEMON; its exit status.
reap_on_term() {
        wait_for "$WAIT_DAEMON" "the entrypoint exiting on SIGTERM" exited "$1" ||
                fail "the entrypoint still runs after SIGTERM: $(cat "$run/out")"
        wait "$1"
}

# stop_entry: SIGTERM to the entrypoint; it must exit 0, having stopped watch,
# and leave the hook registered, with its binary and config.
stop_entry() {
        kill -TERM "$(cat "$run/entry.pid")" || fail "kill the entrypoint"
        reap_on_term "$trace_pid"
        rc=$?
        [ "$rc" -eq 0 ] || { cat "$run/out" >&2; fail "the entrypoint exited $rc on SIGTERM"; }
        [ "$(ls -A "$tmp/node/hooks.d" | wc -l)" -eq 2 ] ||
                fail "hooks.d holds [$(ls -A "$tmp/node/hooks.d")] after SIGTERM"
        entry sh "$entry" ready || fail "not ready after SIGTERM"
        [ -x "$tmp/node/install/resctrl-mon-hook" ] || fail "the binary was removed on SIGTERM"
        [ -f "$tmp/node/install/config.yaml" ] || fail "the config was removed on SIGTERM"
        ! kill -0 "$(cat "$run/watch.pid")" 2>/dev/null || fail "watch still runs after SIGTERM"
        rm -f "$run/entry.pid" "$run/watch.pid"
}

# start_entry N: the entrypoint in $tmp/runN, in the background, not traced
# (a run that waits); sets run and entry_pid, the entrypoint's own.
start_entry() {
        run=$tmp/run$1
        mkdir -p "$run" || fail "mkdir $run"
        : >"$run/out"
        entry exec sh "$entry" </dev/null >>"$run/out" 2>&1 &
        entry_pid=$!
}

# stop_waiting: SIGTERM to the entrypoint of start_entry; it exits 0.
stop_waiting() {
        kill -TERM "$entry_pid" || fail "kill the entrypoint"
        reap_on_term "$entry_pid" || fail "the entrypoint exited $? on SIGTERM: $(cat "$run/out")"
}

# register N: a registration, as a pod of run N leaves it (registered,
# then stopped by SIGTERM).
register() {
        run_entry "$1"
        check_installed
        stop_entry
}
both_registered() { [ "$(ls -A "$tmp/node/hooks.d" | wc -l)" -eq 2 ]; }
# Was a hooks.d file removed in the traced run?
unregistered_in_trace() {
        grep -q "unlink[a-z]*(.*\"$tmp/node/hooks.d/50-resctrl-mon-hook-[a-z]*\.json\".*= 0$" "$run/trace"
}

# wait_log PATTERN: until the entrypoint's log ($run/out) has a line matching it.
wait_log() {
        wait_for "$WAIT_DAEMON" "a line '$1' in the log" grep -q -- "$1" "$run/out" || fail "$(cat "$run/out")"
}

# wait_calls PATTERN N: until the stub has had N more calls matching PATTERN
# (the entrypoint's next N retries), counting from now.
wait_calls() {
        calls_want=$(($(calls "$1") + $2))
        wait_for "$WAIT_DAEMON" "$2 more calls '$1' of the hook" calls_reach "$1" "$calls_want" ||
                fail "$(cat "$run/out")"
}
calls() { grep -c -- "$1" "$run/calls" 2>/dev/null; }
calls_reach() { [ "$(calls "$1")" -ge "$2" ]; }

# not_ready_saying PATTERN WHEN: ready fails WHEN, its output matching PATTERN.
not_ready_saying() {
        out=$(entry sh "$entry" ready 2>&1) && fail "ready $2"
        printf '%s\n' "$out" | grep -q -- "$1" || fail "ready does not say why ($2): $out"
}

# wait_ready_said N: until the log says "ready" for the Nth time.
wait_ready_said() {
        wait_for "$WAIT_DAEMON" "saying it is ready for the time $1" ready_said "$1" || fail "$(cat "$run/out")"
}
ready_said() {
        [ "$(grep -c "ready: the config is valid; gc and adopt see the node" "$run/out")" -eq "$1" ]
}

# wait_watch WHAT: until the entrypoint started watch after WHAT.
wait_watch() {
        wait_for "$WAIT_DAEMON" "watch starting after $1" [ -f "$run/watch.pid" ] || fail "$(cat "$run/out")"
}

touch "$tmp/usable"
say "-- first install: binary and config, then the JSON files, by rename; gc, which refuses, not asked"
run_entry 1
check_installed
[ "$(calls "gc --dry-run")" -eq 0 ] || fail "the entrypoint ran gc --dry-run: $(cat "$run/calls")"
say "-- ready: registered, and gc and adopt see the node"
out=$(entry sh "$entry" ready 2>&1) || fail "not ready once registered: $out"
[ -z "$out" ] || fail "ready says something while ready: $out"
wait_log "ready: the config is valid; gc and adopt see the node's cgroups and runtime roots"
say "-- the node's cgroups hidden: not ready, saying which row fails and its fix, once in the log"
touch "$tmp/hidden"
out=$(entry sh "$entry" ready 2>&1) && fail "ready while check fails"
[ "$(printf '%s\n' "$out" | sed -n 1p | cut -c 1-20)" = "fail  node-cgroups  " ] &&
        printf '%s\n' "$out" | sed -n 2p | grep -q "fix: mount the node's /sys/fs/cgroup" &&
        [ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] ||
        fail "ready does not say exactly the failing row and its fix: $out"
wait_log "not ready:$"
wait_log "installer:   fail  node-cgroups"
wait_calls "check --only" 2 # said once, not at each check
[ "$(grep -c "not ready:$" "$run/out")" -eq 1 ] || fail "said it more than once: $(cat "$run/out")"
grep -q "runtime-roots" "$run/out" && fail "the log names a row that passes: $(cat "$run/out")"
rm "$tmp/hidden"
wait_ready_said 2
entry sh "$entry" ready >/dev/null 2>&1 || fail "not ready once the cgroups are seen again"
say "-- resctrl unmounted while registered: not ready, naming resctrl-mount; mounted again: ready"
rm "$tmp/usable"
not_ready_saying "^fail  resctrl-mount" "without resctrl"
wait_log "installer:   fail  resctrl-mount"
touch "$tmp/usable"
entry sh "$entry" ready >/dev/null 2>&1 || fail "not ready once resctrl is back"
wait_ready_said 3
say "-- a hook without check --only: not ready, saying why"
touch "$tmp/old"
not_ready_saying "unrecognized option '--only'" "while check cannot run"
rm "$tmp/old"
say "-- SIGTERM: the hook stays registered"
stop_entry

say "-- restarted on a working node (an upgrade, with a stale temporary file): the registration kept"
printf 'old\n' >"$tmp/node/install/resctrl-mon-hook"
printf '{"stale": true}\n' >"$tmp/node/hooks.d/.50-resctrl-mon-hook-poststop.json.tmp"
run_entry 2
[ ! -e "$tmp/node/hooks.d/.50-resctrl-mon-hook-poststop.json.tmp" ] || fail "stale temporary file left"
check_installed
! unregistered_in_trace || fail "a restart on a working node removed the registration: $(grep unlink "$run/trace")"
stop_entry
say "-- restarted where this pod sees resctrl but node-resctrl fails: registers, removing nothing first"
touch "$tmp/node-blind"
run_entry 15
check_installed
! unregistered_in_trace || fail "a pod that registers removed the registration first: $(grep unlink "$run/trace")"
stop_entry
rm "$tmp/node-blind"

say "-- a node without resctrl: nothing registered (a previous pod's registration removed), not ready"
rm "$tmp/usable"
start_entry 4
wait_log "not registering the hook yet"
wait_log "removing the registration: the node has no resctrl mounted at resctrlPath (node-resctrl)"
wait_calls "node-resctrl" 2 # retries: nothing registered, said once
[ -z "$(ls -A "$tmp/node/hooks.d")" ] || fail "hooks.d holds $(ls -A "$tmp/node/hooks.d") while unusable"
grep -q "installer:   fail  node-resctrl    the node has no mount at" "$run/out" ||
        fail "did not say why: $(cat "$run/out")"
[ "$(grep -c "not registering" "$run/out")" -eq 1 ] || fail "said it more than once: $(cat "$run/out")"
not_ready_saying "not registered" "while nothing is registered"
say "-- resctrl mounted: registered within a retry, ready"
touch "$tmp/usable"
wait_watch "resctrl appearing"
entry sh "$entry" ready || fail "not ready once registered"
kill -TERM "$(cat "$run/entry.pid")" && reap_on_term "$entry_pid" || fail "the entrypoint exited $? on SIGTERM"
rm -f "$run/watch.pid" "$run/entry.pid"

say "-- uninstall: the registration goes, the binary stays"
entry sh "$entry" uninstall >"$run/out" 2>&1 || fail "uninstall failed: $(cat "$run/out")"
[ -z "$(ls -A "$tmp/node/hooks.d")" ] || fail "hooks.d still holds $(ls -A "$tmp/node/hooks.d")"
[ -x "$tmp/node/install/resctrl-mon-hook" ] || fail "uninstall removed the binary"
! entry sh "$entry" ready >/dev/null || fail "ready after uninstall"

say "-- resctrl hidden from this pod only (the node has it): the registration stays, the log says why"
touch "$tmp/usable"
register 8
touch "$tmp/pod-blind"
start_entry 9
wait_log "not registering the hook yet"
wait_log "installer:   fail  resctrl-mount"
wait_log "stays: the node has resctrl (node-resctrl), which this pod does not see (resctrl-mount)"
wait_calls "node-resctrl" 2 # retries: it stays, said once
both_registered || fail "the registration went while only this pod did not see resctrl: $(cat "$run/out")"
[ "$(grep -c "stays:" "$run/out")" -eq 1 ] || fail "said it more than once: $(cat "$run/out")"
stop_waiting
both_registered || fail "the registration went at SIGTERM"
say "-- resctrl hidden from this pod only, on a fresh node: nothing registered, the log says why"
entry sh "$entry" uninstall >/dev/null 2>&1 || fail "uninstall"
start_entry 10
wait_log "the node has resctrl (node-resctrl), which this pod does not see: mount the node's resctrlPath"
wait_calls "node-resctrl" 2
[ -z "$(ls -A "$tmp/node/hooks.d")" ] || fail "registered while this pod does not see resctrl: $(ls -A "$tmp/node/hooks.d")"
stop_waiting
rm "$tmp/pod-blind"

say "-- an empty directory where this pod looks for resctrl (requireResctrlFs: false): the registration stays"
register 16
touch "$tmp/pod-empty"
start_entry 17
wait_log "installer:   fail  monitoring"
wait_log "stays: the node has resctrl (node-resctrl), which this pod does not see (resctrl-mount)"
wait_calls "node-resctrl" 2
both_registered || fail "the registration went for an empty directory only this pod sees: $(cat "$run/out")"
stop_waiting
rm "$tmp/pod-empty"

say "-- resctrl mounted without monitoring: the registration removed"
register 11
touch "$tmp/nomon"
start_entry 12
wait_log "removing the registration: resctrl is mounted without monitoring (monitoring)"
wait_calls "node-resctrl" 1
[ -z "$(ls -A "$tmp/node/hooks.d")" ] || fail "hooks.d holds $(ls -A "$tmp/node/hooks.d") without monitoring"
grep -q "installer:   fail  monitoring " "$run/out" || fail "did not say why: $(cat "$run/out")"
stop_waiting
rm "$tmp/nomon"

say "-- a config here that is not valid: the registration stays, even where the node has no resctrl"
register 13
touch "$tmp/bad-config"
rm "$tmp/usable"
start_entry 14
wait_log "not ready, and changing nothing on the node"
wait_log "installer:   fail  config "
wait_log "stays: this pod's config is not valid, and the registered hook reads the one installed in $node_dir"
wait_calls "node-resctrl" 2
both_registered || fail "a config that is not valid removed the registration: $(cat "$run/out")"
stop_waiting
rm "$tmp/bad-config"
touch "$tmp/usable"
entry sh "$entry" uninstall >/dev/null 2>&1 || fail "uninstall"

say "-- the node hidden from the start: nothing on it changes, not ready; seen: installed"
rm -rf "$tmp/node/install" "$tmp/node/hooks.d"
mkdir -p "$tmp/node/install" "$tmp/node/hooks.d" || fail "mkdir"
chmod 0755 "$tmp/node/state"
touch "$tmp/hidden"
run=$tmp/run6
mkdir -p "$run"
entry sh "$entry" </dev/null >"$run/out" 2>&1 &
entry_pid=$!
wait_log "not ready, and changing nothing on the node"
wait_log "installer:   fail  node-cgroups"
wait_calls "check --only" 2 # retries: the node unchanged, said once
[ -z "$(ls -A "$tmp/node/install")" ] && [ -z "$(ls -A "$tmp/node/hooks.d")" ] ||
        fail "the node changed while hidden: $(ls -A "$tmp/node/install" "$tmp/node/hooks.d")"
[ "$(stat -c %a "$tmp/node/state")" = 755 ] || fail "the state directory changed while hidden"
[ ! -e "$run/adopt.saw" ] || fail "adopt ran while the node was hidden"
[ "$(grep -c "changing nothing" "$run/out")" -eq 1 ] || fail "said it more than once: $(cat "$run/out")"
not_ready_saying "^fail  node-cgroups" "while hidden"
rm "$tmp/hidden"
wait_watch "the node being seen"
[ "$(ls -A "$tmp/node/hooks.d" | wc -l)" -eq 2 ] || fail "not registered once seen"
[ -f "$run/adopt.saw" ] || fail "adopt did not run once seen"
kill -TERM "$(cat "$run/entry.pid")" && reap_on_term "$entry_pid" || fail "the entrypoint exited $? on SIGTERM"
rm -f "$run/watch.pid" "$run/entry.pid"

say "-- another pod installing (its lock held): this one waits, then installs"
rm -rf "$tmp/node/install" "$tmp/node/hooks.d"
mkdir -p "$tmp/node/install" "$tmp/node/hooks.d" || fail "mkdir"
# The holder, a process of its own: a lock this shell held would be
# inherited by the entrypoint it starts, which would then wait on itself.
touch "$tmp/hold"
flock "$tmp/node/install/.install.lock" sh -c 'touch "$1/held"; while [ -e "$1/hold" ]; do sleep 0.1; done' \
        sh "$tmp" &
holder=$!
wait_for "$WAIT_PROCESS" "the lock holder starting" [ -e "$tmp/held" ] || fail "no lock holder"
run=$tmp/run7
mkdir -p "$run"
entry sh "$entry" </dev/null >"$run/out" 2>&1 &
entry_pid=$!
wait_for "$WAIT_DAEMON" "the entrypoint waiting for the install lock" \
        lock_waited_on "$tmp/node/install/.install.lock" || fail "$(cat "$run/out")"
[ ! -e "$tmp/node/install/resctrl-mon-hook" ] && [ -z "$(ls -A "$tmp/node/hooks.d")" ] ||
        fail "installed while another pod held the lock: $(ls -A "$tmp/node/install" "$tmp/node/hooks.d")"
rm "$tmp/hold"
wait "$holder"
wait_watch "the lock's release"
[ "$(ls -A "$tmp/node/hooks.d" | wc -l)" -eq 2 ] || fail "not registered once the lock was free"
flock -n "$tmp/node/install/.install.lock" true || fail "the lock is still held while watch runs"
kill -TERM "$(cat "$run/entry.pid")" && reap_on_term "$entry_pid" || fail "the entrypoint exited $? on SIGTERM"
rm -f "$run/watch.pid" "$run/entry.pid"

say "-- watch's /metrics: at HOST_IP (an IPv6 one in brackets) and RMH_METRICS_PORT, with RMH_WEB_CONFIG; RMH_METRICS_LISTEN instead, empty for none"
# metrics_run N VAR=VALUE...: the entrypoint in run N with those variables;
# watch's arguments after --interval 60, one line, in metrics_args.
metrics_run() {
        n=$1
        shift
        (
                for a in "$@"; do export "${a%%=*}=${a#*=}"; done
                run_entry "$n"
                stop_entry
        ) || exit 1
        run=$tmp/run$n
        metrics_args=$(sed '1,5d' "$run/watch.args" | tr '\n' ' ')
}
metrics_run 31 HOST_IP=192.0.2.7
[ "$metrics_args" = "--metrics-listen 192.0.2.7:10123 " ] || fail "HOST_IP=192.0.2.7: watch got [$metrics_args]"
metrics_run 32 HOST_IP=fd00::7 RMH_METRICS_PORT=9999 RMH_WEB_CONFIG=/etc/resctrl-mon-hook/web/web.yml
[ "$metrics_args" = "--metrics-listen [fd00::7]:9999 --web-config /etc/resctrl-mon-hook/web/web.yml " ] ||
        fail "an IPv6 HOST_IP, a port and a web config: watch got [$metrics_args]"
metrics_run 33 HOST_IP=192.0.2.7 RMH_METRICS_LISTEN=:10124
[ "$metrics_args" = "--metrics-listen :10124 " ] || fail "RMH_METRICS_LISTEN=:10124: watch got [$metrics_args]"
metrics_run 34 HOST_IP=192.0.2.7 RMH_METRICS_LISTEN=
[ "$metrics_args" = "" ] || fail "RMH_METRICS_LISTEN empty: watch got [$metrics_args]"
run=$tmp/run35
mkdir -p "$run"
RMH_METRICS_PORT=http entry sh "$entry" </dev/null >"$run/out" 2>&1 && fail "ran with RMH_METRICS_PORT=http"
grep -q "RMH_METRICS_PORT 'http' is not a port number" "$run/out" || fail "no reason given: $(cat "$run/out")"

say "-- watch exits: so does the entrypoint, with its status, within a retry"
run=$tmp/run5
mkdir -p "$run"
touch "$tmp/watch-fails"
entry sh "$entry" </dev/null >"$run/out" 2>&1 &
entry_pid=$!
wait_for "$WAIT_DAEMON" "the entrypoint exiting after watch did" exited "$entry_pid" ||
        { kill "$entry_pid"; fail "$(cat "$run/out")"; }
wait "$entry_pid"
rc=$?
[ "$rc" -eq 3 ] && grep -q "watch exited with status 3" "$run/out" ||
        fail "exited $rc, not watch's 3: $(cat "$run/out")"
rm "$tmp/watch-fails"
entry sh "$entry" uninstall >/dev/null 2>&1 || fail "uninstall"

say "-- refuses to register anything without the binary in the image"
run=$tmp/run3
mkdir -p "$run"
RMH_BIN=$tmp/image/missing RMH_TEMPLATE=$top/hooks.d/resctrl-mon-hook.json.in \
        RMH_CONFIG=$tmp/image/config.yaml RMH_INSTALL_DIR=$tmp/node/install \
        RMH_HOOKS_DIR=$tmp/node/hooks.d sh "$entry" >"$run/out" 2>&1 && fail "ran without a binary"
grep -q "is not an executable" "$run/out" || fail "no reason given: $(cat "$run/out")"
[ -z "$(ls -A "$tmp/node/hooks.d")" ] || fail "registered a hook without a binary"
! grep -q "gc --dry-run" "$tmp"/run*/calls || fail "the entrypoint ran gc --dry-run, which refuses here"
say "PASS"
