#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# containerd (Debian's 1.6) driven through its CRI API the way kubelet drives
# it, by tests/e2e/cri/kubelet.py, with the hook in base_runtime_spec:
#   test_containerd.sh HOOK RESCTRLFS
# On the machine's cgroups as they are: on a hybrid machine containerd's
# sandbox needs the cpu controller, which only v1 has there, so the pure v2
# layout is left to the integration tests (tests/integration/test_gc.sh).
# containerd runs with a private root, state, sockets, runc root and config,
# so that it never meets a system containerd; the images are built here from
# busybox-static (no registry); pods get kubelet's cgroupfs layout
# (kubepods/[burstable/|besteffort/]pod<uid>) below the run's private cgroup
# root (lib.sh's e2e_cgroup_root, /rmh-e2e-<tag>), which the client makes
# before a pod's sandbox and removes after it, as kubelet does. containerd never
# runs hooks for the sandbox (pause) container: the pod's group lives as long
# as its cgroup.
set -u
E2E_TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$E2E_TOP/tests/e2e/lib.sh"

[ $# -eq 2 ] || e2e_fail "usage: $0 HOOK RESCTRLFS"
# Debian's python3, which python3-grpcio and python3-grpc-tools are for.
python=/usr/bin/python3
"$python" -c 'import grpc, grpc_tools' 2>/dev/null ||
        e2e_skip "python3-grpcio and python3-grpc-tools are not installed"
e2e_resctrlfs_options=--debug # mon_hw_id: which RMID a group holds
e2e_init containerd "$1" "$2"

ctd=$e2e_tmp/containerd
image=localhost/rmh-busybox:1
export CRI_ENDPOINT="unix://$ctd/containerd.sock" CRI_STUBS="$e2e_tmp/cri"
export KUBELET_DIR="$e2e_tmp/kubelet" CRI_IMAGE="$image"
export WAIT_RUNTIME

# Fails the test (from a $(...) too: callers add "|| exit 1").
kubelet() {
        "$python" "$E2E_TOP/tests/e2e/cri/kubelet.py" "$@" || e2e_fail "kubelet.py $*"
}

# --- containerd, private ---------------------------------------------------------

ctd_config() {
        mkdir -p "$ctd/cni" "$KUBELET_DIR" "$CRI_STUBS" || e2e_fail "mkdir"
        # A CNI configuration lets the CRI plugin start; sandboxes use the node's network.
        echo '{"cniVersion": "0.4.0", "name": "rmh-loopback", "plugins": [{"type": "loopback"}]}' \
                >"$ctd/cni/10-loopback.conflist"
        # The hook as a containerd operator registers it: in the runtime's base spec.
        ctr oci spec | jq --arg h "$e2e_hook" --arg c "$e2e_config" '.hooks = {
                createRuntime: [{path: $h, args: ["resctrl-mon-hook", "--config", $c, "createRuntime"]}],
                poststop: [{path: $h, args: ["resctrl-mon-hook", "--config", $c, "poststop"]}]}' \
                >"$ctd/spec.json" || e2e_fail "ctr oci spec"
        # restrict_oom_score_adj: the sandbox asks for -998, which a machine
        # without CAP_SYS_RESOURCE refuses.
        cat >"$ctd/config.toml" <<EOF
version = 2
root = "$ctd/root"
state = "$ctd/state"
disabled_plugins = ["io.containerd.internal.v1.tracing", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "$ctd/containerd.sock"
[ttrpc]
  address = "$ctd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$ctd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$image"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$ctd/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      base_runtime_spec = "$ctd/spec.json"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$ctd/runc"
EOF
}

ctd_start() {
        containerd --config "$ctd/config.toml" </dev/null >>"$ctd/containerd.log" 2>&1 &
        ctd_pid=$!
        wait_for "$WAIT_DAEMON" "containerd answering" e2e_up_or_gone "$ctd_pid" ctd_answers ||
                e2e_fail "containerd did not answer"
        e2e_alive "$ctd_pid" || { cat "$ctd/containerd.log" >&2; e2e_fail "containerd exited"; }
}

ctd_answers() { ctr -a "$ctd/containerd.sock" version >/dev/null 2>&1; }

ctd_stop() {
        kill -TERM "$ctd_pid" 2>/dev/null
        e2e_wait_gone "$ctd_pid" containerd || kill -KILL "$ctd_pid"
        wait "$ctd_pid" 2>/dev/null
}

# At exit (lib.sh's cleanup): the daemon, its shims and their containers.
e2e_containerd_teardown() {
        [ -n "${ctd_pid:-}" ] || return 0
        ctd_stop
        for e2e_shim in $(pgrep -f "containerd-shim-runc-v2 .*-address $ctd/containerd.sock"); do
                kill -KILL "$e2e_shim" 2>/dev/null
        done
        for e2e_root in "$ctd/runc"/*; do
                [ -d "$e2e_root" ] || continue
                for e2e_left in $(runc --root "$e2e_root" list -q 2>/dev/null); do
                        runc --root "$e2e_root" delete -f "$e2e_left" >/dev/null 2>&1 ||
                                e2e_say "cannot delete leftover container $e2e_left"
                done
        done
        true # the pods' cgroups go with lib.sh's e2e_cgroup_root
}

# --- kubelet's cgroups ---------------------------------------------------------

# kubelet's cgroupfs driver: the pod's cgroup in every hierarchy, made before
# its sandbox and removed (with what runc left below it) after it.
pod_cgroup() { # make|remove PARENT
        for e2e_h in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
                if [ "$1" = make ]; then
                        mkdir -p "$e2e_h$2" || e2e_fail "mkdir $e2e_h$2"
                elif [ -d "$e2e_h$2" ]; then
                        find "$e2e_h$2" -depth -type d -exec rmdir {} + 2>/dev/null ||
                                e2e_fail "cannot remove $e2e_h$2: $(find "$e2e_h$2" | head -n 3)"
                fi
        done
}

# new_pod NAME QOS_DIR: a pod UID in $uid, its cgroup made in QOS_DIR (kubelet's,
# /kubepods/...) below the run's private root, its sandbox running in $sandbox.
new_pod() {
        uid=$(e2e_new_uid)
        parent=$e2e_cgroup_root$2/pod$uid
        pod_cgroup make "$parent"
        sandbox=$(kubelet run-pod "$1" "$uid" default "$parent") || exit 1
}

# The pod's sandbox stopped and removed, then its cgroup, as kubelet does.
remove_pod() {
        kubelet stop-pod "$sandbox"
        kubelet remove-pod "$sandbox"
        pod_cgroup remove "$parent"
}

# run_container NAME ATTEMPT COMMAND...: created and started, id in $cid, init pid in $cpid.
run_container() {
        e2e_cn=$1 e2e_ca=$2
        shift 2
        cid=$(kubelet create "$sandbox" "$e2e_cn" "$e2e_ca" "$@") || exit 1
        kubelet start "$cid"
        cpid=$(kubelet pid "$cid") || exit 1
}

rmid_of() {
        cat "$(e2e_group "$1")/mon_hw_id" 2>/dev/null || e2e_fail "no group for pod $1"
}

assert_lingers() {
        [ -d "$(e2e_group "$1")" ] || e2e_fail "the group of pod $1 is gone"
        jq -e '(.members | length) == 0 and .groups[0].emptied_at > 0' "$e2e_state/$1.members" \
                >/dev/null || e2e_fail "pod $1 not recorded as lingering: $(cat "$e2e_state/$1.members")"
}

# After the pod's removal, one gc pass leaves nothing of it.
assert_gone_after_gc() {
        e2e_gc
        e2e_assert_no_group "$1"
        e2e_assert_no_state "$1"
}

# --- the cases -------------------------------------------------------------------

# Two containers: one group with both inits, kept when one stops, kept while
# the pod lives after both stopped, gone with the pod.
case_two_containers() {
        e2e_step "a pod of two containers"
        new_pod two /kubepods/burstable
        run_container one 0 sleep 1000
        c1=$cid p1=$cpid
        run_container two 0 sleep 1000
        c2=$cid p2=$cpid
        e2e_assert_tasks "$uid" "$p1" "$p2"
        e2e_assert_members "$uid" "$c1" "$c2"
        kubelet stop "$c1"
        kubelet remove "$c1"
        e2e_assert_tasks "$uid" "$p2"
        e2e_assert_not_member "$uid" "$c1"
        kubelet stop "$c2"
        assert_lingers "$uid"
        e2e_gc
        grep -q "linger-group pod=$uid ctrl=/ reason=\"pod cgroup\"" "$e2e_tmp/gc.out" ||
                e2e_fail "gc did not keep the group of a live pod: $(cat "$e2e_tmp/gc.out")"
        remove_pod
        assert_gone_after_gc "$uid"
}

# A container that fails at once, restarted 10 times in one sandbox (kubelet's
# CrashLoopBackOff, without the back-off): the group exists throughout, with
# one RMID, and goes with the pod.
case_crash_loop() {
        e2e_step "a crash-looping container, 10 restarts"
        new_pod crash /kubepods/burstable
        rmid=""
        prev=""
        for attempt in 0 1 2 3 4 5 6 7 8 9 10; do
                run_container app "$attempt" sh -c 'exit 1'
                kubelet wait-exited "$cid"
                [ -n "$rmid" ] || rmid=$(rmid_of "$uid") || exit 1
                [ "$(rmid_of "$uid")" = "$rmid" ] ||
                        e2e_fail "restart $attempt: RMID $(rmid_of "$uid"), was $rmid"
                assert_lingers "$uid"
                [ -z "$prev" ] || kubelet remove "$prev" # kubelet keeps the last attempt
                prev=$cid
        done
        remove_pod
        assert_gone_after_gc "$uid"
}

# kubelet's forced path: RemovePodSandbox while a container still runs.
case_forced_removal() {
        e2e_step "RemovePodSandbox with a container running"
        new_pod forced /kubepods/burstable
        run_container app 0 sleep 1000
        e2e_assert_tasks "$uid" "$cpid"
        kubelet remove-pod "$sandbox"
        pod_cgroup remove "$parent"
        assert_gone_after_gc "$uid"
}

# containerd restarted with the pod running: the pod's next container joins
# the same group.
case_containerd_restart() {
        e2e_step "containerd restarted under a running pod"
        new_pod restart /kubepods/burstable
        run_container one 0 sleep 1000
        p1=$cpid
        rmid=$(rmid_of "$uid") || exit 1
        ctd_stop
        ctd_start
        run_container two 0 sleep 1000
        [ "$(rmid_of "$uid")" = "$rmid" ] || e2e_fail "a new group after the restart"
        e2e_assert_tasks "$uid" "$p1" "$cpid"
        remove_pod
        assert_gone_after_gc "$uid"
}

# The other QoS classes' cgroup parents: the pod's cgroup found there too.
case_qos_classes() {
        for qos in /kubepods/besteffort /kubepods; do
                e2e_step "a pod under $qos"
                new_pod qos "$qos"
                run_container app 0 sleep 1000
                kubelet stop "$cid"
                assert_lingers "$uid"
                remove_pod
                assert_gone_after_gc "$uid"
        done
}

ctd_config
"$python" -m grpc_tools.protoc -I "$E2E_TOP/tests/e2e/cri" --python_out="$CRI_STUBS" \
        --grpc_python_out="$CRI_STUBS" api.proto || e2e_fail "protoc"
"$python" "$E2E_TOP/tests/e2e/cri/oci_image.py" "$e2e_rootfs" "$image" "$e2e_tmp/image.tar" ||
        e2e_fail "image"
ctd_start
ctr -a "$ctd/containerd.sock" -n k8s.io images import "$e2e_tmp/image.tar" >/dev/null ||
        e2e_fail "ctr images import"

case_two_containers
case_crash_loop
case_forced_removal
case_containerd_restart
case_qos_classes
e2e_assert_groups
e2e_say "PASS"
