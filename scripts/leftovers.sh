#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# What a test run leaves on the machine: scripts/test.sh takes a snapshot
# before ctest and checks after it that nothing of the run is left.
#   scripts/leftovers.sh snapshot FILE [DIR...]  what is there now, into FILE
#   scripts/leftovers.sh check FILE [DIR...]     what is there now and was not in
#                                                FILE; false, listing it, if anything
#   scripts/leftovers.sh selftest                plants leftovers of each kind and
#                                                checks that each is reported
# What counts (the naming rule of tests/lib/harness.sh):
#   cgroup   a directory, at any depth of any mounted cgroup hierarchy, whose
#            name starts with "rmh-", or below one; and anything at or below
#            <hierarchy>/kubepods, the layout tests used to make at the root
#   mount    of type fuse.resctrlfs (the emulator), or at or under /tmp/rmh-*
#   process  one whose working directory or command line is under /tmp/rmh-*
#            or under one of the DIRs (the build directory)
#   dir      /tmp/rmh-* or /dev/shm/rmh-* (a run's temporary directory or file)
# Things there before (a killed run's) never count: only what the snapshot
# lacks does (processes by pid and start time, mounts by id). check waits up
# to LEFTOVERS_WAIT seconds (default WAIT_DAEMON of tests/lib/wait.sh: a
# run's daemons going) by the clock for what is still going away.
# LEFTOVERS_PREFIX (default rmh-), LEFTOVERS_FSTYPE (default fuse.resctrlfs)
# and LEFTOVERS_WATCH (default kubepods) change the rule, for selftest.
set -u
# shellcheck source=../tests/lib/wait.sh
. "$(dirname "$0")/../tests/lib/wait.sh"

prefix=${LEFTOVERS_PREFIX:-rmh-}
fstype=${LEFTOVERS_FSTYPE:-fuse.resctrlfs}
watch=${LEFTOVERS_WATCH-kubepods}

# Mount id, mount point and type of every mount, one a line.
mounts() {
        awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { print $1, $5, $(i + 1); next } }' \
                /proc/self/mountinfo
}

hierarchies() {
        mounts | awk '$3 == "cgroup" || $3 == "cgroup2" { print $2 }' | sort -u
}

# Every cgroup that counts, with every cgroup below it.
cgroups() {
        local h w
        for h in $(hierarchies); do
                find "$h" -mindepth 1 -type d -name "$prefix*" -prune -exec find {} -type d \; 2>/dev/null
                for w in $watch; do
                        [ -d "$h/$w" ] && find "$h/$w" -type d 2>/dev/null
                done
        done | sort -u
}

# This process and its ancestors: never leftovers (test.sh runs in the build directory).
ancestors() {
        local p=$$ next key val
        while [ "$p" -gt 0 ]; do
                echo "$p"
                next=0
                while read -r key val; do
                        [ "$key" = PPid: ] && next=$val
                done 2>/dev/null <"/proc/$p/status"
                p=$next
        done
}

# Whether a process's command line names /tmp/PREFIX* or one of the DIRs.
# Builtins only, so that the check's own processes do not show.
names_ours() { # PID DIR...
        local pid=$1 arg d
        shift
        while IFS= read -r -d '' arg; do
                [[ $arg == *"/tmp/$prefix"* ]] && return 0
                for d in "$@"; do
                        [[ $arg == "$d" || $arg == *"$d/"* ]] && return 0
                done
        done 2>/dev/null <"/proc/$pid/cmdline"
        return 1
}

# Every process that counts: "process:PID:STARTTIME<TAB>description".
processes() { # DIR...
        local p stat fields cmd cwd d skip
        local -a lname=(-lname "/tmp/$prefix*")
        for d in "$@"; do lname+=(-o -lname "$d" -o -lname "$d/*"); done
        skip=" $(ancestors | tr '\n' ' ') "
        # Working directories: one find, whose own processes are gone before they are looked at.
        local by_cwd
        by_cwd=" $(find /proc/[0-9]*/cwd -maxdepth 0 \( "${lname[@]}" \) -printf '%h ' 2>/dev/null |
                sed 's|/proc/||g') "
        for p in /proc/[0-9]*; do
                p=${p#/proc/}
                [[ $skip == *" $p "* ]] && continue
                [[ $by_cwd == *" $p "* ]] || names_ours "$p" "$@" || continue
                read -r stat 2>/dev/null <"/proc/$p/stat" || continue
                read -ra fields <<<"${stat##*) }"
                [ "${fields[0]}" = Z ] && continue
                cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")
                cwd=$(readlink "/proc/$p/cwd" 2>/dev/null) || continue # gone meanwhile
                printf 'process:%s:%s\tprocess %s: %s(cwd %s)\n' "$p" "${fields[19]}" "$p" "$cmd" "$cwd"
        done
}

