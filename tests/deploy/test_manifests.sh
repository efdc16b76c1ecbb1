#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# deploy/ checked statically (no cluster, no registry here):
#   test_manifests.sh SOURCE_DIR BUILD_DIR YAMLFLAT
# Every manifest parses; the DaemonSet's pod is least-privilege with hostPID and
# exactly its hostPaths: four it writes (install directory, hooks.d, state,
# resctrl) and, read-only at the node's paths, those gc and adopt read (the
# cgroup tree, the runtime roots of the default config, the bundles), none
# holding a runtime's API socket; its paths agree with the entrypoint, the sample
# config, the Containerfile and the layout `cmake --install` makes; the
# Containerfile copies only files that exist and takes its base images as
# build arguments defaulting to Debian's public ones; the containerd examples name the
# installed hook; watch serves /metrics on the node's IP (downward API) at the
# port named metrics, watch's default, which the liveness probe asks for
# /healthz and a headless Service names; the base and every overlay render
# with kubectl kustomize, each overlay doing what it is for (the
# prometheus-operator one adds a PodMonitor of those pods and that port,
# whose job the alert rules name, and nothing else); cmake --install renames the binary into
# place and links /usr/sbin/resctrl-mon-hook to it.
set -u
top=$1
build=$2
yamlflat=$3

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rmh-deploy.XXXXXX") || fail "mktemp"

# val FLAT KEY: the value of KEY (empty if none).
val() {
        sed -n "s|^$2=||p" "$1" | head -n 1
}

# expect FLAT KEY VALUE
expect() {
        [ "$(val "$1" "$2")" = "$3" ] || fail "$(basename "$1" .flat): $2 is '$(val "$1" "$2")', not '$3'"
}

echo "-- every manifest parses"
for f in $(cd "$top" && find deploy -name '*.yaml' -o -name '*.json' | sort); do
        out=$tmp/$(echo "$f" | tr / _).flat
        "$yamlflat" "$top/$f" >"$out" || fail "$f does not parse"
        [ -s "$out" ] || fail "$f is empty"
done

echo "-- the install layout (cmake --install --prefix /usr)"
DESTDIR=$tmp/root cmake --install "$build" --prefix /usr >/dev/null || fail "cmake --install"
layout_bin=/usr/libexec/resctrl-mon-hook/resctrl-mon-hook
layout_hooks=/usr/share/containers/oci/hooks.d
[ -x "$tmp/root$layout_bin" ] || fail "cmake does not install $layout_bin"
[ "$(readlink -f "$tmp/root/usr/sbin/resctrl-mon-hook")" = "$(readlink -f "$tmp/root$layout_bin")" ] ||
        fail "/usr/sbin/resctrl-mon-hook does not lead to $layout_bin"
[ "$(readlink "$tmp/root/usr/sbin/resctrl-mon-hook")" = ../libexec/resctrl-mon-hook/resctrl-mon-hook ] ||
        fail "/usr/sbin/resctrl-mon-hook is not a relative link"
# An upgrade over an installed binary: a new file renamed over it, never the
# old one truncated or removed while a runtime may exec it.
command -v strace >/dev/null 2>&1 || fail "strace is not installed (scripts/install-deps.sh)"
DESTDIR=$tmp/root strace -f -qq -e trace=openat,unlink,unlinkat,rename,renameat,renameat2 \
        -o "$tmp/install.trace" cmake --install "$build" --prefix /usr >/dev/null ||
        fail "cmake --install over an install"
! grep -E "(openat|unlink|unlinkat)\(.*\"$tmp/root$layout_bin\"" "$tmp/install.trace" ||
        fail "cmake --install writes or removes $layout_bin in place"
grep -qE "rename[a-z0-9]*\(.*\"$tmp/root$layout_bin\".*= 0$" "$tmp/install.trace" ||
        fail "cmake --install does not rename the new binary into place"
