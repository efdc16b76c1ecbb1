# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Helpers for the end-to-end tests and scripts/demo.sh: real runtimes (runc, crun,
# Podman) run busybox containers with the hook registered, against resctrlfs, the
# FUSE resctrl emulator, mounted on a temporary directory.
#
# Sourced by POSIX sh. The caller sets E2E_TOP (the source tree), then calls
#   e2e_init RUNTIME HOOK RESCTRLFS
# which skips (exit 77) when root, /dev/fuse or the runtime is missing, makes the
# temporary directory, mounts the emulator and arranges for everything to be torn
# down on exit: leftover containers deleted, emulator unmounted, files removed.
#
# Everything lives under one temporary directory: runc and crun get a private
# --root there, Podman private --root/--runroot/--tmpdir, containerd a private
# root, state, sockets and runc root, so tests can run next to each other and
# to anything else on the machine. e2e_resctrlfs_options, set before
# e2e_init, are the emulator's.
#
# Cgroups (the naming rule of tests/lib/harness.sh): runc and crun name a
# container's cgroups by its id, rmh-TAG-NAME (e2e_id); Podman's containers and
# conmon, and test_containerd.sh's pods, go below the run's private root
# e2e_cgroup_root, /rmh-e2e-TAG in every hierarchy. At exit the cleanup
# removes them all, the processes in them killed first, leaves first; anything
# of the run it cannot remove (a cgroup, a process, the temporary directory)
# is listed and fails the test.

# Waits for events: wait_for and the bounds of tests/lib/wait.sh.
# shellcheck source=../lib/wait.sh
. "$E2E_TOP/tests/lib/wait.sh"
# shellcheck source=../lib/cgroup_tree.sh
. "$E2E_TOP/tests/lib/cgroup_tree.sh"

e2e_say() {
        printf '%s\n' "$*" >&2
}

e2e_step() {
        e2e_say "-- $*"
}

e2e_skip() {
        e2e_say "SKIP: $*"
        exit 77
}

e2e_fail() {
        e2e_say "FAIL: $*"
        exit 1
}

# Lines as one line, for messages.
e2e_flat() {
        printf '%s' "$1" | tr '\n' ' '
}

e2e_init() {
        e2e_runtime=$1
        [ "$(id -u)" -eq 0 ] || e2e_skip "needs root"
        [ -c /dev/fuse ] || e2e_skip "no /dev/fuse"
        case $e2e_runtime in
        runc | crun) e2e_need "$e2e_runtime" ;;
        podman) e2e_need podman runc conmon ;;
        containerd) e2e_need containerd ctr runc ;;
        *) e2e_fail "unknown runtime '$e2e_runtime'" ;;
        esac
        e2e_need_file "$2"
        e2e_need_file "$3"
        e2e_hook=$(readlink -f "$2")
        e2e_resctrlfs=$(readlink -f "$3")

        # The cleanup first (it does nothing before e2e_tmp is there): a
        # signal from here on finds what was made.
        trap e2e_cleanup EXIT
        trap 'exit 129' HUP
        trap 'exit 130' INT
        trap 'exit 143' TERM
        e2e_tmp=$(mktemp -d "${TMPDIR:-/tmp}/rmh-e2e.XXXXXX") || e2e_fail "mktemp"
        # Container ids and Podman names: unique on the machine, short.
        e2e_tag=$(printf '%s' "${e2e_tmp##*.}" | tr '[:upper:]' '[:lower:]')
        e2e_cgroup_root=/rmh-e2e-$e2e_tag
        e2e_mnt=$e2e_tmp/resctrl
        e2e_state=$e2e_tmp/state
        e2e_config=$e2e_tmp/config.yaml
        e2e_rootfs=$e2e_tmp/rootfs
        e2e_podman_hooks_dir=$e2e_tmp/podman/hooks.d
        cat >"$e2e_config" <<EOF
resctrlPath: $e2e_mnt
stateDir: $e2e_state
requireResctrlFs: false
log:
  level: debug
  syslog: false
  stderr: true
EOF
        e2e_make_rootfs "$e2e_rootfs"
        e2e_mount_resctrlfs
}

# A binary of the build: its absence is a failure, not a reason to skip.
e2e_need_file() {
        [ -f "$1" ] || e2e_fail "'$1' does not exist"
        [ -x "$1" ] || e2e_fail "'$1' is not executable"
}

e2e_need() {
        for e2e_cmd in "$@"; do
                command -v "$e2e_cmd" >/dev/null 2>&1 || e2e_skip "$e2e_cmd is not installed"
        done
}

# A busybox-static root filesystem: /bin/busybox plus the applets the containers run.
e2e_make_rootfs() {
        e2e_busybox=$(command -v busybox) || e2e_fail "busybox is not installed"
        # The rootfs has no libc: a dynamically linked busybox would not start.
        ! ldd "$e2e_busybox" >/dev/null 2>&1 || e2e_fail "$e2e_busybox is not busybox-static"
        mkdir -p "$1/bin" "$1/proc" "$1/dev" "$1/sys" "$1/etc" "$1/tmp" || e2e_fail "mkdir $1"
        cp "$e2e_busybox" "$1/bin/busybox" || e2e_fail "copy busybox"
        for e2e_applet in sh sleep cat ls ps; do
                ln -s busybox "$1/bin/$e2e_applet" || e2e_fail "symlink $e2e_applet"
        done
}

# Runs the emulator in the foreground in the background, so that its pid is ours to
# wait for, and waits until the mount is there.
e2e_mount_resctrlfs() {
        mkdir "$e2e_mnt" || e2e_fail "mkdir $e2e_mnt"
        # shellcheck disable=SC2086 # options, one word each
        "$e2e_resctrlfs" -f ${e2e_resctrlfs_options:-} "$e2e_mnt" </dev/null \
                >"$e2e_tmp/resctrlfs.log" 2>&1 &
        e2e_resctrlfs_pid=$!
        wait_for "$WAIT_DAEMON" "resctrlfs mounting $e2e_mnt" e2e_up_or_gone "$e2e_resctrlfs_pid" \
                mountpoint -q "$e2e_mnt" || e2e_fail "resctrlfs did not mount"
        if ! mountpoint -q "$e2e_mnt"; then
                cat "$e2e_tmp/resctrlfs.log" >&2
                e2e_fail "resctrlfs exited before mounting $e2e_mnt"
        fi
        [ -d "$e2e_mnt/mon_groups" ] || e2e_fail "no mon_groups in the emulator's root"
}

