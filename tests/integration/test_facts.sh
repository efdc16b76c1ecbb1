#!/bin/bash
# The facts createRuntime records of a container (member key "cgroup": the
# cgroup its runtime made for it, checked against linux.cgroupsPath of the
# bundle's config.json) and of its pod ("pod_cgroup": the container cgroup's
# parent, when it names the pod), and what poststop and gc do with them, on
# real cgroups of this machine (v2: the unified hierarchy, v1: the pids
# controller's), each test below the run's private root of a hierarchy:
#   1. a static pod (32-hex UID) in the systemd driver's layout, and
#   2. a pod in the cgroupfs driver's layout below a custom --cgroup-root:
#      the pod's group outlives its last container while the pod's cgroup
#      holds a process, a restarted container takes it back (same RMID), and
#      one gc pass after the pod's cgroup went (with kubelet's whole tree,
#      for 2) removes it;
#   3. a hybrid host whose runtime leaves every container in the unified
#      cgroup of the daemon that runs the hook: each pod's group gets its own
#      container's threads, never the daemon's other processes nor another
#      pod's;
#   4. a thread another monitor put into its own monitoring group stays there,
#      counted as elsewhere by gc and status;
#   5. a process in a cgroup below the container's is joined by gc, one beside
#      it in the pod's cgroup is not;
#   6. a pod cgroup gc cannot see (its hierarchy not mounted, a cgroup
#      namespace hiding it) keeps the group, and says so;
#   7. a member's init that died and whose pid a new process took (in a pid
#      namespace, via ns_last_pid), before gc or while gc waits for the
#      resctrl lock, is dropped as such, the new process never moved, the
#      group removed;
#   8. gc as the DaemonSet's container runs it (a cgroup namespace of its
#      own, the node's tree mounted read-only over the namespace's): it joins
#      what a runtime exec'd, and a pod's group lives as long as its cgroup.
#   9. check's runtime-roots row where kubelet's pods run: roots that are
#      there but hold no container fail it, as do records whose bundles are
#      not there, a symlink and a root another user may write.
#   test_facts.sh HOOK RESCTRLFS
# shellcheck disable=SC2016 # jq programs and sh -c scripts: single quotes on purpose
# shellcheck disable=SC2119 # write_config takes optional extra lines, none here
set -u

# shellcheck source=../lib/harness.sh
. "$(cd "$(dirname "$0")" && pwd)/../lib/harness.sh"
harness_init "$1" "$2" facts
command -v jq >/dev/null || { echo "needs jq"; exit 77; }
command -v unshare >/dev/null || { echo "needs unshare"; exit 77; }
log_level=debug
with_runtime_root

OUT=$WORK/gc.out

# --- helpers ------------------------------------------------------------------

gc_out() { gc "$@" >"$OUT"; }
jqe() { jq -e "$@" >/dev/null; }
said() { grep -q -- "$1" "$OUT"; }
not() { ! "$@"; }
status() { "$HOOK" --config "$CONFIG" status "$@" 2>>"$LOG"; }

# A container id as containerd makes them: 64 hex digits.
container_id() {
        local a b
        a=$(new_uid)
        b=$(new_uid)
        echo "${a//-/}${b//-/}"
}

# The member file's name in the hierarchy (as the member file spells it) of KIND.
hierarchy_name() { case $1 in v2) echo unified ;; v1) echo pids ;; esac; }

# DIR as /proc/<pid>/cgroup shows it: relative to its hierarchy's mount.
rel() { # KIND DIR
        local h
        h=$(hierarchy "$1")
        echo "${2#"$h"}"
}

# Moves each PID into cgroup DIR.
in_cgroup() { # DIR PID...
        local d=$1 p
        shift
        for p in "$@"; do echo "$p" >"$d/cgroup.procs" || return 1; done
}

# A bundle whose config.json has linux.cgroupsPath PATH (none when empty).
cgroups_bundle() { # DIR PATH
        mkdir -p "$1"
        jq -n --arg p "$2" '{ociVersion: "1.2.0", linux: (if $p == "" then {} else {cgroupsPath: $p} end)}' \
                >"$1/config.json"
}

# createRuntime of container ID (init PID, pod annotation UID) whose runtime
# made cgroup CGROUPS_PATH for it, as config.json says.
launch() { # ID PID UID CGROUPS_PATH
        cgroups_bundle "$WORK/bundle-$1" "$4"
        create "$1" "$2" "$3" "$WORK/bundle-$1"
}

# Sorted, one line, as tasks_of prints them.
sorted() { printf '%s\n' "$@" | sort -n | tr '\n' ' '; }

# The member file's {"hierarchy", "path"} of a cgroup, as jq's argument.
cgroup_json() { # KIND DIR
        jq -nc --arg h "$(hierarchy_name "$1")" --arg p "$(rel "$1" "$2")" '{hierarchy: $h, path: $p}'
}

# Is the member file of pod UID's member ID's cgroup DIR, and its pod cgroup POD?
recorded() { # UID ID KIND DIR POD
        jqe --arg id "$2" --argjson cg "$(cgroup_json "$3" "$4")" --argjson pod "$(cgroup_json "$3" "$5")" \
                '(.members[] | select(.id == $id) | .cgroup) == $cg and .pod_cgroup == $pod' \
                "$STATE/$1.members"
}

# --- 1 and 2: a pod's group lives as long as its pod's cgroup ----------------

