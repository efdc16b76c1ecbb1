#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Filesystem safety: stateDir is created 0700 and refused when it is a
# symlink, not owned by root or writable by group or others; symlinks planted
# at the lock file, the member file, its temp file, mon_groups/<uid>, a
# control group, a mon_groups directory or a tasks file are refused, and
# nothing outside the trees is touched. resctrlfs has no symlinks, so the
# resctrl cases use a plain directory laid out like resctrl.
#   test_fs_safety.sh HOOK RESCTRLFS
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" fs-safety

OUT=$WORK/outside # where planted symlinks point: must never change
ELOOP="Too many levels of symbolic links"
ENOTDIR="Not a directory" # O_DIRECTORY|O_NOFOLLOW on a symlink

# Everything under $OUT with its mode, owner, size, mtime and content.
outside() {
        find "$OUT" -printf '%p %y %m %U %s %T@ %l\n' | sort
        find "$OUT" -type f -exec sh -c 'echo "$1:"; cat "$1"' _ {} \;
}

fresh_outside() {
        rm -rf "$OUT"
        mkdir -p "$OUT/dir" "$OUT/group" "$OUT/ctrl/mon_groups" "$OUT/mon_groups"
        chmod 700 "$OUT/dir"
        echo "victim" >"$OUT/file"
        : >"$OUT/group/tasks"
        OUT_BEFORE=$(outside)
}

untouched() {
        [ "$OUT_BEFORE" = "$(outside)" ]
}

# A plain directory shaped like resctrl, for planting symlinks inside it.
plain_resctrl() {
        PLAIN=$WORK/plain
        rm -rf "$PLAIN"
        mkdir -p "$PLAIN/mon_groups" "$PLAIN/info" "$PLAIN/gold/mon_groups"
        : >"$PLAIN/info/last_cmd_status"
}

# createRuntime under failurePolicy: fail must exit 1 with this error.
refused() { # WHAT PATTERN ID PID UID [BUNDLE]
        local what=$1 pattern=$2
        shift 2
        create "$@"
        check "$what: exit 1" [ "$rc" -eq 1 ]
        check "$what: error names it" grep -q -- "$pattern" "$ERR"
        check "$what: nothing outside touched" untouched
}

member_file() { # UID CTRL ID PID: a state file as the hook writes it
        printf '{"groups":[{"ctrl":"%s","owned":true}],"members":[{"ctrl":"%s","id":"%s","monitored":true,"pid":%s,"reason":null,"start_time":1}],"namespace":null,"pod":null,"uid":"%s","version":1}\n' \
                "$2" "$2" "$3" "$4" "$1"
}

# --- stateDir ------------------------------------------------------------------

test_state_dir_created_0700() {
        mount_emulator
        write_config
        local p
        sleeper p
        (umask 000 && create c1 "$p" "$UID1")
        check "created: hook succeeded" has_task "$MNT/mon_groups/$UID1" "$p"
        check "created 0700" [ "$(stat -c %a "$STATE")" = 700 ]
        check "created owned by root" [ "$(stat -c %u:%g "$STATE")" = 0:0 ]
        check "member file 0600" [ "$(stat -c %a "$STATE/$UID1.members")" = 600 ]
        check "lock file 0600" [ "$(stat -c %a "$STATE/$UID1.lock")" = 600 ]
}

test_state_dir_refused() {
        mount_emulator
        local p
        sleeper p

        fresh_outside
        ln -s "$OUT/dir" "$STATE"
        write_config "failurePolicy: fail"
        refused "stateDir symlink to a directory" "cannot open state directory '$STATE': $ENOTDIR" \
                c1 "$p" "$UID1"
        rm "$STATE"

        ln -s "$OUT/absent" "$STATE"
        refused "stateDir dangling symlink" "$ENOTDIR" c1 "$p" "$UID1"
        check "dangling stateDir symlink: target not created" test ! -e "$OUT/absent"
        rm "$STATE"

        mkdir -m 700 "$STATE"
        chown 65534:65534 "$STATE"
        refused "stateDir not owned by root" "cannot open state directory '$STATE': Operation not permitted" \
                c1 "$p" "$UID1"
        check "foreign-owned stateDir left empty" [ -z "$(ls -A "$STATE")" ]
        chown 0:0 "$STATE"

        local mode
        for mode in 770 720 702 777 1777; do
                chmod "$mode" "$STATE"
                refused "stateDir mode $mode" "Operation not permitted" c1 "$p" "$UID1"
                check "stateDir mode $mode: left empty" [ -z "$(ls -A "$STATE")" ]
        done
        for mode in 755 750 500; do
                chmod "$mode" "$STATE"
                write_config
                create c1 "$p" "$UID1"
                check "stateDir mode $mode is accepted" test "$rc" -eq 0 -a -s "$STATE/$UID1.members"
                poststop c1 "$UID1"
        done
}

# --- files in stateDir ----------------------------------------------------------

test_lock_file_symlink() {
        mount_emulator
        local p
        sleeper p
        fresh_outside
        mkdir -m 700 "$STATE"
        write_config "failurePolicy: fail"

        ln -s "$OUT/file" "$STATE/$UID1.lock"
        refused "lock symlink to a file" "cannot lock pod $UID1 in stateDir '$STATE': $ELOOP" c1 "$p" "$UID1"
        rm "$STATE/$UID1.lock"
        ln -s "$OUT/new-lock" "$STATE/$UID1.lock"
        refused "lock dangling symlink" "$ELOOP" c1 "$p" "$UID1"
        check "dangling lock symlink: target not created" test ! -e "$OUT/new-lock"
        check "no group made" test ! -e "$MNT/mon_groups/$UID1"
        check "lock symlink left as it was" [ "$(readlink "$STATE/$UID1.lock")" = "$OUT/new-lock" ]
}

