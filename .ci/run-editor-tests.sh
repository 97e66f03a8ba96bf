#!/usr/bin/env bash
# Build the VS Code extension and run its tests: type-check, lint, unit tests, grammar snapshot tests, the
# .vsix, then the extension in real VS Code (code-server) against `argus serve`. Needs .ci/setup-editors.sh
# (tools in $EDITOR_TOOLS) and the repository's .venv (scripts/setup.sh). Every step has a time limit, so a
# hang fails the run instead of eating the CI budget. Screenshots: tests/editors/artifacts/ ($EDITOR_ARTIFACTS).
set -euo pipefail
cd "$(dirname "$0")/.."
export EDITOR_TOOLS=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
export npm_config_cache="$EDITOR_TOOLS/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
say() { printf '[editor-tests %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
step() {
  local limit=$1 name=$2; shift 2
  local start=$SECONDS
  say "$name"
  if ! timeout "$limit" "$@"; then say "FAILED: $name"; exit 1; fi
  say "$name: $((SECONDS - start)) s"
}

cd vscode-extension
step 600 "npm ci" npm ci --no-audit --prefer-offline
step 300 "type-check (tsc --noEmit)" npm run --silent check-types
step 300 "lint (eslint)" npm run --silent lint
step 300 "unit tests (node:test)" npm run --silent test:unit
step 300 "grammar tests (vscode-tmgrammar-test, every example)" npm run --silent test:grammar
step 300 "bundle and package (esbuild, vsce)" npm run --silent package
cd ..
step 600 "VS Code end to end (code-server, chromium)" bash tests/editors/run-vscode-e2e.sh vscode-extension/dist/argus-lsp.vsix
say "all editor tests passed"
