"""A kernel that hangs, crashes or runs out of memory ends its own gate run with a clear error, inside its time
limit, and the caller goes on. The kernels are the hand-written vector_add fixture with one launcher line
replaced (on the CPU the correct stage runs it through the Triton interpreter)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from gate_support import fault_line, fixture_bundle

from argus.gate import Status, run_bundle, run_bundle_async

INTERPRETED = 'while __import__("os").environ.get("TRITON_INTERPRET") == "1":\n    pass'


def gate_correct(run_py: Path, timeout_s: float = 60, **options):
    [result] = run_bundle(run_py, device="cpu", stages=["correct"], timeout_s=timeout_s, trials=1, **options)
    return result


def test_a_hanging_kernel_is_killed_at_its_time_limit_with_ar504(bundle_dir):
    run_py = fixture_bundle(bundle_dir, fault=INTERPRETED)
    started = time.monotonic()
    result = gate_correct(run_py, timeout_s=12)
    elapsed = time.monotonic() - started
    assert result.correct.status == Status.error
    assert [(e.code, e.stage) for e in result.errors] == [("AR504", "correct")]
    assert "time limit" in result.errors[0].message
    assert elapsed < 12 + 8  # the limit, plus starting the runner and killing the child


def test_an_aborting_kernel_ends_its_run_with_ar505_at_the_crashing_line(bundle_dir):
    run_py = fixture_bundle(bundle_dir, fault='__import__("os").abort()')
    result = gate_correct(run_py)
    assert [e.code for e in result.errors] == ["AR505"]
    assert "SIGABRT" in result.errors[0].message
    assert result.errors[0].generated_line == fault_line()
    assert result.errors[0].line == 5  # the launcher maps to the kernel's header


def test_a_segfaulting_kernel_ends_its_run_with_ar505_and_the_caller_goes_on(bundle_dir, tmp_path):
    run_py = fixture_bundle(bundle_dir, fault='__import__("ctypes").string_at(0)')
    result = gate_correct(run_py)
    assert [e.code for e in result.errors] == ["AR505"]
    assert "SIGSEGV" in result.errors[0].message
    healthy = gate_correct(fixture_bundle(tmp_path / "healthy"))
    assert healthy.passed


def test_a_huge_allocation_is_ar506_out_of_memory(bundle_dir):
    run_py = fixture_bundle(bundle_dir, fault='__import__("torch").empty(1 << 40, dtype=__import__("torch").uint8)')
    result = gate_correct(run_py, memory_limit_mb=4096)
    assert [e.code for e in result.errors] == ["AR506"]
    assert "out of memory" in result.errors[0].message
    assert result.correct.status == Status.error


def test_memory_growing_past_the_limit_is_ar506(bundle_dir):
    # 64 MiB anonymous maps, one after another: address space grows to the limit without touching the pages,
    # so the test costs no real memory on a shared machine.
    run_py = fixture_bundle(bundle_dir, fault='hoard = [__import__("mmap").mmap(-1, 1 << 26) for _ in range(1000)]')
    result = gate_correct(run_py, memory_limit_mb=4096)
    assert [e.code for e in result.errors] == ["AR506"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_cancelling_an_async_gate_run_kills_its_processes(bundle_dir, tmp_path, monkeypatch):
    pid_file = tmp_path / "worker.pid"
    monkeypatch.setenv("ARGUS_TEST_PID_FILE", str(pid_file))
    fault = 'open(__import__("os").environ["ARGUS_TEST_PID_FILE"], "w").write(str(__import__("os").getpid()))\n'
    run_py = fixture_bundle(bundle_dir, fault=fault + INTERPRETED)
    task = asyncio.create_task(run_bundle_async(run_py, device="cpu", stages=["correct"], timeout_s=300, trials=1))
    for _ in range(600):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.1)
    worker = int(pid_file.read_text())
    runner = _parent(worker)
    assert _alive(worker) and _alive(runner)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):
        if not _alive(worker) and not _alive(runner):
            break
        await asyncio.sleep(0.1)
    assert not _alive(runner)
    assert not _alive(worker)
    assert os.getpid() != worker  # and we are still here