# The cgroups kubelet and the runtime make for a pod, by LAYOUT, below the
# private root ROOT; sets POD (the pod's cgroup) and ANNOT (the UID the
# runtime's annotation gives, for canonical UID).
#   static-systemd, static-cgroupfs: the systemd driver's, for a static pod
#     (its UID 32 hex digits): ROOT/kubepods.slice/kubepods-besteffort.slice/
#     kubepods-besteffort-pod<hex>.slice/cri-containerd-<id>.scope
#   guaranteed: the cgroupfs driver's for a Guaranteed pod below
#     --cgroup-root ROOT/kubelet: ROOT/kubelet/kubepods/pod<uid>/<id>
layout() { # LAYOUT ROOT UID
        LAYOUT=$1
        case $1 in
        static-*)
                ANNOT=${3//-/}
                POD=$2/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$ANNOT.slice
                ;;
        guaranteed)
                ANNOT=$3
                POD=$2/kubelet/kubepods/pod$3
                ;;
        esac
}

container_cgroup() { # ID
        case $LAYOUT in
        static-*) echo "$POD/cri-containerd-$1.scope" ;;
        *) echo "$POD/$1" ;;
        esac
}

# linux.cgroupsPath of container ID in KIND's hierarchy. The systemd syntax
# expands from the hierarchy's root, so below a private root it names the
# container's cgroup as a suffix: what the hook accepts at a component
# boundary. The cgroupfs syntax gives the whole path, as kubelet does.
cgroups_path() { # KIND ID
        case $LAYOUT in
        static-systemd) echo "kubepods-besteffort-pod$ANNOT.slice:cri-containerd:$2" ;;
        *) rel "$1" "$(container_cgroup "$2")" ;;
        esac
}

# A crash-looping container of a pod whose sandbox (pause) no hook sees: its
# group lingers while the pause runs, the restarted container takes it back
# (same RMID), and gc removes it in its first pass after kubelet removed the
# pod's cgroup. On v1 the init is also in a unified cgroup of its own
# ("decoy"), the first a hook without linux.cgroupsPath would take: that the
# pids one is recorded shows cgroupsPath was matched.
test_pod_lifetime() { # KIND LAYOUT
        local kind=$1 t="$2 $1" root uid g id0 id1 id2 p0 p1 p2 hw decoy=""
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        uid=$(new_uid 2)
        layout "$2" "$root" "$uid"
        g=$MNT/mon_groups/$uid
        mount_emulator --debug
        write_config
        id0=$(container_id) id1=$(container_id) id2=$(container_id)
        mkdir -p "$(container_cgroup "$id0")" "$(container_cgroup "$id1")" "$(container_cgroup "$id2")"
        sleeper p0 p1
        in_cgroup "$(container_cgroup "$id0")" "$p0" # the pause: containerd runs no hook for it
        in_cgroup "$(container_cgroup "$id1")" "$p1"
        if [ "$kind" = v1 ] && decoy=$(private_cgroup v2); then
                decoy=$decoy/decoy-$id1
                mkdir "$decoy"
                in_cgroup "$decoy" "$p1"
        fi

        check "$t: createRuntime" launch "$id1" "$p1" "$ANNOT" "$(cgroups_path "$kind" "$id1")"
        check "$t: the group named by the canonical UID" has_task "$g" "$p1"
        check "$t: container and pod cgroup recorded" \
                recorded "$uid" "$id1" "$kind" "$(container_cgroup "$id1")" "$POD"
        check "$t: linux.cgroupsPath matched" not grep -q "in no cgroup that linux.cgroupsPath" "$LOG"
        hw=$(cat "$g/mon_hw_id")
        stop "$p1"
        check "$t: last poststop" poststop "$id1" "$ANNOT"
        check "$t: lingers for the pause" grep -q "outcome=group lingers" "$ERR"
        check "$t: group kept" test -d "$g"
        check "$t: gc" gc_out
        check "$t: gc keeps it for the pod's cgroup" said "linger-group pod=$uid ctrl=/ reason=\"pod cgroup\""
        check "$t: still there after gc" test -d "$g"

        sleeper p2
        in_cgroup "$(container_cgroup "$id2")" "$p2"
        check "$t: the restarted container" launch "$id2" "$p2" "$ANNOT" "$(cgroups_path "$kind" "$id2")"
        check "$t: same group, same RMID" [ "$(cat "$g/mon_hw_id")" = "$hw" ]
        check "$t: in it" has_task "$g" "$p2"
        check "$t: taken back" jqe '.groups[0] | has("emptied_at") | not' "$STATE/$uid.members"
        check "$t: its cgroup recorded" recorded "$uid" "$id2" "$kind" "$(container_cgroup "$id2")" "$POD"
        stop "$p2"
        check "$t: poststop again" poststop "$id2" "$ANNOT"
        check "$t: lingers again" test -d "$g"

        stop "$p0"
        # Below a custom root, kubelet's whole tree goes (kubelet torn
        # down): in the host's cgroup namespace that is gone, not unseen.
        if [ "$LAYOUT" = guaranteed ]; then remove_cgroup_tree "$root/kubelet"; else remove_cgroup_tree "$POD"; fi
        [ -z "$decoy" ] || rmdir "$decoy"
        check "$t: one gc pass after kubelet removed the pod's cgroup" gc_out
        check "$t: removes the group" said "remove-group pod=$uid ctrl=/"
        check "$t: group gone" test ! -e "$g"
        check "$t: no state left" no_state "$uid"
}
test_static_pod_systemd_v2() { test_pod_lifetime v2 static-systemd; }
test_static_pod_systemd_v1() { test_pod_lifetime v1 static-systemd; }
test_static_pod_cgroupfs_v2() { test_pod_lifetime v2 static-cgroupfs; }
test_static_pod_cgroupfs_v1() { test_pod_lifetime v1 static-cgroupfs; }
test_cgroup_root_v2() { test_pod_lifetime v2 guaranteed; }
test_cgroup_root_v1() { test_pod_lifetime v1 guaranteed; }

# --- 3: a hybrid host's daemon cgroup, shared by every container -------------

