"""Where gate runs go when there are many: an executor takes jobs (argus.gate.jobs) and gives back GateResults,
in the jobs' order, calling `on_done` as each one finishes (a progress bar over the whole fan-out).

    SerialExecutor   one run after another in this process's children: what `run_gate` has always done
    DaskExecutor     a dask.distributed cluster: a local one (`local_cluster`), or a scheduler's address

A worker of the cluster runs one gate at a time (one thread), and a run on the GPU asks for the worker resource
`GPU` (one a worker, one worker per card), so two profiles never share a card; compile and the interpreter's
correct ask for nothing and go to any worker. Each job's runner is a killable child with its time limit, as
ever (a hang is AR504, a crash AR505, in the result); a worker that dies is replaced and its job re-run on
another, up to the scheduler's `allowed-failures` (3), after which the job's result is an AR505 saying so.
docs/gate.md, "Many gate runs: the executor", says how to start a cluster over several machines.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol

from argus.gate.api import STAGES
from argus.gate.jobs import GPU_LOCK, GateJob, job_for_source, run_job
from argus.gate.process import child_environment
from argus.gate.result import GateError, GateResult

Done = Callable[[int, GateResult], None] | None
Job = GateJob | GateResult  # a result already: the source could not be gated, nothing to run
SERIAL, LOCAL = "serial", "local"
CONNECT_S = 30.0


class ClusterError(RuntimeError):
    """The cluster cannot be reached or started: said once, before any gate run."""


class GateExecutor(Protocol):
    def width(self) -> int:
        """How many gate runs go at once."""

    def map(self, jobs: Sequence[Job], on_done: Done = None) -> list[GateResult]:
        """Every job's result, in the jobs' order."""


class SerialExecutor:
    def width(self) -> int:
        return 1

    def map(self, jobs: Sequence[Job], on_done: Done = None) -> list[GateResult]:
        results = []
        for index, job in enumerate(jobs):
            results.append(job if isinstance(job, GateResult) else run_job(job))
            if on_done is not None:
                on_done(index, results[-1])
        return results


class DaskExecutor:
    def __init__(self, client) -> None:
        self.client = client

    def workers(self) -> dict:
        return self.client.scheduler_info(n_workers=-1)["workers"]

    def width(self) -> int:
        return max(1, sum(w.get("nthreads", 1) for w in self.workers().values()))

    def map(self, jobs: Sequence[Job], on_done: Done = None) -> list[GateResult]:
        from distributed import as_completed

        gpus = any(w.get("resources", {}).get("GPU") for w in self.workers().values())
        results: list[GateResult | None] = [None] * len(jobs)
        futures = {}
        for index, job in enumerate(jobs):
            if isinstance(job, GateResult):
                results[index] = job
                if on_done is not None:
                    on_done(index, job)
                continue
            key = f"gate-{job.label or job.kernel}-{uuid.uuid4().hex[:8]}"
            future = self.client.submit(run_job, job, key=key, pure=False, resources=resources_for(job, gpus))
            futures[future] = index
        try:
            for future in as_completed(futures, loop=self.client.loop):
                index = futures[future]
                results[index] = finished(future, jobs[index])
                if on_done is not None:
                    on_done(index, results[index])
        except BaseException:  # Ctrl-C: nothing more starts; closing a local cluster kills what runs
            self.client.cancel(list(futures))
            raise
        return results


def resources_for(job: GateJob, gpus: bool) -> dict[str, int] | None:
    """A run that may use a GPU holds one worker's GPU, where the cluster has any; without a GPU worker
    anywhere, it goes where it can and its runner says there is no GPU, as it would run here."""
    return {"GPU": 1} if gpus and job.device in ("cuda", "auto") else None


def finished(future, job: GateJob) -> GateResult:
    """The job's result; a job whose workers kept dying, or that could not run at all, an AR505 saying so."""
    from distributed import KilledWorker

    try:
        return future.result()
    except KilledWorker as killed:
        tries, allowed = killed.allowed_failures + 1, killed.allowed_failures
        message = f"the worker running the gate died, and the job was given up after {tries} tries (the scheduler's "
        message += f"allowed-failures: {allowed})"
    except Exception as problem:  # not the gate's failure (that is in its result): the cluster's
        message = f"the cluster could not run the gate: {type(problem).__name__}: {problem}"[:400]
    error = GateError(code="AR505", message=message)
    return GateResult(kernel=job.kernel, source_path=job.source_path, device=job.device, errors=[error])


def gpu_count(timeout_s: float = 120.0) -> int:
    """The CUDA devices torch sees here, asked in a child (the parent never imports torch); 0 on any trouble."""
    probe = "import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)"
    try:
        done = subprocess.run(
            [sys.executable, "-c", probe], env=child_environment(), stdin=subprocess.DEVNULL, capture_output=True,
            text=True, timeout=timeout_s,
        )  # fmt: skip
        return int(done.stdout.strip() or 0) if done.returncode == 0 else 0
    except (subprocess.TimeoutExpired, ValueError, OSError):
        return 0


