"""The solver thread: a verification stops at its next checkpoint once its text is stale, makes way between
kernels for another document's, and quick work runs inside it at a checkpoint instead of after it."""

from __future__ import annotations

import asyncio
import threading
import time

from argus.dsl.checkpoint import checkpoint
from argus.lsp.solver_thread import SLICE_S, SolverThread


def kernels(count: int, each_s: float, log: list, name: str):
    """A verification of `count` kernels, each `each_s` of work split into obligations, logging each kernel it
    finished; as the verifier's per-kernel cache does, a run that resumes skips the kernels already done."""

    def run() -> str:
        for k in range(count):
            if (name, k) in log:
                continue
            checkpoint("kernel")
            for _ in range(5):
                checkpoint("obligation")
                time.sleep(each_s / 5)
            log.append((name, k))
        return f"{name} done"

    return run


async def test_a_stale_verification_stops_at_its_next_checkpoint():
    solver, log, stale = SolverThread(), [], threading.Event()
    task = asyncio.create_task(solver.verify("a", kernels(100, 0.05, log, "a"), stale.is_set))
    await asyncio.sleep(0.2)
    stale.set()  # an edit: the version being verified is not the latest
    assert await asyncio.wait_for(task, 2.0) is None
    assert len(log) < 10  # it did not go on to its hundredth kernel


async def test_a_long_verification_makes_way_for_another_documents_between_kernels():
    solver, log = SolverThread(), []
    long = asyncio.create_task(solver.verify("long", kernels(40, 0.05, log, "long"), lambda: False))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    short = await solver.verify("short", kernels(2, 0.02, log, "short"), lambda: False)
    waited = time.monotonic() - started
    assert short == "short done" and waited < SLICE_S + 1.0  # not the 2 s the long one needs
    assert await long == "long done"
    assert [entry for entry in log if entry[0] == "long"] == [("long", k) for k in range(40)]  # all, in order


async def test_quick_work_runs_at_the_running_verifications_next_checkpoint():
    solver, log = SolverThread(), []
    long = asyncio.create_task(solver.verify("a", kernels(20, 0.1, log, "a"), lambda: False))
    await asyncio.sleep(0.1)
    started = time.monotonic()
    assert await solver.quick(lambda x: x * 2, 21) == 42
    assert time.monotonic() - started < 0.2  # one obligation, not the whole 2 s verification
    assert not long.done()
    await long


async def test_quick_work_runs_at_once_when_nothing_is_verified():
    solver = SolverThread()
    assert await solver.quick(threading.current_thread) is not threading.current_thread()
    assert await solver.quick(sum, [1, 2, 3]) == 6