# Runs COMMAND in a subshell moved into cgroup $DAEMON first.
in_daemon() { ( in_cgroup "$DAEMON" "$BASHPID" && "$@" ); }

# The runtime (runc's cgroupfs driver on a hybrid host) made each container a
# v1 pids cgroup and left it in the unified cgroup of the daemon that runs
# the hook: pod A's createRuntime gets linux.cgroupsPath, pod B's none (the
# hook passes over the cgroup that holds itself). gc, running elsewhere,
# joins to each pod's group its own container's processes (init and an
# exec'd one), never the daemon's other service nor the other pod's.
test_shared_daemon_cgroup() {
        local v2 v1 ua ub ida idb ca cb a1 a2 b1 b2 other ga gb
        if ! v2=$(private_cgroup v2) || ! v1=$(private_cgroup v1); then
                echo "needs the unified and the pids hierarchy: nothing to test"
                return
        fi
        mount_emulator
        write_config
        DAEMON=$v2/daemon
        ua=$(new_uid 3) ub=$(new_uid 5) ida=$(container_id) idb=$(container_id)
        ca=$v1/kubepods/pod$ua/$ida cb=$v1/kubepods/pod$ub/$idb
        ga=$MNT/mon_groups/$ua gb=$MNT/mon_groups/$ub
        mkdir -p "$DAEMON" "$ca" "$cb"
        sleeper a1 a2 b1 b2 other
        # What the daemon (its shims) forked: all in its unified cgroup.
        in_cgroup "$DAEMON" "$a1" "$a2" "$b1" "$b2" "$other"
        in_cgroup "$ca" "$a1" "$a2"
        in_cgroup "$cb" "$b1" "$b2"
        check "hybrid: createRuntime of A in the daemon's cgroup" \
                in_daemon launch "$ida" "$a1" "$ua" "/kubepods/pod$ua/$ida"
        check "hybrid: createRuntime of B, no cgroupsPath" in_daemon launch "$idb" "$b1" "$ub" ""
        check "hybrid: A's pids cgroup recorded, not the daemon's" recorded "$ua" "$ida" v1 "$ca" "${ca%/*}"
        check "hybrid: B's too" recorded "$ub" "$idb" v1 "$cb" "${cb%/*}"
        check "hybrid: gc" gc_out
        check "hybrid: A's group holds exactly A's processes" [ "$(tasks_of "$ga")" = "$(sorted "$a1" "$a2")" ]
        check "hybrid: B's group holds exactly B's processes" [ "$(tasks_of "$gb")" = "$(sorted "$b1" "$b2")" ]
        check "hybrid: the daemon's other service in neither" \
                not grep -qx "$other" "$ga/tasks" "$gb/tasks"
        check "hybrid: said so for A" said "join-tasks pod=$ua container=$ida count=1 elsewhere=0"
        check "hybrid: and for B" said "join-tasks pod=$ub container=$idb count=1 elsewhere=0"
        check "hybrid: a second pass changes nothing" [ -z "$(gc)" ]
        # B's member as 0.2 recorded it, with no cgroup: gc finds its
        # processes from its init's entry in /proc, in the pids hierarchy,
        # not the daemon's unified cgroup.
        jq 'del(.pod_cgroup, .members[].cgroup)' "$STATE/$ub.members" >"$WORK/legacy" &&
                mv "$WORK/legacy" "$STATE/$ub.members"
        echo "$b2" >"$MNT/tasks"
        check "hybrid, recorded by 0.2: gc" gc_out
        check "hybrid, recorded by 0.2: B's group holds exactly B's processes" \
                [ "$(tasks_of "$gb")" = "$(sorted "$b1" "$b2")" ]
        check "hybrid, recorded by 0.2: the daemon's other service not in it" not grep -qx "$other" "$gb/tasks"
        stop "$a1"; stop "$a2"; stop "$b1"; stop "$b2"; stop "$other"
        remove_cgroup_tree "${ca%/*}" # kubelet removes the pods' cgroups, not kubepods
        remove_cgroup_tree "${cb%/*}"
        check "hybrid: gc at the end" gc_out
        check "hybrid: A's group removed" test ! -e "$ga"
        check "hybrid: B's group removed" test ! -e "$gb"
        rmdir "$DAEMON"
}

# --- 4: another monitor's monitoring group -------------------------------------

# A thread of the container that another monitor (pqos, an NRI plugin) put
# into its own monitoring group of the same control group stays there across
# gc passes; gc and status count it as elsewhere. Another thread of the
# container, in the default group, is joined in the same pass.
test_other_monitor() { # KIND
        local kind=$1 root uid id cg g p1 p2 p3 other=$MNT/mon_groups/pqos-like
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator
        write_config
        uid=$(new_uid 7) id=$(container_id)
        cg=$root/kubepods/pod$uid/$id g=$MNT/mon_groups/$uid
        mkdir -p "$cg"
        sleeper p1 p2 p3
        in_cgroup "$cg" "$p1" "$p2" "$p3"
        check "$kind other monitor: createRuntime" launch "$id" "$p1" "$uid" "$(rel "$kind" "$cg")"
        mkdir "$other"
        echo "$p3" >"$other/tasks"
        check "$kind other monitor: gc" gc_out
        check "$kind other monitor: one joined, one left elsewhere" \
                said "join-tasks pod=$uid container=$id count=1 elsewhere=1"
        check "$kind other monitor: joined" [ "$(tasks_of "$g")" = "$(sorted "$p1" "$p2")" ]
        check "$kind other monitor: its thread left there" [ "$(tasks_of "$other")" = "$p3 " ]
        check "$kind other monitor: a second gc" gc_out
        check "$kind other monitor: joins nothing" not said "join-tasks"
        check "$kind other monitor: still there" [ "$(tasks_of "$other")" = "$p3 " ]
        check "$kind other monitor: and not in the pod's group" not has_task "$g" "$p3"
        status --json >"$WORK/status.json"
        check "$kind other monitor: status --json counts it elsewhere" \
                jqe --arg u "$uid" '(.pods[] | select(.uid == $u) | .threads)
                        == {containers: 3, in_groups: 2, elsewhere: 1}' "$WORK/status.json"
        status >"$WORK/status.txt"
        check "$kind other monitor: status says so" \
                grep -q "threads: 3 in its containers, 2 in its groups, 1 in other monitoring or control groups (left there)" \
                "$WORK/status.txt"
        stop "$p1"; stop "$p2"; stop "$p3"
        remove_cgroup_tree "${cg%/*}"
        gc >/dev/null 2>&1
        check "$kind other monitor: removed at the end" test ! -e "$g"
        check "$kind other monitor: the other monitor's group never" test -d "$other"
}
test_other_monitor_v2() { test_other_monitor v2; }
test_other_monitor_v1() { test_other_monitor v1; }