[ -n "$(ls "$tmp/root$layout_hooks"/*.json 2>/dev/null)" ] || fail "cmake installs no $layout_hooks/*.json"
state_dir=$(sed -n 's|^#stateDir: ||p' "$top/config/config.yaml")
resctrl=$(sed -n 's|^#resctrlPath: ||p' "$top/config/config.yaml")
[ -n "$state_dir" ] && [ -n "$resctrl" ] || fail "no stateDir or resctrlPath default in config/config.yaml"
# adopt's default runtimeRoots, one a line.
runtime_roots=$(sed -n 's|^#runtimeRoots: \[\(.*\)\]$|\1|p' "$top/config/config.yaml" | tr -d ' ' | tr , '\n')
[ -n "$runtime_roots" ] || fail "no runtimeRoots default in config/config.yaml"
# The bundles those roots' records name: containerd's runc shim's (kubelet's
# namespace, k8s.io, as its runtime root) and CRI-O's.
bundle_dirs="/run/containerd/io.containerd.runtime.v2.task/k8s.io
/run/containers/storage/overlay-containers"

echo "-- the DaemonSet"
ds=$tmp/deploy_base_daemonset.yaml.flat
doc=$(sed -n 's|^\([0-9]*\)\.kind=DaemonSet$|\1|p' "$ds")
[ -n "$doc" ] || fail "no DaemonSet in deploy/base/daemonset.yaml"
grep "^$doc\.spec\.template\.spec\." "$ds" | sed "s|^$doc\.spec\.template\.spec\.||" >"$tmp/pod"
pod=$tmp/pod
expect "$pod" hostPID true
# watch's process events: the proc connector is only in the host's network namespace.
expect "$pod" hostNetwork true
expect "$pod" automountServiceAccountToken false
[ "$(val "$pod" hostIPC)" != true ] || fail "the pod sets hostIPC"
! grep -q 'privileged=true' "$pod" || fail "the pod is privileged"
! grep -q '^initContainers\.' "$pod" || fail "unexpected init containers"
! grep -q '^containers\.1\.' "$pod" || fail "more than one container"
c=containers.0
expect "$pod" "$c.securityContext.privileged" false
expect "$pod" "$c.securityContext.allowPrivilegeEscalation" false
expect "$pod" "$c.securityContext.readOnlyRootFilesystem" true
expect "$pod" "$c.securityContext.capabilities.drop.0" ALL
# Two capabilities back: resctrl's mon_groups/ is 0555 (a kernfs root's
# mode), so that mkdir and rmdir of a pod's group there take
# CAP_DAC_OVERRIDE; before Linux 6.6 the proc connector takes watch's
# subscription only with CAP_NET_ADMIN.
[ "$(grep "^$c\.securityContext\.capabilities\.add\." "$pod" | tr '\n' ' ')" = \
        "$c.securityContext.capabilities.add.0=DAC_OVERRIDE $c.securityContext.capabilities.add.1=NET_ADMIN " ] ||
        fail "the container adds capabilities [$(sed -n "s|^$c\.securityContext\.capabilities\.add\.[0-9]*=||p" "$pod" | tr '\n' ' ')], not DAC_OVERRIDE and NET_ADMIN alone"

# Every volume is a hostPath or the ConfigMap; the hostPaths are exactly these.
env() {
        i=$(sed -n "s|^$c\.env\.\([0-9]*\)\.name=$1$|\1|p" "$pod")
        [ -n "$i" ] || fail "the container does not set $1"
        val "$pod" "$c.env.$i.value"
}
node_dir=$(env RMH_NODE_DIR)
want=$(printf '%s\n' "$node_dir" "$layout_hooks" "$state_dir" "$resctrl" /sys/fs/cgroup \
        "$runtime_roots" "$bundle_dirs" | sort)
have=$(sed -n 's|^volumes\.[0-9]*\.hostPath\.path=||p' "$pod" | sort)
[ "$have" = "$want" ] || fail "hostPaths are [$(echo $have)], expected [$(echo $want)]"
for i in $(sed -n 's|^volumes\.\([0-9]*\)\.name=.*|\1|p' "$pod"); do
        grep -q "^volumes\.$i\.\(hostPath\.path\|configMap\.name\)=" "$pod" ||
                fail "volume $(val "$pod" "volumes.$i.name") is neither a hostPath nor the ConfigMap"
done

