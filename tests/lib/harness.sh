# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the bash tests that run the hook binary against resctrlfs (or a
# plain directory standing in for resctrl) and check what it did.
#
#   . tests/lib/harness.sh
#   harness_init HOOK RESCTRLFS NAME   # root, /dev/fuse and fusermount3 or exit 77
#   ... checks ...
#   harness_done                       # prints the counts; false if any check failed
#
# Hermetic runs: nothing a run makes can meet another run's, or the machine's.
#   - Files, the emulator's mount and everything else on disk: under $WORK,
#     /tmp/rmh-NAME.XXXXXX.
#   - Pod UIDs: random per run (new_uid), UID1 and UID2 included.
#   - Real cgroups: only below the run's private root of a hierarchy,
#     <hierarchy>/rmh-NAME-<random> (private_cgroup v2|v1|any), never at a
#     fixed or global name such as <hierarchy>/kubepods.
# At exit, INT, TERM and HUP included, harness_cleanup kills the run's
# processes (its background jobs, and every process in the private cgroups),
# unmounts what is mounted under $WORK, removes the private cgroups leaves
# first, then $WORK; whatever of the run is still there after that (a cgroup,
# a mount, a process naming $WORK) is listed and fails the test.
#
# Naming rule, which scripts/leftovers.sh checks around ctest: every cgroup a
# test makes has a path component whose name starts with "rmh-" (here
# rmh-NAME-<random>; in tests/e2e/ rmh-e2e-<tag> and the runc/crun container
# ids rmh-<tag>-<name>); every mount point and temporary directory is under
# /tmp/rmh-*.
#
# Waits for events: wait_for and the bounds of tests/lib/wait.sh.

# shellcheck source=wait.sh
. "$(dirname "${BASH_SOURCE[0]}")/wait.sh"
# shellcheck source=cgroup_tree.sh
. "$(dirname "${BASH_SOURCE[0]}")/cgroup_tree.sh"

harness_init() {
        HOOK=$1
        RESCTRLFS=$2
        HARNESS_NAME=$3
        [ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
        [ -c /dev/fuse ] || { echo "needs /dev/fuse"; exit 77; }
        command -v fusermount3 >/dev/null || { echo "needs fusermount3"; exit 77; }

        # The cleanup first: a signal from here on finds what was made.
        WORK=
        trap harness_exit EXIT
        trap 'exit 129' HUP
        trap 'exit 130' INT
        trap 'exit 143' TERM
        WORK=$(mktemp -d "/tmp/rmh-$HARNESS_NAME.XXXXXX") || exit 1
        MNT=$WORK/resctrl
        STATE=$WORK/state
        CONFIG=$WORK/config.yaml
        LOG=$WORK/hook.log
        ERR=$WORK/stderr
        SLEEPERS=()
        HOLDERS=()
        passed=0
        failed=0
        # The run's private cgroups: rmh-NAME-<random> in each hierarchy (private_cgroup).
        HARNESS_CGROUP=rmh-$HARNESS_NAME-$(new_uid | cut -c 1-8)
}

# The EXIT trap: cleans up, not to be stopped half-way by another signal;
# anything of the run left behind fails the test, a skipped one too.
harness_exit() {
        local rc=$?
        trap - EXIT
        trap '' HUP INT TERM
        harness_cleanup || { [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; } || rc=1
        exit "$rc"
}

# Removes everything the run made; false, listing it on stderr, if some of it
# is still there afterwards. Safe to call again, and before harness_init.
harness_cleanup() {
        local p m c left=() children=()
        # The run's daemons first continued, if a test that stopped one (the
        # emulator) was cut short: its clients wait for it uninterruptibly.
        while read -r p _; do kill -CONT "$p" 2>/dev/null; done < <(harness_procs)
        # The stand-in inits, the lock holders, every background job (a gc
        # loop a killed test did not get to stop), every process in the
        # private cgroups; then they are reaped. A stopped one (a test that
        # stopped it was cut short) is continued, to take the signal; one
        # that ignores it (unshare --fork) is killed after WAIT_PROCESS.
        for p in ${SLEEPERS[@]+"${SLEEPERS[@]}"} ${HOLDERS[@]+"${HOLDERS[@]}"} $(jobs -p); do
                is_child "$p" && kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null && children+=("$p")
        done
        SLEEPERS=()
        HOLDERS=()
        for c in $(harness_private_cgroups); do kill_cgroup_tree "$c"; done
        if ! wait_for "$WAIT_PROCESS" "the run's children ending" no_children ${children[@]+"${children[@]}"}; then
                for p in ${children[@]+"${children[@]}"}; do is_child "$p" && kill -KILL "$p" 2>/dev/null; done
        fi
        wait 2>/dev/null
        for c in $(harness_private_cgroups); do
                remove_cgroup_tree "$c" || left+=("cgroup $c ($(cgroup_tree_procs "$c" | wc -l) processes)")
        done
        case ${WORK:-} in /tmp/rmh-*) ;; *) [ "${#left[@]}" -eq 0 ]; return ;; esac
        # The emulator (and whatever else a test mounted there), deepest first.
        for m in $(harness_mounts); do
                fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m"
        done
        # The emulator's daemon exits once unmounted; anything else naming $WORK too.
        # On a loaded machine that can take seconds; one still there after
        # WAIT_DAEMON (a daemon's exit) is described, for whoever looks into
        # it, and then killed: its exit is not what the tests check, a clean
        # machine is.
        if ! wait_for "$WAIT_DAEMON" "the run's processes ending" no_harness_procs; then
                while read -r p _; do
                        describe_stuck "$p" >&2
                        kill -KILL "$p" 2>/dev/null
                done < <(harness_procs)
                wait_for "$WAIT_PROCESS" "the run's killed processes ending" no_harness_procs
        fi
        for m in $(harness_mounts); do left+=("mount $m"); done
        while read -r p; do left+=("process $p"); done < <(harness_procs)
        [ -n "$(harness_mounts)" ] || rm -rf --one-file-system "$WORK"
        [ ! -e "$WORK" ] || left+=("directory $WORK")
        [ "${#left[@]}" -eq 0 ] && return 0
        echo "LEFTOVER of $HARNESS_NAME:" >&2
        printf '  %s\n' "${left[@]}" >&2
        return 1
}

