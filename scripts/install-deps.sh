#!/bin/sh
# Installs what building and testing resctrl-mon-hook needs on Debian 12.
# Skips apt-get entirely when everything is already there. clang with
# libclang-rt-14-dev (the ASan, UBSan and libFuzzer runtimes) builds the
# sanitizer and fuzzing builds; clang-tidy and valgrind are test stages;
# debootstrap makes the base images of the DaemonSet's image test.
# stress-ng loads the machine under scripts/flake-hunt.sh. libmicrohttpd
# (its headers; watch opens the library itself) serves watch's /metrics;
# curl, openssl and htpasswd (apache2-utils) are its suite's client, its
# certificates and its bcrypt hashes.
set -eu

packages="build-essential cmake pkg-config libjansson-dev libyaml-dev check
libmicrohttpd-dev libcrypt-dev curl openssl apache2-utils
libfuse3-dev fuse3 runc crun podman containernetworking-plugins busybox-static
containerd python3-grpcio python3-grpc-tools
strace gdb jq prometheus go-md2man debhelper dpkg-dev lintian debootstrap
clang libclang-rt-14-dev clang-tidy valgrind stress-ng"

missing=""
for p in $packages; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
# kubectl renders deploy/'s kustomizations; Debian's is kubernetes-client, but
# any kubectl does (some images carry another package's).
command -v kubectl >/dev/null 2>&1 || missing="$missing kubernetes-client"
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: missing packages:$missing (run as root to install them)" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
