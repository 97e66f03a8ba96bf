"""Gate functions the refinement loop calls: (source, kernel) -> GateResult.

`local_gate` runs the real gate (argus.gate.run_gate, a killable child process). `cached` makes sure one
source is never gated twice. `scripted_profile` is for tests on a machine without a GPU: it runs the real gate
(compile, and correct under the interpreter) and then fills the profile stage with a timing that a function of
the source decides, in the same fields the runner's profile stage writes, so the loop reads it exactly as it
reads a GPU's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from argus.gate.api import STAGES, run_gate
from argus.gate.process import Progress
from argus.gate.result import Ceilings, GateResult, ProfileFacts, Status, Timing
from argus.skills.apply import digest

Gate = Callable[[str, str], GateResult]


def local_gate(
    device: str = "auto",
    timeout_s: float = 120.0,
    stages: Sequence[str] = STAGES,
    on_progress: Progress = None,
    **runner_options,
) -> Gate:
    """The real gate on this machine; `on_progress` gets the runner's progress lines as they come, and
    `runner_options` go to run.py (trials, seed, ceilings_file, ...)."""

    def gate(source: str, kernel: str) -> GateResult:
        return run_gate(
            source, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s, on_progress=on_progress,
            **runner_options,
        )  # fmt: skip

    return gate


def refine_gate(
    device: str,
    timeout_s: float,
    ceilings_file: str | Path,
    gpu_lock: str | None = None,
    on_progress: Progress = None,
) -> Gate:
    """The gate a refinement runs every candidate through. The loop compares the kernel's own times, so the
    reference is timed eager only (torch.compile would be compiled and timed again at every run), and the GPU's
    ceilings are measured at the first profile and read from `ceilings_file` after that."""
    options = dict(ceilings_file=str(ceilings_file), references="eager", gpu_lock=gpu_lock)
    return local_gate(device, timeout_s, on_progress=on_progress, **options)


def source_key(source: str, kernel: str) -> str:
    return digest(f"{kernel}\0{source}")


@dataclass
class CachedGate:
    """A gate that remembers its results: `runs` counts the calls that reached the wrapped gate."""

    gate: Gate
    results: dict[str, GateResult] = field(default_factory=dict)
    runs: int = 0

    def __call__(self, source: str, kernel: str) -> GateResult:
        key = source_key(source, kernel)
        if key not in self.results:
            self.runs += 1
            self.results[key] = self.gate(source, kernel)
        return self.results[key].model_copy(deep=True)  # callers may annotate their copy

    def seen(self, source: str, kernel: str) -> bool:
        return source_key(source, kernel) in self.results


def cached(gate: Gate) -> CachedGate:
    return gate if isinstance(gate, CachedGate) else CachedGate(gate)


# What the scripted profile says it measured against: an H200's order of magnitude, marked as scripted.
SCRIPTED_CEILINGS = Ceilings(device="scripted", copy_gb_per_s=4000.0, gemm_fp16_tflops=700.0, gemm_bf16_tflops=700.0)


def scripted_timing(ms: float, sizes: dict[str, int] | None = None) -> ProfileFacts:
    timing = Timing(ms_median=ms, ms_p10=ms, ms_p90=ms, trials=100)
    return ProfileFacts(
        sizes=sizes or {},
        kernel=timing,
        flops=0.0,
        bytes=0.0,
        tflops=0.0,
        gb_per_s=0.0,
        ceilings=SCRIPTED_CEILINGS,
        bound="memory",
        percent_of_ceiling=0.0,
        percent_of_bandwidth=0.0,
        percent_of_compute=0.0,
        notes=["scripted timing: argus.agent.gates.scripted_profile, not a measurement"],
    )


def scripted_profile(gate: Gate, ms_of: Callable[[str], float]) -> Gate:
    """The real gate, then a profile stage that reports `ms_of(source)` for a source that compiled and was
    correct (the runner profiles only those too)."""

    def profiled(source: str, kernel: str) -> GateResult:
        result = gate(source, kernel)
        if result.compile.status == Status.passed and result.correct.status == Status.passed and not result.errors:
            sizes = result.correct.facts.sizes[0] if result.correct.facts and result.correct.facts.sizes else None
            result.profile.status = Status.passed
            result.profile.message = ""
            result.profile.facts = scripted_timing(float(ms_of(source)), sizes)
        return result

    return profiled
