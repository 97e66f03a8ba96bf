"""`argus refine --cluster local`: the gate runs go to a dask cluster started for the run (argus.gate.cluster),
and the summary is the one the serial path writes. In a subprocess, on the CPU, with the start's gate run only
(--budget 0): the real gate, compile for sm_90 and correct under the interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def refine(kernel: Path, *extra: str) -> dict:
    command = [sys.executable, "-m", "argus", "refine", str(kernel), "--device", "cpu", "--budget", "0", "--json"]
    done = subprocess.run([*command, "--no-memory", *extra], cwd=kernel.parent, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_refine_through_a_local_cluster_writes_the_summary_of_the_serial_path(tmp_path):
    kernel = tmp_path / "vector_add.argus"
    kernel.write_text((ROOT / "examples" / "vector_add.argus").read_text())
    clustered = refine(kernel, "--cluster", "local", "--workers", "1")
    assert clustered["start_gate"] == {"compile": "passed", "correct": "passed", "profile": "skipped"}
    assert clustered == refine(kernel)
