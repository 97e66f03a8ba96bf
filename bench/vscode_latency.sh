#!/usr/bin/env bash
# Keystroke to squiggle in real VS Code on a 1,000-line file of many small kernels: bench/vscode_latency.js, run
# in the end-to-end test's session (tests/editors/run-vscode-e2e.sh: code-server 4.139.1 = VS Code 1.139.1 with
# the packaged extension, headless Chromium, `argus serve` from the repository's .venv). Prints a table.
#
#   bash bench/vscode_latency.sh [VSIX] [RUNS]     # VSIX default vscode-extension/dist/argus-lsp.vsix, RUNS 20
#
# Needs .ci/setup-editors.sh's tools and a packaged extension (cd vscode-extension && npm ci && npm run package).
# A benchmark, not a test: it prints the figures and fails only when it could not measure them.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
VSIX=${1:-$REPO/vscode-extension/dist/argus-lsp.vsix}
[ -f "$VSIX" ] || { echo "no $VSIX: cd vscode-extension && npm ci && npm run package" >&2; exit 2; }
export ARGUS_BENCH_RUNS=${2:-${ARGUS_BENCH_RUNS:-20}}
export ARGUS_E2E_DRIVER="$REPO/bench/vscode_latency.js" ARGUS_E2E_SESSIONS=with-argus
export EDITOR_ARTIFACTS=${EDITOR_ARTIFACTS:-$REPO/tests/editors/artifacts/vscode-latency}
dirty=$(git -C "$REPO" status --porcelain --untracked-files=no | grep -q . && echo ' + uncommitted changes' || true)
echo "argus $(git -C "$REPO" rev-parse --short HEAD)$dirty, extension $VSIX"
exec bash "$REPO/tests/editors/run-vscode-e2e.sh" "$VSIX"
