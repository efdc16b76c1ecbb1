#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The DaemonSet's container: installs the hook onto the node, registers it
# once it can work there, adopts the pods already running, and runs watch
# (gc's passes every RMH_GC_INTERVAL, exec'd processes joined at once, and
# /metrics and /healthz served on the node's IP, HOST_IP:RMH_METRICS_PORT):
#   entrypoint.sh              all of that, until SIGTERM
#   entrypoint.sh ready        the readiness probe: exit 0 once registered,
#                              with a valid config and able to see the node
#                              (problems); else says why, which kubelet puts
#                              in the probe's event
#   entrypoint.sh uninstall    removes the registration (before deleting the
#                              DaemonSet; deploy/README.md)
#
# The node's directories are mounted into the container at other paths than on
# the node, so the hooks.d files name the binary and its config by their node
# paths (RMH_NODE_DIR). CRI-O and Podman skip a hooks.d file whose binary does
# not exist when they read it, and nothing makes them read it again: the binary
# and its config go first, the JSON files last. Every file is written under a
# temporary name that does not end in .json, then renamed: no runtime reads half
# a file, and a hook running the old binary keeps its inode.
#
# When it registers the hook and when it removes a registration, the one
# rule (deploy/README.md says the same), judged from check's rows, every
# RMH_RETRY_SECONDS until it registers:
#   - It registers once this pod's config is valid and it sees the node
#     (problems: config, node-cgroups, runtime-roots), and the hook can work
#     there: resctrl-mount passes (or only warns), monitoring and state-dir
#     pass (can_register). Until then nothing on the node is touched but
#     what the next rule removes: no runtime runs a hook that can only fail.
#   - It removes a registration only for the node's condition, not for what
#     this pod alone sees (node_unusable): resctrl not mounted on the node
#     (node-resctrl fails: pid 1's mounts, the node's, the pod having
#     hostPID), or mounted without monitoring (resctrl-mount passes,
#     monitoring fails). The registered hook runs in the node's namespaces with
#     the config installed on the node: a resctrl this pod's manifest hides
#     from it (node-resctrl passes, resctrl-mount fails), a config here that is
#     not valid (check's other rows then judge by a config that is not the
#     node's), or gc's view of pid namespaces (gc is not asked) never removes
#     one. A previous pod's registration, before a reboot that left resctrl
#     unmounted, goes: under failurePolicy fail it would refuse every container.
#   - Nothing else removes one: SIGTERM (a rollout, a drain, a shutdown)
#     leaves it, so that pods created while this pod is away are still
#     monitored and a new pod of a rolling update is not undone by the old
#     one's exit; only "entrypoint.sh uninstall" removes it.
# The binary always stays: a runtime that already put the hook into a
# container's config.json must still find it, or that container fails.
set -u

bin=${RMH_BIN:-/usr/libexec/resctrl-mon-hook/resctrl-mon-hook}
# What goes onto the node: the image's statically linked copy (its ENV), where
# the container's own binary is linked against the image's libraries.
node_bin=${RMH_NODE_BIN:-$bin}
template=${RMH_TEMPLATE:-/usr/share/resctrl-mon-hook/resctrl-mon-hook.json.in}
config=${RMH_CONFIG:-/etc/resctrl-mon-hook/config.yaml}
node_dir=${RMH_NODE_DIR:-/opt/resctrl-mon-hook}
install_dir=${RMH_INSTALL_DIR:-/node/install}
hooks_dir=${RMH_HOOKS_DIR:-/node/hooks.d}
state_dir=${RMH_STATE_DIR:-/run/resctrl-mon-hook}
interval=${RMH_GC_INTERVAL:-60}
retry=${RMH_RETRY_SECONDS:-10}
# Where watch serves /metrics: RMH_METRICS_LISTEN (ADDR:PORT) if set, ""
# for nowhere; else the node's IP (HOST_IP, the downward API's
# status.hostIP), an IPv6 one in brackets, at RMH_METRICS_PORT; 127.0.0.1
# without HOST_IP. RMH_WEB_CONFIG: Prometheus' web config (TLS, basic auth).
metrics_port=${RMH_METRICS_PORT:-10123}
case ${HOST_IP:-} in
'') metrics_host=127.0.0.1 ;;
*:*) metrics_host="[$HOST_IP]" ;;
*) metrics_host=$HOST_IP ;;
esac
metrics_listen=${RMH_METRICS_LISTEN-$metrics_host:$metrics_port}
web_config=${RMH_WEB_CONFIG:-}
stages="createRuntime poststop"
watch_pid=""
readiness_pid=""