test_member_file_symlink() {
        mount_emulator
        local p
        sleeper p
        fresh_outside
        mkdir -m 700 "$STATE"
        member_file "$UID1" / c0 "$p" >"$OUT/file"
        OUT_BEFORE=$(outside)
        ln -s "$OUT/file" "$STATE/$UID1.members"
        write_config "failurePolicy: fail"

        refused "member file symlink at createRuntime" "cannot load state of pod $UID1: $ELOOP" \
                c1 "$p" "$UID1"
        poststop c0 "$UID1"
        check "member file symlink at poststop: exit 0" [ "$rc" -eq 0 ]
        check "member file symlink at poststop: refused" grep -q "$ELOOP" "$ERR"
        check "member file symlink at poststop: nothing outside touched" untouched
        check "member file symlink kept" [ -L "$STATE/$UID1.members" ]
        check "no group made" test ! -e "$MNT/mon_groups/$UID1"
}

# A leftover temp file that is a symlink is removed, never written through.
test_temp_file_symlink() {
        mount_emulator
        local p
        sleeper p
        fresh_outside
        mkdir -m 700 "$STATE"
        ln -s "$OUT/file" "$STATE/$UID1.members.tmp"
        write_config "failurePolicy: fail"
        create c1 "$p" "$UID1"
        check "temp symlink: createRuntime succeeds" [ "$rc" -eq 0 ]
        check "temp symlink: monitored" has_task "$MNT/mon_groups/$UID1" "$p"
        check "temp symlink: removed" test ! -L "$STATE/$UID1.members.tmp"
        check "temp symlink: state is a regular file" test -f "$STATE/$UID1.members" -a ! -L "$STATE/$UID1.members"
        check "temp symlink: nothing outside touched" untouched
}

# --- the resctrl tree ------------------------------------------------------------

test_mon_group_symlink() {
        local p
        sleeper p
        plain_resctrl
        fresh_outside
        rm -rf "$STATE"
        ln -s "$OUT/group" "$PLAIN/mon_groups/$UID1"
        resctrl_path=$PLAIN write_config "failurePolicy: fail"
        refused "mon_groups/<uid> symlink" "cannot look up the group of pod $UID1 in the root control group: $ENOTDIR" \
                c1 "$p" "$UID1"
        check "mon_groups/<uid> symlink: intent undone" no_state "$UID1"

        # A recorded group that became a symlink: poststop neither reads through nor removes it.
        member_file "$UID1" / c1 "$p" >"$STATE/$UID1.members"
        poststop c1 "$UID1"
        check "mon_groups/<uid> symlink at poststop: exit 0" [ "$rc" -eq 0 ]
        check "mon_groups/<uid> symlink at poststop: refused" grep -q "$ENOTDIR" "$ERR"
        check "mon_groups/<uid> symlink at poststop: kept" [ -L "$PLAIN/mon_groups/$UID1" ]
        check "mon_groups/<uid> symlink at poststop: group still recorded" \
                grep -q '"groups":\[{"ctrl":"/"' "$STATE/$UID1.members"
        check "mon_groups/<uid> symlink at poststop: nothing outside touched" untouched
}

test_ctrl_group_symlink() {
        local p
        sleeper p
        plain_resctrl
        fresh_outside
        rm -rf "$STATE" "$PLAIN/gold"
        ln -s "$OUT/ctrl" "$PLAIN/gold"
        bundle "$WORK/b-gold" '{"closID":"gold"}'
        resctrl_path=$PLAIN write_config "failurePolicy: fail"
        refused "control group symlink" "cannot look up the group of pod $UID1 in gold: $ENOTDIR" \
                c1 "$p" "$UID1" "$WORK/b-gold"
        check "control group symlink: intent undone" no_state "$UID1"

        rm "$PLAIN/gold"
        mkdir "$PLAIN/gold"
        ln -s "$OUT/mon_groups" "$PLAIN/gold/mon_groups"
        refused "control group's mon_groups symlink" "$ENOTDIR" c1 "$p" "$UID1" "$WORK/b-gold"

        rmdir "$PLAIN/mon_groups"
        ln -s "$OUT/mon_groups" "$PLAIN/mon_groups"
        refused "root mon_groups symlink" "has no monitoring (no mon_groups)" c1 "$p" "$UID1"
}

test_tasks_symlink() {
        local p
        sleeper p
        plain_resctrl
        fresh_outside
        rm -rf "$STATE"
        mkdir "$PLAIN/mon_groups/$UID1"
        ln -s "$OUT/group/tasks" "$PLAIN/mon_groups/$UID1/tasks"
        resctrl_path=$PLAIN write_config "failurePolicy: fail"
        refused "tasks symlink" "cannot move pid $p into the group of pod $UID1" c1 "$p" "$UID1"
        check "tasks symlink: kept" [ -L "$PLAIN/mon_groups/$UID1/tasks" ]
}

has_task() { grep -qx "$2" "$1/tasks"; }
no_state() { [ ! -e "$STATE/$1.members" ] && [ ! -e "$STATE/$1.lock" ]; }

for t in test_state_dir_created_0700 test_state_dir_refused test_lock_file_symlink \
        test_member_file_symlink test_temp_file_symlink test_mon_group_symlink \
        test_ctrl_group_symlink test_tasks_symlink; do
        echo "== $t"
        $t
done

harness_done