# --- 5: cgroups below the container's ----------------------------------------

# systemd in a container moves itself to init.scope and starts services in
# cgroups of their own below the container's: gc joins them all, from the
# cgroup recorded at createRuntime; the pause beside it in the pod's cgroup
# stays out.
test_sub_cgroups() { # KIND
        local kind=$1 root uid id pod cg g p0 p1 p2
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator
        write_config
        uid=$(new_uid 1) id=$(container_id)
        pod=$root/kubepods/besteffort/pod$uid cg=$pod/$id g=$MNT/mon_groups/$uid
        mkdir -p "$pod/sandbox" "$cg/init.scope" "$cg/sub/deeper"
        sleeper p0 p1 p2
        in_cgroup "$pod/sandbox" "$p0"
        in_cgroup "$cg" "$p1"
        check "$kind sub-cgroups: createRuntime" launch "$id" "$p1" "$uid" "$(rel "$kind" "$cg")"
        check "$kind sub-cgroups: the init alone" [ "$(tasks_of "$g")" = "$p1 " ]
        in_cgroup "$cg/init.scope" "$p1"
        in_cgroup "$cg/sub/deeper" "$p2"
        check "$kind sub-cgroups: gc" gc_out
        check "$kind sub-cgroups: said" said "join-tasks pod=$uid container=$id count=1 elsewhere=0"
        check "$kind sub-cgroups: the process two levels down joined" has_task "$g" "$p2"
        check "$kind sub-cgroups: the pause not" not has_task "$g" "$p0"
        check "$kind sub-cgroups: a second pass changes nothing" [ -z "$(gc)" ]
        stop "$p0"; stop "$p1"; stop "$p2"
        remove_cgroup_tree "$pod"
        gc >/dev/null 2>&1
        check "$kind sub-cgroups: removed at the end" test ! -e "$g"
}
test_sub_cgroups_v2() { test_sub_cgroups v2; }
test_sub_cgroups_v1() { test_sub_cgroups v1; }

# --- 6: a pod cgroup gc cannot see -------------------------------------------

# The hook with ARGS in a mount namespace of its own where KIND's hierarchy
# is not mounted (the private propagation keeps the umount there).
hook_unmounted() { # KIND ARGS...
        local h
        h=$(hierarchy "$1")
        shift
        unshare -m --propagation private sh -c 'umount -l "$1" && shift && exec "$@"' \
                _ "$h" "$HOOK" --config "$CONFIG" "$@"
}

# The hook with ARGS in a cgroup namespace rooted at cgroup VIEW, with the
# unified hierarchy mounted afresh in it: only VIEW's subtree is there.
hook_in_cgroupns() { # VIEW ARGS...
        local view=$1 h
        h=$(hierarchy v2)
        shift
        (
                in_cgroup "$view" "$BASHPID" &&
                        exec unshare -m -C --propagation private sh -c \
                                'umount -l "$1" && mount -t cgroup2 cgroup2 "$1" && shift && exec "$@"' \
                                _ "$h" "$HOOK" --config "$CONFIG" "$@"
        )
}

