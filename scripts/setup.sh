#!/usr/bin/env bash
# Creates .venv and installs argus-lsp with the dev tools and the gate's torch (CPU build) and triton; safe to run again.
#
# The first run says what it installs and shows pip's own progress: torch and triton are large, and it takes a
# couple of minutes. A run after that is quiet and quick when nothing changed: .venv/.argus-setup holds the digest of
# pyproject.toml the last install was made from, and pip runs again only when that changed.
set -euo pipefail
cd "$(dirname "$0")/.."
STAMP=.venv/.argus-setup
wanted="$(python3 -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' pyproject.toml)"
if [ -x .venv/bin/argus ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$wanted" ]; then
    exit 0  # installed from this very pyproject.toml: nothing to do
fi
started=$SECONDS
if [ ! -x .venv/bin/python ]; then
    echo "== setup: creating .venv (python3 -m venv)"
    python3 -m venv .venv
    echo "== setup: installing argus-lsp with its dev tools (pytest, ruff, mypy), and torch (a CPU build) and triton for"
    echo "   the gate: the first run takes a couple of minutes, most of it fetching and unpacking torch and triton"
else
    echo "== setup: pyproject.toml changed since .venv was set up (or .venv predates this script's record): installing"
fi
.venv/bin/python -m pip install --upgrade pip
.venv/bin/python -m pip install -e '.[dev,gate]'
echo "$wanted" > "$STAMP"
echo "== setup: .venv is ready ($((SECONDS - started)) s); later runs skip this until pyproject.toml changes"