# True while pid runs (a zombie child counts as gone).
e2e_alive() {
        [ -r "/proc/$1/stat" ] || return 1
        ! sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | grep -q '^Z'
}

# e2e_up_or_gone PID COMMAND...: true once COMMAND is (a daemon is up), or
# once PID, that daemon, has exited: what a wait for it waits for.
e2e_up_or_gone() {
        e2e_daemon=$1
        shift
        "$@" || ! e2e_alive "$e2e_daemon"
}

# e2e_gone PID: one look of a wait for a daemon's exit.
e2e_gone() { ! e2e_alive "$1"; }

# Waits up to WAIT_DAEMON for daemon PID, signalled to stop, to end: false,
# saying so, if it still runs.
e2e_wait_gone() { # PID WHAT
        wait_for "$WAIT_DAEMON" "$2 ending" e2e_gone "$1"
}

# The EXIT trap: not to be stopped half-way by another signal.
e2e_cleanup() {
        e2e_rc=$?
        trap - EXIT
        trap '' HUP INT TERM
        [ -n "${e2e_tmp:-}" ] && [ -d "$e2e_tmp" ] || exit "$e2e_rc"
        e2e_run_left=""
        e2e_watch_stop
        e2e_delete_leftovers
        for e2e_c in $(e2e_run_cgroups); do
                remove_cgroup_tree "$e2e_c" || e2e_run_left="$e2e_run_left cgroup:$e2e_c"
        done
        if ! e2e_wait_strays; then
                for e2e_p in $e2e_strays; do
                        e2e_p=${e2e_p#/proc/}
                        kill -KILL "${e2e_p%/cmdline}" 2>/dev/null
                done
                e2e_run_left="$e2e_run_left processes:$(e2e_flat "$e2e_strays" | tr ' ' ,)"
        fi
        if [ -n "${e2e_resctrlfs_pid:-}" ]; then
                if mountpoint -q "$e2e_mnt"; then
                        fusermount3 -u "$e2e_mnt" 2>/dev/null || umount -l "$e2e_mnt" ||
                                e2e_say "cannot unmount $e2e_mnt"
                fi
                if ! e2e_wait_gone "$e2e_resctrlfs_pid" "resctrlfs, unmounted,"; then
                        kill -TERM "$e2e_resctrlfs_pid" 2>/dev/null
                        e2e_wait_gone "$e2e_resctrlfs_pid" "resctrlfs, sent SIGTERM," ||
                                kill -KILL "$e2e_resctrlfs_pid"
                fi
                wait "$e2e_resctrlfs_pid" 2>/dev/null
        fi
        if [ "$e2e_rc" -ne 0 ] && [ "$e2e_rc" -ne 77 ] && [ -s "$e2e_tmp/resctrlfs.log" ]; then
                e2e_say "--- resctrlfs log"
                cat "$e2e_tmp/resctrlfs.log" >&2
        fi
        # Never follow a mount left behind (a runtime's, or the emulator's) into another fs.
        awk -v p="$e2e_tmp/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
                while read -r e2e_m; do umount -l "$e2e_m"; done
        rm -rf --one-file-system "$e2e_tmp"
        [ ! -e "$e2e_tmp" ] || e2e_run_left="$e2e_run_left directory:$e2e_tmp"
        if [ -n "$e2e_run_left" ]; then
                e2e_say "LEFTOVER of the run:$e2e_run_left"
                [ "$e2e_rc" -ne 0 ] && [ "$e2e_rc" -ne 77 ] || e2e_rc=1
        fi
        exit "$e2e_rc"
}

# The run's cgroups that exist, in every hierarchy: its private root, and
# those runc and crun made for its containers.
e2e_run_cgroups() {
        [ -n "${e2e_tag:-}" ] || return 0
        for e2e_h in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
                [ ! -d "$e2e_h$e2e_cgroup_root" ] || echo "$e2e_h$e2e_cgroup_root"
                find "$e2e_h" -mindepth 1 -type d -name "rmh-$e2e_tag-*" -prune 2>/dev/null
        done
}

# Waits up to WAIT_DAEMON for processes other than the emulator that name the
# temporary directory, such as the `podman container cleanup` conmon starts
# when a container exits, which would otherwise write into it while it is
# being removed; false, with their /proc/PID/cmdline in e2e_strays, if some
# are still there.
e2e_wait_strays() {
        wait_for "$WAIT_DAEMON" "the end of the processes that use $e2e_tmp" e2e_no_strays && return 0
        e2e_say "processes still use $e2e_tmp: $(e2e_flat "$e2e_strays")"
        return 1
}

# One look of e2e_wait_strays, setting e2e_strays. The bracketed dot keeps
# grep from matching its own command line.
e2e_no_strays() {
        e2e_strays=$(grep -lE "/rmh-e2e[.]${e2e_tmp##*.}/" /proc/[0-9]*/cmdline 2>/dev/null |
                grep -vx "/proc/${e2e_resctrlfs_pid:-none}/cmdline")
        [ -z "$e2e_strays" ]
}

e2e_delete_leftovers() {
        case $e2e_runtime in
        runc | crun)
                [ -d "$e2e_tmp/$e2e_runtime" ] || return 0
                for e2e_left in $(e2e_rt list -q 2>/dev/null); do
                        e2e_rt delete -f "$e2e_left" >/dev/null 2>&1 ||
                                e2e_say "cannot delete leftover container $e2e_left"
                done
                ;;
        podman)
                [ -d "$e2e_tmp/podman" ] || return 0
                e2e_podman rm -af -t 0 >/dev/null 2>&1 ||
                        e2e_say "cannot remove leftover containers"
                ;;
        containerd) e2e_containerd_teardown ;; # test_containerd.sh's
        esac
}

# --- runc and crun ---