snapshot() { # DIR...
        cgroups | sed 's/.*/cgroup:&\tcgroup &/'
        mounts | awk -v t="$fstype" -v p="/tmp/$prefix" '$3 == t || index($2, p) == 1 {
                printf "mount:%s:%s\tmount %s (%s)\n", $1, $2, $2, $3 }'
        processes "$@"
        find /tmp /dev/shm -mindepth 1 -maxdepth 1 -name "$prefix*" -printf 'dir:%p\tdirectory %p\n' 2>/dev/null ||
                true # a machine without /dev/shm
}

absolute() { # DIR...: each made absolute, without a trailing slash
        local d
        for d in "$@"; do realpath -m "$d"; done
}

# What NOW has that BEFORE lacks, the cgroups below a new one left out.
new_since() { # BEFORE NOW
        awk -F '\t' 'FILENAME == ARGV[1] { seen[$1] = 1; next } !($1 in seen) { print $2 }' "$1" "$2" |
                sort | awk '/^cgroup / { if (last != "" && index($0, last "/") == 1) next; last = $0 }
                        { print }'
}

cmd_snapshot() { # FILE DIR...
        local file=$1
        shift
        mapfile -t dirs < <(absolute "$@")
        snapshot ${dirs[@]+"${dirs[@]}"} >"$file.tmp" && mv "$file.tmp" "$file"
}

cmd_check() { # FILE DIR...
        local before=$1 now left until=$((SECONDS + ${LEFTOVERS_WAIT:-$WAIT_DAEMON}))
        shift
        [ -r "$before" ] || { echo "leftovers: no snapshot $before" >&2; return 2; }
        mapfile -t dirs < <(absolute "$@")
        now=$(mktemp)
        while :; do
                snapshot ${dirs[@]+"${dirs[@]}"} >"$now"
                left=$(new_since "$before" "$now")
                [ -z "$left" ] && break
                [ "$SECONDS" -lt "$until" ] || break
                sleep 1
        done
        rm -f "$now"
        [ -z "$left" ] && return 0
        echo "FAIL: the run left behind:" >&2
        printf '  %s\n' "$left" | sed '2,$s/^/  /' >&2
        return 1
}

# --- selftest ---------------------------------------------------------------