say() {
        printf 'resctrl-mon-hook-installer: %s\n' "$*" >&2
}

die() {
        say "$*"
        exit 1
}

# The name CMake installs each stage's file under (hooks.d/CMakeLists.txt).
json_name() {
        printf '50-resctrl-mon-hook-%s.json' "$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')"
}

# commit TMP DIR NAME: flushes TMP and renames it to DIR/NAME, or removes it.
commit() {
        if sync "$1" && mv -f "$1" "$2/$3"; then
                return 0
        fi
        rm -f "$1"
        die "cannot install $2/$3"
}

# install_file SRC DIR NAME MODE
install_file() {
        tmp=$2/.$3.tmp
        rm -f "$tmp"
        if ! cp "$1" "$tmp" || ! chmod "$4" "$tmp"; then
                rm -f "$tmp"
                die "cannot copy $1 to $tmp"
        fi
        commit "$tmp" "$2" "$3"
}

# The template with the node paths, and --config so the hook reads the installed config.
install_json() {
        name=$(json_name "$1")
        tmp=$hooks_dir/.$name.tmp
        args="\"resctrl-mon-hook\", \"--config\", \"$node_dir/config.yaml\", \"$1\""
        rm -f "$tmp"
        sed -e "s|\"resctrl-mon-hook\", \"@HOOK_STAGE@\"|$args|" \
                -e "s|@HOOK_PATH@|$node_dir/resctrl-mon-hook|g" -e "s|@HOOK_STAGE@|$1|g" \
                "$template" >"$tmp" || { rm -f "$tmp"; die "cannot write $tmp"; }
        if ! grep -qF -- '"--config"' "$tmp" || grep -qF '@' "$tmp"; then
                rm -f "$tmp"
                die "$template does not have the expected shape"
        fi
        commit "$tmp" "$hooks_dir" "$name"
}

# Removes the registration: the hooks.d files, and with --temporary the
# temporary ones too. A pod that removes it by the rule (enforce) leaves
# those: it does not hold the install lock, and a pod beside it (one
# force-deleted, still running) may be writing one.
uninstall() { # [--temporary]
        for stage in $stages; do
                rm -f "$hooks_dir/$(json_name "$stage")"
                [ "${1:-}" != --temporary ] || rm -f "$hooks_dir/.$(json_name "$stage").tmp"
        done
        say "removed the hooks.d files from $hooks_dir; $node_dir stays for the containers that run it"
}

# Some stage's file is in hooks.d.
any_registered() {
        for stage in $stages; do
                [ ! -e "$hooks_dir/$(json_name "$stage")" ] || return 0
        done
        return 1
}

# Both stages registered, naming this node directory.
registered() {
        for stage in $stages; do
                grep -qF "\"$node_dir/resctrl-mon-hook\"" "$hooks_dir/$(json_name "$stage")" \
                        2>/dev/null || return 1
        done
}

