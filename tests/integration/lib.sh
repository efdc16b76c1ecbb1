# Helpers shared by the shell tests that run the hook binary on the resctrlfs
# emulator, with sleeper processes standing in for container inits. Sourced
# after HOOK and RESCTRLFS are set; exits 77 when a requirement is absent.

[ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
[ -c /dev/fuse ] || { echo "needs /dev/fuse"; exit 77; }
command -v fusermount3 >/dev/null || { echo "needs fusermount3"; exit 77; }

WORK=$(mktemp -d /tmp/rmh-integration.XXXXXX)
MNT=$WORK/resctrl
STATE=$WORK/state
CONFIG=$WORK/config.yaml
LOG=$WORK/hook.log
SLEEPERS=()
passed=0
failed=0

cleanup() {
        for p in "${SLEEPERS[@]}"; do kill "$p" 2>/dev/null; done
        wait 2>/dev/null
        mountpoint -q "$MNT" && fusermount3 -u "$MNT"
        rm -rf "$WORK"
}
trap cleanup EXIT

# --- helpers ----------------------------------------------------------------

check() { # DESCRIPTION COMMAND...
        local what=$1
        shift
        if "$@"; then
                passed=$((passed + 1))
        else
                failed=$((failed + 1))
                echo "FAIL: $what" >&2
                echo "--- hook log:" >&2
                tail -n 20 "$LOG" >&2
        fi
}

mount_emulator() { # [resctrlfs options]
        if mountpoint -q "$MNT"; then fusermount3 -u "$MNT"; fi
        rm -rf "$STATE"
        mkdir -p "$MNT"
        "$RESCTRLFS" "$@" "$MNT" || { echo "cannot mount resctrlfs" >&2; exit 1; }
}

write_config() { # [extra YAML lines]; $resctrl_path overrides the mount point
        {
                echo "resctrlPath: ${resctrl_path:-$MNT}"
                echo "stateDir: $STATE"
                echo "requireResctrlFs: false"
                echo "log: {level: debug, syslog: false, stderr: true}"
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
        local bundle=${4:-$WORK/bundle-default}
        [ -d "$bundle" ] || bundle "$bundle"
        printf '{"ociVersion":"1.2.0","id":"%s","status":"creating","pid":%s,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s","io.kubernetes.pod.namespace":"default","io.kubernetes.pod.name":"demo"}}' \
                "$1" "$2" "$bundle" "$3"
}

hook() { # STAGE JSON: runs the hook, logging to $LOG; returns its exit status
        echo "$2" | "$HOOK" --config "$CONFIG" "$1" 2>>"$LOG"
}

create() { hook createRuntime "$(state "$@")"; }
poststop() { hook poststop "{\"ociVersion\":\"1.2.0\",\"id\":\"$1\",\"status\":\"stopped\",\"bundle\":\"$WORK\",\"annotations\":{\"io.kubernetes.pod.uid\":\"$2\"}}"; }

tasks_of() { cat "$1/tasks" 2>/dev/null | sort -n | tr '\n' ' '; }
has_task() { grep -qx "$2" "$1/tasks"; }
member_count() { grep -o '"id":' "$STATE/$1.members" 2>/dev/null | wc -l; }
no_state() { [ ! -e "$STATE/$1.members" ] && [ ! -e "$STATE/$1.lock" ]; }
no_temp_files() { [ -z "$(find "$STATE" -name '*.tmp' 2>/dev/null)" ]; }
stop() { kill "$1"; wait "$1" 2>/dev/null; }

UID1=0b7f4a52-3c1d-4e6f-9a8b-1c2d3e4f5a6b
UID2=9e8d7c6b-5a49-4838-a726-15f4e3d2c1b0

gc() { # [gc options]: runs gc, its report on stdout, its log in $LOG
        "$HOOK" --config "$CONFIG" gc "$@" 2>>"$LOG"
}

# The members file's container ids, sorted, one line.
member_ids() { jq -r '.members[].id' "$STATE/$1.members" 2>/dev/null | sort | tr '\n' ' '; }
