#!/usr/bin/env bash
# Builds a local test image with Open MPI for multinode container runs: busybox and the
# node's own Open MPI (Debian's openmpi-bin, libopenmpi3 and what they load), imported into
# podman's storage as localhost/fuzz-test-ompi:latest. No registry is needed. Idempotent like
# scripts/container-test-image.sh (a label holds the root filesystem's sha256). Prints the
# image reference to use as `image.uri`.
#
#   bash scripts/container-test-image-ompi.sh
#
# Needs podman, busybox-static and openmpi-bin installed on this machine (Debian 12).
set -euo pipefail

TAG=localhost/fuzz-test-ompi:latest
LABEL=fuzz.rootfs.sha256
PKGS="openmpi-bin libopenmpi3 openmpi-common libpmix2 libhwloc15 libhwloc-plugins
libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1 libnl-3-200
libnl-route-3-200 libpsm2-2 libpsm-infinipath1"

for cmd in podman tar sha256sum dpkg ldd; do
  command -v "$cmd" >/dev/null || { echo "container-test-image-ompi.sh: $cmd not found" >&2; exit 1; }
done
[ -x /bin/busybox ] || { echo "container-test-image-ompi.sh: /bin/busybox missing (busybox-static)" >&2; exit 1; }
[ -x /usr/bin/mpirun.openmpi ] || { echo "container-test-image-ompi.sh: Open MPI missing (openmpi-bin)" >&2; exit 1; }

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/rootfs
mkdir -p "$ROOT"/{bin,dev,etc,proc,sys,tmp,root,usr/bin}
chmod 1777 "$ROOT/tmp"
cp /bin/busybox "$ROOT/bin/busybox"
for applet in $(/bin/busybox --list); do
  [ -e "$ROOT/bin/$applet" ] || ln -s busybox "$ROOT/bin/$applet"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$ROOT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOT/etc/group"

# The packages' files (present ones; some are installed only in part), and what they link.
FILES=$WORK/files
for p in $PKGS; do dpkg -L "$p" 2>/dev/null || true; done | sort -u | while read -r f; do
  [ -f "$f" ] || [ -L "$f" ] || continue
  case "$f" in /usr/share/doc/*|/usr/share/man/*|/usr/share/lintian/*) continue ;; esac
  echo "$f"
  if [ -L "$f" ]; then readlink -f "$f"; fi
done > "$FILES"
grep -E '\.so|^/usr/bin/' "$FILES" | xargs -r ldd 2>/dev/null | grep -o '/[^ :]*' \
  | grep '^/' | sort -u > "$FILES.libs" || true
cat "$FILES.libs" >> "$FILES"
# A library's links (libc.so.6 -> libc-2.36.so is not Debian 12's, but others are).
while read -r f; do if [ -L "$f" ]; then readlink -f "$f"; fi; done < "$FILES.libs" >> "$FILES"
# Merged /usr: one copy of each, under /usr (tar keeps symbolic links as they are).
sort -u "$FILES" | while read -r f; do if [ -e "$f" ]; then echo "$f"; fi; done > "$FILES.ok"
tar -cf - -P --no-recursion --transform 's,^/lib64/,usr/lib64/,S;s,^/lib/,usr/lib/,S;s,^/,,S' -T "$FILES.ok" 2>/dev/null \
  | tar -xf - -C "$ROOT"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
for t in mpirun mpiexec; do [ -e "$ROOT/usr/bin/$t" ] || ln -s mpirun.openmpi "$ROOT/usr/bin/$t"; done
[ -e "$ROOT/usr/bin/orted" ] || { echo "container-test-image-ompi.sh: orted not copied" >&2; exit 1; }

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$ROOT" -cf "$WORK/rootfs.tar" .
SUM=$(sha256sum "$WORK/rootfs.tar" | cut -d' ' -f1)
HAVE=$(podman image inspect --format "{{index .Labels \"$LABEL\"}}" "$TAG" 2>/dev/null || true)
if [ "$HAVE" != "$SUM" ]; then
  podman import -q --change "LABEL $LABEL=$SUM" --change 'CMD ["/bin/sh"]' \
    --change 'ENV PATH=/usr/bin:/bin' "$WORK/rootfs.tar" "$TAG" >/dev/null
fi
echo "docker://$TAG"
