"""run_gate: write a bundle into a temporary folder, run its run.py as a killable child, read the results back.

The parent never imports torch or triton (the language server calls this); everything that does runs in the
child. A source that cannot be gated (check errors, no such kernel, code generation failure) gives results
with the errors and every stage skipped, never an exception.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from argus.gate.bundle import GateSetupError, checked, select_kernels, write_bundle
from argus.gate.process import Finished, Progress, run_async, run_blocking
from argus.gate.result import GateError, GateResult, GateRun, Status

STAGES = ("compile", "correct", "profile")
# Beyond the kernels' own limits: starting the runner, the device probe, measuring the GPU's ceilings.
RUNNER_OVERHEAD_S = 60.0
CEILINGS_S = 300.0


def read_results(json_path: Path) -> list[GateResult]:
    """Every kernel's result in a runner's result file, validated; ValueError if it is not one."""
    try:
        data = json.loads(Path(json_path).read_text(encoding="utf-8"))
        return GateRun.model_validate(data).results
    except (OSError, json.JSONDecodeError, ValidationError) as problem:
        raise ValueError(f"{json_path} is not a gate result file: {problem}") from problem


def read_result(json_path: Path) -> GateResult:
    """The result of a file that holds one kernel's; for several, the first (read_results gives all)."""
    results = read_results(json_path)
    if not results:
        raise ValueError(f"{json_path} holds no kernel result")
    return results[0]


def runner_arguments(kernels: list[str], device: str, stages: Sequence[str], timeout_s: float, out: Path, **extra):
    argv = ["--device", device, "--timeout", str(timeout_s), "--out", str(out)]
    for name in kernels:
        argv += ["--kernel", name]
    for stage in stages:
        argv += ["--stage", stage]
    for key, value in extra.items():
        if value is not None:
            argv += [f"--{key.replace('_', '-')}", str(value)]
    return argv


def outer_limit(kernels: list[str], stages: Sequence[str], timeout_s: float) -> float:
    return len(kernels) * timeout_s + RUNNER_OVERHEAD_S + (CEILINGS_S if "profile" in stages else 0.0)


def _validate(device: str, stages: Sequence[str]) -> None:
    if device not in ("auto", "cpu", "cuda"):
        raise ValueError(f"device is auto, cpu or cuda, not {device!r}")
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise ValueError(f"stages are some of {', '.join(STAGES)}; got {list(stages)}")


def setup_failure(failure: GateSetupError, kernels: list[str], device: str, path: str | None) -> list[GateResult]:
    errors = failure.errors or [GateError(code="AR501", message=failure.message)]
    results = []
    for name in kernels or [""]:
        result = GateResult(kernel=name, source_path=path, device=device, errors=errors)
        codegen = any(e.code == "AR501" for e in errors)
        result.compile.status = Status.failed if codegen else Status.skipped
        result.compile.message = failure.message
        results.append(result)
    return results


def runner_failure(finished: Finished, kernels: list[str], device: str, path: str | None, limit_s: float):
    """Results for a runner that wrote nothing: killed at the outer limit, or dead."""
    if finished.status is None:
        code, message = "AR504", f"the gate did not finish within {limit_s:.0f} s and was killed"
    else:
        last = next((ln for ln in reversed(finished.stderr.splitlines()) if ln.strip()), "")
        code, message = "AR505", f"the gate runner exited with status {finished.status}: {last.strip()[:300]}"
    error = GateError(code=code, message=message, detail=finished.stderr[-3000:])
    return [GateResult(kernel=name, source_path=path, device=device, errors=[error]) for name in kernels]


