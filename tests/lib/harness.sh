# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the bash tests that run the hook binary against resctrlfs (or a
# plain directory standing in for resctrl) and check what it did.
#
#   . tests/lib/harness.sh
#   harness_init HOOK RESCTRLFS NAME   # root, /dev/fuse and fusermount3 or exit 77
#   ... checks ...
#   harness_done                       # prints the counts; false if any check failed

harness_init() {
        HOOK=$1
        RESCTRLFS=$2
        HARNESS_NAME=$3
        [ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
        [ -c /dev/fuse ] || { echo "needs /dev/fuse"; exit 77; }
        command -v fusermount3 >/dev/null || { echo "needs fusermount3"; exit 77; }

        WORK=$(mktemp -d "/tmp/rmh-$HARNESS_NAME.XXXXXX")
        MNT=$WORK/resctrl
        STATE=$WORK/state
        CONFIG=$WORK/config.yaml
        LOG=$WORK/hook.log
        ERR=$WORK/stderr
        SLEEPERS=()
        HOLDERS=()
        passed=0
        failed=0
        trap harness_cleanup EXIT
}

harness_cleanup() {
        local p
        for p in "${SLEEPERS[@]}" "${HOLDERS[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        mountpoint -q "$MNT" && fusermount3 -u "$MNT"
        rm -rf "$WORK"
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
        if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; fi
        rm -rf "$STATE"
        mkdir -p "$MNT"
        "$RESCTRLFS" "$@" "$MNT" || { echo "cannot mount resctrlfs" >&2; exit 1; }
}

# $resctrl_path, $state_dir, $require_fs and $log_level override the defaults.
write_config() { # [extra YAML lines]
        {
                echo "resctrlPath: ${resctrl_path:-$MNT}"
                echo "stateDir: ${state_dir:-$STATE}"
                echo "requireResctrlFs: ${require_fs:-false}"
                echo "log: {level: ${log_level:-info}, syslog: false, stderr: true}"
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

tasks_of() { sort -n "$1/tasks" 2>/dev/null | tr '\n' ' '; }
has_task() { grep -qx "$2" "$1/tasks"; }
member_count() { grep -o '"id":' "$STATE/$1.members" 2>/dev/null | wc -l; }
# The members file's container ids, sorted, one line.
member_ids() { jq -r '.members[].id' "$STATE/$1.members" 2>/dev/null | sort | tr '\n' ' '; }
no_state() { [ ! -e "$STATE/$1.members" ] && [ ! -e "$STATE/$1.lock" ]; }
no_temp_files() { [ -z "$(find "$STATE" -name '*.tmp' 2>/dev/null)" ]; }
stop() { kill "$1"; wait "$1" 2>/dev/null; }

UID1=0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b
UID2=9e8d7c6b-5a49-4838-a726-15f4e3d2c1b0

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
