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
from typing import Literal, TypedDict, Unpack

from pydantic import ValidationError

from argus.dsl.check import CheckResult, check_source
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


class RunnerOptions(TypedDict, total=False):
    """What run.py takes beyond kernels, device, stages and the time limit (runner_options of the functions below);
    None is run.py's default."""

    trials: int | None
    profile_trials: int | None
    seed: int | None
    memory_limit_mb: int | None
    ceilings_file: str | None
    references: Literal["all", "eager"] | None
    gpu_lock: str | None
    compile_configs: int | None


RUNNER_OPTIONS = tuple(RunnerOptions.__annotations__)


def runner_arguments(
    kernels: list[str], device: str, stages: Sequence[str], timeout_s: float, out: Path, **extra: Unpack[RunnerOptions]
) -> list[str]:
    # checked here too: callers outside the type checker's reach pass plain dicts
    unknown = sorted(set(extra) - set(RUNNER_OPTIONS))
    if unknown:
        raise TypeError(f"unknown gate option {unknown[0]!r}; the options are {', '.join(RUNNER_OPTIONS)}")
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


def runner_failure(
    finished: Finished, kernels: list[str], device: str, path: str | None, limit_s: float
) -> list[GateResult]:
    """Results for a runner that wrote nothing: killed at the outer limit, or dead."""
    if finished.status is None:
        code, message = "AR504", f"the gate did not finish within {limit_s:.0f} s and was killed"
    else:
        last = next((ln for ln in reversed(finished.stderr.splitlines()) if ln.strip()), "")
        code, message = "AR505", f"the gate runner exited with status {finished.status}: {last.strip()[:300]}"
    error = GateError(code=code, message=message, detail=finished.stderr[-3000:])
    return [GateResult(kernel=name, source_path=path, device=device, errors=[error]) for name in kernels]


def collect(
    out: Path, finished: Finished, kernels: list[str], device: str, path: str | None, limit_s: float
) -> list[GateResult]:
    """The results a runner wrote, or, when it wrote none, an AR504/AR505 result per kernel."""
    if out.exists():
        try:
            return read_results(out)
        except ValueError as problem:
            error = GateError(code="AR505", message=str(problem), detail=finished.stderr[-3000:])
            return [GateResult(kernel=k, source_path=path, device=device, errors=[error]) for k in kernels]
    return runner_failure(finished, kernels, device, path, limit_s)


def bundle_kernels(run_py: Path) -> list[str]:
    return list(json.loads((run_py.parent / "manifest.json").read_text(encoding="utf-8"))["kernels"])


class BundleRun:
    """One run of a bundle's run.py: its arguments, outer time limit and where it writes the results."""

    def __init__(
        self,
        run_py: Path,
        kernels: Sequence[str],
        device: str,
        stages: Sequence[str],
        timeout_s: float,
        options: RunnerOptions,
    ) -> None:
        _validate(device, stages)
        self.run_py, self.device, self.stages = Path(run_py), device, list(stages)
        self.kernels = list(kernels) if kernels else bundle_kernels(self.run_py)
        self.out = self.run_py.parent / "result.json"
        self.out.unlink(missing_ok=True)
        self.argv = runner_arguments(self.kernels, device, self.stages, timeout_s, self.out, **options)
        self.limit_s = outer_limit(self.kernels, self.stages, timeout_s)
        manifest = json.loads((self.run_py.parent / "manifest.json").read_text(encoding="utf-8"))
        self.path: str | None = manifest.get("source_path")

    def results(self, finished: Finished) -> list[GateResult]:
        return collect(self.out, finished, self.kernels, self.device, self.path, self.limit_s)


def run_bundle(
    run_py: Path,
    *,
    kernels: Sequence[str] = (),
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    die_with_parent: bool = False,
    **runner_options: Unpack[RunnerOptions],
) -> list[GateResult]:
    """Run a bundle's run.py (write_bundle's) as a killable child; one result per kernel (all when none named).
    `die_with_parent`: the runner ends when this process dies, even by SIGKILL (a cluster worker's runs)."""
    run = BundleRun(run_py, kernels, device, stages, timeout_s, runner_options)
    return run.results(run_blocking(run.run_py, run.argv, run.limit_s, on_progress, die_with_parent))