# After the container stopped and its poststop ran, gc runs where the pod's
# recorded cgroup cannot be seen (HOW: its hierarchy unmounted, or a cgroup
# namespace that shows none of it): the group is kept, said in the report and
# the log, and check fails there. Seen again, the pod's cgroup rules again.
test_pod_cgroup_unseen() { # KIND unmounted|cgroupns
        local kind=$1 how=$2 t="$1 unseen ($2)" root uid id pod cg g p0 p1 rc
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator
        write_config
        uid=$(new_uid 7) id=$(container_id)
        pod=$root/kubepods/burstable/pod$uid cg=$pod/$id g=$MNT/mon_groups/$uid
        mkdir -p "$pod/sandbox" "$cg" "$root/view"
        sleeper p0 p1
        in_cgroup "$pod/sandbox" "$p0"
        in_cgroup "$cg" "$p1"
        check "$t: createRuntime" launch "$id" "$p1" "$uid" "$(rel "$kind" "$cg")"
        check "$t: pod cgroup recorded" recorded "$uid" "$id" "$kind" "$cg" "$pod"
        stop "$p1"
        check "$t: poststop" poststop "$id" "$uid"
        check "$t: lingers" test -d "$g"
        "$HOOK" --config "$CONFIG" check --hooks-dir "$WORK/none" >"$WORK/check.txt" 2>>"$LOG"
        check "$t: check is content where the pod's cgroup can be seen" [ $? -eq 0 ]
        : >"$LOG"
        if [ "$how" = unmounted ]; then
                hook_unmounted "$kind" gc >"$OUT" 2>>"$LOG"
        else
                hook_in_cgroupns "$root/view" gc >"$OUT" 2>>"$LOG"
        fi
        check "$t: gc runs" [ $? -eq 0 ]
        check "$t: keeps the group, and says why" said "linger-group pod=$uid ctrl=/ reason=\"pod cgroup unseen\""
        check "$t: the group is still there" test -d "$g"
        check "$t: state kept" jqe '.groups | length == 1' "$STATE/$uid.members"
        check "$t: the log says it cannot see it" grep -q \
                "cannot see cgroup $(hierarchy_name "$kind"):$(rel "$kind" "$pod") of pod $uid from here; its group is kept" \
                "$LOG"
        if [ "$how" = unmounted ]; then
                hook_unmounted "$kind" check --hooks-dir "$WORK/none" >"$WORK/check.txt" 2>>"$LOG"
        else
                hook_in_cgroupns "$root/view" check --hooks-dir "$WORK/none" >"$WORK/check.txt" 2>>"$LOG"
        fi
        rc=$?
        check "$t: check fails where it cannot see the pod's cgroup" [ "$rc" -eq 1 ]
        check "$t: check says which pod's cgroup it cannot see" \
                grep -Eq "^fail +pod-cgroups +1 pods' recorded cgroups cannot be seen from here .*: $uid$" \
                "$WORK/check.txt"
        check "$t: seen again, gc keeps it for the pause" gc_out
        check "$t: for the pod's cgroup" said "linger-group pod=$uid ctrl=/ reason=\"pod cgroup\""
        stop "$p0"
        remove_cgroup_tree "$pod"
        check "$t: gc once the pod's cgroup is gone" gc_out
        check "$t: removed" said "remove-group pod=$uid ctrl=/"
        check "$t: no state left" no_state "$uid"
        rmdir "$root/view"
}
test_unseen_unmounted_v2() { test_pod_cgroup_unseen v2 unmounted; }
test_unseen_unmounted_v1() { test_pod_cgroup_unseen v1 unmounted; }
test_unseen_cgroupns_v2() { test_pod_cgroup_unseen v2 cgroupns; }

# --- 7: a member's pid taken by a new process --------------------------------

# Sets q to a new sleeper that took pid P (through ns_last_pid), at least a
# clock tick after P's process started. In a pid namespace of its own.
reuse_pid() { # P
        sleep 0.05 # the next clock tick: the new process starts later
        for _ in 1 2 3 4 5; do
                echo $(($1 - 1)) >/proc/sys/kernel/ns_last_pid
                sleep 1000 >/dev/null 2>&1 &
                q=$!
                [ "$q" -eq "$1" ] && break
                kill "$q"
                wait "$q"
        done
}

# Runs as pid 1 of a pid namespace of its own, with /proc of it. resctrlfs
# takes task ids as its /proc shows them, so the namespace gets one of its
# own, at DIR/resctrl, and the hook a config naming it and DIR/state. For
# each pod UID: its container's init, in ROOT/kubepods/pod<uid>/c1, recorded
# by createRuntime, then killed (no poststop: the runtime died too), its
# cgroups removed (kubelet), and its pid given to a new process through
# ns_last_pid, at least a clock tick later (another start time). For
# RACED_UID the new process is then written into the group: what a tasks
# write racing the reuse would have done. Then one gc pass. What the checks
# need is left in DIR: <uid>.{old,new} (pid and start time), <uid>.before
# (the group's tasks after createRuntime), <uid>.after (whether the group is
# still there), create.rc, gc.rc, gc.out, root.tasks, hook.log.
pid_reuse_in_ns() { # HOOK RESCTRLFS DIR ROOT REL_ROOT RACED_UID UID...
        local hook=$1 fs=$2 dir=$3 root=$4 rel=$5 raced=$6 u p q cfg
        shift 6
        cfg=$dir/config.yaml
        mkdir -p "$dir/resctrl"
        "$fs" --no-fork-tracking "$dir/resctrl" || return 1
        printf 'resctrlPath: %s\nstateDir: %s\nrequireResctrlFs: false\nlog: {level: debug, syslog: false, stderr: true}\n' \
                "$dir/resctrl" "$dir/state" >"$cfg"
        starttime() { cut -d')' -f2 "/proc/$1/stat" | cut -d' ' -f21; }
        for u in "$@"; do
                mkdir -p "$root/kubepods/pod$u/c1" "$dir/bundle-$u"
                printf '{"ociVersion":"1.2.0","linux":{"cgroupsPath":"%s/kubepods/pod%s/c1"}}\n' \
                        "$rel" "$u" >"$dir/bundle-$u/config.json"
                sleep 1000 >/dev/null 2>&1 &
                p=$!
                echo "$p" >"$root/kubepods/pod$u/c1/cgroup.procs"
                printf '{"ociVersion":"1.2.0","id":"c1","status":"creating","pid":%d,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s"}}' \
                        "$p" "$dir/bundle-$u" "$u" | "$hook" --config "$cfg" createRuntime 2>>"$dir/hook.log"
                echo $? >>"$dir/create.rc"
                echo "$p $(starttime "$p")" >"$dir/$u.old"
                tr '\n' ' ' <"$dir/resctrl/mon_groups/$u/tasks" >"$dir/$u.before"
                kill "$p"
                wait "$p"
                rmdir "$root/kubepods/pod$u/c1" "$root/kubepods/pod$u"
                reuse_pid "$p"
                echo "$q $(starttime "$q")" >"$dir/$u.new"
                [ "$u" != "$raced" ] || echo "$q" >"$dir/resctrl/mon_groups/$u/tasks"
        done
        "$hook" --config "$cfg" gc >"$dir/gc.out" 2>>"$dir/hook.log"
        echo $? >"$dir/gc.rc"
        for u in "$@"; do
                if [ -d "$dir/resctrl/mon_groups/$u" ]; then echo there; else echo gone; fi >"$dir/$u.after"
        done
        tr '\n' ' ' <"$dir/resctrl/tasks" >"$dir/root.tasks"
        fusermount3 -u "$dir/resctrl"
}