# The runtime with its private state directory. runc runs as is. crun refuses the
# hybrid cgroup v1+v2 layout ("cgroups in hybrid mode not supported"), so where
# /sys/fs/cgroup is not cgroup2 every crun command runs in a private mount namespace
# that sees only the cgroup2 hierarchy. Mounts made before (the emulator's) are
# copied into it, and crun's state under --root is shared by all such calls.
e2e_rt() {
        if [ "$e2e_runtime" = runc ]; then
                runc --root "$e2e_tmp/runc" "$@"
        elif [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
                crun --root "$e2e_tmp/crun" "$@"
        else
                # shellcheck disable=SC2016 # expanded by the inner shell
                unshare -m sh -c 'umount -R /sys/fs/cgroup &&
                        mount -t cgroup2 none /sys/fs/cgroup &&
                        exec crun --root "$0" "$@"' "$e2e_tmp/crun" "$@"
        fi
}

e2e_id() {
        printf 'rmh-%s-%s' "$e2e_tag" "$1"
}

# e2e_bundle ID POD_UID: a bundle in $e2e_tmp/bundles/ID running `sleep 1000` (or
# the JSON strings of e2e_args) from the shared read-only rootfs, in namespace
# e2e_namespace (default e2e), with the kubelet's pod annotations (without the pod
# UID when POD_UID is empty) and the hook at createRuntime and poststop (none when
# e2e_no_hooks is set).
e2e_bundle() {
        case $1$2 in *[!A-Za-z0-9_.-]*) e2e_fail "bad id or uid '$1' '$2'" ;; esac
        e2e_bdir=$e2e_tmp/bundles/$1
        mkdir -p "$e2e_bdir" || e2e_fail "mkdir $e2e_bdir"
        e2e_uid_annotation=""
        [ -z "$2" ] || e2e_uid_annotation="\"io.kubernetes.pod.uid\": \"$2\","
        # crun needs CAP_SYS_RESOURCE for rlimits and a cgroup it can write for
        # resources; runc gets the defaults of `runc spec`.
        e2e_rlimits=""
        e2e_resources=""
        if [ "$e2e_runtime" = runc ]; then
                e2e_rlimits='"rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],'
                e2e_resources='"resources": {"devices": [{"allow": false, "access": "rwm"}]},'
        fi
        e2e_argv=${e2e_args:-'"sleep", "1000"'}
        e2e_hooks=""
        [ -n "${e2e_no_hooks:-}" ] || e2e_hooks='
    "createRuntime": [{"path": "'$e2e_hook'", "timeout": 5,
      "args": ["resctrl-mon-hook", "--config", "'$e2e_config'", "createRuntime"]}],
    "poststop": [{"path": "'$e2e_hook'", "timeout": 5,
      "args": ["resctrl-mon-hook", "--config", "'$e2e_config'", "poststop"]}]'
        e2e_namespace=${e2e_namespace:-e2e}
        cat >"$e2e_bdir/config.json" <<EOF
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": [$e2e_argv],
    "env": ["PATH=/bin"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_KILL"],
      "effective": ["CAP_KILL"],
      "permitted": ["CAP_KILL"]
    },
    $e2e_rlimits
    "noNewPrivileges": true
  },
  "root": {"path": "$e2e_rootfs", "readonly": true},
  "hostname": "$1",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]}
  ],
  "annotations": {
    $e2e_uid_annotation
    "io.kubernetes.pod.namespace": "$e2e_namespace",
    "io.kubernetes.pod.name": "pod-$e2e_tag",
    "io.kubernetes.container.name": "$1"
  },
  "hooks": {$e2e_hooks},
  "linux": {
    $e2e_resources
    "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"},
                   {"type": "network"}],
    "maskedPaths": ["/proc/kcore", "/proc/keys", "/sys/firmware"],
    "readonlyPaths": ["/proc/sys", "/proc/sysrq-trigger"]
  }
}
EOF
}

# e2e_run ID POD_UID: creates the bundle and runs the container detached. Its stdio
# goes to a file: inherited pipes would keep ctest waiting for the container.
e2e_run() {
        e2e_bundle "$1" "$2"
        e2e_rt run -d --bundle "$e2e_tmp/bundles/$1" "$1" \
                </dev/null >"$e2e_tmp/bundles/$1.log" 2>&1 || {
                cat "$e2e_tmp/bundles/$1.log" >&2
                e2e_fail "$e2e_runtime run $1"
        }
}

# A key of `runc state` / `crun state` (pretty-printed JSON, one key a line).
e2e_state_of() {
        e2e_rt state "$1" | sed -n "s/^ *\"$2\": *\"\{0,1\}\([^\",]*\)\"\{0,1\},\{0,1\}$/\1/p"
}

# Sets e2e_pid to the container's init pid (not printed: a failure in $(...) would
# only leave the subshell).
e2e_get_pid() {
        e2e_pid=$(e2e_state_of "$1" pid)
        case $e2e_pid in '' | 0 | *[!0-9]*) e2e_fail "no pid for container $1 ('$e2e_pid')" ;; esac
}

e2e_assert_running() {
        e2e_s=$(e2e_state_of "$1" status)
        [ "$e2e_s" = running ] || e2e_fail "container $1 is '$e2e_s', not running"
}

# Deletes a running container: SIGKILL, wait, delete, poststop hooks.
e2e_delete() {
        e2e_rt delete -f "$1" || e2e_fail "$e2e_runtime delete -f $1"
}

# --- Podman ---

# Podman with private storage, the hooks directory e2e_podman_hooks_dir (that of
# e2e_podman_hooks unless the caller sets another) and the settings it needs
# here: cgroupfs (no systemd), runc, no events journal.
e2e_podman() {
        podman --root "$e2e_tmp/podman/root" --runroot "$e2e_tmp/podman/run" \
                --tmpdir "$e2e_tmp/podman/tmp" --storage-driver vfs \
                --hooks-dir "$e2e_podman_hooks_dir" --cgroup-manager cgroupfs --runtime runc \
                --events-backend none "$@"
}

