"""The server answers initialize before it loads the heavy layers: starting it imports neither the verifier
(and z3) nor torch or triton; they load in their threads after the answer (a start-up that imported z3 took
twice as long: 1.6 s against 0.85 s in bench/lsp_latency.py)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
from argus.lsp.server import create_server
create_server()
print(sorted(m for m in ("z3", "argus.verify", "torch", "triton") if m in sys.modules))
"""


def test_creating_the_server_imports_no_verifier_z3_torch_or_triton():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