# Pod A's init died and its pid went to a new process outside the pod: gc
# drops the member as a reused pid, never moves the new process into the
# group, and removes the group. Pod B the same, but the new process is in
# its group (a write that raced the reuse): the group is removed all the
# same, the stranger said and returned to the control group.
test_pid_reuse() { # KIND
        local kind=$1 t="$1 pid reuse" root ns ua ub u old old_start new new_start
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        ns=$WORK/pidns-$kind
        ua=$(new_uid 3) ub=$(new_uid 5)
        mkdir -p "$ns"
        unshare -p -f --mount-proc --propagation private bash -c "$(declare -f pid_reuse_in_ns reuse_pid); pid_reuse_in_ns \"\$@\"" \
                _ "$HOOK" "$RESCTRLFS" "$ns" "$root" "$(rel "$kind" "$root")" "$ub" "$ua" "$ub"
        check "$t: the namespace's run" [ $? -eq 0 ]
        cat "$ns/hook.log" >>"$LOG" 2>/dev/null
        cp "$ns/gc.out" "$OUT" 2>/dev/null
        check "$t: both createRuntimes" [ "$(tr '\n' ' ' <"$ns/create.rc")" = "0 0 " ]
        for u in "$ua" "$ub"; do
                read -r old old_start <"$ns/$u.old"
                read -r new new_start <"$ns/$u.new"
                check "$t: $u's init was in its group" [ "$(cat "$ns/$u.before")" = "$old " ]
                check "$t: $u's pid reused" [ "$new" = "$old" ]
                check "$t: by a later process" [ "$new_start" -gt "$old_start" ]
                check "$t: $u's member dropped as such" \
                        said "drop-member pod=$u container=c1 pid=$old reason=\"pid reused\""
                check "$t: $u's group removed" said "remove-group pod=$u ctrl=/"
                check "$t: $u's group gone" [ "$(cat "$ns/$u.after")" = gone ]
                check "$t: $u's state gone" [ ! -e "$ns/state/$u.members" ]
        done
        check "$t: gc" [ "$(cat "$ns/gc.rc")" = 0 ]
        read -r new _ <"$ns/$ua.new"
        check "$t: A's new process never moved" not grep -q "group of pod $ua .*held" "$LOG"
        check "$t: nor returned from a group" not grep -qw "$new" "$ns/root.tasks"
        read -r new _ <"$ns/$ub.new"
        check "$t: B's stranger said" grep -q \
                "group of pod $ub in the root control group held 1 tasks from outside the pod's cgroup" "$LOG"
        check "$t: and returned to the control group" grep -qw "$new" "$ns/root.tasks"
}
test_pid_reuse_v2() { test_pid_reuse v2; }
test_pid_reuse_v1() { test_pid_reuse v1; }

# As pid_reuse_in_ns, for one pod UID whose init is alive when gc starts,
# out of its group (a join is due), and dies while gc waits for the resctrl
# lock, which this process holds; its pid goes to a new process in
# ROOT/service (a host service) before the lock is let go. Then a second gc
# pass. Leaves in DIR: old, new (pid and start time), gc.rc (both passes'),
# gc.out, tasks (the group's tasks after the first pass), after (whether
# the group is there after the second), hook.log.
pid_reuse_in_wait_ns() { # HOOK RESCTRLFS DIR ROOT REL_ROOT UID
        local hook=$1 fs=$2 dir=$3 root=$4 rel=$5 u=$6 p q gc_pid cfg
        cfg=$dir/config.yaml
        mkdir -p "$dir/resctrl" "$root/kubepods/pod$u/c1" "$root/service" "$dir/bundle"
        "$fs" --no-fork-tracking "$dir/resctrl" || return 1
        printf 'resctrlPath: %s\nstateDir: %s\nrequireResctrlFs: false\nlockTimeoutMs: 10000\nlog: {level: debug, syslog: false, stderr: true}\n' \
                "$dir/resctrl" "$dir/state" >"$cfg"
        starttime() { cut -d')' -f2 "/proc/$1/stat" | cut -d' ' -f21; }
        printf '{"ociVersion":"1.2.0","linux":{"cgroupsPath":"%s/kubepods/pod%s/c1"}}\n' "$rel" "$u" \
                >"$dir/bundle/config.json"
        sleep 1000 >/dev/null 2>&1 &
        p=$!
        echo "$p" >"$root/kubepods/pod$u/c1/cgroup.procs"
        printf '{"ociVersion":"1.2.0","id":"c1","status":"creating","pid":%d,"bundle":"%s","annotations":{"io.kubernetes.pod.uid":"%s"}}' \
                "$p" "$dir/bundle" "$u" | "$hook" --config "$cfg" createRuntime 2>>"$dir/hook.log" || return 1
        echo "$p $(starttime "$p")" >"$dir/old"
        echo "$p" >"$dir/resctrl/tasks" # out of its group: gc would put it back
        exec 9<"$dir/resctrl"
        flock -x 9 || return 1
        "$hook" --config "$cfg" gc >"$dir/gc.out" 2>>"$dir/hook.log" 9<&- &
        gc_pid=$!
        # gc checked the member, and waits for the lock: a writer that waits
        # holds the turnstile, info/'s lock (docs/design.md, "Locking").
        wait_for "$WAIT_PROCESS" "gc waiting for the resctrl lock" lock_held "$dir/resctrl/info" || return 1
        kill "$p"
        wait "$p"
        rmdir "$root/kubepods/pod$u/c1" "$root/kubepods/pod$u"
        reuse_pid "$p" 9<&- # the new process keeps no fd open on the mount
        echo "$q" >"$root/service/cgroup.procs"
        echo "$q $(starttime "$q")" >"$dir/new"
        flock -u 9
        exec 9<&-
        wait "$gc_pid"
        echo $? >"$dir/gc.rc"
        tr '\n' ' ' <"$dir/resctrl/mon_groups/$u/tasks" >"$dir/tasks"
        "$hook" --config "$cfg" gc >>"$dir/gc.out" 2>>"$dir/hook.log"
        echo $? >>"$dir/gc.rc"
        if [ -d "$dir/resctrl/mon_groups/$u" ]; then echo there; else echo gone; fi >"$dir/after"
        kill "$q"
        wait "$q"
        rmdir "$root/service" && fusermount3 -u "$dir/resctrl"
}

