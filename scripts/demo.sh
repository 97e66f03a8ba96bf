#!/usr/bin/env bash
# The main job, end to end through the real language server: sets up .venv, then `argus demo` starts
# `argus serve`, opens a matmul with a planted invariant bug the way an editor does, and prints the diagnostic
# with its counterexample, the code actions at the cursor (with disabled reasons), the document after the fix,
# and a gate run on the CPU (compile for sm_90, correct against the PyTorch reference).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== argus check examples/*.argus (syntax, types, and every invariant proved)"
.venv/bin/argus check examples/*.argus && echo "all examples check clean"
echo
.venv/bin/argus demo