# What keeps this pod from working, as check's failing rows (each with its
# fix line), or all it said when it failed without a row (a usage error);
# nothing, and true, when nothing does: the config is valid, and gc and adopt
# see the node: kubelet's pod cgroups (the node's /sys/fs/cgroup mounted,
# read-only, its whole tree visible from this cgroup namespace) and the
# runtime roots, with the containers they hold (deploy/base/daemonset.yaml).
# Ready (the probe, tell_readiness) also wants resctrl mounted, with
# monitoring, now: a mount gone after the hook was registered (an unmount
# reaches this pod through HostToContainer) leaves every pass failing.
problem_rows="config,node-cgroups,runtime-roots"
ready_rows="$problem_rows,resctrl-mount,monitoring"
problems() { # [ROWS]
        wanted=${1:-$problem_rows}
        out=$("$bin" --config "$config" check --only "$wanted" 2>&1)
        rc=$?
        [ "$rc" -ne 0 ] || return 0
        rows=$(printf '%s\n' "$out" | awk '
                /^[^ ]/ { keep = $1 == "fail" }
                keep')
        [ -n "$rows" ] || rows="check --only $wanted exited $rc: ${out:-saying nothing}"
        printf '%s\n' "$rows"
        return 1
}

# say_problems WHY: problems' rows in the log, a line each.
say_problems() {
        printf '%s\n' "$1" | while IFS= read -r line; do say "  $line"; done
}

# The rows the rule reads (the header): check's verdict on each, one call.
rule_rows="config,node-resctrl,resctrl-mount,monitoring,state-dir"
# judge: sets verdicts, a "ROW LEVEL" line for each row check printed (a
# row of several lines at its worst), and failing, its failing rows with
# their fixes, or all it said when it printed no failing row (a usage error:
# a hook without a row of these, which no verdict then comes from).
judge() {
        out=$("$bin" --config "$config" check --only "$rule_rows" 2>&1)
        verdicts=$(printf '%s\n' "$out" | awk '
                $1 ~ /^(ok|warn|fail)$/ && NF >= 2 {
                        r = $1 == "fail" ? 2 : $1 == "warn" ? 1 : 0
                        if (!($2 in worst) || r > worst[$2]) worst[$2] = r
                }
                END { for (n in worst) print n, worst[n] == 2 ? "fail" : worst[n] == 1 ? "warn" : "ok" }')
        failing=$(printf '%s\n' "$out" | awk '
                /^[^ ]/ { keep = $1 == "fail" }
                keep')
        [ -n "$failing" ] || failing="check --only $rule_rows said: ${out:-nothing}"
}

# level ROW: its verdict in judge's verdicts; none when check printed no
# such row (monitoring, when resctrl-mount fails).
level() {
        printf '%s\n' "$verdicts" | awk -v row="$1" '$1 == row { l = $2 } END { print l ? l : "none" }'
}

# The hook can work on the node, as far as this pod sees it.
can_register() {
        [ "$(level config)" = ok ] && [ "$(level monitoring)" = ok ] &&
                [ "$(level state-dir)" = ok ] &&
                case $(level resctrl-mount) in ok | warn) true ;; *) false ;; esac
}

# The node's own condition makes a registered hook one that can only fail;
# says which. Only with this pod's config valid: it is what check judged by.
node_unusable() {
        [ "$(level config)" = ok ] || return 1
        if [ "$(level node-resctrl)" = fail ]; then
                echo "the node has no resctrl mounted at resctrlPath (node-resctrl)"
                return 0
        fi
        # Only a resctrl mount this pod sees is the node's (resctrl has one
        # instance). A warning is "not a resctrl mount, accepted"
        # (requireResctrlFs: false): an empty directory that the manifest
        # hides resctrl behind looks so too, and its missing monitoring is
        # this pod's view, not the node's kernel.
        [ "$(level resctrl-mount)" = ok ] || return 1
        [ "$(level monitoring)" = fail ] || return 1
        echo "resctrl is mounted without monitoring (monitoring)"
}

# Why a registration stays although this pod cannot register (judged).
kept_because() {
        if [ -z "$verdicts" ]; then
                echo "check gave no verdict on the node"
        elif [ "$(level config)" != ok ]; then
                echo "this pod's config is not valid, and the registered hook reads the one installed in $node_dir"
        elif [ "$(level resctrl-mount)" != ok ]; then
                echo "the node has resctrl (node-resctrl), which this pod does not see (resctrl-mount): its manifest hides it"
        else
                echo "nothing of the node's condition calls for it"
        fi
}

# enforce: the rule's removal, by judge's verdicts, for a pod that does not
# register (one that does rewrites the files in place, and takes nothing
# away meanwhile): a registration goes when the node's condition says so,
# else it stays, and why is said once each time it changes (kept_said).
kept_said=""
enforce() {
        any_registered || return 0
        if reason=$(node_unusable); then
                say "removing the registration: $reason"
                uninstall
                kept_said=""
                return 0
        fi
        reason=$(kept_because)
        [ "$reason" = "$kept_said" ] || say "the registration in $hooks_dir stays: $reason"
        kept_said=$reason
}

# Waits until problems has none, saying them once each time they change.
# Nothing on the node changes meanwhile: a pod whose manifest hides the node
# from it (no cgroup tree, a bad runtime root, no root holding the node's
# containers: runtimeRoots names a runtime's own) or whose config is wrong
# registers nothing, adopts nothing and removes nothing, but a registration
# the node's condition makes one that can only fail (enforce).
wait_until_seen() {
        said=""
        until why=$(problems); do
                judge
                enforce
                if [ "$why" != "$said" ]; then
                        say "not ready, and changing nothing on the node, retrying every ${retry}s:"
                        say_problems "$why"
                        said=$why
                fi
                sleep "$retry" &
                wait $!
        done
}

# Waits until the hook can work on the node (can_register), saying why not
# once each time that changes; meanwhile a registration goes or stays by the
# rule (enforce).
wait_until_usable() {
        said=""
        until judge && can_register; do
                if [ "$failing" != "$said" ]; then
                        say "not registering the hook yet, retrying every ${retry}s:"
                        say_problems "$failing"
                        if [ "$(level resctrl-mount)" = fail ] && [ "$(level node-resctrl)" != fail ]; then
                                say "  the node has resctrl (node-resctrl), which this pod does not see: mount the node's resctrlPath into it (deploy/base/daemonset.yaml)"
                        fi
                        said=$failing
                fi
                enforce
                sleep "$retry" &
                wait $!
        done
}

# What keeps the pod not ready (ready below), said once each time it changes,
# so that the log tells what the probe's events do; every RMH_RETRY_SECONDS
# while watch runs, the first time too. In the background: the main shell
# waits for watch alone, so that no pid it signals can be one reaped already
# (the container shares the node's PID namespace: a reused pid is any process).
tell_readiness() {
        said=unsaid
        while :; do
                why=$(problems "$ready_rows")
                if [ "$why" != "$said" ]; then
                        if [ -n "$why" ]; then
                                say "not ready:"
                                say_problems "$why"
                        else
                                say "ready: the config is valid; gc and adopt see the node's cgroups and runtime roots; resctrl is mounted, with monitoring"
                        fi
                        said=$why
                fi
                sleep "$retry"
        done
}

# Is PID a child of this shell's, not reaped? A pid the shell reaped (a
# child that died while it waited for another) may be any process of the
# node's by now.
our_child() {
        stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
        # shellcheck disable=SC2086 # the fields after the command's name: state, ppid
        set -- ${stat##*) }
        [ "${2:-}" = "$$" ]
}

# Stops watch and the readiness loop. ${!} too: a signal that comes between
# "watch &" (or "tell_readiness &") and the assignment of its pid finds the
# child there and not yet in its variable.
# shellcheck disable=SC2317 # runs from the trap
stop() {
        trap - TERM INT
        children=""
        for pid in "$readiness_pid" "$watch_pid" "${!:-}"; do
                case " $children " in *" $pid "*) continue ;; esac
                if [ -n "$pid" ] && our_child "$pid" && kill -TERM "$pid" 2>/dev/null; then
                        children="$children $pid"
                fi
        done
        for pid in $children; do
                wait "$pid"
        done
        say "stopped; the hook's registration stays as it is (entrypoint.sh uninstall removes it)"
        exit 0
}

case ${1:-} in
ready)
        # Registered, and gc and adopt see what they need: a pod that cannot
        # see kubelet's pod cgroups would keep every group, and one that
        # cannot read the runtime roots would adopt nothing.
        if ! registered; then
                echo "the hook is not registered in $hooks_dir (yet): is resctrl mounted, with monitoring? (the pod's log says why)"
                problems "$ready_rows"
                exit 1
        fi
        problems "$ready_rows"
        exit
        ;;
