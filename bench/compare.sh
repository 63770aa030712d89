#!/usr/bin/env bash
# fuzzlint side by side with the alternatives, on the same inputs in the same run, alternating.
#
#   bench/compare.sh [CORPUS] [ROUNDS] [LSP_EDITS]
#
# CORPUS: the external Fuzzfile corpus (default ../shared/corpus beside the checkout); its
# plain/ (recursively) and docs/*.fz are the real files, replicated for the 1,500-file set.
# Installs the alternatives, pinned, into target/bench-compare/ (once):
#   check-jsonschema 0.39.0 (PyPI), with the project's schema schemas/fuzzfile.schema.json
#   yamllint 1.38.0 (PyPI), its default rules
#   yaml-language-server 1.25.0 (npm; 2.x needs Node.js 22), with the same schema for *.fz
# builds the release fuzzlint and fuzz, and runs bench/compare.py: check of 1, 15 and 1,500
# files against check-jsonschema, yamllint, `cat` and `wc -w` (the floor); the language servers
# on a 20-line and a 5,000-line file (didChange → publishDiagnostics, one edit sequence);
# `fuzz plan` of a trivial job against `true`. Medians over ROUNDS (default 11) rounds, each
# round running every command once in a rotated order; ratios to fuzzlint (or to `true`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$root/../shared/corpus}
rounds=${2:-11}
lsp_edits=${3:-200}
if [ ! -d "$corpus/plain" ]; then
  echo "error: no corpus at $corpus (expected $corpus/plain); pass its path as the first argument" >&2
  exit 2
fi
work=${BENCH_WORK:-$root/target/bench-compare}
mkdir -p "$work"

# The alternatives, pinned, in a cache of their own (a virtual environment and an npm prefix).
yls_version=1.25.0
if [ ! -x "$work/venv/bin/check-jsonschema" ] || [ ! -x "$work/venv/bin/yamllint" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q check-jsonschema==0.39.0 yamllint==1.38.0
fi
if [ "$(node -p "require('$work/npm/node_modules/yaml-language-server/package.json').version" 2>/dev/null)" != "$yls_version" ]; then
  mkdir -p "$work/npm"
  (cd "$work/npm" && { [ -f package.json ] || echo '{"private": true}' > package.json; } &&
    npm install -q --no-audit --no-fund --save-exact yaml-language-server@$yls_version >/dev/null)
fi

(cd "$root" && cargo build -q --release -p fuzzlint -p fuzz)
bin=${CARGO_TARGET_DIR:-$root/target}/release

echo "# bench/compare.sh on $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo); $(uname -sr)"
echo "fuzzlint: $("$bin/fuzzlint" --version); check-jsonschema $("$work/venv/bin/check-jsonschema" --version | awk '{print $NF}'); yamllint $("$work/venv/bin/yamllint" --version | awk '{print $NF}'); yaml-language-server $(node -p "require('$work/npm/node_modules/yaml-language-server/package.json').version")"
exec python3 "$root/bench/compare.py" \
  --corpus "$corpus" --work "$work/inputs" --rounds "$rounds" --lsp-rounds "$lsp_edits" \
  --fuzzlint "$bin/fuzzlint" --fuzz "$bin/fuzz" \
  --check-jsonschema "$work/venv/bin/check-jsonschema" --yamllint "$work/venv/bin/yamllint" \
  --yaml-language-server "$work/npm/node_modules/.bin/yaml-language-server"
