#!/usr/bin/env bash
# The release tarball tested as a user gets it: built by scripts/release (or the one named by
# FUZZ_RELEASE_TARBALL), its .sha256 checked, unpacked; `file` and `ldd` say the binaries are
# static; each is under the size goal; and fuzzlint and fuzz run in a root that holds nothing
# but them and a Fuzzfile: no libc, no loader, no /etc. Then the platform-specific VS Code
# package is built with the released fuzzlint inside and read back
# (editors/vscode/test/platform-package.test.js).
#
#   bash tests/release/run.sh                      # builds the release (scripts/release), then tests it
#   FUZZ_RELEASE_TARBALL=target/dist/...tar.gz bash tests/release/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() {
  echo "error: tests/release: $*" >&2
  exit 1
}
require_or_skip() {
  if [ -n "${FUZZ_REQUIRE_SYSTEM_TESTS:-}" ]; then fail "$1"; fi
  echo "skipping the release tarball's no-libc run: $1"
}

# The size goal of each binary, in bytes (10 MB): over it is reported; over the limit (12 MB,
# about an opt-level 3 build's size) fails, as a lost [profile.dist] setting would.
GOAL_SIZE=10000000
MAX_SIZE=12000000

if ! command -v file >/dev/null 2>&1; then
  if [ -n "${FUZZ_REQUIRE_SYSTEM_TESTS:-}" ]; then fail "\`file\` is not installed (scripts/ci-packages.txt)"; fi
  echo "skipping the release tarball test: \`file\` is not installed (Debian: apt-get install file)"
  exit 0
fi

start=$(date +%s)
tarball=${FUZZ_RELEASE_TARBALL:-}
if [ -z "$tarball" ]; then
  # The release's own profile (fat LTO): thin LTO took as much CPU time here and made fuzz
  # larger than the size goal (docs/install.md). FUZZ_RELEASE_LTO=thin|off to try others.
  tarball=$(bash scripts/release ${FUZZ_RELEASE_LTO:+--lto "$FUZZ_RELEASE_LTO"})
fi
[ -f "$tarball" ] || fail "no tarball $tarball"
name=$(basename "$tarball" .tar.gz)
# The machine the binaries are for: `file`'s name of it, the VS Code platform, and how they
# run here (an aarch64 tarball runs under qemu-aarch64-static, itself a static program, put
# into the root beside them).
emulator=
case "$name" in
  fuzzfile-toolchain-*-x86_64-unknown-linux-gnu-static) machine=x86-64 vscode=linux-x64 ;;
  fuzzfile-toolchain-*-aarch64-unknown-linux-gnu-static)
    machine="ARM aarch64" vscode=linux-arm64
    if [ "$(uname -m)" != aarch64 ]; then
      emulator=$(command -v qemu-aarch64-static) ||
        fail "an aarch64 tarball runs here under qemu-aarch64-static (Debian: qemu-user-static)"
    fi
    ;;
  *) fail "$name: not a tarball of fuzzfile-toolchain-<version>-<x86_64|aarch64>-unknown-linux-gnu-static" ;;
esac

# The checksum file is sha256sum's format, for the tarball's own name.
(cd "$(dirname "$tarball")" && sha256sum --check --strict "$name.tar.gz.sha256") >/dev/null ||
  fail "$name.tar.gz.sha256 does not match"

# Exactly the two binaries, the LICENSE and the README, in one folder.
listing=$(tar -tzf "$tarball" | sort | tr '\n' ' ')
expected="$name/ $name/LICENSE $name/README.md $name/fuzz $name/fuzzlint "
[ "$listing" = "$expected" ] || fail "the tarball holds [$listing], expected [$expected]"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
dir="$work/$name"
grep -q "Apache License" "$dir/LICENSE" || fail "LICENSE is not the Apache License"
version=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)
# The README's Installing section, naming this version's x86-64 tarball (a new version
# updates it).
x86=fuzzfile-toolchain-$version-x86_64-unknown-linux-gnu-static
grep -qF "sha256sum --check $x86.tar.gz.sha256" "$dir/README.md" ||
  fail "the tarball's README.md (README.md's Installing section) does not name $x86.tar.gz.sha256"
for b in fuzzlint fuzz; do
  f="$dir/$b"
  [ -x "$f" ] || fail "$b is not executable"
  out=$(file -b "$f")
  echo "file $b: $out"
  case "$out" in
    *"ELF 64-bit LSB"*"$machine"*"static-pie linked"* | *"ELF 64-bit LSB"*"$machine"*"statically linked"*) ;;
    *) fail "file says $b is not a static $machine executable: $out" ;;
  esac
  case "$out" in *interpreter* | *"dynamically linked"*) fail "$b has a dynamic loader: $out" ;; esac
  case "$out" in *", stripped"*) ;; *) fail "$b is not stripped: $out" ;; esac
  # ldd: "statically linked" (a static PIE) or "not a dynamic executable"; exit 1 for the latter.
  out=$(ldd "$f" 2>&1 || true)
  echo "ldd $b: $(echo "$out" | tr -s ' \t\n' ' ')"
  case "$out" in
    *"statically linked"* | *"not a dynamic executable"*) ;;
    *) fail "ldd lists libraries for $b: $out" ;;
  esac
  size=$(stat -c %s "$f")
  echo "size $b: $size bytes"
  [ "$size" -lt "$MAX_SIZE" ] || fail "$b is $size bytes, over the limit of $MAX_SIZE"
  if [ "$size" -ge "$GOAL_SIZE" ]; then
    echo "warning: $b is $size bytes, over the size goal of $GOAL_SIZE (docs/install.md)" >&2
  fi
