#!/usr/bin/env bash
# The device's Triton (3.6, what the lent H100/H200 runs) beside a CPU torch, in a venv under $EDITOR_TOOLS so
# later CI runs on the same machine reuse it. The project's own venv has a newer Triton, whose Gluon API differs;
# tests/codegen/test_gluon_gemm.py compiles the generated Gluon kernels for sm_90 with this one (no GPU needed).
# Idempotent; prints the venv's python last.
#
#   EDITOR_TOOLS=/var/cache/argus-editor-tools bash .ci/setup-triton-device.sh
set -euo pipefail
T=${EDITOR_TOOLS:-/var/cache/argus-editor-tools}
V="$T/triton-3.6.0"
say() { printf '[setup-triton-device %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
mkdir -p "$T"
# the stamp is written only after a complete install, so a half-finished one is redone
if [ ! -f "$V/.ok" ]; then
  say "triton==3.6.0 and torch==2.13.0 (CPU) into $V"
  rm -rf "$V"
  timeout 300 python3 -m venv "$V/venv"
  timeout 900 "$V/venv/bin/pip" install --quiet --disable-pip-version-check triton==3.6.0 torch==2.13.0
  "$V/venv/bin/python" -c 'import triton; assert triton.__version__ == "3.6.0", triton.__version__'
  touch "$V/.ok"
fi
echo "$V/venv/bin/python"