def default_cpu_workers(gpus: int) -> int:
    """Half the cores (each gate run starts processes of its own), none beside GPU workers by default."""
    return 0 if gpus else max(1, (os.cpu_count() or 2) // 2)


def local_cluster(cpu_workers: int, gpus: int = 0, runs_per_gpu: int = 1):
    """A dask cluster on this machine: a worker per GPU (CUDA_VISIBLE_DEVICES its card) and `cpu_workers`
    workers that see no GPU, each under a nanny that restarts it if it dies. A GPU worker runs `runs_per_gpu`
    gate runs at once (threads, and as many units of the resource GPU); with more than one, their GPU stages take
    turns on the card's lock file (run.py --gpu-lock), so imports and compiles overlap and timings never do."""
    from distributed import Nanny, Scheduler, SpecCluster

    def worker(env: dict[str, str], resources: dict[str, int], threads: int = 1) -> dict:
        options = {"nthreads": threads, "env": env, "resources": resources, "host": "127.0.0.1", "dashboard": False}
        return {"cls": Nanny, "options": options}

    def card(i: int) -> dict[str, str]:
        lock = {GPU_LOCK: str(Path(tempfile.gettempdir()) / f"argus-gpu{i}.lock")} if runs_per_gpu > 1 else {}
        return {"CUDA_VISIBLE_DEVICES": str(i)} | lock

    # A worker's own log lines are noise on the CLI's stderr. It reads this when it imports distributed, before
    # the nanny's `env` applies, so it is set here (a value the user set stays), for restarted workers too.
    os.environ.setdefault("DASK_LOGGING__DISTRIBUTED", "error")
    specs = {f"gpu{i}": worker(card(i), {"GPU": runs_per_gpu}, runs_per_gpu) for i in range(gpus)}
    specs |= {f"cpu{i}": worker({"CUDA_VISIBLE_DEVICES": ""}, {}) for i in range(cpu_workers)}
    if not specs:
        raise ClusterError("a local cluster needs at least one worker (--workers, or a GPU)")
    # No dashboard; the scheduler's HTTP routes (health) on a free port of this machine, not on 8787.
    options = {"dashboard": False, "dashboard_address": "127.0.0.1:0", "host": "127.0.0.1"}
    scheduler = {"cls": Scheduler, "options": options}
    return SpecCluster(workers=specs, scheduler=scheduler, silence_logs=logging.ERROR)


@contextlib.contextmanager
def open_executor(
    cluster: str = LOCAL, *, workers: int | None = None, device: str = "cpu", runs_per_gpu: int = 1
) -> Iterator:
    """The executor `--cluster` names: `serial`, `local` (a cluster started here and stopped after; a worker per
    GPU when `device` may use one, `workers` CPU workers), or a scheduler's address (tcp://host:8786)."""
    if cluster == SERIAL:
        yield SerialExecutor()
        return
    try:
        import dask
        from distributed import Client
    except ImportError as missing:
        raise ClusterError(f"--cluster {cluster} needs dask.distributed ({missing}); or use --cluster serial") from None
    with contextlib.ExitStack() as stack:
        try:
            if cluster == LOCAL:
                gpus = gpu_count() if device in ("cuda", "auto") else 0
                count = default_cpu_workers(gpus) if workers is None else workers
                # The scheduler's, nannies' and workers' files (and the jobs' bundles) go in a folder removed after.
                folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="argus-cluster-"))
                stack.enter_context(dask.config.set({"temporary-directory": folder}))
                target = stack.enter_context(local_cluster(count, gpus, runs_per_gpu))
            else:
                target = cluster
            client = stack.enter_context(Client(target, timeout=CONNECT_S, set_as_default=False))
        except (OSError, TimeoutError, ValueError, RuntimeError) as problem:  # RuntimeError: a worker did not start
            what = "start a local cluster" if cluster == LOCAL else f"reach the cluster {cluster}"
            raise ClusterError(f"cannot {what}: {problem}") from None
        yield DaskExecutor(client)


class ClusterGate:
    """A gate `(source, kernel) -> GateResult` with one file's settings, through an executor; `many` gates a
    list of texts at once. The lineage walker takes it where it takes a plain gate."""

    def __init__(
        self,
        executor: GateExecutor,
        *,
        path: str | None = None,
        device: str = "auto",
        stages: Sequence[str] = STAGES,
        timeout_s: float = 120.0,
        **runner_options,
    ) -> None:
        self.executor, self.path, self.device, self.stages = executor, path, device, tuple(stages)
        self.timeout_s, self.options = timeout_s, runner_options

    def width(self) -> int:
        return self.executor.width()

    def job(self, source: str, kernel: str, label: str = "") -> Job:
        return job_for_source(
            source, kernel, path=self.path, device=self.device, stages=self.stages, timeout_s=self.timeout_s,
            label=label, **self.options,
        )  # fmt: skip

    def many(self, items: Sequence[tuple[str, str]], on_done: Done = None) -> list[GateResult]:
        jobs = [self.job(source, kernel, f"c{i}") for i, (source, kernel) in enumerate(items)]
        return self.executor.map(jobs, on_done)

    def __call__(self, source: str, kernel: str) -> GateResult:
        return self.many([(source, kernel)])[0]
