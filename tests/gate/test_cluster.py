"""Gate runs on a real dask cluster started here on the CPU (argus.gate.cluster): two CPU workers and one worker
that holds the resource GPU (its card does not exist here: what is tested is that GPU runs take turns on it).
The gate runs are real (compile for sm_90, correct under the interpreter) on the vector_add example and fixture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pytest
from gate_support import EXAMPLES, fixture_bundle

from argus.gate import run_gate
from argus.gate.cluster import ClusterGate, DaskExecutor, SerialExecutor, local_cluster, open_executor, resources_for
from argus.gate.jobs import GPU_LOCK, job_for_bundle, job_for_source, runner_options
from argus.gate.result import GateResult

CPU = ("compile", "correct")
SOURCE = (EXAMPLES / "vector_add.argus").read_text(encoding="utf-8")
BROKEN = SOURCE.replace("a + b", "a + c")  # an unknown name: the gate refuses it before any run
HANG = 'while __import__("os").environ.get("TRITON_INTERPRET") == "1":\n    pass'


@pytest.fixture(scope="module")
def executor():
    from distributed import Client

    with local_cluster(2, gpus=1) as cluster, Client(cluster, set_as_default=False) as client:
        yield DaskExecutor(client)


def timeless(result: GateResult) -> dict:
    """A result without its wall times, which no two runs share."""

    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "seconds"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(result.model_dump())


def test_a_cluster_gives_the_results_of_the_serial_path_in_the_order_asked(executor):
    options = dict(device="cpu", stages=CPU, timeout_s=120, trials=1, seed=7)
    serial = [run_gate(text, kernel="vector_add", **options) for text in (SOURCE, BROKEN)]
    assert serial[0].passed and serial[1].errors  # the second never reached a runner
    done = []
    items = [(SOURCE, "vector_add"), (BROKEN, "vector_add")]
    clustered = ClusterGate(executor, **options).many(items, on_done=lambda i, _: done.append(i))
    in_process = ClusterGate(SerialExecutor(), **options).many(items)
    assert [timeless(r) for r in clustered] == [timeless(r) for r in serial] == [timeless(r) for r in in_process]
    assert sorted(done) == [0, 1]


def test_hanging_runs_are_killed_at_their_limit_with_ar504_side_by_side(executor, tmp_path):
    limit = 10.0
    hang = [fixture_bundle(tmp_path / f"hang{i}", fault=HANG) for i in range(2)]
    jobs = [job_for_bundle(p, "vector_add", device="cpu", stages=["correct"], timeout_s=limit, trials=1) for p in hang]
    started = time.monotonic()
    results = executor.map(jobs)
    elapsed = time.monotonic() - started
    for result in results:
        assert [(e.code, e.stage) for e in result.errors] == [("AR504", "correct")]
    assert elapsed < 2 * limit  # one after the other would take twice the limit at least


def test_runs_on_the_gpu_take_turns_on_the_worker_that_holds_it(executor):
    from distributed import get_task_stream

    jobs = [job_for_source(SOURCE, "vector_add", device="cuda", stages=("compile",)) for _ in range(2)]
    with get_task_stream(executor.client) as stream:
        results = executor.map(jobs)
    assert all(not r.passed for r in results)  # there is no GPU here: each runner said so
    gpu_worker = [a for a, w in executor.workers().items() if w["resources"].get("GPU")]
    cards = executor.client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
    assert sorted(cards.values()) == ["", "", "0"] and cards[gpu_worker[0]] == "0"  # CPU workers see no card
    tasks = [t for t in stream.data if t["key"].startswith("gate-")]
    assert {t["worker"] for t in tasks} == set(gpu_worker)
    first, second = sorted((s["start"], s["stop"]) for t in tasks for s in t["startstops"] if s["action"] == "compute")
    # the second began after the first ended: each run takes seconds, so two at once would overlap by seconds;
    # dask stamps a task's stop after its thread is free again, which has put a next start up to 1 ms before it
    assert first[1] - second[0] < 0.05 < first[1] - first[0]


def test_a_local_cluster_and_its_runs_leave_nothing_in_tmpdir(tmp_path, monkeypatch):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with open_executor("local", workers=1) as executor:
        [result] = ClusterGate(executor, device="cpu", stages=("compile",)).many([(SOURCE, "vector_add")])
    assert result.passed
    assert list(scratch.iterdir()) == []


def test_a_run_that_may_use_a_gpu_asks_for_one_only_where_the_cluster_has_one():
    job = job_for_source(SOURCE, "vector_add", device="cuda", stages=("compile",))
    assert resources_for(job, gpus=True) == {"GPU": 1}
    assert resources_for(job, gpus=False) is None
    cpu = job_for_source(SOURCE, "vector_add", device="cpu", stages=CPU)
    assert resources_for(cpu, gpus=True) is None


def test_a_gpu_worker_with_runs_per_gpu_runs_them_at_once_with_the_cards_lock():
    from distributed import Client, get_task_stream

    jobs = [job_for_source(SOURCE, "vector_add", device="cuda", stages=("compile",)) for _ in range(2)]
    with local_cluster(0, gpus=1, runs_per_gpu=2) as cluster, Client(cluster, set_as_default=False) as client:
        [worker] = client.scheduler_info(n_workers=-1)["workers"].values()
        assert worker["nthreads"] == 2 and worker["resources"] == {"GPU": 2}
        lock = next(iter(client.run(lambda: os.environ.get(GPU_LOCK)).values()))
        assert lock.endswith("argus-gpu0.lock")
        with get_task_stream(client) as stream:
            DaskExecutor(client).map(jobs)
    first, second = sorted((s["start"], s["stop"]) for t in stream.data for s in t["startstops"])
    assert second[0] < first[1]  # side by side on the one card


def test_a_run_on_a_shared_card_takes_the_cards_lock_unless_it_names_its_own():
    cuda = job_for_source(SOURCE, "vector_add", device="cuda", stages=("compile",))
    assert runner_options(cuda, {GPU_LOCK: "/tmp/card.lock"})["gpu_lock"] == "/tmp/card.lock"
    assert "gpu_lock" not in runner_options(cuda, {})
    own = job_for_source(SOURCE, "vector_add", device="cuda", stages=("compile",), gpu_lock="/tmp/mine.lock")
    assert runner_options(own, {GPU_LOCK: "/tmp/card.lock"})["gpu_lock"] == "/tmp/mine.lock"
    cpu = job_for_source(SOURCE, "vector_add", device="cpu", stages=CPU)
    assert "gpu_lock" not in runner_options(cpu, {GPU_LOCK: "/tmp/card.lock"})


def test_a_run_whose_worker_is_killed_is_run_again_and_its_runner_dies_with_the_worker(executor):
    job = job_for_source(SOURCE, "vector_add", device="cpu", stages=("compile",), timeout_s=120)
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(executor.map, [job])
        worker, runners = running_runner(executor)
        os.kill(worker, signal.SIGKILL)
        _, alive = psutil.wait_procs(runners, timeout=15)
        assert not alive  # PR_SET_PDEATHSIG: no orphaned runner goes on holding a card
        [result] = pending.result(timeout=180)
    assert result.passed
    assert timeless(result) == timeless(run_gate(SOURCE, kernel="vector_add", device="cpu", stages=("compile",)))


def running_runner(executor: DaskExecutor, timeout_s: float = 60.0) -> tuple[int, list[psutil.Process]]:
    """The pid of the worker running the gate, once its runner (run.py) has started, and the runner's processes."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for address, keys in executor.client.processing().items():
            if any(str(k).startswith("gate-") for k in keys):
                pid = executor.client.run(os.getpid, workers=[address])[address]
                runners = [p for p in psutil.Process(pid).children(recursive=True) if is_runner(p)]
                if runners:
                    return pid, runners
        time.sleep(0.2)
    raise AssertionError("no worker started the gate's runner")


