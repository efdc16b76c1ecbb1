#!/bin/bash
# watch on the resctrlfs emulator with real cgroups and the kernel's process
# events: processes exec'd into a container's cgroup join the pod's group
# with no gc pass in between; what watch must leave alone, it does.
#   test_watch.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" watch

G1=$MNT/mon_groups/$UID1
G2=$MNT/mon_groups/$UID2
WOUT=$WORK/watch.out
WERR=$WORK/watch.err
WATCH=

# Starts watch in the background (COMMAND... runs it: unshare -n), its
# actions in $WOUT, its log in $WERR; waits until its first pass is written.
start_watch() { # INTERVAL [COMMAND...]
        local interval=$1
        shift
        : >"$WOUT"
        : >"$WERR"
        rm -f "$STATE/watch.state"
        "$@" "$HOOK" --config "$CONFIG" watch --interval "$interval" >"$WOUT" 2>"$WERR" &
        WATCH=$!
        wait_for "$WAIT_DAEMON" "watch's first pass written" watch_at_least .passes 1
}
stop_watch() { kill -KILL "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null; WATCH=; }
nothing_logged() { # watch's log empty, or shown
        [ -s "$WERR" ] || return 0
        { echo "--- watch logged:"; cat "$WERR"; } >&2
        return 1
}
watch_says() { jq -r "$1" "$STATE/watch.state" 2>/dev/null; } # JQ
watch_at_least() { [ "$(watch_says "$1")" -ge "$2" ] 2>/dev/null; } # JQ N
# watch.state is written at most once a second: waits for it to say N or more.
watch_counts() { wait_for "$WAIT_DAEMON" "watch.state's $1 reaching $2" watch_at_least "$@"; } # JQ N

# Starts COMMAND... as a runtime's exec does: forked outside the container,
# the child joins the container's cgroup, then execs. Its pid in $XPID.
exec_start() { # CGROUP COMMAND...
        sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$@" </dev/null &
        XPID=$!
}
# exec_start, returning once the process is in the cgroup and runs COMMAND,
# or has ended with status 0 (true ends at once); false if neither within
# the bound.
exec_into() { # CGROUP COMMAND...
        exec_start "$@"
        wait_for "$WAIT_PROCESS" "process $XPID in $1, running ${*:2}," exec_done "$XPID" "$@"
}
exec_done() { # PID CGROUP COMMAND...
        local pid=$1 cgroup=$2
        shift 2
        if [ -e "/proc/$pid" ] && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
                grep -qx "$pid" "$cgroup/cgroup.procs" && cmp -s "/proc/$pid/cmdline" <(printf '%s\0' "$@")
        else
                wait "$pid"
        fi
}

# Waits for task PID in GROUP: how fast is the benchmark's to say.
joins() { wait_for "$WAIT_PROCESS" "task $2 in $1" has_task "$@"; } # GROUP PID

# Every exec before it handled: watch handles the kernel's events in order,
# so once an exec after them has joined the pod's group of CGROUP, it has
# handled theirs. Its process's pid in $BARRIER.
exec_barrier() { # CGROUP GROUP
        exec_into "$1" sleep 1000 && joins "$2" "$XPID" && BARRIER=$XPID
}

# A container c1 of pod UID1 in cgroup $root/c1 (KIND's hierarchy), its
# init $p1, recorded before watch starts.
setup_pod() { # KIND
        root=$(private_cgroup "$1") || return 1
        mount_emulator
        write_config
        mkdir "$root/c1"
        sleeper p1
        echo "$p1" >"$root/c1/cgroup.procs"
        create c1 "$p1" "$UID1"
}

# Watch stopped, the container's processes killed, its cgroup removed.
teardown_pod() {
        stop_watch
        remove_cgroup_tree "$root/c1"
        wait "$p1" 2>/dev/null
}
jqe() { jq -e "$@" >/dev/null; }

test_exec_joins() { # KIND
        local kind=$1 child
        setup_pod "$kind" || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        check "$kind: watch starts" start_watch 3600
        check "$kind: with the kernel's process events" [ "$(watch_says .events)" = true ]
        exec_into "$root/c1" sleep 1000
        check "$kind: an exec'd process joins" joins "$G1" "$XPID"
        check "$kind: with no gc pass in between" [ "$(watch_says .passes)" = 1 ]
        # What it forked before its exec, a child that never execs, comes with
        # it: the container joins, not only the exec'd process.
        mkfifo "$WORK/never"
        sh -c 'echo $$ >"$1/cgroup.procs" && { (read -r _ <"$2") & echo $! >"$3"; } &&
                exec sleep 1000' sh "$root/c1" "$WORK/never" "$WORK/child" </dev/null &
        XPID=$!
        check "$kind: a second one joins" joins "$G1" "$XPID"
        child=$(cat "$WORK/child")
        check "$kind: and what it forked before its exec" joins "$G1" "$child"
        rm "$WORK/never"
        check "$kind: counted as joined by watch" watch_counts .joins.watch 2
        check "$kind: none by gc" [ "$(watch_says .joins.gc)" = 0 ]
        check "$kind: nothing logged" nothing_logged
        teardown_pod
}
test_exec_joins_v2() { test_exec_joins v2; }
test_exec_joins_v1() { test_exec_joins v1; }

# A pod recorded, and a container dropped, while watch runs: the member
# files are read again as they change.
test_state_changes() {
        local cg2
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        cg2=$root/c2
        mkdir "$cg2"
        sleeper p2
        echo "$p2" >"$cg2/cgroup.procs"
        create c2 "$p2" "$UID2"
        exec_into "$cg2" sleep 1000
        check "a pod recorded after watch started: its exec joins" joins "$G2" "$XPID"
        poststop c1 "$UID1"
        check "c1 dropped" [ -z "$(member_ids "$UID1")" ]
        check "an exec into a dropped container's cgroup" exec_into "$root/c1" sleep 1000
        local dropped=$XPID
        check "then one into c2 joins" exec_barrier "$cg2" "$G2"
        check "the exec into a dropped container's cgroup is left alone" not_in_any "$dropped"
        check "no gc pass" [ "$(watch_says .passes)" = 1 ]
        remove_cgroup_tree "$cg2"
        teardown_pod
}
not_in_any() { ! grep -qx "$1" "$MNT"/mon_groups/*/tasks 2>/dev/null; }

# Exec'd processes that exit as soon as they see themselves in the group
# (within WAIT_PROCESS, not a fixed 200 ms: how soon is the benchmark's to
# say): each is joined while it runs. Then many that exit at once: no wrong
# write, nothing logged.
test_short_lived() {
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        : >"$WORK/short"
        for _ in $(seq 10); do
                exec_into "$root/c1" sh -c 'i=0; while [ $i -lt "$2" ]; do
                        grep -qx $$ "$0/tasks" && echo in >>"$1" && exit; sleep 0.02; i=$((i + 1)); done' \
                        "$G1" "$WORK/short" $((WAIT_PROCESS * 50))
                wait "$XPID"
        done
        check "10 of 10 short-lived processes in the group before they exit" \
                [ "$(grep -c in "$WORK/short")" = 10 ]
        local quick=() ok=0 p
        for _ in $(seq 50); do
                exec_start "$root/c1" true
                quick+=("$XPID")
        done
        for p in "${quick[@]}"; do wait "$p" && ok=$((ok + 1)); done
        check "50 of 50 processes that exit at once ran in the container" [ "$ok" = 50 ]
        check "then one that lives joins" exec_barrier "$root/c1" "$G1"
        check "only live ones in the group" \
                [ "$(tasks_of "$G1")" = "$(printf '%s\n' "$p1" "$BARRIER" | sort -n | tr '\n' ' ')" ]
        check "watch still runs" kill -0 "$WATCH"
        check "nothing logged" nothing_logged
        teardown_pod
}

# A flood of unrelated execs (the socket filter drops forks and exits in
# the kernel): an exec into the container still joins.
test_unrelated_execs() {
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        for _ in $(seq 500); do /bin/true; done
        exec_into "$root/c1" sleep 1000
        check "after 500 unrelated execs, an exec'd process joins" joins "$G1" "$XPID"
        check "no gc pass" [ "$(watch_says .passes)" = 1 ]
        teardown_pod
}

# SIGKILL at points of a join loses nothing: gc then completes it, and
# the pod's state stays whole. "stopped": watch never saw the exec (it was
# stopped before it), so gc is the one that joins.
test_killed() {
        local delay what at_kill in_c1
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        v2_cgroup_of "$p1" in_c1
        check "c1's cgroup v2 line" [ -n "$in_c1" ]
        for delay in stopped 0 0.003 0.03; do
                what="killed $delay s after an exec"
                start_watch 3600 || break
                if [ "$delay" = stopped ]; then
                        what="stopped before an exec, then killed"
                        kill -STOP "$WATCH"
                fi
                # The delay counts from when the process is in the container.
                check "$what: the process in the container first" \
                        exec_into "$root/c1" sleep 1000
                v2_cgroup_of "$XPID" at_kill # builtins: no fork delays the kill
                case $delay in stopped | 0) ;; *) sleep "$delay" ;; esac
                stop_watch
                gc >/dev/null
                check "$what: exec_into returned with it there" \
                        [ "$at_kill" = "$in_c1" ]
                check "$what: in the group after gc" has_task "$G1" "$XPID"
                check "$what: the member file whole" \
                        jqe '.members | length == 1' "$STATE/$UID1.members"
                check "$what: no temp file" no_temp_files
        done
        teardown_pod
}

# Sets VAR to process PID's cgroup v2 line ("0::/path") of /proc/PID/cgroup,
# with builtins only.
v2_cgroup_of() { # PID VAR
        local line
        printf -v "$2" %s ""
        while read -r line; do
                case $line in 0::*) printf -v "$2" %s "$line" && return ;; esac
        done <"/proc/$1/cgroup"
}

# resctrl unmounted by a plain umount, which fails (EBUSY) while a process
# holds a file of it open; tried again for WAIT_PROCESS, as a mount
# namespace that copied the mount may hold it a moment longer.
unmount_plain() { wait_for "$WAIT_PROCESS" "a plain umount of $MNT" umount_quiet; }
umount_quiet() { umount "$MNT" 2>/dev/null; }

# A container c2 of pod UID2 in cgroup $root/c2, its init $p2, created now:
# true when createRuntime recorded it monitored.
create_c2() {
        mkdir "$root/c2"
        sleeper p2
        echo "$p2" >"$root/c2/cgroup.procs"
        create c2 "$p2" "$UID2" && jqe '[.members[].monitored] == [true]' "$STATE/$UID2.members"
}

# Issue 32 (c): watch holds no file of resctrl between its passes, so the
# mount unit can unmount resctrl under it and mount it again. A container
# created then is monitored, and an exec into it joins at once: watch opens
# the new mount at the exec, with no pass in between, and closes it after.
test_remount() {
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        check "a plain umount of resctrl under watch" unmount_plain
        mountpoint -q "$MNT" && { teardown_pod; return; }
        check "resctrl mounted again" "$RESCTRLFS" "$MNT"
        check "createRuntime then: monitored" create_c2
        check "createRuntime then: its init in the pod's group" has_task "$G2" "$p2"
        exec_into "$root/c2" sleep 1000
        check "an exec into it joins at the exec" joins "$G2" "$XPID"
        check "with no gc pass in between" [ "$(watch_says .passes)" = 1 ]
        check "nothing logged" nothing_logged
        check "the exec handled, a plain umount again" unmount_plain
        remove_cgroup_tree "$root/c2"
        teardown_pod
}

# The same for gc --interval between its passes, each of which closes what
# it opened.
test_remount_gc() {
        local loop
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        : >"$WOUT"
        # --json: the report is printed once the pass has closed what it opened.
        "$HOOK" --config "$CONFIG" gc --json --interval 3600 >"$WOUT" 2>>"$LOG" &
        loop=$!
        check "gc --interval's first pass reported" \
                wait_for "$WAIT_DAEMON" "gc's first report" test -s "$WOUT"
        check "a plain umount of resctrl under gc --interval" unmount_plain
        mountpoint -q "$MNT" || {
                check "resctrl mounted again" "$RESCTRLFS" "$MNT"
                check "createRuntime then: monitored" create_c2
                check "createRuntime then: its init in the pod's group" has_task "$G2" "$p2"
                remove_cgroup_tree "$root/c2"
        }
        kill "$loop"; wait "$loop" 2>/dev/null
        teardown_pod
}

# A container whose init is gone, with no pass since to drop it: an exec
# into its cgroup is not joined by watch (the member is dead: gc's pass
# drops it), while an exec into a live one is.
test_dead_member() {
        local dead
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "c2 created, monitored" create_c2
        check "watch starts" start_watch 3600
        stop "$p1"
        check "an exec into the dead container's cgroup" exec_into "$root/c1" sleep 1000
        dead=$XPID
        check "then one into a live container joins" exec_barrier "$root/c2" "$G2"
        check "the exec into the dead container's cgroup is left alone" not_in_any "$dead"
        check "its member left for gc" [ "$(member_ids "$UID1")" = "c1 " ]
        check "no gc pass" [ "$(watch_says .passes)" = 1 ]
        gc >/dev/null
        check "gc drops it" [ -z "$(member_ids "$UID1")" ]
        remove_cgroup_tree "$root/c2"
        teardown_pod
}

# Where the kernel will not send process events (another network namespace
# here), watch says so once and joins at its gc passes.
test_no_events() {
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts in another network namespace" start_watch 1 unshare -n
        check "says it has no process events" [ "$(watch_says .events)" = false ]
        exec_into "$root/c1" sleep 1000
        check "an exec'd process joins at a pass" joins "$G1" "$XPID"
        check "counted as joined by gc" watch_counts .joins.gc 1
        # Two passes more: each could say it again.
        check "more passes" watch_counts .passes "$(($(watch_says .passes) + 2))"
        check "said once" [ "$(grep -c "cannot receive the kernel's process events" "$WERR")" = 1 ]
        check "check's watch row warns" sh -c \
                "'$HOOK' --config '$CONFIG' check --only watch | grep -q '^warn.*without the kernel'"
        teardown_pod
}

# What status, Prometheus and check say of a watch that runs, then of none.
test_reported() {
        local json
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        exec_into "$root/c1" sleep 1000
        joins "$G1" "$XPID"
        check "watch.state counts the join" watch_counts .joins.watch 1
        json=$("$HOOK" --config "$CONFIG" status --json)
        check "status --json: the running watch and its joins" \
                jqe --argjson pid "$WATCH" '.node.watch | .pid == $pid and .events and .joins.watch == 1' \
                <<<"$json"
        check "Prometheus: watch runs" sh -c \
                "'$HOOK' --config '$CONFIG' status --prometheus | grep -qx 'resctrl_watch_running 1'"
        check "Prometheus: its joins" sh -c \
                "'$HOOK' --config '$CONFIG' status --prometheus | grep -qx 'resctrl_joins_total{by=\"watch\"} 1'"
        check "check: watch runs" sh -c "'$HOOK' --config '$CONFIG' check --only watch | grep -q '^ok'"
        stop_watch
        check "status: a killed watch is not running" sh -c \
                "'$HOOK' --config '$CONFIG' status | grep -qx 'watch: not running'"
        check "Prometheus: none runs" sh -c \
                "'$HOOK' --config '$CONFIG' status --prometheus | grep -qx 'resctrl_watch_running 0'"
        check "check: warns" sh -c "'$HOOK' --config '$CONFIG' check --only watch | grep -q '^warn'"
        # This process's pid and start time, another boot's: no watch runs.
        jq -c --arg b "$(new_uid)" --argjson pid $$ --argjson t "$(awk '{ print $22 }' /proc/$$/stat)" \
                '.pid = $pid | .start_time = $t | .boot_id = $b' "$STATE/watch.state" >"$WORK/ws"
        mv "$WORK/ws" "$STATE/watch.state"
        check "status: a watch.state of another boot names no running watch" sh -c \
                "'$HOOK' --config '$CONFIG' status | grep -qx 'watch: not running'"
        teardown_pod
}

# One watch a stateDir: a second one says which runs, and exits.
test_one_a_state_dir() {
        local out
        setup_pod v2 || { echo "no v2 hierarchy mounted: nothing to test"; return; }
        check "watch starts" start_watch 3600
        out=$(timeout "$WAIT_PROCESS" "$HOOK" --config "$CONFIG" watch --interval 3600 2>&1 >/dev/null)
        check "a second watch exits 1" [ $? = 1 ]
        check "saying which runs" grep -q "another watch runs on state directory .* (pid $WATCH)" <<<"$out"
        check "the first still runs" kill -0 "$WATCH"
        teardown_pod
}

# Started before resctrl is mounted (a DaemonSet on a booting node): its
# passes fail and say why, and once resctrl is there they run.
test_waits_for_resctrl() {
        mount_emulator
        write_config
        unmount_emulator
        rm -f "$STATE/watch.state"
        "$HOOK" --config "$CONFIG" watch --interval 1 >"$WOUT" 2>"$WERR" &
        WATCH=$!
        local ticks
        check "says why" wait_for "$WAIT_DAEMON" "watch saying why it cannot pass" \
                grep -q "is not a resctrl mount\|cannot open resctrl\|has no monitoring" "$WERR"
        ticks=$(awk '{ print $14 + $15 }' "/proc/$WATCH/stat")
        sleep 1.5 # what is measured: its CPU time over 1.5 s
        check "runs while resctrl is not mounted" kill -0 "$WATCH"
        check "idle meanwhile: under 10% of a core" \
                [ $(($(awk '{ print $14 + $15 }' "/proc/$WATCH/stat") - ticks)) -lt $(($(getconf CLK_TCK) * 15 / 100)) ]
        "$RESCTRLFS" "$MNT"
        check "passes once it is mounted" watch_counts .passes 1
        check "with process events" [ "$(watch_says .events)" = true ]
        stop_watch
}

test_usage() {
        local out
        mount_emulator
        write_config
        out=$("$HOOK" --config "$CONFIG" watch --interval 0 2>&1)
        check "--interval 0: usage error" [ $? = 2 ]
        check "--interval 0: one line" [ "$(printf '%s\n' "$out" | wc -l)" = 1 ]
        "$HOOK" --config "$CONFIG" watch extra 2>/dev/null
        check "an extra argument: usage error" [ $? = 2 ]
        check "--help" sh -c "'$HOOK' watch --help | grep -q interval"
}

for t in ${TESTS:-test_exec_joins_v2 test_exec_joins_v1 test_state_changes test_short_lived \
        test_unrelated_execs test_killed test_remount test_remount_gc test_dead_member \
        test_no_events test_reported test_one_a_state_dir test_waits_for_resctrl test_usage}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