selftest() {
        [ "$(id -u)" -eq 0 ] || { echo "needs root"; exit 77; }
        # Globals: the EXIT trap needs them after this function returned.
        h=$(mounts | awk '$3 == "cgroup2" { print $2 } $3 == "cgroup" { v1 = v1 $2 "\n" }
                END { printf "%s", v1 }' | head -n 1)
        self=$0 failed=0 sleepers=()
        [ -n "$h" ] || { echo "no cgroup hierarchy mounted"; exit 77; }
        rand=$(tr -dc a-z0-9 </dev/urandom | head -c 8)
        # A scope of this self-test's own: other runs' leftovers do not show in it.
        export LEFTOVERS_PREFIX=rmh-lotest-$rand- LEFTOVERS_FSTYPE=none LEFTOVERS_WATCH="" LEFTOVERS_WAIT=0
        work=/tmp/rmh-lotest-$rand-work
        build=$(mktemp -d /tmp/lotest-build.XXXXXX)
        mkdir -p "$work" "$work/old/m" "$work/new/m" "$build/m"
        cleanup() {
                local rc=$? p m
                trap - EXIT
                for p in ${sleepers[@]+"${sleepers[@]}"}; do kill "$p" 2>/dev/null; done
                wait 2>/dev/null
                for m in "$work/old/m" "$work/new/m" "$build/m"; do
                        mountpoint -q "$m" && umount "$m"
                done
                rmdir "$h/$LEFTOVERS_PREFIX"{new/child,new,old} 2>/dev/null
                rm -rf --one-file-system "$work" "$build" "/tmp/${LEFTOVERS_PREFIX}dir"
                exit "$rc"
        }
        trap cleanup EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
        fail() {
                echo "FAIL: $1" >&2
                [ -z "${2:-}" ] || printf '%s\n' "$2" | sed 's/^/    /' >&2
                failed=$((failed + 1))
        }
        listed() { # WHAT TEXT: the last check's output names TEXT
                grep -qF -- "$2" <<<"$out" || fail "$1: no '$2' in" "$out"
        }
        unlisted() { # WHAT TEXT: it does not
                ! grep -qF -- "$2" <<<"$out" || fail "$1: '$2' in" "$out"
        }
        start_in() { # DIR [ARGV0]: a sleeper whose working directory is DIR
                (cd "$1" && exec -a "${2:-sleep}" sleep 1000) </dev/null >/dev/null 2>&1 &
                sleepers+=("$!")
        }
        local out in_work by_argv in_build rc

        # Left before the snapshot (an earlier, killed run's): never reported.
        mkdir "$h/${LEFTOVERS_PREFIX}old"
        mount -t tmpfs lotest "$work/old/m"
        start_in "$work/old"
        "$self" snapshot "$work/before" "$build" || fail "snapshot"
        out=$("$self" check "$work/before" "$build" 2>&1) || fail "an unchanged machine fails" "$out"
        [ -z "$out" ] || fail "an unchanged machine: check says something" "$out"

        # Left by this run: one of each kind.
        mkdir -p "$h/${LEFTOVERS_PREFIX}new/child" "/tmp/${LEFTOVERS_PREFIX}dir"
        mount -t tmpfs lotest "$work/new/m"
        mount -t tmpfs lotest "$build/m"
        start_in "$work/new"
        in_work=$!
        start_in / "$build/hook/resctrl-mon-hook"
        by_argv=$!
        start_in "$build"
        in_build=$!
        out=$("$self" check "$work/before" "$build" 2>&1)
        rc=$?
        [ "$rc" -eq 1 ] || fail "check of a run that left things: exit $rc, not 1" "$out"
        listed "a new cgroup" "cgroup $h/${LEFTOVERS_PREFIX}new"
        unlisted "a cgroup below a new one is not listed again" "${LEFTOVERS_PREFIX}new/child"
        listed "a mount under /tmp/rmh-*" "mount $work/new/m (tmpfs)"
        listed "a process working there" "process $in_work: sleep 1000 (cwd $work/new)"
        listed "a process naming the build directory" "process $by_argv: $build/hook/resctrl-mon-hook 1000"
        listed "a process working in the build directory" "process $in_build: sleep 1000 (cwd $build)"
        listed "a new directory /tmp/rmh-*" "directory /tmp/${LEFTOVERS_PREFIX}dir"
        unlisted "the earlier run's directory" "directory $work"
        unlisted "the earlier run's cgroup" "${LEFTOVERS_PREFIX}old"
        unlisted "the earlier run's mount and process" "$work/old"
        unlisted "a mount of another type elsewhere" "$build/m"
        out=$(LEFTOVERS_FSTYPE=tmpfs "$self" check "$work/before" "$build" 2>&1)
        listed "a mount of the emulator's type, anywhere" "mount $build/m (tmpfs)"
        : >"$work/empty"
        out=$("$self" check "$work/empty" "$build" 2>&1)
        listed "after an empty snapshot, what is new" "cgroup $h/${LEFTOVERS_PREFIX}new"
        listed "after an empty snapshot, all that is there" "cgroup $h/${LEFTOVERS_PREFIX}old"

        # All of it gone again: clean.
        kill "$in_work" "$by_argv" "$in_build"
        wait "$in_work" "$by_argv" "$in_build" 2>/dev/null
        umount "$work/new/m" "$build/m"
        rmdir "$h/${LEFTOVERS_PREFIX}new/child" "$h/${LEFTOVERS_PREFIX}new" "/tmp/${LEFTOVERS_PREFIX}dir"
        out=$(LEFTOVERS_WAIT=3 "$self" check "$work/before" "$build" 2>&1) || fail "clean again, but fails" "$out"
        [ -z "$out" ] || fail "clean again, but check says something" "$out"
        "$self" check "$work/nonexistent" "$build" 2>/dev/null
        rc=$?
        [ "$rc" -eq 2 ] || fail "a missing snapshot: exit $rc, not 2"

        echo "leftovers selftest: $failed failed"
        [ "$failed" -eq 0 ]
}

case ${1:-} in
snapshot) [ $# -ge 2 ] && shift && cmd_snapshot "$@" ;;
check) [ $# -ge 2 ] && shift && cmd_check "$@" ;;
selftest) selftest ;;
*)
        echo "usage: $0 snapshot|check FILE [DIR...] | selftest" >&2
        exit 2
        ;;
esac
