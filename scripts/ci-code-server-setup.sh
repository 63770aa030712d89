#!/usr/bin/env bash
# Installs what tests/code-server/run.sh needs: Debian's Chromium (the browser that drives the
# page), libkrb5-dev (code-server's `kerberos` native module is built against it), Debian's
# ripgrep (see below), and the pinned npm packages of tests/code-server (code-server,
# playwright-core) with `npm ci`.
#
# code-server's own postinstall runs `npm install` in lib/vscode, and there @vscode/ripgrep
# 1.15.11 downloads `rg` from GitHub's release API, which CI cannot reach. That package first
# looks for the archive in its download cache ($TMPDIR/vscode-ripgrep-cache-1.15.11/), so the
# cache is filled with an archive of Debian's /usr/bin/rg (also ripgrep 13.0.0), in a private
# TMPDIR. The postinstall refuses to run as root unless npm says unsafe-perm: that is set too.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -qq --no-install-recommends chromium libkrb5-dev ripgrep build-essential python3 >/dev/null
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "skipping tests/code-server's npm ci: npm is not installed"
  exit 0
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" != 20 ]; then
  # code-server 4.100.3 (tests/code-server/package.json) requires exactly Node.js 20.
  echo "skipping tests/code-server's npm ci: code-server 4.100.3 needs Node.js 20, not $node_major"
  exit 0
fi
if [ ! -x /usr/bin/rg ]; then
  echo "error: tests/code-server needs Debian's ripgrep (/usr/bin/rg): apt-get install ripgrep" >&2
  exit 1
fi

# Already installed from this lock file with this Node.js: nothing to do (npm ci would wipe
# and rebuild everything, about a minute and a half).
stamp=tests/code-server/node_modules/.fuzzfile-installed
want="$(sha256sum tests/code-server/package-lock.json | cut -d' ' -f1) node $(node --version)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
  [ -x tests/code-server/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg ]; then
  echo "tests/code-server: up to date ($stamp)"
  exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The names @vscode/ripgrep 1.15.11 (pinned by code-server 4.100.3) looks for.
cache="$work/vscode-ripgrep-cache-1.15.11"
mkdir -p "$cache/stage"
cp /usr/bin/rg "$cache/stage/rg"
tar -czf "$cache/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$cache/stage" rg

args=(--no-audit --no-fund --loglevel=error)
# node-gyp builds the native modules against the installed Node.js headers instead of
# downloading them from nodejs.org.
if [ -f /usr/include/node/node.h ]; then
  export npm_config_nodedir=/usr
fi
start=$(date +%s)
(cd tests/code-server && TMPDIR="$work" npm_config_unsafe_perm=true npm_config_yes=true JOBS=max npm ci "${args[@]}")
rg_bin=tests/code-server/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg
if ! "$rg_bin" --version >/dev/null; then
  echo "error: code-server's ripgrep ($rg_bin) does not run" >&2
  exit 1
fi
echo "$want" >"$stamp"
echo "tests/code-server: npm ci took $(($(date +%s) - start)) s"
