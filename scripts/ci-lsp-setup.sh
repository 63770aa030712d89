#!/usr/bin/env bash
# Install what the language server system tests (tests/lsp/run.sh) need: Neovim for the
# headless smoke test, and pytest-lsp with the versions pinned in tests/lsp/requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v nvim >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim >/dev/null
  else
    echo "warning: nvim is missing and cannot be installed here (needs root and apt-get)" >&2
  fi
fi
python3 -m pip install -q -r tests/lsp/requirements.txt
