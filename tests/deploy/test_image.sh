#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The DaemonSet as shipped, run from its image, on this machine standing in
# for a node:
#   test_image.sh SOURCE_DIR YAMLFLAT RESCTRLFS
#
# The image: deploy/Containerfile built by Podman from the source tree, on
# local base images made from Debian's packages (no registry): bookworm's
# minbase by debootstrap for the runtime stage (debian:12-slim's stand-in),
# and that plus the build dependencies for the build stage. Podman's store
# is the run's and goes with it; with RMH_IMAGE_CACHE set (a directory, say
# /var/cache/resctrl-mon-hook-tests/image), it is kept there instead, the
# bases and the image keyed by a hash of the build context, so that a
# developer's second run builds nothing.
#
# The container: run by Podman exactly as `kubectl kustomize deploy/base`
# renders the pod (every key of the DaemonSet is mapped to Podman's flags
# or judged irrelevant to a node, by name; any other key fails the test, so
# that a manifest change it does not know cannot slip through), with its
# own cgroup namespace, as containerd and CRI-O give it on cgroup v2. Only
# RMH_GC_INTERVAL is shortened (2 s), the metrics port is a free one of
# this machine (RMH_METRICS_PORT and the port named metrics both, which
# must agree), and the ConfigMap's config gets requireResctrlFs: false,
# since resctrl here is the emulator, a FUSE mount. The downward API's
# status.hostIP is this machine's first global IPv4 address (127.0.0.1
# without one): the node's IP, where a hostNetwork pod's ports are.
# The node's hostPaths are private stand-ins below the run's directory,
# except the cgroup tree, which is the machine's own (read-only); the
# emulator is the node's resctrl. What Podman cannot say, or says other
# than kubelet's runtimes, is set as they do (derive, ds_run): recursive
# read-only mounts (a wrapper of runc), no pids limit, the runtime's own
# rlimits. Where this kernel has no /sys/fs/resctrl to mount on, a tmpfs on
# /sys/fs in the container gives it one.
#
# The node: real runc containers of two kubelet-style pods, each in
# <root>/kubepods/pod<uid>/<id> below the run's private cgroup root
# (rmh-img-<tag>-<view>, every hierarchy), with a pause container in the
# pod's cgroup: one as CRI-O runs them (runc's root /run/runc, bundles in
# /run/containers/storage/overlay-containers), one as containerd with NRI's
# hook-injector does (root /run/containerd/runc/k8s.io, bundles in
# /run/containerd/io.containerd.runtime.v2.task/k8s.io, the sandbox never
# hooked). runc runs in a mount namespace where the node's paths (/run,
# /opt, /sys/fs/resctrl) are the stand-ins, so that the hooks it runs are
# the ones the image registered, the binary it installed, with its config,
# as a runtime on the node would run them: the test reads the hooks.d
# stand-in as CRI-O (and the injector) do.
#
# Scenario, on this host's cgroups (here hybrid: v1 and v2) and, on a hybrid
# host, in a pure v2 view too (cgroup2 alone at /sys/fs/cgroup in the mount
# namespaces of runc, for the pods and for the DaemonSet's container):
#   a) the hooks are registered only once resctrl is mounted; ready fails,
#      then passes
#   b) containers started before the image ran are adopted
#   c) a process `runc exec`'d into a container joins its pod's group
#      within one gc pass; the startup and liveness probes pass as kubelet
#      asks them (an exec, and an HTTP GET of /healthz at its host,
#      127.0.0.1, and the port named metrics); /metrics, scraped at the
#      node's IP, has the pod's series, and watch listens there and on
#      127.0.0.1 alone
#   d) a pod's group outlives its containers while its pause runs, and
#      goes within one gc pass of the pod's cgroup
#   e) c and d for the containerd pod too (the containerd-nri overlay's
#      DaemonSet container is the base's: checked)
#   f) beside a nested runtime's pod (kind, Docker-in-Docker), its member
#      file recorded in another pid namespace, the only state in stateDir
#      when the DaemonSet first starts (a still registers) and once d and e
#      are done: the DaemonSet run again after its SIGTERM keeps the
#      registration, becomes ready, and its gc passes refuse nothing; the
#      file stays untouched (the run's cleanup removes it)
# and bad input (on the host's cgroups), on a node the image has not touched
# yet, with a pod that started before: the manifest's cgroup mount missing or
# read-write fails the test's checks of the manifest, and the image run so is
# not ready, naming node-cgroups, and changes nothing on the node (registers,
# installs and adopts nothing); a runtime root that is a symlink (which the
# runtimes resolve: the container sees where it leads) to a directory not
# root's is not ready, naming runtime-roots, and changes nothing either.
#
# Everything of the run (containers, cgroups, mounts, processes, files) is
# removed at exit, INT and TERM included; what is left fails the test.
set -u