# mount_of HOSTPATH: where the container mounts the volume of that hostPath.
mount_of() {
        i=$(grep "^volumes\.[0-9]*\.hostPath\.path=$1$" "$pod" | cut -d. -f2)
        name=$(val "$pod" "volumes.$i.name")
        j=$(sed -n "s|^$c\.volumeMounts\.\([0-9]*\)\.name=$name$|\1|p" "$pod")
        [ -n "$j" ] || fail "the hostPath $1 is not mounted"
        [ "$(val "$pod" "$c.volumeMounts.$j.readOnly")" != true ] || fail "$1 is mounted read-only"
        val "$pod" "$c.volumeMounts.$j.mountPath"
}
# ro_mount_of HOSTPATH: the volume of that hostPath must be mounted read-only
# at the node's path, the mounts below it too where the node can
# (recursiveReadOnly, which takes mountPropagation None).
ro_mount_of() {
        i=$(grep "^volumes\.[0-9]*\.hostPath\.path=$1$" "$pod" | cut -d. -f2)
        name=$(val "$pod" "volumes.$i.name")
        j=$(sed -n "s|^$c\.volumeMounts\.\([0-9]*\)\.name=$name$|\1|p" "$pod")
        [ -n "$j" ] || fail "the hostPath $1 is not mounted"
        [ "$(echo "$j" | wc -l)" -eq 1 ] || fail "the hostPath $1 is mounted more than once"
        [ "$(val "$pod" "$c.volumeMounts.$j.readOnly")" = true ] || fail "$1 is not mounted read-only"
        case $(val "$pod" "$c.volumeMounts.$j.recursiveReadOnly") in
        IfPossible | Enabled) ;;
        *) fail "$1 is not mounted recursiveReadOnly (IfPossible or Enabled): the mounts below it would be writable" ;;
        esac
        [ "$(val "$pod" "$c.volumeMounts.$j.mountPath")" = "$1" ] || fail "$1 is not mounted at its own path"
        case $(val "$pod" "$c.volumeMounts.$j.mountPropagation") in
        '' | None) ;;
        *) fail "$1 is mounted with mountPropagation $(val "$pod" "$c.volumeMounts.$j.mountPropagation"), which recursiveReadOnly forbids" ;;
        esac
        ! grep -q "^$c\.volumeMounts\.$j\.subPath" "$pod" || fail "$1 is mounted with a subPath"
}
# gc reads the node's cgroup tree; adopt the runtime roots of the hook's
# default config, at their paths, and the bundles their records name.
ro_mount_of /sys/fs/cgroup
for r in $runtime_roots; do ro_mount_of "$r"; done
for b in $bundle_dirs; do ro_mount_of "$b"; done
# No hostPath reaches a runtime's API socket: a pod that could would command the runtime.
for h in $(sed -n 's|^volumes\.[0-9]*\.hostPath\.path=||p' "$pod"); do
        for sock in /run/containerd/containerd.sock /run/containerd/containerd.sock.ttrpc \
                /run/containerd/s/x /run/crio/crio.sock /run/docker.sock /run/podman/podman.sock \
                /run/nri/nri.sock /run/dbus/system_bus_socket /run/systemd/private; do
                case $sock in "$h" | "$h"/*) fail "the hostPath $h holds $sock, a runtime's API socket" ;; esac
        done
        case $h in /var/run | /var/run/*) fail "the hostPath $h: name /run's path, as the runtimes write it" ;; esac
done
[ "$(mount_of "$node_dir")" = "$(env RMH_INSTALL_DIR)" ] || fail "RMH_INSTALL_DIR is not where $node_dir is mounted"
[ "$(mount_of "$layout_hooks")" = "$(env RMH_HOOKS_DIR)" ] || fail "RMH_HOOKS_DIR is not where $layout_hooks is mounted"
# gc reads stateDir and resctrlPath from the config: they must be at the node's paths.
[ "$(mount_of "$state_dir")" = "$state_dir" ] || fail "$state_dir is not mounted at its own path"
[ "$(mount_of "$resctrl")" = "$resctrl" ] || fail "$resctrl is not mounted at its own path"
[ "$(env RMH_STATE_DIR)" = "$state_dir" ] || fail "RMH_STATE_DIR is not $state_dir"
cfg_vol=$(sed -n 's|^volumes\.\([0-9]*\)\.configMap\.name=.*|\1|p' "$pod")
cfg_name=$(val "$pod" "volumes.$cfg_vol.name")
j=$(sed -n "s|^$c\.volumeMounts\.\([0-9]*\)\.name=$cfg_name$|\1|p" "$pod")
cfg_key=$(basename "$(env RMH_CONFIG)")
[ "$(val "$pod" "$c.volumeMounts.$j.mountPath")/$cfg_key" = "$(env RMH_CONFIG)" ] ||
        fail "RMH_CONFIG is not in the ConfigMap's mount"

# The ConfigMap's config keeps the hostPaths, and the hook's parser accepts it.
cm_doc=$(sed -n 's|^\([0-9]*\)\.kind=ConfigMap$|\1|p' "$ds")
[ "$(val "$ds" "$cm_doc.metadata.name")" = "$(val "$pod" "volumes.$cfg_vol.configMap.name")" ] ||
        fail "the DaemonSet mounts another ConfigMap than deploy/base/daemonset.yaml defines"
printf '%b' "$(val "$ds" "$cm_doc.data.$cfg_key")" >"$tmp/config.yaml"
"$yamlflat" "$tmp/config.yaml" >"$tmp/config.flat" || fail "the ConfigMap's config does not parse"
v=$(val "$tmp/config.flat" 0.stateDir)
[ -z "$v" ] || [ "$v" = "$state_dir" ] || fail "the ConfigMap sets stateDir to $v, not the hostPath"
v=$(val "$tmp/config.flat" 0.resctrlPath)
[ -z "$v" ] || [ "$v" = "$resctrl" ] || fail "the ConfigMap sets resctrlPath to $v, not the hostPath"
! grep -q '^0\.runtimeRoots' "$tmp/config.flat" ||
        fail "the ConfigMap sets runtimeRoots: the mounts are the default's"
# The probe runs check: more than the default second on a throttled node.
[ "$(val "$pod" "$c.readinessProbe.timeoutSeconds")" -ge 5 ] 2>/dev/null ||
        fail "the readiness probe's timeoutSeconds is '$(val "$pod" "$c.readinessProbe.timeoutSeconds")', not 5 or more"
# Not a pod's container: the hook loads the config, then exits without a word.
echo '{"ociVersion": "1.0.2", "id": "x", "status": "creating", "pid": 1, "bundle": "/",
  "annotations": {}}' | "$build/hook/resctrl-mon-hook" --config "$tmp/config.yaml" \
        createRuntime 2>"$tmp/hook.err" || fail "the hook fails with the ConfigMap's config"
[ ! -s "$tmp/hook.err" ] || fail "the hook complains about the ConfigMap's config: $(cat "$tmp/hook.err")"

# Admission, scheduling, rollout and readiness.
ns_doc=$(sed -n 's|^\([0-9]*\)\.kind=Namespace$|\1|p' "$ds")
[ -n "$ns_doc" ] || fail "no Namespace in deploy/base/daemonset.yaml"
expect "$ds" "$ns_doc.metadata.labels.pod-security.kubernetes.io/enforce" privileged
expect "$ds" "$doc.metadata.namespace" "$(val "$ds" "$ns_doc.metadata.name")"
expect "$pod" priorityClassName system-node-critical
expect "$ds" "$doc.spec.updateStrategy.rollingUpdate.maxSurge" 0
terms=affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.0
for want in "kubernetes.io/os In linux" "kubernetes.io/arch In amd64" \
        "feature.node.kubernetes.io/cpu-rdt.RDTMON In true"; do
        found=""
        for i in $(sed -n "s|^$terms\.matchExpressions\.\([0-9]*\)\.key=.*|\1|p" "$pod"); do
                e=$terms.matchExpressions.$i
                [ "$(val "$pod" "$e.key") $(val "$pod" "$e.operator") $(val "$pod" "$e.values.0")" = \
                        "$want" ] && found=yes
        done
        [ -n "$found" ] || fail "the node affinity does not require $want"
done
for r in requests.cpu requests.memory limits.cpu limits.memory; do
        [ -n "$(val "$pod" "$c.resources.$r")" ] || fail "the container sets no resources.$r"
done
expect "$pod" "$c.readinessProbe.exec.command.0" "$(val "$pod" "$c.command.0")"
expect "$pod" "$c.readinessProbe.exec.command.1" ready
case $(val "$pod" "$c.image") in
*/*/* | *.*/* | localhost/*) ;;
*) fail "the image $(val "$pod" "$c.image") names no registry (short names resolve differently per runtime)" ;;
esac

# The entrypoint's defaults are the manifest's values, so the image alone agrees.
for k in RMH_NODE_DIR RMH_INSTALL_DIR RMH_HOOKS_DIR RMH_STATE_DIR RMH_CONFIG RMH_GC_INTERVAL \
        RMH_RETRY_SECONDS RMH_METRICS_PORT; do
        grep -qF "\${$k:-$(env $k)}" "$top/deploy/entrypoint.sh" ||
                fail "deploy/entrypoint.sh does not default $k to $(env $k)"
done

echo "-- watch's /metrics: the port, the node's IP, the probes, the Service"
# watch serves on the node's IP (downward API) at the port named metrics,
# which the entrypoint's RMH_METRICS_PORT says, and is the default of watch.
i=$(sed -n "s|^$c\.env\.\([0-9]*\)\.name=HOST_IP$|\1|p" "$pod")
[ -n "$i" ] || fail "the container does not set HOST_IP"
expect "$pod" "$c.env.$i.valueFrom.fieldRef.fieldPath" status.hostIP
! grep -q "^$c\.env\.[0-9]*\.name=RMH_METRICS_LISTEN$" "$pod" ||
        fail "the container sets RMH_METRICS_LISTEN: the entrypoint makes it of HOST_IP and RMH_METRICS_PORT"
p=$(sed -n "s|^$c\.ports\.\([0-9]*\)\.name=metrics$|\1|p" "$pod")
[ -n "$p" ] || fail "the container has no port named metrics"
[ "$(grep -c "^$c\.ports\.[0-9]*\.name=" "$pod")" -eq 1 ] || fail "the container has more ports than metrics"
metrics_port=$(val "$pod" "$c.ports.$p.containerPort")
[ "$metrics_port" = "$(env RMH_METRICS_PORT)" ] ||
        fail "the port named metrics is $metrics_port, RMH_METRICS_PORT $(env RMH_METRICS_PORT)"
expect "$pod" "$c.ports.$p.protocol" TCP
# hostNetwork: the container's port is the node's; a hostPort, if any, must be the same.
[ -z "$(val "$pod" "$c.ports.$p.hostPort")" ] || expect "$pod" "$c.ports.$p.hostPort" "$metrics_port"
default_port=$(sed -n 's|^set(METRICS_DEFAULT_PORT \([0-9]*\))$|\1|p' "$top/CMakeLists.txt")
[ "$metrics_port" = "$default_port" ] || fail "the metrics port is $metrics_port, watch's default $default_port"
# The liveness probe asks watch's /healthz at that port; readiness stays
# the entrypoint's (working), and is the startup probe too, so that the
# wait for the node is no failed liveness.
expect "$pod" "$c.livenessProbe.httpGet.path" /healthz
case $(val "$pod" "$c.livenessProbe.httpGet.port") in
metrics | "$metrics_port") ;;
*) fail "the liveness probe asks port $(val "$pod" "$c.livenessProbe.httpGet.port"), not metrics" ;;
esac
case $(val "$pod" "$c.livenessProbe.httpGet.scheme") in '' | HTTP) ;; *) fail "the liveness probe is not HTTP, as watch serves without RMH_WEB_CONFIG" ;; esac
# At 127.0.0.1, where watch listens beside the node's IP for the node's own
# clients (no flood from elsewhere takes its connections; no password).
expect "$pod" "$c.livenessProbe.httpGet.host" 127.0.0.1
[ "$(val "$pod" "$c.livenessProbe.timeoutSeconds")" -ge 5 ] 2>/dev/null ||
        fail "the liveness probe's timeoutSeconds is '$(val "$pod" "$c.livenessProbe.timeoutSeconds")', not 5 or more"
[ "$(grep "^$c\.startupProbe\.exec\.command\." "$pod" | sed 's|^[^=]*\.command\.||')" = \
        "$(grep "^$c\.readinessProbe\.exec\.command\." "$pod" | sed 's|^[^=]*\.command\.||')" ] ||
        fail "the startup probe is not the readiness probe's command"
[ "$(val "$pod" "$c.startupProbe.failureThreshold")" -ge 360 ] 2>/dev/null ||
        fail "the startup probe gives the wait for the node less than 360 tries"
# A headless Service of the pods' metrics port, for discovery without the operator.
svc=$(sed -n 's|^\([0-9]*\)\.kind=Service$|\1|p' "$ds")
[ -n "$svc" ] || fail "no Service in deploy/base/daemonset.yaml"
expect "$ds" "$svc.metadata.namespace" "$(val "$ds" "$doc.metadata.namespace")"
expect "$ds" "$svc.spec.clusterIP" None
[ "$(sed -n "s|^$svc\.spec\.selector\.||p" "$ds")" = "$(sed -n "s|^$doc\.spec\.template\.metadata\.labels\.||p" "$ds")" ] ||
        fail "the Service's selector is not the pods' labels"
expect "$ds" "$svc.spec.ports.0.name" metrics
expect "$ds" "$svc.spec.ports.0.port" "$metrics_port"
case $(val "$ds" "$svc.spec.ports.0.targetPort") in metrics | "$metrics_port") ;; *) fail "the Service's targetPort is not metrics" ;; esac
! grep -q '^[0-9]*\.apiVersion=monitoring\.coreos\.com/' "$ds" || fail "the base needs the Prometheus operator's CRDs"
# The job ResctrlWatchNotRunning names, as the PodMonitor must make it.
rules_job=$(sed -n 's|.*up{job="\([^"]*\)"}.*|\1|p' "$top/deploy/prometheus/resctrl-mon-hook.rules.yaml")
[ -n "$rules_job" ] || fail "no up{job=...} in deploy/prometheus/resctrl-mon-hook.rules.yaml"

echo "-- the Containerfile"
cf=$top/deploy/Containerfile
cmd=$(val "$pod" "$c.command.0")
grep -qx "ENTRYPOINT \[\"$cmd\"\]" "$cf" || fail "the DaemonSet's command $cmd is not the image's ENTRYPOINT"
grep '^COPY ' "$cf" >"$tmp/copies" || fail "no COPY in the Containerfile"
dests=""
while read -r _ a b d; do
        case $a in
        --from=build)
                # /out: the container's build; /out-node: the node's, static.
                case $b in /out/* | /out-node/*) ;; *) fail "COPY --from=build of $b, not of an install in /out or /out-node" ;; esac
                [ -e "$tmp/root/${b#/out*/}" ] ||
                        fail "the Containerfile copies $b, which cmake --install does not make"
                ;;
        --*) fail "unexpected COPY option $a" ;;
        *)
                d=$b
                [ -e "$top/$a" ] || fail "the Containerfile copies $a, which does not exist"
                ;;
        esac
        dests="$dests $d"
