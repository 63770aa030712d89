#!/usr/bin/env bash
# Install what the language server system tests (tests/lsp/run.sh) need: Neovim for the
# headless smoke test, and pytest-lsp with the versions pinned in tests/lsp/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
root=false
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  root=true
fi
if ! command -v nvim >/dev/null 2>&1; then
  if $root; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
  else
    echo "warning: nvim is missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi
if ! python3 -m pip --version >/dev/null 2>&1 && $root; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
fi
# A distribution's Python refuses installs outside a virtual environment (PEP 668); this
# machine is a disposable test environment, so install anyway.
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check -r tests/lsp/requirements.txt
# check-jsonschema for the schema tests (crates/fuzzlint/tests/schema.rs), pinned in
# schemas/requirements.txt.
PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install -q --disable-pip-version-check -r schemas/requirements.txt
