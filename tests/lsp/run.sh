#!/usr/bin/env bash
# System tests of `fuzzlint server`: the real binary driven by a real LSP client library
# (pytest-lsp, tests/lsp/test_server.py) and by headless Neovim (tests/lsp/nvim/smoke.lua).
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

echo "== headless Neovim: a diagnostic for tests/specs/launcher-nproc-mismatch/bad.fz"
FUZZLINT="$bin" timeout 60 nvim --headless --clean \
  -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/launcher-nproc-mismatch/bad.fz
echo

echo "== headless Neovim: a template error at its place in tests/specs/template-syntax-error/bad-unbalanced-end.template.yaml"
out="$(FUZZLINT="$bin" timeout 60 nvim --headless --clean \
  -c 'luafile tests/lsp/nvim/smoke.lua' tests/specs/template-syntax-error/bad-unbalanced-end.template.yaml)"
echo "$out"
if ! grep -q 'bad-unbalanced-end.template.yaml:7:1: \[FZ050\]' <<<"$out"; then
  echo "error: no template-syntax-error at 7:1 in Neovim" >&2
  exit 1
fi