uninstall)
        uninstall --temporary
        exit 0
        ;;
'') ;;
*) die "unknown command '$1' (none, ready or uninstall)" ;;
esac

case $node_dir in
/*) ;;
*) die "RMH_NODE_DIR '$node_dir' is not an absolute path" ;;
esac
case $interval in
'' | *[!0-9]* | 0) die "RMH_GC_INTERVAL '$interval' is not a positive number of seconds" ;;
esac
case $retry in
'' | *[!0-9]* | 0) die "RMH_RETRY_SECONDS '$retry' is not a positive number of seconds" ;;
esac
case $metrics_port in
'' | *[!0-9]* | 0) die "RMH_METRICS_PORT '$metrics_port' is not a port number" ;;
esac
[ -z "$web_config" ] || [ -n "$metrics_listen" ] || die "RMH_WEB_CONFIG is set, but RMH_METRICS_LISTEN is empty: nothing to serve"
[ -x "$bin" ] || die "$bin is not an executable"
[ -x "$node_bin" ] || die "$node_bin is not an executable"
[ -f "$template" ] || die "$template does not exist"
[ -f "$config" ] || die "$config does not exist (mount the ConfigMap)"
[ -d "$install_dir" ] || die "$install_dir is not a directory (hostPath of $node_dir)"
[ -d "$hooks_dir" ] || die "$hooks_dir is not a directory (hostPath of the node's hooks.d)"

trap stop TERM INT
wait_until_seen
if [ -d "$state_dir" ]; then
        chmod 0700 "$state_dir" || die "cannot make $state_dir private"
fi
# One pod at a time installs and registers: two that overlap (a pod
# force-deleted but still running beside its successor) would write the same
# temporary files. Released before watch, which must not hold it.
exec 9>"$install_dir/.install.lock" || die "cannot open $install_dir/.install.lock"
flock 9 || die "cannot lock $install_dir/.install.lock"
install_file "$node_bin" "$install_dir" resctrl-mon-hook 0755
install_file "$config" "$install_dir" config.yaml 0644
wait_until_usable
for stage in $stages; do
        install_json "$stage"
done
exec 9>&-
say "installed $node_dir/resctrl-mon-hook and registered it in $hooks_dir"

# Pods that started before the hooks were registered get their groups now;
# a failure here leaves them to a later restart of this pod, not the node.
"$bin" --config "$config" adopt || say "adopt exited with status $?"
# watch's options, as the positional parameters (none of the script's own
# is used past this point).
set -- --interval "$interval"
[ -z "$metrics_listen" ] || set -- "$@" --metrics-listen "$metrics_listen"
[ -z "$web_config" ] || set -- "$@" --web-config "$web_config"
"$bin" --config "$config" watch "$@" &
watch_pid=$!
tell_readiness &
readiness_pid=$!
wait "$watch_pid"
rc=$?
trap - TERM INT
! our_child "$readiness_pid" || kill "$readiness_pid" 2>/dev/null
# The hooks stay registered: they work without watch, and the restarted pod reinstalls.
say "watch exited with status $rc"
exit "$rc"