# The run's private cgroups that exist, one a line.
harness_private_cgroups() {
        local v h
        case ${HARNESS_CGROUP:-} in rmh-?*-?*) ;; *) return 0 ;; esac
        for v in v2 v1; do
                h=$(hierarchy "$v")
                [ -n "$h" ] && [ -d "$h/$HARNESS_CGROUP" ] && echo "$h/$HARNESS_CGROUP"
        done
        return 0
}

# Mount points at or under $WORK, deepest first.
harness_mounts() {
        awk -v w="$WORK" '$5 == w || index($5, w "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# "PID CMDLINE" of each process but this shell whose command line names $WORK
# or whose working directory is in it. The bracket keeps grep from matching
# its own command line.
harness_procs() {
        local f p pat
        case ${WORK:-} in /tmp/rmh-?*) ;; *) return 0 ;; esac # none before harness_init made it
        pat="/tmp/[r]${WORK#/tmp/r}"
        pat=${pat//./[.]}
        {
                grep -lE -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3
                find /proc/[0-9]*/cwd -maxdepth 0 \( -lname "$WORK" -o -lname "$WORK/*" \) 2>/dev/null |
                        cut -d/ -f3
        } | sort -un | while read -r p; do
                [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] && continue
                f=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") || continue
                [ -n "$f" ] && echo "$p $f"
        done
}

no_harness_procs() { [ -z "$(harness_procs)" ]; }

no_children() { local p; for p; do ! is_child "$p" || return 1; done; } # PID...

# Is PID a child of this shell? A pid recorded by the run is another
# process's once reaped and reused: pids wrap on a machine busy with other
# suites, and cleanup signals only the run's own.
is_child() { # PID
        local stat ppid
        read -r stat 2>/dev/null <"/proc/$1/stat" || return 1
        read -r _ ppid _ <<<"${stat##*) }"
        [ "$ppid" = $$ ]
}

# What process PID's threads are doing: state, wait channel, kernel stack.
describe_stuck() { # PID
        local t
        echo "NOTE: process $1 still runs $WAIT_DAEMON s after its run ended: $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)"
        for t in /proc/"$1"/task/*; do
                echo "  thread ${t##*/}: $(awk '{ print $3 }' "$t/stat" 2>/dev/null) in $(cat "$t/wchan" 2>/dev/null)"
                sed 's/^/    /' "$t/stack" 2>/dev/null
        done
}

harness_done() {
        echo "$HARNESS_NAME: $passed passed, $failed failed"
        [ "$failed" -eq 0 ]
}

check() { # DESCRIPTION COMMAND...
        local what=$1
        shift
        if "$@"; then
                passed=$((passed + 1))
        else
                failed=$((failed + 1))
                echo "FAIL: $what" >&2
                if [ -s "$ERR" ]; then
                        echo "--- hook stderr:" >&2
                        head -c 2000 "$ERR" >&2
                elif [ -s "$LOG" ]; then
                        echo "--- hook log:" >&2
                        tail -n 20 "$LOG" >&2
                fi
        fi
}

mount_emulator() { # [resctrlfs options]
        unmount_emulator || exit 1
        rm -rf "$STATE"
        mkdir -p "$MNT"
        "$RESCTRLFS" "$@" "$MNT" || { echo "cannot mount resctrlfs" >&2; exit 1; }
}