def is_runner(process: psutil.Process) -> bool:
    try:
        return any(Path(arg).name == "run.py" for arg in process.cmdline())
    except psutil.Error:
        return False


@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    """A scheduler and a worker started as docs/gate.md starts them on other machines, with `dask scheduler` and
    `dask worker`; the scheduler gives up on a job after its first worker death (allowed-failures 0)."""
    folder = tmp_path_factory.mktemp("scheduler")
    dask = str(Path(sys.executable).parent / "dask")
    env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES="0", DASK_LOGGING__DISTRIBUTED="error")
    file = folder / "scheduler.json"
    started = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                          "--scheduler-file", str(file)], env=env, stderr=subprocess.DEVNULL),
        subprocess.Popen([dask, "worker", "--scheduler-file", str(file), "--nworkers", "1", "--nthreads", "1",
                          "--resources", "GPU=1", "--no-dashboard", "--host", "127.0.0.1"],
                         env=env | {"CUDA_VISIBLE_DEVICES": "0"}, stderr=subprocess.DEVNULL),
    ]  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        yield json.loads(file.read_text())["address"]
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=30)


def test_a_scheduler_address_gates_on_the_workers_that_joined_it(scheduler):
    with open_executor(scheduler) as executor:
        executor.client.wait_for_workers(1, timeout=60)
        assert executor.width() == 1
        [result] = ClusterGate(executor, device="cuda", stages=("compile",)).many([(SOURCE, "vector_add")])
    serial = run_gate(SOURCE, kernel="vector_add", device="cuda", stages=("compile",))
    assert timeless(result) == timeless(serial)  # no GPU here: both say so, in the same words


def test_a_run_whose_worker_dies_more_often_than_the_scheduler_allows_is_ar505(scheduler):
    job = job_for_source(SOURCE, "vector_add", device="cpu", stages=("compile",), timeout_s=120)
    with open_executor(scheduler) as executor, ThreadPoolExecutor(1) as pool:
        executor.client.wait_for_workers(1, timeout=60)
        pending = pool.submit(executor.map, [job])
        worker, _ = running_runner(executor)
        os.kill(worker, signal.SIGKILL)
        [result] = pending.result(timeout=120)
    assert [e.code for e in result.errors] == ["AR505"]
    assert "worker running the gate died" in result.errors[0].message and result.kernel == "vector_add"
