#!/usr/bin/env bash
# Sets up and shows what Argus reports: every example checks clean, and a kernel with bugs gets
# diagnostics with exact positions, as text and as the JSON an agent reads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== argus check examples/*.argus"
.venv/bin/argus check examples/*.argus && echo "all examples check clean"
echo
echo "== argus check examples/buggy/matmul_bugs.argus"
.venv/bin/argus check examples/buggy/matmul_bugs.argus || true
echo
echo "== argus check --json: the dot shape error, as an agent reads it"
.venv/bin/argus check --json examples/buggy/matmul_bugs.argus | .venv/bin/python -c \
    'import json, sys; print(json.dumps([d for d in json.load(sys.stdin) if d["code"] == "AR202"][0], indent=2))'