# The pid of the emulator's daemon that serves $MNT now. An earlier daemon of
# the run can still be there: its mount, unmounted here, was copied into a
# mount namespace made meanwhile (a runtime's, of a suite running beside),
# and it serves that copy until the namespace goes. This mount's is the newest.
emulator_pid() { pgrep -n -f "^$RESCTRLFS .*$MNT\$"; }

# The emulator at $MNT unmounted. A mount can stay busy a moment after its
# last user is gone (a mount namespace that copied it, still being torn
# down): it is tried again until it goes; if it does not, who holds it.
unmount_emulator() {
        mountpoint -q "$MNT" || return 0
        wait_for "$WAIT_DAEMON" "$MNT unmounted" fusermount3 -u -q "$MNT" && return 0
        describe_mount_users "$MNT" >&2
        return 1
}

# Who may keep DIR's mount busy: processes with a file, their working or
# root directory under it; mount namespaces other than this one with a copy.
describe_mount_users() { # DIR
        local p ns
        local -A seen=(["$(readlink /proc/self/ns/mnt)"]=1)
        find /proc/[0-9]*/cwd /proc/[0-9]*/root /proc/[0-9]*/fd -maxdepth 1 \
                \( -lname "$1" -o -lname "$1/*" \) 2>/dev/null | cut -d/ -f3 | sort -un |
                while read -r p; do
                        echo "  in $1: process $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
                done
        for p in /proc/[0-9]*; do
                ns=$(readlink "$p/ns/mnt" 2>/dev/null) || continue
                [ -z "${seen[$ns]:-}" ] || continue
                seen[$ns]=1
                if grep -q " $1 " "$p/mountinfo" 2>/dev/null; then
                        echo "  a copy of $1 in $ns, process ${p#/proc/}'s: $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)"
                fi
        done
}

# Sets runtime_roots (write_config) to a runtime root holding a container's
# record that adopt can read, with its bundle, as a node whose kubelet's
# pods run has: check's runtime-roots row fails without one wherever a
# kubepods cgroup is seen, as the tests make them, this suite's or one
# running beside it. Its init is no live process's: adopt takes nothing.
with_runtime_root() {
        runtime_roots=$WORK/runtime
        mkdir -p "$runtime_roots/c0" "$WORK/runtime-bundle" &&
                printf '{"init_process_pid": 1, "init_process_start": 1, "config": {"labels": ["bundle=%s"]}}\n' \
                        "$WORK/runtime-bundle" >"$runtime_roots/c0/state.json"
}

# $resctrl_path, $state_dir, $require_fs, $log_level and $runtime_roots (the
# items of runtimeRoots's list) override the defaults.
write_config() { # [extra YAML lines]
        {
                echo "resctrlPath: ${resctrl_path:-$MNT}"
                echo "stateDir: ${state_dir:-$STATE}"
                echo "requireResctrlFs: ${require_fs:-false}"
                echo "log: {level: ${log_level:-info}, syslog: false, stderr: true}"
                [ -z "${runtime_roots:-}" ] || echo "runtimeRoots: [$runtime_roots]"
                local line
                for line in "$@"; do echo "$line"; done
        } >"$CONFIG"
}

sleeper() { # VAR...: starts a stand-in container init for each, its pid in VAR
        local var
        for var in "$@"; do
                sleep 1000 </dev/null >/dev/null 2>&1 &
                SLEEPERS+=("$!")
                printf -v "$var" %s "$!"
        done
}

bundle() { # DIR [intelRdt JSON]: a bundle whose config.json has that linux.intelRdt
        mkdir -p "$1"
        if [ -n "${2:-}" ]; then
                printf '{"ociVersion":"1.2.0","linux":{"intelRdt":%s}}\n' "$2" >"$1/config.json"
        else
                printf '{"ociVersion":"1.2.0","linux":{}}\n' >"$1/config.json"
        fi
}

state() { # ID PID UID [BUNDLE]: runc-style state JSON
        local b=${4:-$WORK/bundle-default}
        [ -d "$b" ] || bundle "$b"
        printf '{"ociVersion":"1.2.0","id":"%s","status":"creating","pid":%s,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s","io.kubernetes.pod.namespace":"default","io.kubernetes.pod.name":"demo"}}' \
                "$1" "$2" "$b" "$3"
}

# Runs the hook with stdin from FILE and the current config. Its stderr goes
# to $LOG and, for the last call to finish, to $ERR. Sets $rc to its exit
# status, and returns it. Safe to run in parallel (the stress test does).
run_hook() { # STAGE FILE [HOOK OPTIONS...]
        local stage=$1 file=$2 err
        shift 2
        err=$(mktemp "$WORK/err.XXXXXX")
        "$HOOK" --config "$CONFIG" "$@" "$stage" <"$file" 2>"$err"
        rc=$?
        cat "$err" >>"$LOG"
        mv "$err" "$ERR"
        return "$rc"
}

