#!/usr/bin/env bash
# System tests of `fuzzlint server`: the real binary driven by a real LSP client library
# (pytest-lsp, tests/lsp/test_server.py) and by headless Neovim loading editors/neovim
# (tests/lsp/nvim/module.lua, tests/lsp/nvim/smoke.lua).
# Builds nothing: the binary is the first argument, else $FUZZLINT, else
# ${CARGO_TARGET_DIR:-target}/debug/fuzzlint.
#
# Without pytest-lsp or nvim the tests are skipped with a message, unless
# FUZZ_REQUIRE_SYSTEM_TESTS is set (CI sets it): then a missing tool is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="${1:-${FUZZLINT:-${CARGO_TARGET_DIR:-target}/debug/fuzzlint}}"

missing=()
python3 -c 'import pytest_lsp' >/dev/null 2>&1 || missing+=("pytest-lsp (pip install -r tests/lsp/requirements.txt)")
command -v nvim >/dev/null 2>&1 || missing+=("nvim (apt-get install -y neovim)")
if [ "${#missing[@]}" -gt 0 ]; then
  if [ -n "${FUZZ_REQUIRE_SYSTEM_TESTS:-}" ]; then
    echo "error: language server system tests required (FUZZ_REQUIRE_SYSTEM_TESTS) but missing: ${missing[*]}" >&2
    exit 1
  fi
  echo "skipping the language server system tests: missing ${missing[*]}; bash scripts/ci-lsp-setup.sh installs them"
  exit 0
fi
if [ ! -x "$bin" ]; then
  echo "error: no fuzzlint binary at $bin (cargo build -p fuzzlint, or pass its path)" >&2
  exit 2
fi
bin="$(realpath "$bin")"

echo "== pytest-lsp: $bin server"
PYTHONDONTWRITEBYTECODE=1 FUZZLINT="$bin" python3 -m pytest -q -p no:cacheprovider tests/lsp

# Neovim loads editors/neovim (filetype detection, the `fuzzfile` Lua module) and nothing else.
nvim_run() {
  FUZZLINT="$bin" timeout 60 nvim --headless --clean --cmd 'set rtp^=editors/neovim' "$@"
}
expect() { # expect OUTPUT PATTERN WHAT
  if ! grep -qF -- "$2" <<<"$1"; then
    echo "error: headless Neovim: $3 (no \`$2\` in the output above)" >&2
    exit 1
  fi
}

echo "== headless Neovim: editors/neovim without a server (filetypes, configurations)"
nvim_run -c 'luafile tests/lsp/nvim/module.lua'

echo "== headless Neovim through editors/neovim: a diagnostic and a hover in tests/specs/launcher-nproc-mismatch/bad.fz"
out="$(nvim_run -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/launcher-nproc-mismatch/bad.fz)"
echo "$out"
expect "$out" 'bad.fz:9:56: [FZ201]' "no launcher-nproc-mismatch at 9:56"
expect "$out" 'hover at 9:56: **torchrun `--nproc-per-node`**' "no hover of the torchrun flag"

echo "== headless Neovim through editors/neovim: a Fuzzfile named .yaml is found by its content"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp tests/specs/launcher-nproc-mismatch/bad.fz "$tmp/train.yaml"
out="$(HOVER=7:3 nvim_run -c 'luafile tests/lsp/nvim/smoke.lua' "$tmp/train.yaml")"
echo "$out"
expect "$out" 'filetype: fuzzfile' "train.yaml is not a fuzzfile buffer"
expect "$out" 'train.yaml:9:56: [FZ201]' "no launcher-nproc-mismatch at 9:56"
expect "$out" 'hover at 7:3: job `too-many`: 1 node × 4 GPUs' "no hover of the job"

echo "== headless Neovim through editors/neovim: a template error at its place in tests/specs/template-syntax-error/bad-unbalanced-end.template.yaml"
out="$(HOVER=5:17 nvim_run -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/template-syntax-error/bad-unbalanced-end.template.yaml)"
echo "$out"
expect "$out" 'bad-unbalanced-end.template.yaml:7:1: [FZ050]' "no template-syntax-error at 7:1"
expect "$out" 'hover at 5:17: **`.ContainerUri`**' "no hover of the template value"