class Prepared:
    """A source made into a bundle in a temporary folder, ready to run."""

    def __init__(self, source: str, path: str | None, kernel: str | None, device: str, stages, timeout_s):
        _validate(device, stages)
        self.path, self.device, self.stages, self.timeout_s = path, device, list(stages), timeout_s
        self.folder = tempfile.TemporaryDirectory(prefix="argus-gate-")
        self.out = Path(self.folder.name) / "result.json"
        self.kernels: list[str] = []
        self.failure: list[GateResult] | None = None
        try:
            self.kernels = select_kernels(checked(source), kernel)
            self.run_py = write_bundle(source, Path(self.folder.name) / "bundle", path=path, kernel=kernel)
        except GateSetupError as failure:
            self.failure = setup_failure(failure, self.kernels or ([kernel] if kernel else []), device, path)

    def argv(self, **extra) -> list[str]:
        return runner_arguments(self.kernels, self.device, self.stages, self.timeout_s, self.out, **extra)

    @property
    def limit_s(self) -> float:
        return outer_limit(self.kernels, self.stages, self.timeout_s)

    def results(self, finished: Finished) -> list[GateResult]:
        if self.out.exists():
            try:
                return read_results(self.out)
            except ValueError as problem:
                error = GateError(code="AR505", message=str(problem), detail=finished.stderr[-3000:])
                device, path = self.device, self.path
                return [GateResult(kernel=k, source_path=path, device=device, errors=[error]) for k in self.kernels]
        return runner_failure(finished, self.kernels, self.device, self.path, self.limit_s)

    def close(self) -> None:
        self.folder.cleanup()


def run_gate_all(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = ("compile", "correct", "profile"),
    timeout_s: float = 120,
    on_progress: Progress = None,
    **runner_options,
) -> list[GateResult]:
    """Gate `kernel`, or every kernel of the file, in a child process: one result per kernel, in file order.

    `timeout_s` limits each kernel's run (all its stages together). `runner_options` go to run.py
    (trials, profile_trials, seed, memory_limit_mb).
    """
    prepared = Prepared(source, path, kernel, device, stages, timeout_s)
    try:
        if prepared.failure is not None:
            return prepared.failure
        finished = run_blocking(prepared.run_py, prepared.argv(**runner_options), prepared.limit_s, on_progress)
        return prepared.results(finished)
    finally:
        prepared.close()


async def run_gate_all_async(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = ("compile", "correct", "profile"),
    timeout_s: float = 120,
    on_progress: Progress = None,
    **runner_options,
) -> list[GateResult]:
    """run_gate_all for asyncio: cancelling the awaiting task kills the gate's processes."""
    prepared = Prepared(source, path, kernel, device, stages, timeout_s)
    try:
        if prepared.failure is not None:
            return prepared.failure
        finished = await run_async(prepared.run_py, prepared.argv(**runner_options), prepared.limit_s, on_progress)
        return prepared.results(finished)
    finally:
        prepared.close()


def _one(results: list[GateResult], kernel: str | None, started: float) -> GateResult:
    if kernel is None and len(results) > 1:
        names = ", ".join(r.kernel for r in results)
        raise ValueError(f"the file has several kernels ({names}): name one, or call run_gate_all")
    result = results[0]
    if not result.seconds:
        result.seconds = time.perf_counter() - started
    return result


def run_gate(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = ("compile", "correct", "profile"),
    timeout_s: float = 120,
    on_progress: Progress = None,
    **runner_options,
) -> GateResult:
    """Gate one kernel (`kernel`, or the file's only one) in a child process with a time limit."""
    started = time.perf_counter()
    if kernel is None:
        _guard_single(source)
    results = run_gate_all(
        source, path=path, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s,
        on_progress=on_progress, **runner_options,
    )  # fmt: skip
    return _one(results, kernel, started)


async def run_gate_async(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = ("compile", "correct", "profile"),
    timeout_s: float = 120,
    on_progress: Progress = None,
    **runner_options,
) -> GateResult:
    """run_gate for asyncio: cancelling the awaiting task kills the gate's processes."""
    started = time.perf_counter()
    if kernel is None:
        _guard_single(source)
    results = await run_gate_all_async(
        source, path=path, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s,
        on_progress=on_progress, **runner_options,
    )  # fmt: skip
    return _one(results, kernel, started)


def _guard_single(source: str) -> None:
    """Refuse before any work when the kernel is left out of a file with several (checked quickly, no gate)."""
    from argus.dsl.check import check_source

    names = list(check_source(source).analysis.kernels)
    if len(names) > 1:
        raise ValueError(f"the file has several kernels ({', '.join(names)}): name one, or call run_gate_all")
