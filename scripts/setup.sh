#!/usr/bin/env bash
# Creates .venv and installs argus-lsp with the dev tools and the gate's torch (CPU build) and triton; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,gate]'