# The repository's oci-hooks(5) files for both stages, pointing at the build-tree
# hook, with --config added to their argv.
e2e_podman_hooks() {
        e2e_d=$e2e_podman_hooks_dir
        mkdir -p "$e2e_d" || e2e_fail "mkdir $e2e_d"
        for e2e_stage in createRuntime poststop; do
                e2e_args="\"resctrl-mon-hook\", \"--config\", \"$e2e_config\", \"$e2e_stage\""
                sed -e "s|\"resctrl-mon-hook\", \"@HOOK_STAGE@\"|$e2e_args|" \
                        -e "s|@HOOK_PATH@|$e2e_hook|g" -e "s|@HOOK_STAGE@|$e2e_stage|g" \
                        "$E2E_TOP/hooks.d/resctrl-mon-hook.json.in" \
                        >"$e2e_d/50-resctrl-mon-hook-$e2e_stage.json" || e2e_fail "render hooks.d"
                grep -q -- '"--config"' "$e2e_d/50-resctrl-mon-hook-$e2e_stage.json" ||
                        e2e_fail "hooks.d template has no args line to add --config to"
        done
}

# e2e_podman_run NAME POD_UID: a detached container from its own copy of the rootfs
# (Podman writes /etc/hosts and friends into it).
e2e_podman_run() {
        case $1$2 in *[!A-Za-z0-9_.-]*) e2e_fail "bad name or uid '$1' '$2'" ;; esac
        e2e_r=$e2e_tmp/podman/rootfs-$1
        cp -a "$e2e_rootfs" "$e2e_r" || e2e_fail "copy rootfs"
        e2e_uid_opt=""
        [ -z "$2" ] || e2e_uid_opt="--annotation io.kubernetes.pod.uid=$2"
        # shellcheck disable=SC2086 # e2e_uid_opt is zero or two words
        e2e_podman run -d --name "$1" --network none --cgroup-parent "$e2e_cgroup_root" \
                --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
                --annotation io.kubernetes.pod.namespace=e2e \
                --annotation "io.kubernetes.pod.name=pod-$e2e_tag" \
                --annotation "io.kubernetes.container.name=$1" \
                $e2e_uid_opt --rootfs "$e2e_r" sleep 1000 >/dev/null || e2e_fail "podman run $1"
}

# Sets e2e_pid to the container's init pid and e2e_cid to its full id, the name
# runtimes and the hook know it by.
e2e_podman_get() {
        e2e_pid=$(e2e_podman inspect --format '{{.State.Pid}}' "$1")
        case $e2e_pid in '' | 0 | *[!0-9]*) e2e_fail "no pid for container $1 ('$e2e_pid')" ;; esac
        e2e_cid=$(e2e_podman inspect --format '{{.Id}}' "$1")
        [ -n "$e2e_cid" ] || e2e_fail "no id for container $1"
}

# --- what the hook left in resctrl and in its state directory ---

e2e_group() {
        printf '%s/mon_groups/%s' "$e2e_mnt" "$1"
}

e2e_assert_no_group() {
        [ ! -e "$(e2e_group "$1")" ] || e2e_fail "monitoring group $(e2e_group "$1") still exists"
}

# e2e_running_tasks FILE: the ids in a tasks file whose thread has not exited.
# Like the kernel, resctrlfs lists a killed init until its parent reaps it.
e2e_running_tasks() {
        while read -r e2e_tid; do
                e2e_pstate=$(sed 's/.*) \(.\).*/\1/' "/proc/$e2e_tid/stat" 2>/dev/null) || continue
                [ "$e2e_pstate" = Z ] || [ "$e2e_pstate" = X ] || echo "$e2e_tid"
        done <"$1"
}

# e2e_assert_tasks UID PID...: the group's running tasks are exactly these
# (single-threaded) processes; a pid given twice counts once.
e2e_assert_tasks() {
        e2e_g=$(e2e_group "$1")
        shift
        e2e_want=$(printf '%s\n' "$@" | sort -nu)
        e2e_have=$(e2e_running_tasks "$e2e_g/tasks" | sort -n) || e2e_fail "cannot read $e2e_g/tasks"
        [ "$e2e_have" = "$e2e_want" ] ||
                e2e_fail "$e2e_g/tasks holds [$(e2e_flat "$e2e_have")]," \
                        "expected [$(e2e_flat "$e2e_want")]"
}

# e2e_assert_groups UID...: mon_groups holds exactly these groups.
e2e_assert_groups() {
        e2e_want=$(printf '%s\n' "$@" | sed '/^$/d' | sort)
        [ -d "$e2e_mnt/mon_groups" ] || e2e_fail "no $e2e_mnt/mon_groups"
        e2e_have=$(find "$e2e_mnt/mon_groups" -mindepth 1 -maxdepth 1 -printf '%f\n' | sort)
        [ "$e2e_have" = "$e2e_want" ] ||
                e2e_fail "mon_groups holds [$(e2e_flat "$e2e_have")]," \
                        "expected [$(e2e_flat "$e2e_want")]"
}

# e2e_assert_members UID ID...: the pod's member file names each of these containers.
e2e_assert_members() {
        e2e_f=$e2e_state/$1.members
        [ -f "$e2e_f" ] || e2e_fail "no member file $e2e_f"
        shift
        for e2e_c in "$@"; do
                grep -qF "\"$e2e_c\"" "$e2e_f" ||
                        e2e_fail "$e2e_f does not list $e2e_c: $(cat "$e2e_f")"
        done
}

e2e_assert_not_member() {
        ! grep -qF "\"$2\"" "$e2e_state/$1.members" ||
                e2e_fail "$e2e_state/$1.members still lists $2"
}

# No file of the pod's left in the state directory.
e2e_assert_no_state() {
        for e2e_f in "$e2e_state/$1".*; do
                [ ! -e "$e2e_f" ] || e2e_fail "state file $e2e_f still exists"
        done
}

