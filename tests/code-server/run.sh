#!/usr/bin/env bash
# The VS Code extension in a real VS Code: code-server (tests/code-server/node_modules, from
# `npm ci` here, as scripts/ci-code-server-setup.sh does) with the packaged .vsix installed,
# driven by Debian's Chromium through playwright-core (test.mjs).
#
#   tests/code-server/run.sh FUZZLINT VSIX
#   tests/code-server/run.sh --bundled VSIX
#
# FUZZLINT: the fuzzlint binary the extension starts (`fuzzlint.path`); VSIX: the packaged
# extension. --bundled: VSIX is a platform package with its own server (server/fuzzlint), and
# the extension must find it by itself: `fuzzlint.path` is not set and no fuzzlint is on the
# PATH code-server gets. Either way the extension's output channel must name the server it
# started, from the expected place. Builds nothing. Starts code-server on a free localhost port (auth none, a fresh
# user-data and extensions folder), installs the .vsix, runs the browser test on a copy of
# workspace/, and stops everything it started on exit. Every step has a time limit.
# The screenshots and code-server's and VS Code's logs are kept in $FUZZ_CODE_SERVER_ARTIFACTS
# (default target/code-server-test); on failure also the page's text and the browser console,
# and the logs' tails are printed.
# FUZZ_CODE_SERVER_SCREENSHOT=PATH also saves the passing run's screenshot there (how
# docs/img/vscode-code-server.png is made).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

