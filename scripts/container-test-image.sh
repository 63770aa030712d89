#!/usr/bin/env bash
# Builds the local test image for real container runs: a busybox-only root filesystem,
# imported into podman's storage as localhost/fuzz-test:latest. No registry is needed.
# Idempotent: the root filesystem tar is reproducible and its sha256 is kept as an image
# label; when the stored image already carries the same label nothing is imported again.
# Prints the image reference to use as `image.uri` in a Fuzzfile (podman resolves
# docker://localhost/... to the local image without contacting any registry).
#
#   bash scripts/container-test-image.sh [--conf FILE]
#
# --conf FILE also writes a containers.conf that makes `podman run` work as root on hosts
# without CAP_SYS_RESOURCE and on hybrid cgroup v1/v2 hosts (see the comment in it); use it
# with CONTAINERS_CONF=FILE. podman honours CONTAINERS_STORAGE_CONF as usual, so a test can
# keep its images in a directory of its own.
#
# Debian 12 packages (as root; `apt-get install -y --no-install-recommends ...`):
#   podman        (pulls conmon, crun, golang-github-containers-common,
#                  containernetworking-plugins, iptables)
#   runc          (the runtime the --conf file selects; crun 1.8 refuses hybrid cgroups)
#   busybox-static
# Not needed as root with --network host/none: uidmap, fuse-overlayfs, slirp4netns, passt,
# catatonit, buildah.
set -euo pipefail

TAG=localhost/fuzz-test:latest
REF=docker://$TAG
LABEL=fuzz.rootfs.sha256
CONF=

while [ $# -gt 0 ]; do
  case "$1" in
    --conf) CONF=${2:?--conf needs a file}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "container-test-image.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

for cmd in podman tar sha256sum; do
  command -v "$cmd" >/dev/null || { echo "container-test-image.sh: $cmd not found" >&2; exit 1; }
done
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] || { echo "container-test-image.sh: $BUSYBOX missing (apt-get install busybox-static)" >&2; exit 1; }
if ldd "$BUSYBOX" >/dev/null 2>&1; then
  echo "container-test-image.sh: $BUSYBOX is dynamically linked (install busybox-static)" >&2
  exit 1
fi

if [ -n "$CONF" ]; then
  mkdir -p "$(dirname "$CONF")"
  cat > "$CONF" <<'EOF'
# containers.conf for test runs of `fuzz run --runtime podman` (use: CONTAINERS_CONF=this file).
[containers]
# podman asks the OCI runtime for nofile=1048576 and nproc=<podman's own limit> by default;
# raising a hard limit needs CAP_SYS_RESOURCE, which sandboxed roots may lack. Lower limits
# are always allowed.
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
# Containers started without --network get no network (no CNI bridge, no iptables).
netns = "none"

[engine]
# crun 1.8 (Debian 12) fails with "cgroups in hybrid mode not supported" when the cgroup v2
# hierarchy of a hybrid host has a controller; runc works there and on cgroup v2 hosts.
runtime = "runc"
# No systemd needed: plain cgroupfs and a file for events.
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/rootfs
mkdir -p "$ROOT"/{bin,dev,etc,proc,sys,tmp,root}
chmod 1777 "$ROOT/tmp"
cp "$BUSYBOX" "$ROOT/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ -e "$ROOT/bin/$applet" ] || ln -s busybox "$ROOT/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
    -C "$ROOT" -cf "$WORK/rootfs.tar" .
SUM=$(sha256sum "$WORK/rootfs.tar" | cut -d' ' -f1)

HAVE=$(podman image inspect --format "{{index .Labels \"$LABEL\"}}" "$TAG" 2>/dev/null || true)
if [ "$HAVE" != "$SUM" ]; then
  podman import -q --change "LABEL $LABEL=$SUM" --change 'CMD ["/bin/sh"]' \
    "$WORK/rootfs.tar" "$TAG" >/dev/null
fi
echo "$REF"