# No pod has state: no file named by a pod UID (the directory may not exist yet).
e2e_assert_no_pods() {
        for e2e_f in "$e2e_state"/*-*-*-*-*.*; do
                [ ! -e "$e2e_f" ] || e2e_fail "state file $e2e_f of a pod exists"
        done
}

# A fresh pod UID: canonical (lowercase, dashed) and the same in the compact
# upper-case form static pods and some tools use.
e2e_new_uid() {
        cat /proc/sys/kernel/random/uuid
}

e2e_compact_upper() {
        printf '%s' "$1" | tr -d - | tr 'a-f' 'A-F'
}

# --- the scenario runc and crun share ---

# A container outside any pod, then a pod of two containers whose UID is given
# compact and upper-case to one and canonical to the other: one group, named by
# the canonical UID, holding both inits; it outlives the first container and goes
# with the second, together with the pod's state files.
e2e_scenario_pod() {
        e2e_uid=$(e2e_new_uid)
        e2e_ca=$(e2e_id a)
        e2e_cb=$(e2e_id b)
        e2e_cn=$(e2e_id nopod)

        e2e_step "container without a pod UID: runs, no group, no state"
        e2e_run "$e2e_cn" ""
        e2e_assert_running "$e2e_cn"
        e2e_assert_groups
        e2e_assert_no_pods

        e2e_step "pod $e2e_uid: two containers, UID compact upper-case in the first"
        e2e_run "$e2e_ca" "$(e2e_compact_upper "$e2e_uid")"
        e2e_run "$e2e_cb" "$e2e_uid"
        e2e_assert_running "$e2e_ca"
        e2e_assert_running "$e2e_cb"
        e2e_get_pid "$e2e_ca"
        e2e_pa=$e2e_pid
        e2e_get_pid "$e2e_cb"
        e2e_pb=$e2e_pid
        e2e_assert_groups "$e2e_uid"
        e2e_assert_tasks "$e2e_uid" "$e2e_pa" "$e2e_pb"
        e2e_assert_members "$e2e_uid" "$e2e_ca" "$e2e_cb"

        e2e_step "delete the first container: the group stays with the second"
        e2e_delete "$e2e_ca"
        e2e_assert_groups "$e2e_uid"
        e2e_assert_tasks "$e2e_uid" "$e2e_pb"
        e2e_assert_members "$e2e_uid" "$e2e_cb"
        e2e_assert_not_member "$e2e_uid" "$e2e_ca"

        e2e_step "delete the second container: group and state gone"
        e2e_delete "$e2e_cb"
        e2e_assert_groups
        e2e_assert_no_state "$e2e_uid"

        e2e_step "delete the container without a pod UID"
        e2e_assert_running "$e2e_cn"
        e2e_delete "$e2e_cn"
        e2e_assert_groups
        e2e_assert_no_pods
        [ -z "$(e2e_rt list -q)" ] || e2e_fail "containers left: $(e2e_rt list -q)"
}

# e2e_procs_of PID: PID and its children, one a line (busybox runs no threads).
e2e_procs_of() {
        echo "$1"
        for e2e_stat in /proc/[0-9]*/stat; do
                e2e_ppid=$(sed 's/.*) . \([0-9]*\) .*/\1/' "$e2e_stat" 2>/dev/null) || continue
                [ "$e2e_ppid" = "$1" ] && e2e_p=${e2e_stat#/proc/} && echo "${e2e_p%/stat}"
        done
}

# e2e_procs_are PID N: PID and its children number N.
e2e_procs_are() {
        [ "$(e2e_procs_of "$1" | wc -l)" -eq "$2" ]
}

# e2e_pid_of_cmdline "ARG ARG...": the process whose arguments these are.
e2e_pid_of_cmdline() {
        for e2e_c in /proc/[0-9]*/cmdline; do
                [ "$(tr '\0' ' ' <"$e2e_c" 2>/dev/null)" = "$1 " ] || continue
                e2e_p=${e2e_c#/proc/}
                echo "${e2e_p%/cmdline}"
                return 0
        done
        return 1
}

# e2e_wait_exec "ARG ARG...": waits for an exec'd process with these
# arguments; sets e2e_exec to its pid.
e2e_wait_exec() {
        wait_for "$WAIT_RUNTIME" "an exec'd process '$1'" e2e_found_exec "$1" ||
                e2e_fail "the exec'd process did not start"
}
e2e_found_exec() {
        e2e_exec=$(e2e_pid_of_cmdline "$1") && [ -n "$e2e_exec" ]
}

# e2e_wait_tasks UID COUNT: until the group's running tasks number COUNT (the
# emulator learns of forks a moment after them).
e2e_wait_tasks() {
        wait_for "$WAIT_RUNTIME" "$2 running tasks in pod $1's group" e2e_tasks_are "$@"
}
e2e_tasks_are() {
        [ "$(e2e_running_tasks "$(e2e_group "$1")/tasks" | wc -l)" -eq "$2" ]
}

e2e_gc() {
        "$e2e_hook" --config "$e2e_config" gc >"$e2e_tmp/gc.out" || e2e_fail "gc failed"
}

# --- every process of the container ---------------------------------------------

# An init that forks before it execs: the kernel gives its children the pod's
# group, with no help from anyone. A process the runtime execs into the
# container starts in the runtime's group: one gc pass brings it in, from the
# container's cgroup. A group removed behind the hook's back: one gc pass puts
# every process of the container back.
e2e_scenario_forks() {
        e2e_uid=$(e2e_new_uid)
        e2e_cf=$(e2e_id forks)

        e2e_step "pod $e2e_uid: an init that forks two processes, then execs"
        e2e_args='"sh", "-c", "sleep 1001 & sleep 1002 & exec sleep 1000"'
        e2e_run "$e2e_cf" "$e2e_uid"
        e2e_args=""
        e2e_get_pid "$e2e_cf"
        e2e_wait_tasks "$e2e_uid" 3 || e2e_fail "the forked processes did not join the group"
        # shellcheck disable=SC2046 # one pid a word
        e2e_assert_tasks "$e2e_uid" $(e2e_procs_of "$e2e_pid")

        e2e_step "a process exec'd into it: outside the group until gc"
        e2e_rt exec -d "$e2e_cf" sleep 1003 || e2e_fail "$e2e_runtime exec"
        e2e_wait_exec "sleep 1003"
        ! grep -qx "$e2e_exec" "$(e2e_group "$e2e_uid")/tasks" ||
                e2e_fail "the exec'd process $e2e_exec is in the group before gc"
        e2e_gc
        grep -q "^join-tasks pod=$e2e_uid container=$e2e_cf count=1 " "$e2e_tmp/gc.out" ||
                e2e_fail "gc did not join the exec'd process: $(cat "$e2e_tmp/gc.out")"
        # shellcheck disable=SC2046
        e2e_assert_tasks "$e2e_uid" $(e2e_procs_of "$e2e_pid") "$e2e_exec"

        e2e_step "the group removed behind the hook's back: one gc pass puts all back"
        rmdir "$(e2e_group "$e2e_uid")" || e2e_fail "rmdir of the group"
        e2e_gc
        # shellcheck disable=SC2046
        e2e_assert_tasks "$e2e_uid" $(e2e_procs_of "$e2e_pid") "$e2e_exec"

        e2e_step "delete it: group and state gone"
        e2e_delete "$e2e_cf"
        # The pid namespace's other processes die a moment after its init.
        e2e_wait_tasks "$e2e_uid" 0 2>/dev/null || e2e_fail "the container's processes still run"
        e2e_gc
        e2e_assert_groups
        e2e_assert_no_state "$e2e_uid"
}

# --- watch: exec'd processes joined at their exec ---------------------------------

# Starts watch, with no gc pass due for an hour: sets e2e_watch_pid; waits
# until it has written its first pass.
e2e_watch_start() {
        "$e2e_hook" --config "$e2e_config" watch --interval 3600 \
                </dev/null >"$e2e_tmp/watch.out" 2>"$e2e_tmp/watch.err" &
        e2e_watch_pid=$!
        wait_for "$WAIT_DAEMON" "watch's first pass" e2e_up_or_gone "$e2e_watch_pid" e2e_watch_passed &&
                e2e_watch_passed || e2e_fail "watch did not start: $(cat "$e2e_tmp/watch.err")"
        [ "$(e2e_watch_says .events)" = true ] || e2e_fail "watch has no process events"
}

e2e_watch_stop() {
        [ -n "${e2e_watch_pid:-}" ] || return 0
        kill -KILL "$e2e_watch_pid" 2>/dev/null
        wait "$e2e_watch_pid" 2>/dev/null
        e2e_watch_pid=""
}

e2e_watch_says() {
        jq -r "$1" "$e2e_state/watch.state" 2>/dev/null
}
e2e_watch_passed() { [ "$(e2e_watch_says .passes)" = 1 ]; }

# e2e_exec_joined EXEC...: runs `RUNTIME exec -d CONTAINER ARGS` (EXEC is the
# whole command), finds the exec'd process by its arguments (the last ones),
# and waits for it in pod e2e_uid's group: sets e2e_exec.
e2e_exec_joined() {
        e2e_args_of=$1
        shift
        "$@" || e2e_fail "$*"
        e2e_wait_exec "$e2e_args_of"
        wait_for "$WAIT_PROCESS" "the exec'd process $e2e_exec joining" \
                grep -qx "$e2e_exec" "$(e2e_group "$e2e_uid")/tasks" || e2e_fail "no join"
}

# watch running: a process the runtime execs into a running container joins
# the pod's group at its exec, with no gc pass; so does one exec'd into a
# container started after watch.
e2e_scenario_watch() {
        e2e_uid=$(e2e_new_uid)
        e2e_cw=$(e2e_id watch)
        e2e_cw2=$(e2e_id watch2)

        e2e_step "pod $e2e_uid: watch runs; a process $e2e_runtime exec'd into a container joins at once"
        e2e_run "$e2e_cw" "$e2e_uid"
        e2e_watch_start
        e2e_exec_joined "sleep 1005" e2e_rt exec -d "$e2e_cw" sleep 1005
        e2e_step "a container started after watch: the same"
        e2e_run "$e2e_cw2" "$e2e_uid"
        e2e_exec_joined "sleep 1006" e2e_rt exec -d "$e2e_cw2" sleep 1006
        [ "$(e2e_watch_says .passes)" = 1 ] || e2e_fail "a gc pass ran in between"
        e2e_watch_stop
        [ ! -s "$e2e_tmp/watch.err" ] || e2e_fail "watch logged: $(cat "$e2e_tmp/watch.err")"
        e2e_delete "$e2e_cw"
        e2e_delete "$e2e_cw2"
        e2e_wait_tasks "$e2e_uid" 0 2>/dev/null || e2e_fail "the containers' processes still run"
        e2e_gc
        e2e_assert_groups
        e2e_assert_no_state "$e2e_uid"
}

# --- adopting what started before the hook ----------------------------------------

# The runtime's state root, as adopt reads it.
e2e_rt_root() {
        if [ "$e2e_runtime" = runc ]; then echo "$e2e_tmp/runc"; else echo "$e2e_tmp/crun"; fi
}

# Container ID of pod UID, started with no hook, running `sh -c CMD`: sets e2e_pid.
e2e_run_unhooked() { # ID UID CMD
        e2e_no_hooks=1
        e2e_args="\"sh\", \"-c\", \"$3\""
        e2e_run "$1" "$2"
        e2e_args=""
        e2e_no_hooks=""
        e2e_get_pid "$1"
}

# The member file of pod UID says container ID is not monitored, for REASON.
e2e_assert_unmonitored() { # UID ID REASON
        e2e_f=$e2e_state/$1.members
        python3 -c 'import json, sys
m = [m for m in json.load(open(sys.argv[1]))["members"] if m["id"] == sys.argv[2]]
sys.exit(not (len(m) == 1 and not m[0]["monitored"] and m[0]["reason"] == sys.argv[3]))' \
                "$e2e_f" "$2" "$3" ||
                e2e_fail "$e2e_f does not hold $2 unmonitored for '$3': $(cat "$e2e_f" 2>&1)"
}

e2e_adopt() {
        "$e2e_hook" --config "$e2e_config" adopt >"$e2e_tmp/adopt.out" 2>"$e2e_tmp/adopt.err" ||
                e2e_fail "adopt failed: $(cat "$e2e_tmp/adopt.err")"
}

# Containers that started with no hook: adopt gives the pod's ones their
# group with every process of their cgroup, leaves out the filtered, the
# podless and the untrusted, and changes nothing when run again.
e2e_scenario_adopt() {
        e2e_uid=$(e2e_new_uid)
        e2e_cp=$(e2e_id adopted)
        e2e_cx=$(e2e_id excluded)
        e2e_cn=$(e2e_id podless)
        printf 'excludeNamespaces: [skipped]\nruntimeRoots: [%s]\n' "$(e2e_rt_root)" >>"$e2e_config"

        e2e_step "three containers started with no hook: a pod's, a filtered one, a podless one"
        e2e_no_hooks=1
        e2e_args='"sh", "-c", "sleep 1001 & exec sleep 1000"'
        e2e_run "$e2e_cp" "$e2e_uid"
        e2e_args=""
        e2e_namespace=skipped
        e2e_run "$e2e_cx" "$(e2e_new_uid)"
        e2e_namespace=""
        e2e_run "$e2e_cn" ""
        e2e_no_hooks=""
        e2e_get_pid "$e2e_cp"
        wait_for "$WAIT_RUNTIME" "the init's fork" e2e_procs_are "$e2e_pid" 2 || e2e_fail "the init did not fork"
        e2e_assert_groups

        e2e_step "adopt: the pod's container, with every process of its cgroup"
        e2e_adopt
        grep -q "3 containers seen, 1 adopted" "$e2e_tmp/adopt.out" ||
                e2e_fail "adopt said: $(cat "$e2e_tmp/adopt.out")"
        e2e_assert_groups "$e2e_uid"
        # shellcheck disable=SC2046 # one pid a word
        e2e_assert_tasks "$e2e_uid" $(e2e_procs_of "$e2e_pid")
        e2e_assert_members "$e2e_uid" "$e2e_cp"

        e2e_step "adopt again: nothing changes"
        cp "$e2e_state/$e2e_uid.members" "$e2e_tmp/members.before"
        e2e_adopt
        grep -q "3 containers seen, 0 adopted" "$e2e_tmp/adopt.out" ||
                e2e_fail "adopt again said: $(cat "$e2e_tmp/adopt.out")"
        cmp -s "$e2e_state/$e2e_uid.members" "$e2e_tmp/members.before" ||
                e2e_fail "adopt again changed the member file"

        e2e_step "untrusted state: garbage, a symlink, another owner, no bundle: one line each"
        e2e_root=$(e2e_rt_root)
        for e2e_bad in garbage symlink owner nobundle; do
                mkdir -p "$e2e_root/rmh-bad-$e2e_bad"
        done
        echo '{"init_process_pid": ' >"$e2e_root/rmh-bad-garbage/state.json"
        ln -s "$e2e_root/$e2e_cp/state.json" "$e2e_root/rmh-bad-symlink/state.json" 2>/dev/null ||
                ln -s "$e2e_root/$e2e_cp/status" "$e2e_root/rmh-bad-symlink/status"
        printf '{"init_process_pid": %s, "init_process_start": 1, "config": {"labels": []}}\n' \
                "$e2e_pid" >"$e2e_root/rmh-bad-owner/state.json"
        chown 65534 "$e2e_root/rmh-bad-owner/state.json"
        e2e_pn=$(e2e_state_of "$e2e_cn" pid)
        printf '{"init_process_pid": %s, "init_process_start": %s, "config": {"labels": ["io.kubernetes.pod.uid=%s", "bundle=/nonexistent"]}}\n' \
                "$e2e_pn" "$(awk '{ print $22 }' "/proc/$e2e_pn/stat")" "$(e2e_new_uid)" \
                >"$e2e_root/rmh-bad-nobundle/state.json"
        e2e_adopt
        for e2e_bad in garbage symlink owner nobundle; do
                [ "$(grep -c "rmh-bad-$e2e_bad" "$e2e_tmp/adopt.err")" -eq 1 ] ||
                        e2e_fail "rmh-bad-$e2e_bad: not one line: $(cat "$e2e_tmp/adopt.err")"
        done
        rm -rf "$e2e_root"/rmh-bad-*
        e2e_assert_groups "$e2e_uid"

        e2e_step "a record containerd marks as a pod's sandbox: no hook ever ran for it, no member"
        mkdir -p "$e2e_root/rmh-sandbox"
        printf '{"init_process_pid": %s, "init_process_start": %s, "config": {"labels": ["io.kubernetes.cri.container-type=sandbox", "io.kubernetes.cri.sandbox-uid=%s", "bundle=%s"]}}\n' \
                "$e2e_pn" "$(awk '{ print $22 }' "/proc/$e2e_pn/stat")" "$(e2e_new_uid)" \
                "$e2e_tmp/bundles/$e2e_cn" >"$e2e_root/rmh-sandbox/state.json"
        e2e_adopt
        grep -q "4 containers seen, 0 adopted" "$e2e_tmp/adopt.out" ||
                e2e_fail "adopt with a sandbox said: $(cat "$e2e_tmp/adopt.out")"
        rm -rf "$e2e_root/rmh-sandbox"
        e2e_assert_groups "$e2e_uid"

        e2e_scenario_adopt_other_monitor
        e2e_scenario_adopt_reused_pid

        e2e_step "delete them: gc removes the adopted pod's group"
        e2e_delete "$e2e_cp"
        e2e_delete "$e2e_cx"
        e2e_delete "$e2e_cn"
        e2e_wait_tasks "$e2e_uid" 0 2>/dev/null || e2e_fail "the container's processes still run"
        e2e_gc
        e2e_assert_groups
        e2e_assert_no_state "$e2e_uid"
}

# The ownership rule for tasks (docs/design.md): adopt takes nothing from
# another monitor's group. A container whose init and its three processes
# pqos placed in mon_groups/pqos-mon keeps them there, recorded unmonitored
# (status: elsewhere); one whose init is in the default group but one
# process in pqos-mon is adopted without it.
e2e_scenario_adopt_other_monitor() {
        e2e_step "another monitor's group: adopt leaves an init and its processes in mon_groups/pqos-mon"
        e2e_uid_o=$(e2e_new_uid)
        e2e_co=$(e2e_id placed)
        e2e_uid_h=$(e2e_new_uid)
        e2e_ch=$(e2e_id halfplaced)
        e2e_run_unhooked "$e2e_co" "$e2e_uid_o" "sleep 1001 & sleep 1002 & sleep 1003 & exec sleep 1000"
        e2e_po=$e2e_pid
        e2e_run_unhooked "$e2e_ch" "$e2e_uid_h" "sleep 1001 & sleep 1002 & exec sleep 1000"
        e2e_ph=$e2e_pid
        wait_for "$WAIT_RUNTIME" "the inits' forks" e2e_procs_are "$e2e_po" 4 ||
                e2e_fail "the init did not fork"
        wait_for "$WAIT_RUNTIME" "the inits' forks" e2e_procs_are "$e2e_ph" 3 ||
                e2e_fail "the init did not fork"
        mkdir "$e2e_mnt/mon_groups/pqos-mon" || e2e_fail "mkdir pqos-mon"
        e2e_placed=$(e2e_procs_of "$e2e_po")
        e2e_other=$(e2e_procs_of "$e2e_ph" | grep -vx "$e2e_ph" | head -n 1)
        for e2e_p in $e2e_placed $e2e_other; do
                echo "$e2e_p" >"$e2e_mnt/mon_groups/pqos-mon/tasks" || e2e_fail "cannot place $e2e_p"
        done
        e2e_adopt
        grep -q "5 containers seen, 1 adopted" "$e2e_tmp/adopt.out" ||
                e2e_fail "adopt said: $(cat "$e2e_tmp/adopt.out")"
        # shellcheck disable=SC2086 # one pid a word
        e2e_assert_tasks pqos-mon $e2e_placed $e2e_other
        e2e_assert_groups "$e2e_uid" "$e2e_uid_h" pqos-mon
        # shellcheck disable=SC2046 # one pid a word
        e2e_assert_tasks "$e2e_uid_h" $(e2e_procs_of "$e2e_ph" | grep -vx "$e2e_other")
        e2e_assert_unmonitored "$e2e_uid_o" "$e2e_co" "init in another monitoring or control group"
        "$e2e_hook" --config "$e2e_config" status >"$e2e_tmp/status.out" 2>&1 ||
                e2e_fail "status failed: $(cat "$e2e_tmp/status.out")"
        grep "$e2e_co" "$e2e_tmp/status.out" | grep -qw elsewhere ||
                e2e_fail "status does not show $e2e_co elsewhere: $(cat "$e2e_tmp/status.out")"

        e2e_step "adopt again: the placed container stays where it is"
        e2e_adopt
        # shellcheck disable=SC2086 # one pid a word
        e2e_assert_tasks pqos-mon $e2e_placed $e2e_other
        e2e_delete "$e2e_co"
        e2e_delete "$e2e_ch"
        e2e_wait_tasks pqos-mon 0 || e2e_fail "the placed processes still run"
        rmdir "$e2e_mnt/mon_groups/pqos-mon" || e2e_fail "rmdir pqos-mon"
        e2e_gc
        e2e_assert_groups "$e2e_uid"
        e2e_assert_no_state "$e2e_uid_o"
        e2e_assert_no_state "$e2e_uid_h"
}

# The ownership rule for tasks (docs/design.md): a pid reused while adopt
# waits for the resctrl lock. The container's init exits and its pid goes to
# a process in another monitor's group; once the lock is free, that process
# is untouched and nothing is recorded monitored for the dead container.
e2e_scenario_adopt_reused_pid() {
        e2e_step "a pid reused while adopt waits for the resctrl lock: the new process stays in its group"
        e2e_uid_r=$(e2e_new_uid)
        e2e_cr=$(e2e_id reused)
        e2e_run_unhooked "$e2e_cr" "$e2e_uid_r" "exec sleep 1000"
        e2e_pr=$e2e_pid
        mkdir "$e2e_mnt/mon_groups/other-mon" || e2e_fail "mkdir other-mon"
        : >"$e2e_tmp/reused.log"
        # The lock, held by this shell; adopt waits through the turnstile (info/).
        exec 8<"$e2e_mnt"
        flock 8 || e2e_fail "cannot take the resctrl lock"
        sed 's/^lockTimeoutMs:.*//' "$e2e_config" >"$e2e_tmp/patient.yaml"
        echo "lockTimeoutMs: $((WAIT_RUNTIME * 1000))" >>"$e2e_tmp/patient.yaml"
        "$e2e_hook" --config "$e2e_tmp/patient.yaml" --log-level info adopt >"$e2e_tmp/adopt.out" 2>"$e2e_tmp/adopt.err" &
        e2e_adopter=$!
        wait_for "$WAIT_RUNTIME" "adopt waiting for the resctrl lock" lock_held "$e2e_mnt/info" ||
                e2e_fail "adopt does not wait for the lock: $(cat "$e2e_tmp/adopt.err")"
        e2e_rt kill "$e2e_cr" KILL || e2e_fail "$e2e_runtime kill $e2e_cr"
        wait_for "$WAIT_RUNTIME" "pid $e2e_pr reaped" e2e_reaped "$e2e_pr" ||
                e2e_fail "pid $e2e_pr was not reaped"
        "$e2e_with_pid" "$e2e_pr" tail -f "$e2e_tmp/reused.log" &
        e2e_with=$!
        wait_for "$WAIT_PROCESS" "pid $e2e_pr running tail" e2e_runs_tail "$e2e_pr" ||
                e2e_fail "pid $e2e_pr was not had again"
        echo "$e2e_pr" >"$e2e_mnt/mon_groups/other-mon/tasks" || e2e_fail "cannot place $e2e_pr"
        flock -u 8
        exec 8<&-
        wait "$e2e_adopter" || e2e_fail "adopt failed: $(cat "$e2e_tmp/adopt.err")"
        e2e_assert_tasks other-mon "$e2e_pr"
        e2e_assert_groups "$e2e_uid" other-mon
        grep -q "container $e2e_cr exited while it was adopted" "$e2e_tmp/adopt.err" ||
                e2e_fail "adopt did not say the container exited: $(cat "$e2e_tmp/adopt.err")"
        e2e_assert_no_state "$e2e_uid_r"
        kill "$e2e_pr"
        wait "$e2e_with"
        rmdir "$e2e_mnt/mon_groups/other-mon" || e2e_fail "rmdir other-mon"
        e2e_delete "$e2e_cr"
}
e2e_reaped() { [ ! -e "/proc/$1" ]; } # PID
e2e_runs_tail() { [ "$(cat "/proc/$1/comm" 2>/dev/null)" = tail ]; } # PID