usage() {
  echo "usage: $0 FUZZLINT VSIX | $0 --bundled VSIX" >&2
  exit 2
}
bundled=
fuzzlint=
if [ "${1:-}" = --bundled ]; then
  [ $# -eq 2 ] || usage
  bundled=1
  vsix=$2
else
  [ $# -eq 2 ] || usage
  [ -x "$1" ] || { echo "error: $1 is not an executable fuzzlint" >&2; exit 2; }
  fuzzlint=$(realpath "$1")
  vsix=$2
fi
[ -f "$vsix" ] || { echo "error: $vsix: no such .vsix" >&2; exit 2; }
vsix=$(realpath "$vsix")
chromium=${CHROMIUM:-/usr/bin/chromium}
[ -x "$chromium" ] || { echo "error: $chromium not found (apt-get install chromium)" >&2; exit 2; }
code_server="$here/node_modules/code-server/out/node/entry.js"
[ -f "$code_server" ] || { echo "error: code-server is not installed: run scripts/ci-code-server-setup.sh" >&2; exit 2; }

artifacts=${FUZZ_CODE_SERVER_ARTIFACTS:-$root/target/code-server-test}
rm -rf "$artifacts"
mkdir -p "$artifacts"
tmp=$(mktemp -d)
server_pid=

cleanup() {
  local rc=$?
  if [ -n "$server_pid" ]; then
    # code-server and its children (the extension host, fuzzlint server) share its group.
    kill -TERM -- "-$server_pid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      kill -0 -- "-$server_pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL -- "-$server_pid" 2>/dev/null || true
  fi
  cp "$tmp/code-server.log" "$artifacts/" 2>/dev/null || true
  # VS Code's own logs: the extension host's, the language client's output channel.
  if [ -d "$tmp/data/logs" ]; then cp -r "$tmp/data/logs" "$artifacts/vscode-logs" || true; fi
  if [ "$rc" != 0 ]; then
    echo "code-server test failed; artifacts in $artifacts" >&2
    echo "--- code-server.log (tail)" >&2
    tail -n 40 "$tmp/code-server.log" >&2 2>/dev/null || true
    # The extension's output channel: which server it started and what the client saw.
    find "$tmp/data/logs" -name '*-Fuzzfile.log' -type f 2>/dev/null | while read -r f; do
      echo "--- $(basename "$f") (Output: Fuzzfile, tail)" >&2
      tail -n 40 "$f" >&2
    done
  fi
  rm -rf "$tmp"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Everything code-server, VS Code and Chromium write outside the user-data folder (the
# heartbeat and coder-logs, IPC sockets, the browser's profile) goes under $tmp too.
export HOME="$tmp/home" TMPDIR="$tmp"
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME XDG_STATE_HOME XDG_RUNTIME_DIR
mkdir -p "$HOME"
data="$tmp/data"
exts="$tmp/extensions"
ws="$tmp/ws"
mkdir -p "$data/User" "$exts" "$ws"
cp "$here"/workspace/* "$ws/"
# The user settings: the server binary, and no welcome page, trust prompt or tips that
# would cover the editor.
node -e '
  const fs = require("fs");
  fs.writeFileSync(process.argv[1], JSON.stringify({
    ...(process.argv[2] ? { "fuzzlint.path": process.argv[2] } : {}),
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoUpdate": false,
    "extensions.autoCheckUpdates": false,
    "extensions.ignoreRecommendations": true,
    "editor.hover.delay": 200,
    "editor.minimap.enabled": false,
    "files.autoSave": "off",
    "git.enabled": false,
    "window.restoreWindows": "none"
  }, null, 2));
' "$data/User/settings.json" "$fuzzlint"

cs=(node "$code_server" --config "$tmp/config.yaml" --user-data-dir "$data" --extensions-dir "$exts")
timeout 120 "${cs[@]}" --install-extension "$vsix" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log" >&2
  echo "error: code-server --install-extension $vsix failed" >&2
  exit 1
}
timeout 60 "${cs[@]}" --list-extensions --show-versions >"$tmp/extensions.txt" 2>&1
grep -q '^fuzzfile-toolchain\.fuzzfile@' "$tmp/extensions.txt" || {
  cat "$tmp/install.log" "$tmp/extensions.txt" >&2
  echo "error: the .vsix is not among code-server's extensions" >&2
  exit 1
}
# The server the extension must start: the setting's, or the one inside the package (which
# also gives the test its expectations), with no other fuzzlint on code-server's PATH.
server_path=$PATH
if [ -n "$bundled" ]; then
  fuzzlint=$(find "$exts" -path '*/server/fuzzlint' -type f | head -n 1)
  [ -n "$fuzzlint" ] && [ -x "$fuzzlint" ] || {
    echo "error: $vsix has no executable server/fuzzlint (a platform package is needed)" >&2
    exit 1
  }
  server_path=
  IFS=: read -r -a dirs <<<"$PATH"
  for d in "${dirs[@]}"; do
    [ -n "$d" ] && [ ! -e "$d/fuzzlint" ] && server_path=${server_path:+$server_path:}$d
  done
  expected_start="Starting \`$fuzzlint server\` (from the server bundled with the extension)."
else
  expected_start="Starting \`$fuzzlint server\` (from the fuzzlint.path setting)."
fi
echo "browser: $("$chromium" --version 2>/dev/null || true)"
echo "code-server $(node -p "require('$here/node_modules/code-server/package.json').version") with $(cat "$tmp/extensions.txt")"

# Port 0: the kernel picks a free port; code-server logs the one it got.
PATH=$server_path setsid "${cs[@]}" --bind-addr 127.0.0.1:0 --auth none --disable-telemetry \
  --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  --disable-proxy "$ws" >"$tmp/code-server.log" 2>&1 &
server_pid=$!
url=
for _ in $(seq 1 120); do
  url=$(sed -n 's#.*HTTP server listening on \(http://127\.0\.0\.1:[0-9]*\)/\?.*#\1#p' "$tmp/code-server.log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { echo "error: code-server exited" >&2; exit 1; }
  sleep 0.5
done
[ -n "$url" ] || { echo "error: code-server did not listen within 60 s" >&2; exit 1; }
echo "code-server listening on $url"

timeout 300 node "$here/test.mjs" \
  --url "$url/?folder=$ws" \
  --chromium "$chromium" \
  --fuzzlint "$fuzzlint" \
  --file "$ws/hello.fz" \
  --artifacts "$artifacts" \
  --screenshot "${FUZZ_CODE_SERVER_SCREENSHOT:-}"

# The extension's output channel (written by VS Code under the user-data folder) names the
# server it started and where it found it.
channel=$(find "$data/logs" -name '*-Fuzzfile.log' -type f | head -n 1)
if [ -z "$channel" ] || ! grep -qxF "$expected_start" "$channel"; then
  echo "error: the Fuzzfile output channel does not say: $expected_start" >&2
  [ -n "$channel" ] && cat "$channel" >&2
  exit 1
fi
echo "output channel: $expected_start"