[ $# -eq 3 ] || { echo "usage: $0 SOURCE_DIR YAMLFLAT RESCTRLFS" >&2; exit 2; }
top=$(cd "$1" && pwd)
# shellcheck source=../lib/wait.sh
. "$top/tests/lib/wait.sh"
# shellcheck source=../lib/cgroup_tree.sh
. "$top/tests/lib/cgroup_tree.sh"
yamlflat=$(readlink -f "$2")
resctrlfs=$(readlink -f "$3")

# The Debian archive this machine's apt fetches bookworm from (the one a CI
# machine may reach), unless RMH_IMAGE_MIRROR says.
mirror=${RMH_IMAGE_MIRROR:-$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Packages' \
        'Release: bookworm' 'Component: main' 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}
build_packages="build-essential cmake pkg-config libjansson-dev libyaml-dev"
# The node's IP (the downward API's status.hostIP): this machine's first
# global IPv4 address, where a hostNetwork pod's ports are; 127.0.0.1 without one.
node_ip=$(ip -o -4 addr show scope global 2>/dev/null | awk '{ sub("/.*", "", $4); print $4; exit }')
node_ip=${node_ip:-127.0.0.1}
gc_interval=2
started=$(date +%s)
failures=0

say() {
        printf '%s\n' "$*" >&2
}

step() {
        say "-- $*  [$(($(date +%s) - started))s]"
}

# An assertion that failed: said, counted, and the test goes on, so that one
# run tells every failure.
fail() {
        say "FAIL: $*"
        failures=$((failures + 1))
}

# Something the rest cannot do without.
die() {
        say "FAIL: $*"
        exit 1
}

skip() {
        say "SKIP: $*"
        exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root"
command -v podman >/dev/null 2>&1 || skip "podman is not installed"
[ -c /dev/fuse ] || skip "no /dev/fuse"
for cmd in runc conmon unshare fusermount3 busybox jq kubectl flock findmnt sha256sum curl python3 ss; do
        command -v "$cmd" >/dev/null 2>&1 || die "$cmd is not installed (scripts/install-deps.sh)"
done
[ -x "$resctrlfs" ] || die "$resctrlfs is not executable"
[ -x "$yamlflat" ] || die "$yamlflat is not executable"

# Until the cleanup below is in place, a signal is noted, and acted on then:
# it finds what was made. Meanwhile only $tmp is.
signalled=
tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
trap 'signalled=129' HUP
trap 'signalled=130' INT
trap 'signalled=143' TERM
tmp=$(mktemp -d /tmp/rmh-img.XXXXXX) || die "mktemp"
# Names of the run's cgroups and containers: unique on the machine, and
# rmh-* (the naming rule of tests/lib/harness.sh).
tag=$(printf '%s' "${tmp##*.}" | tr '[:upper:]' '[:lower:]')
cg_prefix=rmh-img-$tag
if [ -n "${RMH_IMAGE_CACHE:-}" ]; then
        cache=$RMH_IMAGE_CACHE
        # Podman's run state, which must not outlive a reboot (on tmpfs where /run is).
        prun=/run/resctrl-mon-hook-tests/podman
else
        cache=$tmp/store
        prun=$tmp/podman-run
fi
mkdir -p "$tmp/no-hooks" "$cache" "$prun" || die "mkdir"

# Podman with the cache's store, no hooks of the machine's, cgroupfs (the
# run's cgroups go where --cgroup-parent says), no events.
# overlay, but on an overlay file system (a CI container), where it cannot.
driver=overlay
[ "$(stat -fc %T "$cache")" != overlayfs ] || driver=vfs
pm_opts=(--root "$cache/storage" --runroot "$prun/run" --tmpdir "$prun/tmp"
        --storage-driver "$driver" --cgroup-manager cgroupfs --events-backend none
        --hooks-dir "$tmp/no-hooks")
pm() {
        podman "${pm_opts[@]}" "$@"
}

# --- cleanup ---------------------------------------------------------------

# The run's cgroups, in every hierarchy: its private roots (the views', the
# build's), with everything below.
run_cgroups() {
        local h
        for h in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
                find "$h" -mindepth 1 -maxdepth 1 -type d -name "$cg_prefix-*" 2>/dev/null
        done
}

# Mount points at or under $tmp, deepest first.
run_mounts() {
        awk -v w="$tmp" '$5 == w || index($5, w "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# PIDs of processes (not this shell) whose command line names $tmp.
run_procs() {
        local pat="/tmp/[r]mh-img[.]${tmp##*.}"
        grep -lE -- "$pat" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | while read -r p; do
                [ "$p" = $$ ] || [ "$p" = "$BASHPID" ] || echo "$p"
        done
}

no_run_procs() { [ -z "$(run_procs)" ]; }

cleanup() {
        local rc=$? c m p left=""
        trap - EXIT
        trap '' INT TERM HUP
        [ "$rc" -le 128 ] || say "FAIL: stopped by signal $((rc - 128)), cleaning up"
        # The DaemonSet's containers, then the pods' (their poststops run),
        # then whatever still runs in the run's cgroups.
        for c in $(pm ps -a --format '{{.Names}}' 2>/dev/null | grep "^$cg_prefix-"); do
                pm rm -f -t 0 "$c" >/dev/null 2>&1 || say "cannot remove container $c"
        done
        for v in host v2; do
                [ -d "$tmp/$v/node/run" ] || continue
                for r in /run/runc /run/containerd/runc/k8s.io; do
                        for c in $(node_exec "$v" runc --root "$r" list -q 2>/dev/null); do
                                node_exec "$v" runc --root "$r" delete -f "$c" >/dev/null 2>&1
                        done
                done
        done
        for p in $(jobs -p); do kill "$p" 2>/dev/null; done
        for c in $(run_cgroups); do
                remove_cgroup_tree "$c" || left="$left cgroup:$c"
        done
        for m in $(run_mounts); do
                fusermount3 -u "$m" 2>/dev/null || umount "$m" 2>/dev/null || umount -l "$m"
        done
        wait 2>/dev/null
        wait_for "$WAIT_DAEMON" "the run's processes ending" no_run_procs
        for p in $(run_procs); do left="$left process:$p($(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null))"; done
        for m in $(run_mounts); do left="$left mount:$m"; done
        for c in $(pm ps -a --format '{{.Names}}' 2>/dev/null | grep "^$cg_prefix-"); do
                left="$left container:$c"
        done
        [ -n "$(run_mounts)" ] || rm -rf --one-file-system "$tmp"
        [ ! -e "$tmp" ] || left="$left directory:$tmp"
        if [ -n "$left" ]; then
                say "LEFTOVER of the run:$left"
                [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] || rc=1
        fi
        exit "$rc"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
[ -z "$signalled" ] || exit "$signalled"

# --- Podman, its cache, the image ---------------------------------------------

# base_tag NAME RECIPE: the tag of a base image, by what it is made of.
base_tag() {
        printf 'localhost/rmh-test-base-%s:%s' "$1" "$(printf '%s' "$2" | sha256sum | cut -c 1-16)"
}

# make_run_base TAG: bookworm's minbase (what debian:12-slim is made of) by
# debootstrap, on a tmpfs of a private mount namespace (no fsync costs; it
# goes with the namespace whatever happens), without documentation and apt's
# lists, imported. dpkg unpacks unsafely in it, as in Debian's official
# images (docker-apt-speedup), which makes the build base quick to make.
make_run_base() {
        command -v debootstrap >/dev/null 2>&1 || die "debootstrap is not installed (scripts/install-deps.sh)"
        mkdir -p "$tmp/base" "$cache/debs" || die "mkdir"
        # shellcheck disable=SC2016 # the inner shell's
        unshare -m bash -c "$(declare -p pm_opts); $(declare -f pm)"'
                set -e
                mount -t tmpfs -o mode=0755 tmpfs "$1"
                debootstrap --variant=minbase --cache-dir="$2" bookworm "$1/root" "$3" >"$4" 2>&1 ||
                        { tail -n 20 "$4" >&2; exit 1; }
                echo force-unsafe-io >"$1/root/etc/dpkg/dpkg.cfg.d/unsafe-io"
                rm -rf "$1"/root/var/cache/apt/archives/*.deb "$1"/root/var/lib/apt/lists/* \
                        "$1"/root/usr/share/doc "$1"/root/usr/share/man "$1"/root/usr/share/locale
                tar -C "$1/root" --exclude="./dev/*" --exclude="./proc/*" --exclude="./sys/*" -c . |
                        pm import --quiet - "$5" >/dev/null
        ' sh "$tmp/base" "$cache/debs" "$mirror" "$tmp/debootstrap.log" "$1"
}

# make_build_base TAG FROM: FROM with the build dependencies, so that the
# Containerfile's apt-get finds them installed.
make_build_base() {
        mkdir -p "$tmp/build-base" || die "mkdir"
        cat >"$tmp/build-base/Containerfile" <<EOF
FROM $2
RUN apt-get update && apt-get install -y --no-install-recommends $build_packages \\
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
EOF
        pm build --runtime runc --network host --pull=never --layers=false \
                --cgroup-parent "/$cg_prefix-build" -t "$1" "$tmp/build-base" >"$tmp/build-base.log" 2>&1 ||
                { tail -n 30 "$tmp/build-base.log" >&2; return 1; }
}

# The hash of the build context as .dockerignore leaves it (each file's
# mode, name and content), and of what the build starts from.
context_hash() {
        local args=() pat
        while read -r pat; do
                case $pat in '' | '#'*) continue ;; *'!'* | *'**'* | /*) die ".dockerignore: pattern '$pat' is not one this test knows" ;; esac
                args+=(-path "./$pat" -prune -o)
        done <"$top/.dockerignore"
        {
                printf '%s\n' "$@"
                (cd "$top" && find . "${args[@]}" \( -type f -o -type l \) -printf '%m %p\n' | sort)
                (cd "$top" && find . "${args[@]}" \( -type f -o -type l \) -print0 | sort -z |
                        xargs -0 sha256sum --)
        } | sha256sum | cut -c 1-16
}

# Containers of runs that were killed (SIGKILL: no cleanup), in a kept store.
for c in $(pm ps -a --format '{{.Names}}' --filter label=rmh-test.dir 2>/dev/null); do
        d=$(pm inspect --format '{{index .Config.Labels "rmh-test.dir"}}' "$c" 2>/dev/null)
        case $d in /tmp/rmh-img.*) [ -d "$d" ] || pm rm -f -t 0 "$c" >/dev/null 2>&1 ;; esac
done

step "the image: bases and build (cache: $cache)"
exec 9>"$cache/lock" || die "cannot open $cache/lock"
flock -w 600 9 || die "the cache stays locked by another run"
t=$(date +%s)
run_base=$(base_tag run "bookworm minbase $mirror unsafe-io nodoc v1")
pm image exists "$run_base" || make_run_base "$run_base" || die "cannot make the runtime base image"
build_base=$(base_tag build "$run_base $build_packages v1")
pm image exists "$build_base" || make_build_base "$build_base" "$run_base" ||
        die "cannot make the build base image"
# Bases of other recipes (an older test's) go.
for old in $(pm images --format '{{.Repository}}:{{.Tag}}' localhost/rmh-test-base-run) \
        $(pm images --format '{{.Repository}}:{{.Tag}}' localhost/rmh-test-base-build); do
        [ "$old" = "$run_base" ] || [ "$old" = "$build_base" ] || pm rmi "$old" >/dev/null 2>&1
done
t_bases=$(($(date +%s) - t))
t=$(date +%s)
image=localhost/rmh-test-deploy:$(context_hash "$run_base" "$build_base")
if ! pm image exists "$image"; then
        pm build --runtime runc --network host --pull=never --layers=false \
                --cgroup-parent "/$cg_prefix-build" \
                --build-arg "BUILD_IMAGE=$build_base" --build-arg "RUNTIME_IMAGE=$run_base" \
                -f "$top/deploy/Containerfile" -t "$image" "$top" >"$tmp/build.log" 2>&1 ||
                { tail -n 40 "$tmp/build.log" >&2; die "podman build of deploy/Containerfile failed"; }
        # One image of the sources in the cache: the previous ones go.
        for old in $(pm images --format '{{.Repository}}:{{.Tag}}' localhost/rmh-test-deploy); do
                [ "$old" = "$image" ] || pm rmi "$old" >/dev/null 2>&1
        done
fi
t_image=$(($(date +%s) - t))
flock -u 9
say "bases ${t_bases}s, image ${t_image}s: $image"

# --- the manifest, as the test reads it ---------------------------------------

# render DIR NAME: `kubectl kustomize DIR`, flattened, into $tmp/NAME.flat.
render() {
        kubectl kustomize "$top/$1" >"$tmp/$2.yaml" 2>"$tmp/$2.err" ||
                die "kubectl kustomize $1: $(cat "$tmp/$2.err")"
        "$yamlflat" "$tmp/$2.yaml" >"$tmp/$2.flat" || die "the rendering of $1 does not parse"
}

# doc_of FLAT KIND NAME: the index of that object's document.
doc_of() {
        local d
        for d in $(sed -n "s|^\([0-9]*\)\.kind=$2\$|\1|p" "$1"); do
                grep -qx "$d\.metadata\.name=$3" "$1" && { echo "$d"; return 0; }
        done
        return 1
}

# ds_of FLAT: the lines of the resctrl-mon-hook DaemonSet, without its index.
ds_of() {
        local d
        d=$(doc_of "$1" DaemonSet resctrl-mon-hook) || die "$(basename "$1"): no DaemonSet resctrl-mon-hook"
        sed -n "s|^$d\.||p" "$1"
}

# What the node's paths read by gc and adopt must be in the manifest: each
# mounted read-only at its own path (the hook's default config names them):
# the cgroup tree, adopt's default runtime roots, the bundles they name.
read_only_paths="/sys/fs/cgroup $(sed -n 's|^#runtimeRoots: \[\(.*\)\]$|\1|p' "$top/config/config.yaml" | tr -d ' ' | tr , ' ')
/run/containerd/io.containerd.runtime.v2.task/k8s.io /run/containers/storage/overlay-containers"

# manifest_problems DS: what of read_only_paths the DaemonSet's lines DS do
# not mount as intended, one a line.
manifest_problems() {
        local p i name j s=spec.template.spec
        for p in $read_only_paths; do
                i=$(sed -n "s|^$s\.volumes\.\([0-9]*\)\.hostPath\.path=$p\$|\1|p" "$1")
                if [ -z "$i" ]; then
                        echo "no hostPath volume of $p"
                        continue
                fi
                name=$(sed -n "s|^$s\.volumes\.$i\.name=||p" "$1")
                j=$(sed -n "s|^$s\.containers\.0\.volumeMounts\.\([0-9]*\)\.name=$name\$|\1|p" "$1")
                if [ -z "$j" ]; then
                        echo "the hostPath $p is not mounted"
                        continue
                fi
                grep -qx "$s\.containers\.0\.volumeMounts\.$j\.mountPath=$p" "$1" ||
                        echo "the hostPath $p is not mounted at $p"
                grep -qx "$s\.containers\.0\.volumeMounts\.$j\.readOnly=true" "$1" ||
                        echo "the hostPath $p is mounted read-write"
                grep -qEx "$s\.containers\.0\.volumeMounts\.$j\.recursiveReadOnly=(IfPossible|Enabled)" "$1" ||
                        echo "the mounts below the hostPath $p are not read-only (recursiveReadOnly)"
        done
}

# cpus QUANTITY, bytes QUANTITY: Kubernetes' quantities as Podman's values.
cpus() {
        case $1 in
        *m) awk -v m="${1%m}" 'BEGIN { printf "%.3f", m / 1000 }' ;;
        *) echo "$1" ;;
        esac
}
mem() {
        case $1 in
        *Ki) echo "$((${1%Ki} * 1024))" ;;
        *Mi) echo "$((${1%Mi} * 1024 * 1024))" ;;
        *Gi) echo "$((${1%Gi} * 1024 * 1024 * 1024))" ;;
        *[!0-9]*) return 1 ;;
        *) echo "$1" ;;
        esac
}

# normalise KEY: KEY with each number among its dot-separated parts made #,
# in key; the first of those numbers in index (volumes.3.name: volumes.#.name, 3).
normalise() {
        local part
        local -a parts out=()
        index=""
        IFS=. read -ra parts <<<"$1"
        for part in "${parts[@]}"; do
                if [[ $part =~ ^[0-9]+$ ]]; then
                        [ -n "$index" ] || index=$part
                        part="#"
                fi
                out+=("$part")
        done
        key=$(IFS=.; echo "${out[*]}")
}

# derive DS FLAT VIEW: Podman's flags for the DaemonSet's lines DS (the
# ConfigMap from the rendering FLAT), with the node's hostPaths replaced by
# VIEW's stand-ins, into run_args (flags), run_cmd (entrypoint and args),
# probe (the readiness probe's command), probe_timeout, startup (the
# startup probe's command), live_path, live_timeout (the liveness probe's
# HTTP GET, at the port metrics_port), grace, ctr_name.
# Each key is mapped or ignored by name; any other is counted in unknown
# and said. DirectoryOrCreate stand-ins are made, as kubelet does.
derive() {
        local ds=$1 flat=$2 v=$3 line k val p c i n src opts user="" group="" d live_port="" port_env=""
        local -A vname=() vkind=() vpath=() vtype=() vcm=() mname=() mpath=() mro=() mprop=() mrro=() ename=() evalue=()
        local -A efield=() pname=() pport=()
        local -a entry=() args=() rro=()
        run_args=()
        probe=()
        probe_timeout=1
        startup=()
        live_path=""
        live_host=""
        live_timeout=1
        metrics_port=""
        grace=30
        ctr_name=""
        unknown=0
        while IFS= read -r line; do
                k=${line%%=*}
                val=${line#*=}
                case $k in
                # What the object is, and how the DaemonSet rolls out: nothing of the container.
                apiVersion | kind | metadata.name | metadata.namespace | metadata.labels.* | \
                        spec.selector.* | spec.updateStrategy.* | spec.template.metadata.labels.*) continue ;;
                spec.template.spec.*) normalise "${k#spec.template.spec.}" ;;
                *) say "the test does not know the DaemonSet's key $line"; unknown=$((unknown + 1)); continue ;;
                esac
                p=$key
                case $p in
                hostPID) [ "$val" = true ] && run_args+=(--pid=host) ;;
                hostNetwork) [ "$val" = true ] && run_args+=(--network=host) ;;
                hostIPC) [ "$val" = true ] && run_args+=(--ipc=host) ;;
                # No service account token and no service variables: nothing to add.
                automountServiceAccountToken | enableServiceLinks)
                        [ "$val" = false ] || { say "the test does not model $p=$val"; unknown=$((unknown + 1)); } ;;
                # Where and before what the pod is scheduled: this machine is the node.
                priorityClassName | affinity.* | tolerations.* | nodeSelector.*) ;;
                terminationGracePeriodSeconds) grace=$val ;;
                volumes.#.hostPath.path) i=$index; vkind[$i]=hostPath; vpath[$i]=$val ;;
                volumes.#.hostPath.type) i=$index; vtype[$i]=$val ;;
                volumes.#.configMap.name) i=$index; vkind[$i]=configMap; vcm[$i]=$val ;;
                volumes.#.name) i=$index; vname[$i]=$val ;;
                containers.#.*)
                        [ "${k#spec.template.spec.containers.}" != "${k#spec.template.spec.containers.0.}" ] ||
                                { say "the test runs one container, not $k"; unknown=$((unknown + 1)); continue; }
                        normalise "${k#spec.template.spec.containers.0.}"
                        c=$key
                        case $c in
                        name) ctr_name=$val ;;
                        # The test's build is the image; it is never pulled.
                        image) ;;
                        imagePullPolicy) [ "$val" = Always ] && { say "the test cannot pull: $c=$val"; unknown=$((unknown + 1)); } ;;
                        command.#) entry+=("$val") ;;
                        args.#) args+=("$val") ;;
                        env.#.name) i=$index; ename[$i]=$val ;;
                        env.#.value) i=$index; evalue[$i]=$val ;;
                        # The downward API: the node's IP is this machine's (node_ip).
                        env.#.valueFrom.fieldRef.fieldPath)
                                i=$index
                                efield[$i]=$val
                                [ "$val" = status.hostIP ] || { say "the test does not know $c=$val"; unknown=$((unknown + 1)); } ;;
                        # Ports: under hostNetwork the node's, which the container binds itself.
                        ports.#.name) i=$index; pname[$i]=$val ;;
                        ports.#.containerPort) i=$index; pport[$i]=$val ;;
                        ports.#.protocol) [ "$val" = TCP ] || { say "the test does not know $c=$val"; unknown=$((unknown + 1)); } ;;
                        startupProbe.exec.command.#) startup+=("$val") ;;
                        # The test asks until it passes; kubelet's patience is not the test's.
                        startupProbe.timeoutSeconds | startupProbe.periodSeconds | startupProbe.failureThreshold) ;;
                        livenessProbe.httpGet.path) live_path=$val ;;
                        livenessProbe.httpGet.host) live_host=$val ;;
                        livenessProbe.httpGet.port) live_port=$val ;;
                        livenessProbe.httpGet.scheme) [ "$val" = HTTP ] || { say "the test does not know $c=$val"; unknown=$((unknown + 1)); } ;;
                        livenessProbe.timeoutSeconds) live_timeout=$val ;;
                        livenessProbe.periodSeconds | livenessProbe.failureThreshold) ;;
                        readinessProbe.exec.command.#) probe+=("$val") ;;
                        readinessProbe.timeoutSeconds) probe_timeout=$val ;;
                        readinessProbe.periodSeconds) ;; # the test asks more often
                        securityContext.runAsUser) user=$val ;;
                        securityContext.runAsGroup) group=$val ;;
                        securityContext.privileged) [ "$val" = true ] && run_args+=(--privileged) ;;
                        securityContext.allowPrivilegeEscalation)
                                [ "$val" = false ] && run_args+=(--security-opt no-new-privileges) ;;
                        securityContext.readOnlyRootFilesystem)
                                # kubelet adds no tmpfs to a read-only root, Podman does unless told.
                                [ "$val" = true ] && run_args+=(--read-only --read-only-tmpfs=false) ;;
                        securityContext.capabilities.drop.#)
                                run_args+=(--cap-drop="$(echo "$val" | tr '[:upper:]' '[:lower:]')") ;;
                        securityContext.capabilities.add.#) run_args+=(--cap-add="$val") ;;
                        securityContext.seccompProfile.type)
                                case $val in
                                RuntimeDefault) ;; # Podman's default profile
                                Unconfined) run_args+=(--security-opt seccomp=unconfined) ;;
                                *) say "the test does not know $c=$val"; unknown=$((unknown + 1)) ;;
                                esac ;;
                        securityContext.appArmorProfile.type)
                                case $val in
                                RuntimeDefault) ;;
                                Unconfined) run_args+=(--security-opt apparmor=unconfined) ;;
                                *) say "the test does not know $c=$val"; unknown=$((unknown + 1)) ;;
                                esac ;;
                        # Requests place the pod; limits bound it (not in the v2
                        # view, whose hierarchy has no controllers on this host).
                        resources.requests.cpu | resources.requests.memory) ;;
                        resources.limits.cpu) [ "$v" = v2 ] || run_args+=(--cpus "$(cpus "$val")") ;;
                        resources.limits.memory)
                                n=$(mem "$val") || { say "the test does not know $c=$val"; unknown=$((unknown + 1)); }
                                [ "$v" = v2 ] || run_args+=(--memory "$n") ;;
                        volumeMounts.#.name) i=$index; mname[$i]=$val ;;
                        volumeMounts.#.mountPath) i=$index; mpath[$i]=$val ;;
                        volumeMounts.#.readOnly) i=$index; mro[$i]=$val ;;
                        volumeMounts.#.mountPropagation) i=$index; mprop[$i]=$val ;;
                        volumeMounts.#.recursiveReadOnly) i=$index; mrro[$i]=$val ;;
                        *) say "the test does not know the container's key $c=$val"; unknown=$((unknown + 1)) ;;
                        esac
                        ;;
                *) say "the test does not know the pod's key $p=$val"; unknown=$((unknown + 1)) ;;
                esac
        done <"$ds"

        [ -n "$ctr_name" ] || { say "the container has no name"; unknown=$((unknown + 1)); }
        [ "${#entry[@]}" -gt 0 ] || { say "the container has no command"; unknown=$((unknown + 1)); }
        [ "${#probe[@]}" -gt 0 ] || { say "the container has no exec readiness probe"; unknown=$((unknown + 1)); }
        # The port named metrics, which the entrypoint's RMH_METRICS_PORT must
        # say too: a free one of this machine instead, in both. Ports need
        # hostNetwork here: the test maps none with -p.
        for i in "${!pname[@]}"; do
                [ "${pname[$i]}" = metrics ] || { say "the test does not know the port ${pname[$i]}"; unknown=$((unknown + 1)); continue; }
                metrics_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])') ||
                        die "no free port"
                for p in "${!ename[@]}"; do
                        [ "${ename[$p]}" = RMH_METRICS_PORT ] && port_env=${evalue[$p]-}
                done
                [ "$port_env" = "${pport[$i]-}" ] ||
                        { say "the port named metrics is ${pport[$i]-none}, RMH_METRICS_PORT '$port_env'"; unknown=$((unknown + 1)); }
                case " ${run_args[*]} " in *" --network=host "*) ;; *) say "the test maps ports only under hostNetwork"; unknown=$((unknown + 1)) ;; esac
        done
        # The liveness probe's port, by name or number, is that one.
        if [ -n "$live_path$live_port" ]; then
                case $live_port in
                metrics | "$port_env") [ -n "$metrics_port" ] || { say "the liveness probe's port $live_port is no port of the container"; unknown=$((unknown + 1)); } ;;
                *) say "the test does not know the liveness probe's port $live_port"; unknown=$((unknown + 1)) ;;
                esac
        fi
        if [ -n "$user$group" ]; then run_args+=(--user "$user${group:+:$group}"); fi
        for i in $(printf '%s\n' "${!ename[@]}" | sort -n); do
                val=${evalue[$i]-}
                # The changes: gc passes every few seconds, not every minute;
                # the metrics port a free one; the node's IP this machine's.
                [ "${ename[$i]}" = RMH_GC_INTERVAL ] && val=$gc_interval
                [ "${ename[$i]}" = RMH_METRICS_PORT ] && val=$metrics_port
                [ "${efield[$i]-}" = status.hostIP ] && val=$node_ip
                run_args+=(-e "${ename[$i]}=$val")
        done
        # Volumes: the node's paths replaced by the view's stand-ins (the
        # cgroup tree is the machine's), the ConfigMap by a directory of its data.
        local -A vsrc=()
        for i in "${!vname[@]}"; do
                case ${vkind[$i]-} in
                hostPath)
                        src=$tmp/$v/node${vpath[$i]}
                        [ "${vpath[$i]}" = /sys/fs/cgroup ] && src=/sys/fs/cgroup
                        case ${vtype[$i]-} in
                        DirectoryOrCreate) [ -d "$src" ] || mkdir -p "$src" || die "mkdir $src" ;;
                        Directory) [ -d "$src" ] || die "the stand-in $src of ${vpath[$i]} (type Directory) is not there" ;;
                        *) say "the test does not know hostPath type '${vtype[$i]-}' of ${vpath[$i]}"; unknown=$((unknown + 1)) ;;
                        esac
                        ;;
                configMap)
                        src=$tmp/$v/configmap-${vcm[$i]}
                        d=$(doc_of "$flat" ConfigMap "${vcm[$i]}") || die "no ConfigMap ${vcm[$i]} in the rendering"
                        mkdir -p "$src" || die "mkdir $src"
                        while IFS= read -r line; do
                                k=${line%%=*}
                                case $k in
                                "$d".data.*) printf '%b' "${line#*=}" >"$src/${k#"$d".data.}" ;;
                                "$d".apiVersion | "$d".kind | "$d".metadata.name | "$d".metadata.namespace) ;;
                                *) say "the test does not know the ConfigMap's key $line"; unknown=$((unknown + 1)) ;;
                                esac
                        done < <(grep "^$d\." "$flat")
                        # The one change to the config: resctrl here is the
                        # emulator, a FUSE mount, not a resctrl one.
                        [ -f "$src/config.yaml" ] || die "the ConfigMap ${vcm[$i]} has no config.yaml"
                        ! grep -q '^requireResctrlFs:' "$src/config.yaml" ||
                                die "the ConfigMap sets requireResctrlFs: the emulator needs false"
                        printf 'requireResctrlFs: false\n' >>"$src/config.yaml"
                        ;;
                *) say "the test does not know the kind of volume ${vname[$i]}"; unknown=$((unknown + 1)); continue ;;
                esac
                vsrc[${vname[$i]}]=$src
        done
        for i in $(printf '%s\n' "${!mname[@]}" | sort -n); do
                src=${vsrc[${mname[$i]}]-}
                [ -n "$src" ] || { say "volumeMount ${mname[$i]} names no volume"; unknown=$((unknown + 1)); continue; }
                opts=rw
                [ "${mro[$i]-}" = true ] && opts=ro
                case ${mprop[$i]-None} in
                None) ;;
                HostToContainer) opts=$opts,rslave ;;
                *) say "the test does not know mountPropagation ${mprop[$i]}"; unknown=$((unknown + 1)) ;;
                esac
                # The mounts below it read-only too: the runtime wrapper
                # (runtime_wrapper) makes "ro" "rro" for these, as containerd
                # 2.0 and CRI-O do; the API server takes it only read-only and
                # without propagation.
                case ${mrro[$i]-Disabled} in
                Disabled) ;;
                IfPossible | Enabled)
                        [ "${mro[$i]-}" = true ] && [ "${mprop[$i]-None}" = None ] ||
                                { say "recursiveReadOnly of ${mpath[$i]} needs readOnly and no mountPropagation"; unknown=$((unknown + 1)); }
                        rro+=("${mpath[$i]}") ;;
                *) say "the test does not know recursiveReadOnly ${mrro[$i]}"; unknown=$((unknown + 1)) ;;
                esac
                run_args+=(-v "$src:${mpath[$i]}:$opts")
        done
        [ "${#rro[@]}" -eq 0 ] || run_args+=(--annotation "rmh-test.recursive-read-only=$(IFS=:; echo "${rro[*]}")")
        # This kernel has no /sys/fs/resctrl to mount on (no resctrl): a
        # tmpfs on /sys/fs gives the container one (and /sys/fs/cgroup).
        [ -d /sys/fs/resctrl ] || run_args+=(--mount "type=tmpfs,destination=/sys/fs,tmpfs-mode=0755,notmpcopyup")
        run_cmd=(--entrypoint "$(printf '%s\n' "${entry[@]}" | jq -R . | jq -sc .)" "$image" ${args[@]+"${args[@]}"})
}

# --- the node: stand-ins, the emulator, kubelet-style pods of runc containers ---

# node_exec VIEW CMD...: CMD in a mount namespace where the node's paths are
# VIEW's stand-ins: /run (runtime roots, bundles, the hook's state), /opt
# (the install directory), /sys/fs/resctrl (the emulator); in the v2 view,
# cgroup2 alone at /sys/fs/cgroup. Its mounts are slaves: nothing done in it
# reaches the machine's.
node_exec() {
        local v=$1
        shift
        # shellcheck disable=SC2016 # the inner shell's
        unshare -m --propagation slave sh -c '
                set -e
                v=$1 n=$2 t=$3
                shift 3
                if [ "$v" = v2 ]; then
                        umount -R /sys/fs/cgroup
                        mount -t cgroup2 none /sys/fs/cgroup
                fi
                mount --rbind "$n/run" /run
                mount --rbind "$n/opt" /opt
                if [ ! -d /sys/fs/resctrl ]; then
                        mount --rbind /sys/fs/cgroup "$t"
                        mount -t tmpfs -o mode=0755 tmpfs /sys/fs
                        mkdir /sys/fs/cgroup /sys/fs/resctrl
                        mount --rbind "$t" /sys/fs/cgroup
                fi
                mount --rbind "$n/sys/fs/resctrl" /sys/fs/resctrl
                exec "$@"' sh "$v" "$tmp/$v/node" "$tmp/$v/cgroup-mnt" "$@"
}

# A busybox-static root filesystem, shared read-only by the pods' containers.
make_rootfs() {
        local b a
        b=$(command -v busybox)
        ! ldd "$b" >/dev/null 2>&1 || die "$b is not busybox-static"
        mkdir -p "$tmp/rootfs/bin" "$tmp/rootfs/proc" "$tmp/rootfs/dev" "$tmp/rootfs/sys" \
                "$tmp/rootfs/etc" "$tmp/rootfs/tmp" || die "mkdir rootfs"
        cp "$b" "$tmp/rootfs/bin/busybox" || die "copy busybox"
        for a in sh sleep cat; do ln -s busybox "$tmp/rootfs/bin/$a" || die "ln $a"; done
}

# flavour_root FLAVOUR, flavour_bundle FLAVOUR ID: where CRI-O's runc
# (crio) and containerd's runc shim (containerd) keep a container's state
# and its bundle, as node paths.
flavour_root() {
        case $1 in
        crio) echo /run/runc ;;
        containerd) echo /run/containerd/runc/k8s.io ;;
        esac
}
flavour_bundle() {
        case $1 in
        crio) echo "/run/containers/storage/overlay-containers/$2/userdata" ;;
        containerd) echo "/run/containerd/io.containerd.runtime.v2.task/k8s.io/$2" ;;
        esac
}

# hooks_of VIEW: the "hooks" a runtime reading the hooks.d stand-in adds
# to a container, as CRI-O (and NRI's hook-injector) do: every always-hook
# of version 1.0.0 whose binary is on the node, in its stages.
hooks_of() {
        local d=$tmp/$1/node/usr/share/containers/oci/hooks.d f hooks='{}' path
        for f in "$d"/*.json; do
                [ -e "$f" ] || continue
                if ! jq -e '.version == "1.0.0" and .when.always == true' "$f" >/dev/null; then
                        fail "$f is not an always-hook of version 1.0.0: $(cat "$f")"
                        continue
                fi
                path=$(jq -r .hook.path "$f")
                if [ ! -x "$tmp/$1/node$path" ]; then
                        fail "$f names $path, which is not on the node"
                        continue
                fi
                hooks=$(jq -c --argjson acc "$hooks" '. as $h | reduce .stages[] as $s ($acc; .[$s] += [$h.hook])' "$f")
        done
        echo "$hooks"
}

# ctr_start VIEW FLAVOUR ID UID ROLE: runs container ID of pod UID with
# runc, as FLAVOUR's runtime would: ROLE pause (the pod's sandbox, never
# hooked: containerd hooks no sandbox, and for the CRI-O pod it stands for
# kubelet's populated pod cgroup) or ctr (a container, with the hooks of
# hooks.d now). In <root>/kubepods/pod<UID>/<ID>, as kubelet's cgroupfs
# driver has it. Sets ctr_pid.
ctr_start() {
        local v=$1 f=$2 id=$3 uid=$4 role=$5 root bundle ann hooks='{}' argv='["sleep", "1000"]'
        root=$(flavour_root "$f")
        bundle=$(flavour_bundle "$f" "$id")
        case $f/$role in
        crio/*)
                # CRI-O's infra container carries the pod's labels too.
                ann=$(jq -nc --arg u "$uid" --arg n "$id" --arg t "${role/ctr/container}" '{
                        "io.container.manager": "cri-o",
                        "io.kubernetes.cri-o.ContainerType": (if $t == "pause" then "sandbox" else "container" end),
                        "io.kubernetes.pod.uid": $u, "io.kubernetes.pod.namespace": "rmh-img",
                        "io.kubernetes.pod.name": "pod"}
                        + if $t == "pause" then {} else {"io.kubernetes.container.name": $n} end') ;;
        containerd/*)
                ann=$(jq -nc --arg u "$uid" --arg n "$id" --arg t "${role/ctr/container}" '{
                        "io.kubernetes.cri.container-type": (if $t == "pause" then "sandbox" else "container" end),
                        "io.kubernetes.cri.sandbox-uid": $u, "io.kubernetes.cri.sandbox-namespace": "rmh-img",
                        "io.kubernetes.cri.sandbox-name": "pod", "io.kubernetes.cri.container-name": $n}') ;;
        esac
        [ "$role" = pause ] || hooks=$(hooks_of "$v")
        mkdir -p "$tmp/$v/node$bundle" || die "mkdir bundle"
        jq -n --arg id "$id" --arg rootfs "$tmp/rootfs" --arg cg "/$cg_prefix-$v/kubepods/pod$uid/$id" \
                --argjson ann "$ann" --argjson hooks "$hooks" --argjson argv "$argv" '{
          ociVersion: "1.0.2",
          process: {terminal: false, user: {uid: 0, gid: 0}, args: $argv, env: ["PATH=/bin"], cwd: "/",
            capabilities: {bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]},
            rlimits: [{type: "RLIMIT_NOFILE", hard: 1024, soft: 1024}], noNewPrivileges: true},
          root: {path: $rootfs, readonly: true},
          hostname: $id,
          mounts: [
            {destination: "/proc", type: "proc", source: "proc"},
            {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "mode=755", "size=65536k"]},
            {destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]}],
          annotations: $ann,
          hooks: $hooks,
          linux: {cgroupsPath: $cg, resources: {devices: [{allow: false, access: "rwm"}]},
            namespaces: [{type: "pid"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}, {type: "network"}],
            maskedPaths: ["/proc/kcore", "/proc/keys", "/sys/firmware"],
            readonlyPaths: ["/proc/sys", "/proc/sysrq-trigger"]}
        }' >"$tmp/$v/node$bundle/config.json" || die "config.json of $id"
        node_exec "$v" runc --root "$root" run -d --pid-file "$tmp/$v/$id.pid" --bundle "$bundle" "$id" \
                </dev/null >"$tmp/$v/$id.log" 2>&1 || { cat "$tmp/$v/$id.log" >&2; die "runc run $id"; }
        ctr_pid=$(cat "$tmp/$v/$id.pid")
}

# ctr_delete VIEW FLAVOUR ID: kills and deletes it (its poststop hooks run).
ctr_delete() {
        node_exec "$1" runc --root "$(flavour_root "$2")" delete -f "$3" >"$tmp/$1/$3.delete" 2>&1 ||
                fail "runc delete $3: $(cat "$tmp/$1/$3.delete")"
}

# pod_cgroup_remove VIEW UID: kubelet's pod cgroup removed, in every hierarchy.
pod_cgroup_remove() {
        local h
        for h in $(findmnt -rn -t cgroup,cgroup2 -o TARGET); do
                [ ! -d "$h/$cg_prefix-$1/kubepods/pod$2" ] ||
                        find "$h/$cg_prefix-$1/kubepods/pod$2" -depth -type d -exec rmdir {} + ||
                        fail "cannot remove $h/$cg_prefix-$1/kubepods/pod$2"
        done
}

# Has the DaemonSet's watch, with the kernel's process events, joined a
# process at its exec (watch.state in the node's stateDir NODE)?
watch_joined() { # NODE
        jq -e '.events and .joins.watch > 0' "$1/run/resctrl-mon-hook/watch.state" >/dev/null 2>&1
}

group() { # VIEW UID
        echo "$tmp/$1/node/sys/fs/resctrl/mon_groups/$2"
}
in_group() { # VIEW UID PID
        grep -qx "$3" "$(group "$1" "$2")/tasks" 2>/dev/null
}

# True once watch (the DaemonSet's) has made N gc passes.
watch_passes() { # NODE N
        jq -e --argjson n "$2" '.passes >= $n' "$1/run/resctrl-mon-hook/watch.state" >/dev/null 2>&1
}

# True once a watch other than pid OLD has made N gc passes.
new_watch_passes() { # NODE OLD N
        jq -e --argjson old "$2" --argjson n "$3" '.pid != $old and .passes >= $n' \
                "$1/run/resctrl-mon-hook/watch.state" >/dev/null 2>&1
}

# --- the DaemonSet's container -------------------------------------------------

# ds_run VIEW DS NAME: the container of the DaemonSet's lines DS (derived
# with the base's rendering for the ConfigMap), named NAME, on VIEW's node;
# sets ds (its name). In the v2 view, runc runs it in that view.
ds_run() {
        local v=$1 rt
        derive "$2" "$tmp/base.flat" "$v"
        [ "$unknown" -eq 0 ] || die "$unknown keys of the manifest are not known to the test (above)"
        [ "$v" = v2 ] && rt=$tmp/bin/v2/runc
        [ "$v" = v2 ] || rt=$tmp/bin/host/runc
        ds=$cg_prefix-$v-$3
        # The pod sets no rlimits: the container gets its runtime's own, as
        # under CRI-O, not Podman's default of 1048576 open files and
        # processes, more than runc may give where the machine's hard limits
        # are lower (no CAP_SYS_RESOURCE): Podman's own limits, the machine's
        # hard limit of open files and at most 32768 processes (what Podman
        # sets for itself). Its own cgroup namespace, as containerd and
        # CRI-O give it on cgroup v2; the host's network where the manifest
        # says hostNetwork (run_args), else none.
        local nofile nproc net=--network=none
        nofile=$(ulimit -Hn)
        nproc=$(ulimit -Hu)
        [ "$nofile" = unlimited ] || [ "$nofile" -gt 1048576 ] && nofile=1048576
        [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ] && nproc=32768
        case " ${run_args[*]} " in *" --network=host "*) net="" ;; esac
        # No pids limit either (kubelet's podPidsLimit is the pod's, not a
        # container's; Podman's default is 2048).
        pm run -d --name "$ds" --label "rmh-test.dir=$tmp" --runtime "$rt" --ulimit "nofile=$nofile:$nofile" \
                --ulimit "nproc=$nproc:$nproc" --pids-limit 0 --cgroupns=private ${net:+"$net"} \
                --cgroup-parent "/$cg_prefix-$v/daemonset" --log-driver k8s-file --pull=never \
                "${run_args[@]}" "${run_cmd[@]}" >"$tmp/$v/$3.run" 2>&1 ||
                { cat "$tmp/$v/$3.run" >&2; die "podman run of the DaemonSet's container"; }
}

ds_log() {
        pm logs "$ds" 2>&1
}

# ds_ready: runs the readiness probe in the container as kubelet does; its
# output in ready_out.
ds_ready() {
        ready_out=$(timeout $((probe_timeout + 10)) podman "${pm_opts[@]}" exec "$ds" "${probe[@]}" 2>&1)
}

# ds_started: the startup probe, the same way; its output in ready_out.
ds_started() {
        ready_out=$(timeout $((probe_timeout + 10)) podman "${pm_opts[@]}" exec "$ds" "${startup[@]}" 2>&1)
}

# ds_live: the liveness probe's GET as kubelet sends it to a hostNetwork
# pod: at its host, or else the pod's IP, the node's, and the port it
# names; 2xx or 3xx passes. Its body in live_out.
ds_live() {
        live_out=$(curl -s --max-time "$live_timeout" -o - -w '\n%{http_code}' \
                "http://${live_host:-$node_ip}:$metrics_port$live_path")
        case ${live_out##*$'\n'} in 2?? | 3??) live_out=$(printf '%s' "${live_out%$'\n'*}") ;; *) return 1 ;; esac
}

# ds_scrape: /metrics at the node's IP and the metrics port, into $tmp/metrics.
ds_scrape() {
        curl -sf --max-time 10 "http://$node_ip:$metrics_port/metrics" >"$tmp/metrics"
}
# scraped_has ERE: a scrape has a line matching it.
scraped_has() {
        ds_scrape && grep -Eq -- "$1" "$tmp/metrics"
}

# ds_log_has TEXT
ds_log_has() {
        ds_log | grep -qF -- "$1"
}

# ds_stop: SIGTERM as kubelet sends it, the grace period as it waits; the
# container must exit 0, the hook staying registered.
ds_stop() {
        local v=$1 rc
        pm stop -t "$grace" "$ds" >/dev/null 2>&1 || fail "podman stop $ds"
        rc=$(pm inspect --format '{{.State.ExitCode}}' "$ds")
        [ "$rc" = 0 ] || fail "the container exited $rc on SIGTERM: $(ds_log | tail -n 5)"
        ds_log_has "stopped; the hook's registration stays as it is" || fail "no word of stopping: $(ds_log | tail -n 5)"
        # A moment after the stop, conmon's `podman container cleanup` can
        # still hold the container: rm is tried again until it is gone.
        wait_for "$WAIT_RUNTIME" "podman rm $ds" ds_rm || fail "podman rm $ds: $(cat "$tmp/rm.out")"
}
ds_rm() { pm rm -f "$ds" >"$tmp/rm.out" 2>&1; }

# The node's state, what the bad inputs must not change: the registration,
# the installed files, the hook's state, the groups and their tasks.
node_snapshot() { # VIEW
        local n=$tmp/$1/node d
        for d in "$n/usr/share/containers/oci/hooks.d" "$n/opt/resctrl-mon-hook" \
                "$n/run/resctrl-mon-hook" "$n/sys/fs/resctrl/mon_groups"; do
                find "$d" \( -name 'mon_data' -o -name 'mon_hw_id' \) -prune -o -printf '%p %y %m %U\n' | sort
                find "$d" -type f \( -name tasks -o -name '*.json' -o -name '*.members' -o -name 'config.yaml' \
                        -o -name resctrl-mon-hook \) -exec sha256sum {} + | sort
        done
}

# --- the scenario ------------------------------------------------------------

# run_view VIEW: a)-e) on VIEW's node, the DaemonSet as deploy/base renders it.
run_view() {
        local v=$1 n=$tmp/$1/node uid1 uid2 p e f hooksd t0 retry foreign old_watch
        t0=$(date +%s)
        hooksd=$n/usr/share/containers/oci/hooks.d
        mkdir -p "$n/sys/fs/resctrl" "$tmp/$v/cgroup-mnt" || die "mkdir"
        # The node's resctrl mount point, shared, as on a node (systemd makes /
        # shared): the emulator mounted on it later reaches the container.
        mount --bind "$n/sys/fs/resctrl" "$n/sys/fs/resctrl" && mount --make-shared "$n/sys/fs/resctrl" ||
                die "cannot make $n/sys/fs/resctrl a shared mount"
        # The stand-ins, as kubelet makes them for the hostPaths (DirectoryOrCreate).
        derive "$tmp/base.ds" "$tmp/base.flat" "$v"
        [ "$unknown" -eq 0 ] || die "$unknown keys of the manifest are not known to the test (above)"
        # The DaemonSet's own container, as the node's runtime (CRI-O's runc)
        # records it: a node that runs this pod always has it in a runtime
        # root (check's runtime-roots row). Its init, pid 4194304 (Linux's
        # PID_MAX_LIMIT), is no process here: adopt passes over it.
        mkdir -p "$n/run/runc/rmh-daemonset" &&
                echo '{"init_process_pid": 4194304, "init_process_start": 1, "config": {"labels": []}}' \
                        >"$n/run/runc/rmh-daemonset/state.json" || die "cannot record the DaemonSet's container"
        # A pod of a nested runtime (kind, Docker-in-Docker sharing /run):
        # its member file, recorded in another pid namespace (4026531837, the
        # initial user namespace's inode, which no pid namespace can have).
        # The only state there when the DaemonSet starts, and again when it
        # restarts: neither gc's view of it nor anything else may keep the
        # hook from being registered, or take the registration away.
        foreign=$n/run/resctrl-mon-hook/$(cat /proc/sys/kernel/random/uuid).members
        mkdir -p "$n/run/resctrl-mon-hook" &&
                printf '{"version":1,"uid":"%s","namespace":"kind","pod":"nested","pid_ns":4026531837,"groups":[{"ctrl":"/","owned":true}],"members":[{"id":"nested-c1","ctrl":"/","pid":7,"start_time":1234,"monitored":true,"reason":null}]}\n' \
                        "$(basename "$foreign" .members)" >"$foreign" && cp "$foreign" "$tmp/$v/foreign.members" ||
                die "cannot record the nested runtime's pod"
        retry=$(sed -n 's|^spec\.template\.spec\.containers\.0\.env\.\([0-9]*\)\.name=RMH_RETRY_SECONDS$|\1|p' "$tmp/base.ds")
        retry=$(sed -n "s|^spec\\.template\\.spec\\.containers\\.0\\.env\\.$retry\\.value=||p" "$tmp/base.ds")

        uid1=$(cat /proc/sys/kernel/random/uuid)
        uid2=$(cat /proc/sys/kernel/random/uuid)
        step "[$v] before the DaemonSet: pod $uid1 (CRI-O) and $uid2 (containerd), each a pause and a container"
        ctr_start "$v" crio "$cg_prefix-p1-pause" "$uid1" pause
        p1_pause=$ctr_pid
        ctr_start "$v" crio "$cg_prefix-p1-early" "$uid1" ctr
        p1_early=$ctr_pid
        ctr_start "$v" containerd "$cg_prefix-p2-pause" "$uid2" pause
        p2_pause=$ctr_pid
        ctr_start "$v" containerd "$cg_prefix-p2-early" "$uid2" ctr
        p2_early=$ctr_pid

        step "[$v] a) the DaemonSet's container, resctrl not mounted: nothing registered, not ready"
        ds_run "$v" "$tmp/base.ds" main
        wait_for "$WAIT_DAEMON" "word of waiting for resctrl" ds_log_has "not registering the hook yet" ||
                fail "[$v] no word of waiting for resctrl: $(ds_log | tail -n 5)"
        [ -z "$(ls -A "$hooksd")" ] || fail "[$v] hooks.d holds [$(ls -A "$hooksd")] before resctrl is mounted"
        ds_ready && fail "[$v] ready before resctrl is mounted: $ready_out"
        printf '%s\n' "$ready_out" | grep -q "not registered" ||
                fail "[$v] the probe does not say why it is not ready: $ready_out"

        step "[$v] a) resctrl mounted (the emulator): registered within a retry (${retry}s), then ready"
        "$resctrlfs" -f --num-rmids 64 "$n/sys/fs/resctrl" </dev/null >"$tmp/$v/resctrlfs.log" 2>&1 &
        wait_for "$WAIT_DAEMON" "the emulator's mount" test -d "$n/sys/fs/resctrl/mon_groups" ||
                die "the emulator did not mount: $(cat "$tmp/$v/resctrlfs.log")"
        wait_for $((retry + WAIT_DAEMON)) "the hook's registration" \
                test -e "$hooksd/50-resctrl-mon-hook-createruntime.json" -a \
                -e "$hooksd/50-resctrl-mon-hook-poststop.json" ||
                fail "[$v] not registered after resctrl was mounted: $(ds_log | tail -n 5)"
        for f in "$hooksd"/*.json; do
                [ "$(jq -r .hook.path "$f")" = /opt/resctrl-mon-hook/resctrl-mon-hook ] ||
                        fail "[$v] $f does not run the node's /opt/resctrl-mon-hook/resctrl-mon-hook: $(cat "$f")"
        done
        cmp -s "$n/opt/resctrl-mon-hook/config.yaml" "$tmp/$v/configmap-resctrl-mon-hook/config.yaml" ||
                fail "[$v] the installed config is not the ConfigMap's"
        wait_for "$WAIT_DAEMON" "readiness" ds_ready || fail "[$v] not ready after registering: $ready_out"

        step "[$v] b) adopt: the containers that started before"
        wait_for "$WAIT_DAEMON" "adopt's line" ds_log_has "adopt: " || fail "[$v] adopt did not run: $(ds_log | tail -n 5)"
        ds_started || fail "[$v] the startup probe fails once ready: $ready_out"
        ds_log | grep -qx "adopt: 5 containers seen, 2 adopted" ||
                fail "[$v] adopt did not adopt the two pods' containers: $(ds_log | grep -i adopt)"
        in_group "$v" "$uid1" "$p1_early" ||
                fail "[$v] the CRI-O pod's early container ($p1_early) is not in $(group "$v" "$uid1")/tasks"
        in_group "$v" "$uid2" "$p2_early" ||
                fail "[$v] the containerd pod's early container ($p2_early) is not in $(group "$v" "$uid2")/tasks"
        ! in_group "$v" "$uid1" "$p1_pause" || fail "[$v] adopt took CRI-O's infra container into the pod's group"
        ! in_group "$v" "$uid2" "$p2_pause" || fail "[$v] adopt took containerd's pause into the pod's group"

        step "[$v] c) a container with the registered hooks, and a process exec'd into it, joined by watch at its exec"
        ctr_start "$v" crio "$cg_prefix-p1-web" "$uid1" ctr
        p=$ctr_pid
        in_group "$v" "$uid1" "$p" || fail "[$v] createRuntime did not put $cg_prefix-p1-web ($p) in its pod's group"
        node_exec "$v" runc --root /run/runc exec -d --pid-file "$tmp/$v/exec1.pid" "$cg_prefix-p1-web" \
                sleep 1003 </dev/null >"$tmp/$v/exec1.log" 2>&1 || fail "[$v] runc exec: $(cat "$tmp/$v/exec1.log")"
        e=$(cat "$tmp/$v/exec1.pid" 2>/dev/null)
        wait_for $((gc_interval + WAIT_DAEMON)) "the exec'd process $e in its pod's group" in_group "$v" "$uid1" "$e" ||
                fail "[$v] the exec'd process $e did not join $(group "$v" "$uid1"); gc said: $(ds_log | grep -v '^resctrl-mon-hook-installer' | tail -n 4)"
        wait_for "$WAIT_DAEMON" "watch counting a join" watch_joined "$n" ||
                fail "[$v] watch joined nothing at an exec: $(cat "$n/run/resctrl-mon-hook/watch.state" 2>&1)"

        step "[$v] c) watch's /healthz as the liveness probe asks it, /metrics at the node's IP ($node_ip:$metrics_port): the probe passes, the pod's series are there"
        if wait_for "$WAIT_DAEMON" "the liveness probe passing" ds_live; then
                [ "$live_out" = ok ] || fail "[$v] /healthz says '$live_out', not ok"
        else
                fail "[$v] the liveness probe's GET $live_path at ${live_host:-$node_ip}:$metrics_port fails: ${live_out:-no answer}; $(ds_log | tail -n 3)"
        fi
        # The exec'd process is in the pod's threads: a scrape after the join.
        wait_for "$WAIT_DAEMON" "the CRI-O pod's series in a scrape" scraped_has \
                "^resctrl_pod_threads\{pod_uid=\"$uid1\",namespace=\"rmh-img\",pod=\"pod\"\} [1-9]" ||
                fail "[$v] /metrics has no series of pod $uid1 with its threads: $(grep -c . "$tmp/metrics" 2>/dev/null) lines, $(grep "$uid1" "$tmp/metrics" | head -n 3)"
        grep -Eq "^resctrl_pod_llc_occupancy_bytes\{pod_uid=\"$uid1\",namespace=\"rmh-img\",pod=\"pod\",ctrl_group=\"/\",domain=\"mon_L3_00\"\} [0-9]+\$" "$tmp/metrics" ||
                fail "[$v] /metrics has no L3 occupancy of pod $uid1: $(grep "$uid1" "$tmp/metrics" | head -n 3)"
        grep -qx 'resctrl_watch_running 1' "$tmp/metrics" || fail "[$v] /metrics does not say watch runs"
        # On the node's IP, as the entrypoint told watch, and 127.0.0.1 for the node's own clients.
        [ "$(ss -Hltn "sport = :$metrics_port" | awk '{ print $4 }' | sort -u | tr '\n' ' ')" = \
                "$(printf '%s\n' "127.0.0.1:$metrics_port" "$node_ip:$metrics_port" | sort -u | tr '\n' ' ')" ] ||
                fail "[$v] the metrics port is listened on at [$(ss -Hltn "sport = :$metrics_port" | awk '{ print $4 }' | tr '\n' ' ')], not $node_ip:$metrics_port and 127.0.0.1:$metrics_port"

        step "[$v] e) the same in the containerd pod"
        ctr_start "$v" containerd "$cg_prefix-p2-web" "$uid2" ctr
        p=$ctr_pid
        in_group "$v" "$uid2" "$p" || fail "[$v] createRuntime did not put $cg_prefix-p2-web ($p) in its pod's group"
        node_exec "$v" runc --root /run/containerd/runc/k8s.io exec -d --pid-file "$tmp/$v/exec2.pid" \
                "$cg_prefix-p2-web" sleep 1003 </dev/null >"$tmp/$v/exec2.log" 2>&1 ||
                fail "[$v] runc exec: $(cat "$tmp/$v/exec2.log")"
        e=$(cat "$tmp/$v/exec2.pid" 2>/dev/null)
        wait_for $((gc_interval + WAIT_DAEMON)) "the exec'd process $e in its pod's group" in_group "$v" "$uid2" "$e" ||
                fail "[$v] the exec'd process $e did not join $(group "$v" "$uid2"); gc said: $(ds_log | grep -v '^resctrl-mon-hook-installer' | tail -n 4)"

        step "[$v] d) the CRI-O pod's containers stop: its group stays while the pause runs," \
                "and goes within a gc pass once the pause stops and kubelet removes the pod's cgroup"
        pod_ends "$v" crio p1 "$uid1"
        step "[$v] e) the same for the containerd pod (its sandbox never hooked)"
        pod_ends "$v" containerd p2 "$uid2"

        step "[$v] what the container sees of the node: read-only where the manifest says"
        check_mounts "$v" "$tmp/base.ds"
        ds_ready || fail "[$v] not ready at the end: $ready_out"
        step "[$v] SIGTERM: exits 0, the hook stays registered"
        ds_stop "$v"
        [ "$(ls "$hooksd" | wc -l)" -eq 2 ] || fail "[$v] hooks.d holds [$(ls -A "$hooksd")] after SIGTERM"
        cat "$hooksd"/*.json >"$tmp/$v/registration"
        old_watch=$(jq .pid "$n/run/resctrl-mon-hook/watch.state")

        step "[$v] f) restarted, the nested runtime's pod the only state: the registration kept, ready"
        ds_run "$v" "$tmp/base.ds" again
        wait_for $((retry + WAIT_DAEMON)) "readiness after the restart" ds_ready ||
                fail "[$v] not ready after the restart: $ready_out; $(ds_log | tail -n 5)"
        # Ready comes with the previous pod's registration, maybe before
        # this one's own: its line is waited for.
        wait_for "$WAIT_DAEMON" "the restart's registration" \
                ds_log_has "installed /opt/resctrl-mon-hook/resctrl-mon-hook and registered it" ||
                fail "[$v] the restart did not register: $(ds_log | tail -n 5)"
        ! ds_log_has "removing the registration" || fail "[$v] the restart removed the registration: $(ds_log | grep removing)"
        cmp -s "$tmp/$v/registration" <(cat "$hooksd"/*.json) ||
                fail "[$v] the registration changed across the restart: $(cat "$hooksd"/*.json)"
        wait_for $((2 * gc_interval + WAIT_DAEMON)) "two gc passes of the restarted watch" \
                new_watch_passes "$n" "$old_watch" 2 || fail "[$v] the restarted watch made no two gc passes"
        ! ds_log_has "refusing" || fail "[$v] gc refused its passes: $(ds_log | grep refusing | tail -n 2)"
        cmp -s "$tmp/$v/foreign.members" "$foreign" || fail "[$v] the nested runtime's pod's file changed: $(cat "$foreign")"
        ds_ready || fail "[$v] not ready after two passes: $ready_out"
        ds_stop "$v"
        [ "$(ls "$hooksd" | wc -l)" -eq 2 ] || fail "[$v] hooks.d holds [$(ls -A "$hooksd")] after the second SIGTERM"
        say "[$v] $(($(date +%s) - t0))s"
}

# pod_ends VIEW RUNTIME POD UID: POD's containers stop, and its group stays
# while its pause runs; then the pause stops and kubelet removes the pod's
# cgroup, and the group and the pod's state go within a gc pass.
pod_ends() {
        local v=$1 runtime=$2 pod=$3 uid=$4
        ctr_delete "$v" "$runtime" "$cg_prefix-$pod-web"
        ctr_delete "$v" "$runtime" "$cg_prefix-$pod-early"
        local passes
        passes=$(jq .passes "$n/run/resctrl-mon-hook/watch.state")
        wait_for $((2 * gc_interval + WAIT_DAEMON)) "two more gc passes" watch_passes "$n" $((passes + 2)) ||
                fail "[$v] watch made no two gc passes more"
        [ -d "$(group "$v" "$uid")" ] || fail "[$v] the group of pod $uid went while its pause runs"
        ctr_delete "$v" "$runtime" "$cg_prefix-$pod-pause"
        pod_cgroup_remove "$v" "$uid"
        wait_for $((gc_interval + WAIT_DAEMON)) "the group of pod $uid removed" test ! -e "$(group "$v" "$uid")" ||
                fail "[$v] the group of pod $uid outlived its cgroup; gc said: $(ds_log | grep -v '^resctrl-mon-hook-installer' | tail -n 4)"
        # gc removes the group, then the pod's state: wait for that too.
        wait_for "$WAIT_DAEMON" "the state of pod $uid removed" test ! -e "$n/run/resctrl-mon-hook/$uid.members" ||
                fail "[$v] the state of pod $uid stays"
}

# check_mounts VIEW DS: in the running container, each volumeMount of DS is
# a mount, read-only exactly where readOnly says, and so is every mount
# below it where recursiveReadOnly says.
check_mounts() {
        local pid j path ro rro opts below s=spec.template.spec.containers.0
        pid=$(pm inspect --format '{{.State.Pid}}' "$ds")
        for j in $(sed -n "s|^$s\.volumeMounts\.\([0-9]*\)\.mountPath=.*|\1|p" "$2"); do
                path=$(sed -n "s|^$s\.volumeMounts\.$j\.mountPath=||p" "$2")
                ro=$(sed -n "s|^$s\.volumeMounts\.$j\.readOnly=||p" "$2")
                rro=$(sed -n "s|^$s\.volumeMounts\.$j\.recursiveReadOnly=||p" "$2")
                if [ "$rro" = IfPossible ] || [ "$rro" = Enabled ]; then
                        below=$(awk -v p="$path" 'index($5, p "/") == 1 && $6 !~ /(^|,)ro(,|$)/ { print $5 }' \
                                "/proc/$pid/mountinfo" | head -n 3)
                        [ -z "$below" ] || fail "[$1] below $path, $(echo "$below" | tr '\n' ' ')writable in the container"
                fi
                opts=$(awk -v p="$path" '$5 == p { o = $6 } END { print o }' "/proc/$pid/mountinfo")
                if [ -z "$opts" ]; then
                        fail "[$1] $path is not a mount in the container"
                elif [ "$ro" = true ]; then
                        case ,$opts, in *,ro,*) ;; *) fail "[$1] $path is mounted $opts in the container, not ro" ;; esac
                else
                        case ,$opts, in *,rw,*) ;; *) fail "[$1] $path is mounted $opts in the container, not rw" ;; esac
                fi
        done
}

# --- bad input ---------------------------------------------------------------

# without_mount DS HOSTPATH: DS without that hostPath's volume and its mount.
without_mount() {
        local s=spec.template.spec i name j
        i=$(sed -n "s|^$s\.volumes\.\([0-9]*\)\.hostPath\.path=$2\$|\1|p" "$1")
        name=$(sed -n "s|^$s\.volumes\.$i\.name=||p" "$1")
        j=$(sed -n "s|^$s\.containers\.0\.volumeMounts\.\([0-9]*\)\.name=$name\$|\1|p" "$1")
        grep -v -e "^$s\.volumes\.$i\." -e "^$s\.containers\.0\.volumeMounts\.$j\." "$1"
}

# read_write DS HOSTPATH: DS with that hostPath mounted read-write.
read_write() {
        local s=spec.template.spec i name j
        i=$(sed -n "s|^$s\.volumes\.\([0-9]*\)\.hostPath\.path=$2\$|\1|p" "$1")
        name=$(sed -n "s|^$s\.volumes\.$i\.name=||p" "$1")
        j=$(sed -n "s|^$s\.containers\.0\.volumeMounts\.\([0-9]*\)\.name=$name\$|\1|p" "$1")
        grep -v -e "^$s\.containers\.0\.volumeMounts\.$j\.readOnly=" \
                -e "^$s\.containers\.0\.volumeMounts\.$j\.recursiveReadOnly=" "$1"
}

# bad_ready VIEW ROW: the running container is not ready within a retry,
# its probe naming ROW's failure, and its log saying so.
bad_ready() {
        wait_for "$WAIT_DAEMON" "the log saying why" ds_log_has "installer:   fail  $2 " ||
                fail "[$1] the log does not say why it is not ready: $(ds_log | tail -n 5)"
        ds_log_has "not ready, and changing nothing on the node" ||
                fail "[$1] the log does not say it changes nothing: $(ds_log | tail -n 5)"
        ds_ready && fail "[$1] ready with $2 failing: $ready_out"
        printf '%s\n' "$ready_out" | grep -q "^fail  $2 " ||
                fail "[$1] the probe does not name the $2 row: $ready_out"
}

# bad_run VIEW DS NAME ROW: the DaemonSet's container as DS has it, on a
# node it has not touched yet, is not ready, naming ROW, and changes nothing
# on the node within two gc intervals: registers nothing, installs nothing,
# adopts nothing.
bad_run() {
        local before
        before=$(node_snapshot "$1")
        ds_run "$1" "$2" "$3"
        bad_ready "$1" "$4"
        sleep $((2 * gc_interval + 1))
        [ "$(node_snapshot "$1")" = "$before" ] ||
                fail "[$1] the node changed under a DaemonSet that is not ready ($3): $(diff <(echo "$before") <(node_snapshot "$1") | head -n 10)"
        ds_stop "$1"
}

# bad_input VIEW: on a node the DaemonSet has not touched yet (resctrl
# mounted, nothing registered or installed), with a pod that started before:
# manifests that mount the cgroup tree missing or read-write fail the
# manifest's checks; the image run with either, or with a runtime root that
# is a symlink, is not ready, naming the row, and changes nothing on the node
# (bad_run): the pod is not adopted.
bad_input() {
        local v=$1 n=$tmp/$1/node uid3 problems
        rm -f "$n/usr/share/containers/oci/hooks.d"/*.json "$n/opt/resctrl-mon-hook"/* ||
                die "cannot undo the registration"
        uid3=$(cat /proc/sys/kernel/random/uuid)
        step "[$v] bad input: a node not registered, with a running pod $uid3"
        ctr_start "$v" crio "$cg_prefix-p3-pause" "$uid3" pause
        ctr_start "$v" crio "$cg_prefix-p3-web" "$uid3" ctr
        [ ! -e "$(group "$v" "$uid3")" ] || fail "[$v] pod $uid3 has a group with no hook registered"

        step "[$v] bad input: the cgroup tree mounted read-write: the manifest's checks fail; not ready, naming node-cgroups"
        read_write "$tmp/base.ds" /sys/fs/cgroup >"$tmp/rw.ds"
        problems=$(manifest_problems "$tmp/rw.ds")
        printf '%s\n' "$problems" | grep -qx "the hostPath /sys/fs/cgroup is mounted read-write" ||
                fail "[$v] a read-write cgroup mount passes the manifest's checks: [$problems]"
        bad_run "$v" "$tmp/rw.ds" rwcgroup node-cgroups
        printf '%s\n' "$ready_out" | grep -q "mounted read-write here" ||
                fail "[$v] the probe does not say the tree is read-write: $ready_out"

        step "[$v] bad input: no cgroup tree: the manifest's checks fail; not ready, naming node-cgroups"
        without_mount "$tmp/base.ds" /sys/fs/cgroup >"$tmp/nocg.ds"
        problems=$(manifest_problems "$tmp/nocg.ds")
        printf '%s\n' "$problems" | grep -qx "no hostPath volume of /sys/fs/cgroup" ||
                fail "[$v] a manifest without the cgroup mount passes the manifest's checks: [$problems]"
        bad_run "$v" "$tmp/nocg.ds" nocgroup node-cgroups

        # kubelet checks a hostPath's type through a symlink, and containerd
        # and CRI-O resolve it before they mount it: in the container a
        # runtime root is never a symlink, it is the directory the node's
        # symlink leads to, which check must then judge (here: not root's).
        step "[$v] bad input: a runtime root that is a symlink, to a directory not root's: not ready, naming runtime-roots"
        mkdir "$n/run/crun.other" && chown 65534:65534 "$n/run/crun.other" && rmdir "$n/run/crun" &&
                ln -s crun.other "$n/run/crun" || die "cannot make $n/run/crun a symlink"
        bad_run "$v" "$tmp/base.ds" symlink runtime-roots
        printf '%s\n' "$ready_out" | grep -q "runtime root '/run/crun' is not root's own directory" ||
                fail "[$v] the probe does not say /run/crun is not root's: $ready_out"
        rm "$n/run/crun" && rmdir "$n/run/crun.other" && mkdir "$n/run/crun" || die "cannot put $n/run/crun back"
        ctr_delete "$v" crio "$cg_prefix-p3-web"
        ctr_delete "$v" crio "$cg_prefix-p3-pause"
}

# --- main ----------------------------------------------------------------------

step "the manifests: deploy/base and deploy/overlays/containerd-nri rendered"
render deploy/base base
ds_of "$tmp/base.flat" >"$tmp/base.ds"
problems=$(manifest_problems "$tmp/base.ds")
[ -z "$problems" ] || fail "deploy/base: $problems"
# e) NRI's hook-injector is another DaemonSet beside this one, which the test
# stands in for (hooks_of); this one's pod must be the base's.
render deploy/overlays/containerd-nri nri
ds_of "$tmp/nri.flat" >"$tmp/nri.ds"
cmp -s "$tmp/base.ds" "$tmp/nri.ds" ||
        fail "the containerd-nri overlay changes the DaemonSet, which this test runs as the base's: $(diff "$tmp/base.ds" "$tmp/nri.ds" | head -n 10)"
# The test's own rule: a key it does not know fails.
{ cat "$tmp/base.ds"; echo "spec.template.spec.containers.0.workingDir=/"; } >"$tmp/unknown.ds"
mkdir -p "$tmp/selftest/node/sys/fs/resctrl" || die "mkdir"
( derive "$tmp/unknown.ds" "$tmp/base.flat" selftest 2>"$tmp/unknown.err" && [ "$unknown" -eq 1 ] ) &&
        grep -q "workingDir" "$tmp/unknown.err" || fail "a key the test does not know goes unnoticed: $(cat "$tmp/unknown.err")"
rm -rf "$tmp/selftest"
make_rootfs

# runtime_wrapper FILE EXEC: runc as Podman's runtime, as the node's runtime
# would run it. recursiveReadOnly as containerd 2.0 and CRI-O do it, which
# Podman 4.3 cannot pass: a created container's mounts that the annotation
# rmh-test.recursive-read-only names get "rro" (runc, Linux 5.12+) for "ro".
# EXEC runs runc: on the host, or in the pure v2 view (below).
runtime_wrapper() {
        mkdir -p "$(dirname "$1")" || die "mkdir"
        # shellcheck disable=SC2016 # the wrapper's
        printf '%s\n' '#!/bin/sh' \
                'bundle="" prev="" create=""' \
                'for a in "$@"; do' \
                '        case $prev in --bundle | -b) bundle=$a ;; esac' \
                '        case $a in --bundle=*) bundle=${a#--bundle=} ;; create) create=1 ;; esac' \
                '        prev=$a' \
                'done' \
                'if [ -n "$create" ] && [ -f "$bundle/config.json" ]; then' \
                '        jq '\''(.annotations["rmh-test.recursive-read-only"] // "" | split(":")) as $d | .mounts |= map(if (.destination as $x | $d | index($x)) then .options |= map(if . == "ro" then "rro" else . end) else . end)'\'' \' \
                '                "$bundle/config.json" >"$bundle/config.json.rro" && mv "$bundle/config.json.rro" "$bundle/config.json" || exit 1' \
                'fi' \
                "$2" >"$1" && chmod 0755 "$1" || die "cannot write $1"
}
runtime_wrapper "$tmp/bin/host/runc" 'exec runc "$@"'
# The pure v2 view: runc sees cgroup2 alone at /sys/fs/cgroup, in a mount
# namespace of its own per call (Podman's, conmon's), while Podman runs on
# the host. runc, not crun: crun raises RLIMIT_MEMLOCK before it loads the
# device filter of a cgroup v2 container, which takes CAP_SYS_RESOURCE,
# which a sandbox may lack.
# shellcheck disable=SC2016
runtime_wrapper "$tmp/bin/v2/runc" \
        'exec unshare -m --propagation slave sh -c '\''umount -R /sys/fs/cgroup && mount -t cgroup2 none /sys/fs/cgroup && exec runc "$@"'\'' runc "$@"'

run_view host
bad_input host
if [ "$(stat -fc %T /sys/fs/cgroup)" != cgroup2fs ]; then
        run_view v2
fi

say "timing: bases ${t_bases}s, image ${t_image}s, all $(($(date +%s) - started))s"
[ "$failures" -eq 0 ] || die "$failures assertions failed"
say PASS