done <"$tmp/copies"
grep -q '^COPY deploy/entrypoint.sh '"$cmd"'$' "$tmp/copies" || fail "$cmd is not deploy/entrypoint.sh"
grep -q "^COPY --from=build /out$layout_bin $(sed -n 's|^bin=${RMH_BIN:-\(.*\)}$|\1|p' "$top/deploy/entrypoint.sh")\$" \
        "$tmp/copies" || fail "the image's hook is not where the entrypoint's RMH_BIN says"
grep -q "^COPY hooks.d/resctrl-mon-hook.json.in $(sed -n 's|^template=${RMH_TEMPLATE:-\(.*\)}$|\1|p' "$top/deploy/entrypoint.sh")\$" \
        "$tmp/copies" || fail "the image's template is not where the entrypoint's RMH_TEMPLATE says"
# The node's copy, where the entrypoint's RMH_NODE_BIN (the image's ENV) says,
# is the static build's.
node_bin=$(sed -n 's|^ENV RMH_NODE_BIN=||p' "$cf")
[ -n "$node_bin" ] || fail "the Containerfile sets no RMH_NODE_BIN"
grep -q "^COPY --from=build /out-node$layout_bin $node_bin\$" "$tmp/copies" ||
        fail "the node's hook is not copied to RMH_NODE_BIN ($node_bin) from /out-node"
