"""Runners started side by side take turns on the GPU through --gpu-lock (run.py's gpu_lock)."""

from __future__ import annotations

import argparse
import fcntl
import sys
from pathlib import Path

import pytest

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"


@pytest.fixture
def run_module(monkeypatch):
    monkeypatch.syspath_prepend(str(RUNNER))
    import run

    yield run
    sys.modules.pop("run", None)


def held_elsewhere(path: Path) -> bool:
    with open(path, "a") as other:
        try:
            fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(other, fcntl.LOCK_UN)
        return False


@pytest.mark.parametrize("worker", ["correct", "profile", "ceilings"])
def test_a_gpu_stage_holds_the_lock_while_it_runs(run_module, tmp_path, worker):
    lock = tmp_path / "gpu.lock"
    args = argparse.Namespace(gpu_lock=str(lock), device="cuda", worker=worker)
    with run_module.gpu_lock(args):
        assert held_elsewhere(lock)
    assert not held_elsewhere(lock)


@pytest.mark.parametrize(("worker", "device"), [("compile", "cuda"), ("correct", "cpu")])
def test_compiles_and_cpu_stages_run_without_the_lock(run_module, tmp_path, worker, device):
    lock = tmp_path / "gpu.lock"
    args = argparse.Namespace(gpu_lock=str(lock), device=device, worker=worker)
    with run_module.gpu_lock(args):
        assert not lock.exists() or not held_elsewhere(lock)


def test_unknown_references_choice_is_a_usage_error(run_module):
    with pytest.raises(SystemExit):
        run_module.parse_args(["--references", "compiled-only"])
    assert run_module.parse_args(["--references", "eager"]).references == "eager"


def test_a_stage_that_waits_for_the_lock_says_so(run_module, tmp_path, capsys):
    import threading

    lock = tmp_path / "gpu.lock"
    args = argparse.Namespace(gpu_lock=str(lock), device="cuda", worker="profile")
    entered = threading.Event()

    def stage() -> None:
        with run_module.gpu_lock(args):
            entered.set()

    with open(lock, "a") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        waiter = threading.Thread(target=stage)
        waiter.start()
        assert not entered.wait(0.5)  # still queued behind the other holder
        fcntl.flock(other, fcntl.LOCK_UN)
    waiter.join(timeout=10)
    assert entered.is_set()
    err = capsys.readouterr().err
    assert err.index(run_module.LOCK_WAITING) < err.index(run_module.LOCK_TAKEN)


def child_script(run, waits_for_lock: bool) -> list[str]:
    """A stand-in worker: 2 s in the GPU queue (said, or not), then 0.3 s of its own work."""
    say = "print('[gate] ' + {!r}, file=sys.stderr, flush=True)"
    lines = ["import sys, time"]
    if waits_for_lock:
        lines.append(say.format(run.LOCK_WAITING))
    lines.append("time.sleep(2)")
    if waits_for_lock:
        lines.append(say.format(run.LOCK_TAKEN))
    lines.append("time.sleep(0.3)")
    return [sys.executable, "-c", "\n".join(lines)]


def test_the_wait_for_the_lock_does_not_count_against_the_time_limit(run_module):
    child = run_module.Child(child_script(run_module, waits_for_lock=True), {}, None)
    status, output = child.wait(1.0)
    assert status == 0, output
    assert 1.5 < child.lock_wait_s < 5


def test_a_child_past_its_limit_without_a_lock_wait_is_killed(run_module):
    child = run_module.Child(child_script(run_module, waits_for_lock=False), {}, None)
    status, _ = child.wait(1.0)
    assert status is None
    assert child.lock_wait_s == 0


@pytest.mark.parametrize("waits_for_lock", [True, False])
def test_the_outer_limit_stops_while_the_runner_is_queued_for_the_gpu(run_module, tmp_path, waits_for_lock):
    import asyncio

    from argus.gate.process import run_async, run_blocking

    script = tmp_path / "run.py"
    script.write_text(child_script(run_module, waits_for_lock)[-1], encoding="utf-8")
    blocking = run_blocking(script, [], limit_s=1.0)
    in_asyncio = asyncio.run(run_async(script, [], limit_s=1.0))
    expected = 0 if waits_for_lock else None  # None: killed at the limit
    assert (blocking.status, in_asyncio.status) == (expected, expected)