hook() { # STAGE JSON: runs the hook on that state; returns its exit status
        local in
        in=$(mktemp "$WORK/in.XXXXXX")
        printf '%s' "$2" >"$in"
        run_hook "$1" "$in"
        rm -f "$in"
        return "$rc"
}

create() { # ID PID UID [BUNDLE]
        hook createRuntime "$(state "$@")"
}

poststop() { # ID UID
        hook poststop "$(printf '{"ociVersion":"1.2.0","id":"%s","status":"stopped","annotations":{"io.kubernetes.pod.uid":"%s"}}' "$1" "$2")"
}

gc() { # [gc options]: runs gc, its report on stdout, its log in $LOG
        "$HOOK" --config "$CONFIG" gc "$@" 2>>"$LOG"
}

# Where a cgroup hierarchy is mounted: v2 the unified one, v1 the pids
# controller's, any the first of those two; nothing when it is not mounted.
hierarchy() { # v2 | v1 | any
        case $1 in
        v2) findmnt -n -t cgroup2 -o TARGET | head -n 1 ;;
        v1) findmnt -n -t cgroup -O pids -o TARGET | head -n 1 ;;
        any) hierarchy v2 | grep . || hierarchy v1 ;;
        esac
}

# The run's private cgroup in a hierarchy (as `hierarchy` picks it):
# <hierarchy>/rmh-NAME-<random>, made on first use, removed by
# harness_cleanup with everything below it. Tests make their cgroups below
# it. False, printing nothing, when that hierarchy is not mounted.
private_cgroup() { # v2 | v1 | any
        local h
        h=$(hierarchy "$1")
        [ -n "$h" ] && [ -n "${HARNESS_CGROUP:-}" ] || return 1
        mkdir -p "$h/$HARNESS_CGROUP" || return 1
        echo "$h/$HARNESS_CGROUP"
}

tasks_of() { sort -n "$1/tasks" 2>/dev/null | tr '\n' ' '; }
has_task() { grep -qx "$2" "$1/tasks"; }
member_count() { grep -o '"id":' "$STATE/$1.members" 2>/dev/null | wc -l; }
# The members file's container ids, sorted, one line.
member_ids() { jq -r '.members[].id' "$STATE/$1.members" 2>/dev/null | sort | tr '\n' ' '; }
no_state() { [ ! -e "$STATE/$1.members" ] && [ ! -e "$STATE/$1.lock" ]; }
no_temp_files() { [ -z "$(find "$STATE" -name '*.tmp' 2>/dev/null)" ]; }
stop() { kill "$1"; wait "$1" 2>/dev/null; }

# A random pod UID, canonical (lower-case, dashed, version 4), starting with
# HEX_PREFIX (up to 8 hex digits) where given: UIDs whose first digits differ
# sort the same way in every run.
new_uid() { # [HEX_PREFIX]
        local u p=${1:-}
        u=$(cat /proc/sys/kernel/random/uuid)
        printf '%s%s\n' "$p" "${u:${#p}}"
}

# The pods most tests use, new each run. Their first digits are fixed, and
# differ from those of the UIDs the tests add (3, 5, 7, 1): listings sorted by
# UID come out in the same order each run.
# shellcheck disable=SC2034 # the tests' own
UID1=$(new_uid 0)
# shellcheck disable=SC2034
UID2=$(new_uid 9)

# Every path with its type, mode, owner and size, plus the content of every
# regular file (tasks, member files): any change the hook makes shows here.
# The hook's outcome counters (outcome.<stage>.<result>) are left out: they
# count every run, a refused one included, by design.
snapshot() { # DIR...
        local d
        for d in "$@"; do
                [ -e "$d" ] || [ -L "$d" ] || { echo "$d absent"; continue; }
                find "$d" ! -name 'outcome.*' -printf '%p %y %m %U %s %l\n' | sort
                find "$d" -type f -name tasks -exec sh -c 'echo "$1:"; sort -n "$1"' _ {} \; | cat
                find "$d" -type f ! -name tasks -path "*.members" -exec sh -c 'echo "$1:"; cat "$1"' _ {} \;
        done
}

# stderr holds exactly one line naming the problem (matching the ERE) and, with
# a summary, the info line "pod=... outcome=error ..." after it.
one_error_line() { # PATTERN with_summary|no_summary
        local lines
        lines=$(wc -l <"$ERR")
        if [ "$2" = with_summary ]; then
                [ "$lines" -eq 2 ] && grep -q 'outcome=error elapsed_us=' "$ERR" &&
                        grep -v 'outcome=error elapsed_us=' "$ERR" | grep -Eq -- "$1"
        else
                [ "$lines" -eq 1 ] && grep -Eq -- "$1" "$ERR"
        fi
}