grep -q -- '-B /build-node -DSTATIC=ON' "$cf" && grep -q 'DESTDIR=/out-node cmake --install /build-node' "$cf" ||
        fail "the node's hook (/out-node) is not linked statically"
grep -q 'install_file "$node_bin" ' "$top/deploy/entrypoint.sh" ||
        fail "the entrypoint does not install RMH_NODE_BIN onto the node"
# Both base images are build arguments (local bases build without a
# registry), defaulting to Debian 12's public images.
[ "$(grep '^FROM ' "$cf")" = "$(printf '%s\n' 'FROM ${BUILD_IMAGE} AS build' 'FROM ${RUNTIME_IMAGE}')" ] ||
        fail "the Containerfile's FROM lines are not FROM \${BUILD_IMAGE} AS build, FROM \${RUNTIME_IMAGE}: $(grep '^FROM ' "$cf" | tr '\n' ' ')"
grep -qx 'ARG BUILD_IMAGE=docker.io/library/debian:12' "$cf" ||
        fail "BUILD_IMAGE does not default to docker.io/library/debian:12"
grep -qx 'ARG RUNTIME_IMAGE=docker.io/library/debian:12-slim' "$cf" ||
        fail "RUNTIME_IMAGE does not default to docker.io/library/debian:12-slim"