# The issue's race: the member's init dies while gc waits for the resctrl
# lock, and a host service's new process takes its pid. gc, which checked
# the member before the wait, checks it again under the lock: the new
# process never goes into the group; the next pass drops the member and
# removes the group.
test_pid_reuse_in_wait() { # KIND
        local kind=$1 t="$1 pid reuse in the lock wait" root ns u old old_start new new_start
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        ns=$WORK/pidns-wait-$kind
        u=$(new_uid 7)
        mkdir -p "$ns"
        WAIT_PROCESS=$WAIT_PROCESS unshare -p -f --mount-proc --propagation private bash -c \
                "$(declare -f pid_reuse_in_wait_ns reuse_pid wait_for wait_for_clock lock_held lock_id); pid_reuse_in_wait_ns \"\$@\"" \
                _ "$HOOK" "$RESCTRLFS" "$ns" "$root" "$(rel "$kind" "$root")" "$u"
        check "$t: the namespace's run" [ $? -eq 0 ]
        cat "$ns/hook.log" >>"$LOG" 2>/dev/null
        cp "$ns/gc.out" "$OUT" 2>/dev/null
        read -r old old_start <"$ns/old"
        read -r new new_start <"$ns/new"
        check "$t: the pid reused" [ "$new" = "$old" ]
        check "$t: by a later process" [ "$new_start" -gt "$old_start" ]
        check "$t: both gc passes" [ "$(tr '\n' ' ' <"$ns/gc.rc")" = "0 0 " ]
        check "$t: the new process not put into the group" [ -z "$(cat "$ns/tasks")" ]
        check "$t: the member dropped as such" \
                said "drop-member pod=$u container=c1 pid=$old reason=\"pid reused\""
        check "$t: the group gone at the next pass" [ "$(cat "$ns/after")" = gone ]
        check "$t: the state gone" [ ! -e "$ns/state/$u.members" ]
}
test_pid_reuse_in_wait_v2() { test_pid_reuse_in_wait v2; }
test_pid_reuse_in_wait_v1() { test_pid_reuse_in_wait v1; }

# --- 8: gc as the DaemonSet's container runs it --------------------------------

# The hook with ARGS as the DaemonSet's container runs it: in cgroup CTR, in
# a cgroup namespace of its own rooted there, KIND's hierarchy mounted
# afresh (the namespace's subtree, as the runtime mounts it) and the node's
# tree bound read-only over it (the manifest's hostPath of /sys/fs/cgroup;
# read-write with DS_RW=1).
hook_as_daemonset() { # KIND CTR ARGS...
        local kind=$1 ctr=$2 h fresh ro=ro
        h=$(hierarchy "$kind")
        case $kind in
        v2) fresh="-t cgroup2 cgroup2" ;;
        v1) fresh="-t cgroup -o pids cgroup" ;;
        esac
        shift 2
        [ -z "${DS_RW:-}" ] || ro=rw
        mkdir -p "$WORK/node-cgroup"
        (
                in_cgroup "$ctr" "$BASHPID" &&
                        exec unshare -m -C --propagation private sh -c '
                                h=$1 node=$2 fresh=$3 ro=$4; shift 4
                                mount --bind "$h" "$node" && umount -l "$h" &&
                                        mount $fresh "$h" && mount --bind "$node" "$h" &&
                                        mount -o "remount,bind,$ro" "$h" && umount "$node" &&
                                        exec "$@"' \
                                _ "$h" "$WORK/node-cgroup" "$fresh" "$ro" "$HOOK" --config "$CONFIG" "$@"
        )
}