async def run_bundle_async(
    run_py: Path,
    *,
    kernels: Sequence[str] = (),
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    **runner_options: Unpack[RunnerOptions],
) -> list[GateResult]:
    """run_bundle for asyncio: cancelling the awaiting task kills the runner and its stage processes."""
    run = BundleRun(run_py, kernels, device, stages, timeout_s, runner_options)
    return run.results(await run_async(run.run_py, run.argv, run.limit_s, on_progress))


def prepare(
    source: str,
    path: str | None,
    kernel: str | None,
    device: str,
    folder: str,
    check: CheckResult | None = None,
) -> Path | list[GateResult]:
    """run.py of a fresh bundle, or the results that say why the source cannot be gated. The source is checked
    once, here, unless `check` (its check) is given."""
    check = check if check is not None else check_source(source)
    kernels = [kernel] if kernel is not None else list(check.analysis.gated)
    try:
        select_kernels(checked(source, check), kernel)
        return write_bundle(source, Path(folder) / "bundle", path=path, kernel=kernel, check=check)
    except GateSetupError as failure:
        return setup_failure(failure, kernels, device, path)


def run_gate_all(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    check: CheckResult | None = None,
    **runner_options: Unpack[RunnerOptions],
) -> list[GateResult]:
    """Gate `kernel`, or every kernel of the file, in a child process: one result per kernel, in file order.

    `timeout_s` limits each kernel's run (all its stages together). `check`: the check of `source` where the
    caller has one (an editor's snapshot, the agent's state), so the text is not checked again; otherwise it is
    checked once. `runner_options` go to run.py (trials, profile_trials, seed, memory_limit_mb).
    """
    _validate(device, stages)
    with tempfile.TemporaryDirectory(prefix="argus-gate-") as folder:
        run_py = prepare(source, path, kernel, device, folder, check)
        if isinstance(run_py, list):
            return run_py
        return run_bundle(
            run_py, device=device, stages=stages, timeout_s=timeout_s, on_progress=on_progress, **runner_options
        )


async def run_gate_all_async(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    check: CheckResult | None = None,
    **runner_options: Unpack[RunnerOptions],
) -> list[GateResult]:
    """run_gate_all for asyncio: cancelling the awaiting task kills the gate's processes."""
    _validate(device, stages)
    with tempfile.TemporaryDirectory(prefix="argus-gate-") as folder:
        run_py = prepare(source, path, kernel, device, folder, check)
        if isinstance(run_py, list):
            return run_py
        return await run_bundle_async(
            run_py, device=device, stages=stages, timeout_s=timeout_s, on_progress=on_progress, **runner_options
        )


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
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    check: CheckResult | None = None,
    **runner_options: Unpack[RunnerOptions],
) -> GateResult:
    """Gate one kernel (`kernel`, or the file's only one) in a child process with a time limit. `check`: the
    check of `source`, where the caller has one (run_gate_all)."""
    started = time.perf_counter()
    if kernel is None:
        check = _guard_single(source, check)
    results = run_gate_all(
        source, path=path, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s,
        on_progress=on_progress, check=check, **runner_options,
    )  # fmt: skip
    return _one(results, kernel, started)


async def run_gate_async(
    source: str,
    *,
    path: str | None = None,
    kernel: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120,
    on_progress: Progress = None,
    check: CheckResult | None = None,
    **runner_options: Unpack[RunnerOptions],
) -> GateResult:
    """run_gate for asyncio: cancelling the awaiting task kills the gate's processes."""
    started = time.perf_counter()
    if kernel is None:
        check = _guard_single(source, check)
    results = await run_gate_all_async(
        source, path=path, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s,
        on_progress=on_progress, check=check, **runner_options,
    )  # fmt: skip
    return _one(results, kernel, started)


def _guard_single(source: str, check: CheckResult | None) -> CheckResult:
    """Refuse before any work when the kernel is left out of a file with several; the check, for the run."""
    check = check if check is not None else check_source(source)
    names = list(check.analysis.gated)
    if len(names) > 1:
        raise ValueError(f"the file has several kernels ({', '.join(names)}): name one, or call run_gate_all")
    return check
