# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# The tests' waits for an event, and their bounds, in one place (POSIX sh:
# tests/lib/harness.sh and tests/e2e/lib.sh both source it).
#
# A test that depends on an event (a process in a cgroup, a daemon up, a
# file written, a container running) waits for it by condition, with a
# bound, and fails saying what did not happen: never a bare sleep in the
# hope that it did. The bounds are about ten times what the event takes on
# an idle 2-core machine, so that a loaded one slows a test down instead of
# failing it; they are about correctness, not speed. A test that measures
# speed says so, and keeps its own bound.
#
# The bounds, in seconds (the environment can raise them):
#   WAIT_PROCESS  a process started by the test gets where it is going: into
#                 a cgroup, through its exec, to a file it writes, to its
#                 exit; a hook or gc run ends (typically well under 1 s)
#   WAIT_DAEMON   a daemon is up or has done a round: the emulator's mount,
#                 watch's first pass or its state file's next write,
#                 containerd's socket, the entrypoint's ready line
#                 (typically 1 to 3 s)
#   WAIT_RUNTIME  a container runtime's command, or what it starts, has
#                 happened: a container runs, an exec'd process is in it,
#                 a container is gone (typically 3 to 10 s)
: "${WAIT_PROCESS:=10}"
: "${WAIT_DAEMON:=30}"
: "${WAIT_RUNTIME:=120}"

# True once COMMAND... is, looking every 20 ms; once SECONDS have passed by
# the clock, false, saying on stderr "WHAT did not happen within SECONDS s".
# The clock, not a count of looks: a look can take long (a runtime's list, a
# gc pass), and a bound that grew with it would outlast the suite's ctest
# timeout, whose SIGKILL leaves no word of what did not happen, and no
# cleanup.
wait_for() { # SECONDS WHAT COMMAND...
        wait_for_clock
        wait_for_until=$((wait_for_now + $1 * 100 + 1)) # uptime truncates: never early
        wait_for_what=$2
        wait_for_s=$1
        shift 2
        until "$@"; do
                wait_for_clock
                if [ "$wait_for_now" -ge "$wait_for_until" ]; then
                        echo "$wait_for_what did not happen within $wait_for_s s" >&2
                        return 1
                fi
                sleep 0.02
        done
}

# wait_for_now: the time since boot in hundredths of a second
# (/proc/uptime, read without a fork).
wait_for_clock() {
        read -r wait_for_up _ </proc/uptime
        wait_for_now=$((${wait_for_up%.*} * 100 + 1${wait_for_up#*.} - 100))
}

# Conditions of the waits that more than one suite has: a lock (flock or
# fcntl) on FILE held, or waited for, by some process (/proc/locks).
lock_held() { grep -q "^[0-9]*: [A-Z].* $(lock_id "$1") " /proc/locks; } # FILE
lock_waited_on() { grep -q -- "-> [A-Z].* $(lock_id "$1") " /proc/locks; } # FILE
# FILE as /proc/locks names it: MAJOR:MINOR:INODE, the first two in hex.
lock_id() { # FILE
        stat -c '%Hd %Ld %i' "$1" | { read -r lock_ma lock_mi lock_ino && printf '%02x:%02x:%s' "$lock_ma" "$lock_mi" "$lock_ino"; }
}