done

# A root with nothing but the binaries and two Fuzzfiles: no libc, no loader, no /etc.
root="$work/root"
mkdir -p "$root/work"
cp "$dir/fuzzlint" "$dir/fuzz" "$root/"
cp examples/hello-world.fz "$root/work/"
printf 'version: v4\njobs:\n  train:\n    image:\n      uri: docker://alpine:3.20\n    imagee: x\n    command: [echo, hi]\n' >"$root/work/bad.fz"
run=
if [ -n "$emulator" ]; then
  cp "$emulator" "$root/emulator"
  case "$(file -b "$root/emulator")" in
    *"static-pie linked"* | *"statically linked"*) ;;
    *) fail "$emulator is not a static program: it cannot run in a root without libc" ;;
  esac
  run=/emulator
fi
contents=$(cd "$root" && find . | sort | tr '\n' ' ')
[ "$contents" = ". ${run:+./emulator }./fuzz ./fuzzlint ./work ./work/bad.fz ./work/hello-world.fz " ] ||
  fail "the root holds more than the binaries and the Fuzzfiles: $contents"

# chroot as root; else a user namespace (unshare -r) where the kernel allows it.
# `env -i`: an empty environment (no PATH, HOME, LANG) inside.
if [ "$(id -u)" = 0 ] && command -v chroot >/dev/null 2>&1; then
  chroot=$(command -v chroot)
  inroot() { env -i "$chroot" "$root" $run "$@"; }
  how=chroot
elif unshare -r --root="$root" $run /fuzzlint --version >/dev/null 2>&1; then
  unshare=$(command -v unshare)
  inroot() { env -i "$unshare" -r --root="$root" $run "$@"; }
  how="unshare -r --root"
else
  require_or_skip "needs root (chroot) or user namespaces (unshare -r --root)"
fi
if [ -n "${how:-}" ]; then
  echo "running in a root without libc ($how${run:+, under $emulator}): $contents"
  out=$(inroot /fuzzlint --version) || fail "fuzzlint --version failed without libc"
  [ "$out" = "fuzzlint $version" ] || fail "fuzzlint --version printed [$out], expected [fuzzlint $version]"
  out=$(inroot /fuzz --version) || fail "fuzz --version failed without libc"
  [ "$out" = "fuzz $version" ] || fail "fuzz --version printed [$out], expected [fuzz $version]"
  out=$(inroot /fuzzlint check /work/hello-world.fz) || fail "fuzzlint check of an example failed: $out"
  echo "fuzzlint check /work/hello-world.fz: $out"
  case "$out" in *"no problems found"*) ;; *) fail "fuzzlint check printed [$out]" ;; esac
  # A Fuzzfile with a mistake: found, with its position, and exit 1.
  rc=0
  out=$(inroot /fuzzlint check /work/bad.fz 2>&1) || rc=$?
  [ $rc = 1 ] || fail "fuzzlint check of a Fuzzfile with an unknown key exited $rc: $out"
  case "$out" in *"FZ010"*"/work/bad.fz:6:5"*) ;; *) fail "the unknown key (FZ010 at 6:5) is not in [$out]" ;; esac
  out=$(inroot /fuzz plan /work/hello-world.fz) || fail "fuzz plan of an example failed without libc"
  printf '%s' "$out" | python3 -c '
import json, sys
plan = json.load(sys.stdin)
assert plan["plan_version"] == 1, plan["plan_version"]
assert plan["workflow"]["source"].endswith("hello-world.fz"), plan["workflow"]
assert plan["jobs"], "no jobs"
' || fail "fuzz plan did not print a launch plan: $(printf '%s' "$out" | head -c 300)"
  echo "fuzz plan /work/hello-world.fz: a launch plan of $(printf '%s' "$out" | wc -c) bytes"
fi

# The platform-specific VS Code package, with this fuzzlint at server/fuzzlint (its test runs
# the server, so only for this machine's platform).
if [ -n "$emulator" ]; then
  vsix=$(cd editors/vscode && node scripts/package.js --target "$vscode" --server "$dir/fuzzlint" | tail -n 1)
  echo "built $vsix (not tested here: its server is for another machine)"
elif command -v node >/dev/null 2>&1 && [ -d editors/vscode/node_modules/@vscode/vsce ]; then
  vsix=$(cd editors/vscode && node scripts/package.js --target "$vscode" --server "$dir/fuzzlint" | tail -n 1)
  vsix=$(cd editors/vscode && realpath "$vsix")
  (cd editors/vscode && FUZZFILE_SERVER="$dir/fuzzlint" FUZZFILE_PLATFORM_VSIX="$vsix" \
    node --test test/platform-package.test.js)
elif [ -n "${FUZZ_REQUIRE_SYSTEM_TESTS:-}" ]; then
  fail "the platform package needs node and \`npm ci\` in editors/vscode"
else
  echo "skipping the platform VS Code package: run \`npm ci\` in editors/vscode (needs node)"
fi
echo "tests/release: passed in $(($(date +%s) - start)) s"