grep -q -- '-DCMAKE_INSTALL_PREFIX=/usr' "$cf" || fail "the image does not install with prefix /usr"
for p in build obj-; do
        grep -q "^$p" "$top/.dockerignore" || fail ".dockerignore does not exclude $p"
done

echo "-- containerd: base_runtime_spec hooks and NRI's hook-injector"
spec=$tmp/deploy_containerd_base-runtime-spec-hooks.json.flat
for stage in createRuntime poststop; do
        expect "$spec" "0.hooks.$stage.0.path" "$layout_bin"
        expect "$spec" "0.hooks.$stage.0.args.1" "$stage"
done

echo "-- kustomize: the base and every overlay render offline"
command -v kubectl >/dev/null 2>&1 || fail "kubectl is not installed (scripts/install-deps.sh)"
# render DIR: kubectl kustomize's output, flattened, in $tmp/<name>.rendered
render() {
        out=$tmp/$(echo "$1" | tr / _).rendered
        kubectl kustomize "$top/$1" >"$out.yaml" 2>"$out.err" ||
                fail "kubectl kustomize $1: $(cat "$out.err")"
        "$yamlflat" "$out.yaml" >"$out" || fail "the rendering of $1 does not parse"
}
# doc_of FLAT KIND NAME: the document index of that object.
doc_of() {
        for d in $(sed -n "s|^\([0-9]*\)\.kind=$2\$|\1|p" "$1"); do
                [ "$(val "$1" "$d.metadata.name")" = "$3" ] && { echo "$d"; return; }
        done
        fail "$(basename "$1"): no $2 $3"
}
# hostpath_mount FLAT DOC VOLUME_PATH: where the first container mounts that hostPath.
hostpath_mount() {
        i=$(sed -n "s|^$2\.spec\.template\.spec\.volumes\.\([0-9]*\)\.hostPath\.path=$3\$|\1|p" "$1")
        [ -n "$i" ] || fail "$(basename "$1"): no hostPath $3"
        n=$(val "$1" "$2.spec.template.spec.volumes.$i.name")
        j=$(sed -n "s|^$2\.spec\.template\.spec\.containers\.0\.volumeMounts\.\([0-9]*\)\.name=$n\$|\1|p" "$1")
        [ -n "$j" ] || fail "$(basename "$1"): the hostPath $3 is not mounted"
        val "$1" "$2.spec.template.spec.containers.0.volumeMounts.$j.mountPath"
}
for dir in deploy/base $(cd "$top" && ls -d deploy/overlays/*); do
        render "$dir"
        d=$(doc_of "$out" DaemonSet resctrl-mon-hook)
        expect "$out" "$d.spec.template.spec.hostPID" true
        expect "$out" "$d.spec.updateStrategy.rollingUpdate.maxSurge" 0
        n=$(doc_of "$out" Namespace resctrl-mon-hook)
        expect "$out" "$n.metadata.labels.pod-security.kubernetes.io/enforce" privileged
done
render deploy/overlays/cri-o-etc
d=$(doc_of "$out" DaemonSet resctrl-mon-hook)
[ "$(hostpath_mount "$out" "$d" /etc/containers/oci/hooks.d)" = "$(env RMH_HOOKS_DIR)" ] ||
        fail "cri-o-etc does not register the hook in /etc/containers/oci/hooks.d"
render deploy/overlays/prometheus-operator
d=$(doc_of "$out" DaemonSet resctrl-mon-hook)
pm=$(doc_of "$out" PodMonitor resctrl-mon-hook)
expect "$out" "$pm.apiVersion" monitoring.coreos.com/v1
expect "$out" "$pm.metadata.namespace" "$(val "$out" "$d.metadata.namespace")"
# It selects the DaemonSet's pods: each of its labels is theirs, in their namespace.
[ -n "$(sed -n "s|^$pm\.spec\.selector\.matchLabels\.||p" "$out")" ] || fail "the PodMonitor selects no labels"
! grep -q "^$pm\.spec\.selector\.matchExpressions" "$out" || fail "the PodMonitor has matchExpressions, which the test does not check"
sed -n "s|^$pm\.spec\.selector\.matchLabels\.||p" "$out" | while IFS= read -r l; do
        grep -qxF "$d.spec.template.metadata.labels.$l" "$out" || fail "the PodMonitor selects $l, which the DaemonSet's pods do not have"
done || exit 1
[ "$(sed -n "s|^$pm\.spec\.namespaceSelector\.matchNames\.[0-9]*=||p" "$out")" = "$(val "$out" "$d.metadata.namespace")" ] ||
        fail "the PodMonitor does not look in the DaemonSet's namespace alone"
expect "$out" "$pm.spec.podMetricsEndpoints.0.port" metrics
expect "$out" "$pm.spec.podMetricsEndpoints.0.path" /metrics
! grep -q "^$pm\.spec\.podMetricsEndpoints\.1\." "$out" || fail "the PodMonitor has more than one endpoint"
# Its job is the one the alert rule names: the value of the pods' label jobLabel.
jl=$(val "$out" "$pm.spec.jobLabel")
[ -n "$jl" ] && [ "$(val "$out" "$d.spec.template.metadata.labels.$jl")" = "$rules_job" ] ||
        fail "the PodMonitor's job (the pods' label '$jl': '$(val "$out" "$d.spec.template.metadata.labels.$jl")') is not $rules_job, which ResctrlWatchNotRunning names"
# The overlay only adds the PodMonitor: the rest is the base's.
render deploy/base
grep -v "^$pm\." "$tmp/deploy_overlays_prometheus-operator.rendered" | sed 's|^[0-9]*\.||' | sort >"$tmp/op.rest"
sed 's|^[0-9]*\.||' "$tmp/deploy_base.rendered" | sort >"$tmp/base.all"
cmp -s "$tmp/op.rest" "$tmp/base.all" || fail "the prometheus-operator overlay changes the base: $(diff "$tmp/base.all" "$tmp/op.rest" | head -n 5)"
render deploy/overlays/containerd-nri
d=$(doc_of "$out" DaemonSet nri-plugin-hook-injector)
# The injector checks a hook's path in its own mount namespace: same path as the node's.
[ "$(hostpath_mount "$out" "$d" "$node_dir")" = "$node_dir" ] ||
        fail "the hook-injector does not see $node_dir at the node's path"
[ "$(hostpath_mount "$out" "$d" "$layout_hooks")" = "$layout_hooks" ] ||
        fail "the hook-injector does not read $layout_hooks, where the DaemonSet registers the hook"
echo PASS