# A container started on the node (the hook recorded it there), then a
# process exec'd into it: gc in the DaemonSet's view joins that process, the
# pod's group lingers after the last poststop while the pod's pause runs and
# goes at the first pass after the pod's cgroup went; check's node-cgroups
# row passes there, and fails where only the namespace's own mount is seen.
test_daemonset_view() { # KIND
        local kind=$1 t="$1 DaemonSet's view" root uid id pod cg ds g p0 p1 p2 rc
        root=$(private_cgroup "$kind") || { echo "no $kind hierarchy mounted: nothing to test"; return; }
        mount_emulator
        write_config
        uid=$(new_uid 8) id=$(container_id)
        pod=$root/kubepods/burstable/pod$uid cg=$pod/$id g=$MNT/mon_groups/$uid
        ds=$root/kubepods/besteffort/pod-ds/ctr
        mkdir -p "$pod/sandbox" "$cg" "$ds"
        sleeper p0 p1 p2
        in_cgroup "$pod/sandbox" "$p0"
        in_cgroup "$cg" "$p1"
        check "$t: createRuntime" launch "$id" "$p1" "$uid" "$(rel "$kind" "$cg")"
        in_cgroup "$cg" "$p2"
        : >"$LOG"
        hook_as_daemonset "$kind" "$ds" gc >"$OUT" 2>>"$LOG"
        check "$t: gc runs" [ $? -eq 0 ]
        check "$t: joins the exec'd process" said "join-tasks pod=$uid container=$id count=1 elsewhere=0"
        check "$t: it is in the group" has_task "$g" "$p2"
        check "$t: the pause is not" not has_task "$g" "$p0"
        check "$t: gc logs no error" not grep -Eq "cannot|Bad message" "$LOG"
        hook_as_daemonset "$kind" "$ds" check --only node-cgroups >"$WORK/check.txt" 2>>"$LOG"
        check "$t: check sees the node's cgroups" [ $? -eq 0 ]
        check "$t: and says which" grep -q "^ok .*node-cgroups .*gc sees the unified, pids hierarchies" "$WORK/check.txt"
        # v2: where runtimes give containers a cgroup namespace of their own,
        # so that check can tell the node's tree from the container's.
        if [ "$kind" = v2 ]; then
                DS_RW=1 hook_as_daemonset "$kind" "$ds" check --only node-cgroups >"$WORK/check.txt" 2>>"$LOG"
                rc=$?
                check "$t: the node's tree read-write: check fails" [ "$rc" -eq 1 ]
                check "$t: saying so" grep -q "^fail .*node-cgroups .*mounted read-write here" "$WORK/check.txt"
                hook_in_cgroupns "$ds" check --only node-cgroups >"$WORK/check.txt" 2>>"$LOG"
                rc=$?
                check "$t: only its own namespace's mount: check fails" [ "$rc" -eq 1 ]
                check "$t: saying so" grep -q "^fail .*node-cgroups .*seen only from" "$WORK/check.txt"
        fi
        stop "$p1"
        stop "$p2"
        check "$t: poststop" poststop "$id" "$uid"
        hook_as_daemonset "$kind" "$ds" gc >"$OUT" 2>>"$LOG"
        check "$t: the group lingers for the pause" said "linger-group pod=$uid ctrl=/ reason=\"pod cgroup\""
        check "$t: it is there" test -d "$g"
        stop "$p0"
        remove_cgroup_tree "$pod"
        hook_as_daemonset "$kind" "$ds" gc >"$OUT" 2>>"$LOG"
        check "$t: removed once the pod's cgroup went" said "remove-group pod=$uid ctrl=/"
        check "$t: no state left" no_state "$uid"
}
# --- 9: the runtime roots adopt reads -----------------------------------------

# check's runtime-roots row where kubelet's pods run (a kubepods cgroup in
# the run's private root): content with a root that holds a container's
# record; failing with roots there but empty (what a DaemonSet's hostPaths
# make of a runtime's root it does not use), with records whose bundles are
# not there (a DaemonSet without the bundles' mounts), with a symlink, and
# with a root another user may write.
roots_check() { # ROOTS
        runtime_roots=$1 write_config
        "$HOOK" --config "$CONFIG" check --only runtime-roots >"$WORK/check.txt" 2>>"$LOG"
}
test_runtime_roots() {
        local root empty=$WORK/roots/empty other=$WORK/roots/other
        root=$(private_cgroup any) || { echo "no cgroup hierarchy mounted: nothing to test"; return; }
        mkdir -p "$root/kubepods" "$empty" "$other"
        ln -s "$runtime_roots" "$WORK/roots/link"
        chown 65534 "$other"
        check "roots: one holding a container" roots_check "$runtime_roots,$empty"
        check "roots: says how many each holds" grep -q \
                "^ok .*runtime-roots .*adopt reads $runtime_roots (1 containers, 1 readable), $empty (0 containers, 0 readable)$" "$WORK/check.txt"
        mkdir -p "$WORK/roots/nobundle/c1"
        sed "s|$WORK/runtime-bundle|$WORK/roots/gone|" "$runtime_roots/c0/state.json" >"$WORK/roots/nobundle/c1/state.json"
        check "roots: records whose bundles are not here fail" not roots_check "$WORK/roots/nobundle,$empty"
        check "roots: saying so" grep -q \
                "^fail .*runtime-roots .*no container record here is one adopt can read, with its bundle ($WORK/roots/nobundle (1 containers, 0 readable)" "$WORK/check.txt"
        check "roots: all empty, kubelet's pods running: fails" not roots_check "$empty"
        check "roots: saying so" grep -q "^fail .*runtime-roots .*kubelet's pods run, but no runtime root here holds a container" "$WORK/check.txt"
        check "roots: a symlink fails" not roots_check "$runtime_roots,$WORK/roots/link"
        check "roots: saying so" grep -q "^fail .*runtime-roots .*'$WORK/roots/link' is a symlink" "$WORK/check.txt"
        check "roots: not root's own fails" not roots_check "$runtime_roots,$other"
        check "roots: saying so" grep -q "^fail .*runtime-roots .*'$other' is not root's own directory" "$WORK/check.txt"
        rmdir "$root/kubepods"
        rm -rf "$WORK/roots"
        write_config
}

test_daemonset_view_v2() { test_daemonset_view v2; }
test_daemonset_view_v1() { test_daemonset_view v1; }

for t in ${TESTS:-test_static_pod_systemd_v2 test_static_pod_systemd_v1 \
        test_static_pod_cgroupfs_v2 test_static_pod_cgroupfs_v1 test_cgroup_root_v2 test_cgroup_root_v1 \
        test_shared_daemon_cgroup test_other_monitor_v2 test_other_monitor_v1 \
        test_sub_cgroups_v2 test_sub_cgroups_v1 \
        test_unseen_unmounted_v2 test_unseen_unmounted_v1 test_unseen_cgroupns_v2 \
        test_pid_reuse_v2 test_pid_reuse_v1 test_pid_reuse_in_wait_v2 test_pid_reuse_in_wait_v1 \
        test_daemonset_view_v2 test_daemonset_view_v1 \
        test_runtime_roots}; do
        : >"$LOG"
        echo "== $t"
        $t
done

harness_done
