"""The gate: compile (Triton, sm_90), correct (against the PyTorch reference) and profile (GPU) a kernel.

Everything that imports torch or triton runs in a child process (the bundle's run.py); this package only
writes bundles, starts and kills that process, and validates what it wrote. docs/gate.md is the guide.
"""

from argus.gate.api import (
    read_result,
    read_results,
    run_bundle,
    run_bundle_async,
    run_gate,
    run_gate_all,
    run_gate_all_async,
    run_gate_async,
)
from argus.gate.bundle import GateSetupError, write_bundle
from argus.gate.result import GateError, GateResult, GateRun, Status

__all__ = [
    "GateError",
    "GateResult",
    "GateRun",
    "GateSetupError",
    "Status",
    "read_result",
    "read_results",
    "run_bundle",
    "run_bundle_async",
    "run_gate",
    "run_gate_all",
    "run_gate_all_async",
    "run_gate_async",
    "write_bundle",
]
