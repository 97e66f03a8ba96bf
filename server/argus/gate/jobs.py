"""A gate run as data that can travel to another machine: the bundle's files and the runner's arguments.

The parent checks the source and generates the bundle (a source that cannot be gated gives its result here, with
no run); `run_job` writes the files into a fresh folder wherever it runs and starts the runner there as a
killable child with its time limit, exactly as `run_gate` does. Only the generated module, the problem, the
reference and the runner's files cross, as the gate's rule says; the worker needs argus for `run_job` itself.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from argus.gate.api import RUNNER_OPTIONS, STAGES, _validate, prepare, run_bundle
from argus.gate.result import GateResult


@dataclass(frozen=True)
class GateJob:
    """One kernel's gate run: `files` is the bundle (relative path -> bytes)."""

    files: dict[str, bytes]
    kernel: str
    device: str = "auto"
    stages: tuple[str, ...] = STAGES
    timeout_s: float = 120.0
    options: dict[str, object] = field(default_factory=dict)
    label: str = ""  # what a progress line calls it

    @property
    def source_path(self) -> str | None:
        return json.loads(self.files["manifest.json"]).get("source_path")


def bundle_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def job_for_bundle(
    run_py: Path,
    kernel: str,
    *,
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120.0,
    label: str = "",
    **runner_options,
) -> GateJob:
    """A job for a bundle already written (write_bundle's, or a test's hand-made one)."""
    _validate(device, stages)
    unknown = sorted(set(runner_options) - set(RUNNER_OPTIONS))
    if unknown:
        raise TypeError(f"unknown gate option {unknown[0]!r}; the options are {', '.join(RUNNER_OPTIONS)}")
    files = bundle_files(Path(run_py).parent)
    return GateJob(files, kernel, device, tuple(stages), float(timeout_s), dict(runner_options), label or kernel)


def job_for_source(
    source: str,
    kernel: str,
    *,
    path: str | None = None,
    device: str = "auto",
    stages: Sequence[str] = STAGES,
    timeout_s: float = 120.0,
    label: str = "",
    **runner_options,
) -> GateJob | GateResult:
    """A job for `kernel` of `source`, or, when the source cannot be gated, the result that says why (as
    run_gate gives it: the errors, every stage skipped)."""
    _validate(device, stages)
    with tempfile.TemporaryDirectory(prefix="argus-job-") as folder:
        run_py = prepare(source, path, kernel, device, folder)
        if isinstance(run_py, list):
            return run_py[0]
        options = dict(device=device, stages=stages, timeout_s=timeout_s, label=label)
        return job_for_bundle(run_py, kernel, **options, **runner_options)


def run_job(job: GateJob) -> GateResult:
    """Run one job here: its bundle in a fresh folder, the runner a child that dies with this process."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="argus-gate-", dir=worker_folder()) as folder:
        root = Path(folder) / "bundle"
        for name, data in job.files.items():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        [result] = run_bundle(
            root / "run.py", kernels=[job.kernel], device=job.device, stages=job.stages, timeout_s=job.timeout_s,
            die_with_parent=True, **runner_options(job, os.environ),
        )  # fmt: skip
    if not result.seconds:
        result.seconds = time.perf_counter() - started
    return result


# Set on a worker that runs several gate runs on one card at once (argus.gate.cluster.local_cluster's
# runs_per_gpu): the card's lock file, so their GPU stages take turns on it (run.py --gpu-lock).
GPU_LOCK = "ARGUS_GATE_GPU_LOCK"


def runner_options(job: GateJob, environ) -> dict[str, object]:
    """The job's runner options, with the worker's card lock for a run that may use the GPU (unless it names one)."""
    lock = environ.get(GPU_LOCK)
    if lock and job.device in ("cuda", "auto") and not job.options.get("gpu_lock"):
        return job.options | {"gpu_lock": lock}
    return job.options


def worker_folder() -> str | None:
    """Inside a dask worker, the worker's own folder: a worker killed mid-run never removes its bundle, and dask
    removes that folder when the worker closes (or the next worker here purges it after one that died)."""
    distributed = sys.modules.get("distributed")
    if distributed is None:
        return None
    try:
        return distributed.get_worker().local_directory
    except (ValueError, AttributeError):  # not in a worker
        return None
