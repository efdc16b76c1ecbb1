#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# check's node-resctrl row: resctrl at resctrlPath as the node's init (pid 1)
# sees it, which is what tells a node without resctrl from a process that
# does not see the node's (a container whose manifest hides it).
#   test_node_resctrl.sh HOOK RESCTRLFS
# The emulator is a FUSE file system, not resctrl: the row's ok needs a
# kernel's resctrl, and is not reached here; its warning under
# requireResctrlFs: false is.
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" node-resctrl

row() { # ROWS...: check --only ROWS, its output in $OUT, its status in rc
        "$HOOK" --config "$CONFIG" check --only "$(IFS=,; echo "$*")" >"$OUT" 2>>"$LOG"
        rc=$?
}
# check in a mount namespace of its own, after SETUP (sh), and with
# -p in a pid namespace of its own too, as its pid 1.
private_row() { # SETUP ROWS [-p]
        # shellcheck disable=SC2016 # the inner shell's
        unshare -m --propagation private ${3:+-p -f --mount-proc} sh -c "$1"'
                exec "$0" --config "$1" check --only "$2"' "$HOOK" "$CONFIG" "$2" >"$OUT" 2>>"$LOG"
        rc=$?
}
says() { grep -q -- "$1" "$OUT"; }
OUT=$WORK/check.out

# The run's mounts are the node's: pid 1 must see them.
mount_emulator
grep -qF " $MNT " /proc/1/mountinfo ||
        { echo "SKIP: this test's mounts are not pid 1's (another mount namespace)"; exit 77; }

test_node_has_it() {
        mount_emulator
        write_config
        row node-resctrl
        check "emulator on the node, requireResctrlFs false: exit 0" [ "$rc" -eq 0 ]
        check "emulator on the node: a warning naming its type" \
                says "^warn  node-resctrl    the node has fuse.resctrlfs, not resctrl, at '$MNT'; accepted because requireResctrlFs is false"
        require_fs=true write_config
        row node-resctrl
        check "requireResctrlFs true: exit 1" [ "$rc" -eq 1 ]
        check "requireResctrlFs true: fails naming the type" \
                says "^fail  node-resctrl    the node has fuse.resctrlfs, not resctrl, at '$MNT'$"
        resctrl_path=$MNT/ write_config
        row node-resctrl
        check "a trailing slash: the same mount" says "^warn  node-resctrl    the node has fuse.resctrlfs"
        "$HOOK" --config "$CONFIG" check >"$OUT" 2>>"$LOG"
        check "check without --only has the row" says "^warn  node-resctrl "
}

test_node_lacks_it() {
        mkdir -p "$WORK/empty"
        resctrl_path=$WORK/empty write_config
        row node-resctrl
        check "nothing mounted there: exit 1" [ "$rc" -eq 1 ]
        check "nothing mounted there: fails, with the fix" \
                says "^fail  node-resctrl    the node has no mount at '$WORK/empty'$"
        check "the fix: mount it on the node" says "fix: mount -t resctrl resctrl $WORK/empty on the node"
        resctrl_path=$WORK/nowhere write_config
        row node-resctrl
        check "no such path: fails" says "^fail  node-resctrl    the node has no mount at '$WORK/nowhere'$"
}

# The emulator on the node, but not in check's mount namespace (a container
# without the hostPath): the node's row sees it, this process's rows do not.
test_hidden_from_process() {
        mount_emulator
        write_config
        private_row "umount -l '$MNT' &&" node-resctrl,resctrl-mount,monitoring
        check "hidden from this process: the node's row still sees the emulator" \
                says "^warn  node-resctrl    the node has fuse.resctrlfs"
        check "hidden from this process: monitoring fails here" says "^fail  monitoring "
        # A tmpfs only this process sees: the node has nothing there.
        mkdir -p "$WORK/mine"
        resctrl_path=$WORK/mine write_config
        private_row "mount -t tmpfs tmpfs '$WORK/mine' &&" node-resctrl,resctrl-mount
        check "mounted in this process's namespace only: resctrl-mount sees a mount" \
                says "^warn  resctrl-mount   '$WORK/mine' is not a resctrl mount"
        check "mounted in this process's namespace only: not the node's" \
                says "^fail  node-resctrl    the node has no mount at '$WORK/mine'$"
        # Without the host's pid namespace pid 1 is the process's own init:
        # what its mounts say is not the node's, and the row only warns, so
        # that the entrypoint never removes a registration for it.
        write_config
        private_row "umount -l '$MNT' &&" node-resctrl -p
        check "own pid namespace, emulator hidden: pid 1 is not the node's init, a warning" \
                says "^warn  node-resctrl    pid 1 here is not the node's init"
}

# Mounts over mounts, as mountinfo lists them (not in mount order).
test_mounted_over() {
        mount_emulator
        write_config
        mount -t tmpfs tmpfs "$MNT" || exit 1
        row node-resctrl
        umount "$MNT"
        check "a tmpfs mounted over the emulator: the tmpfs is what the path reaches" \
                says "^warn  node-resctrl    the node has tmpfs, not resctrl, at '$MNT'"
        mkdir -p "$WORK/up/resctrl"
        "$RESCTRLFS" "$WORK/up/resctrl" || exit 1
        mount -t tmpfs tmpfs "$WORK/up" || { fusermount3 -u "$WORK/up/resctrl"; exit 1; }
        resctrl_path=$WORK/up/resctrl write_config
        row node-resctrl
        umount "$WORK/up"
        check "a mount above the path hides the emulator: nothing there" \
                says "^fail  node-resctrl    the node has no mount at '$WORK/up/resctrl'$"
        row node-resctrl
        check "uncovered again: the emulator" says "^warn  node-resctrl    the node has fuse.resctrlfs"
        fusermount3 -u "$WORK/up/resctrl"
        # mountinfo escapes a space as \040.
        mkdir -p "$WORK/res ctrl"
        "$RESCTRLFS" "$WORK/res ctrl" || exit 1
        resctrl_path="$WORK/res ctrl" write_config
        row node-resctrl
        check "a path with a space: found" says "^warn  node-resctrl    the node has fuse.resctrlfs, not resctrl, at '$WORK/res ctrl'"
        wait_for "$WAIT_PROCESS" "'$WORK/res ctrl' unmounted" fusermount3 -u -q "$WORK/res ctrl"
}

for t in ${TESTS:-test_node_has_it test_node_lacks_it test_hidden_from_process test_mounted_over}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
