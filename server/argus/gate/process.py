"""The gate's child process: `python run.py` in its own session, with a time limit, killed with its children.

The runner kills its own stage workers on SIGTERM; a SIGKILL of the whole group follows after a short grace,
and the workers die with the runner anyway (PR_SET_PDEATHSIG). Two forms: blocking (the CLI) and asyncio
(the language server), where cancelling the awaiting task kills the process. Time the runner spends queued
for the GPU (--gpu-lock; its workers say when they wait) does not count against the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from argus.gate.runner.gate_common import NO_CUDA, QueueClock, missing_packages, missing_packages_message

KILL_GRACE_S = 3.0
Progress = Callable[[str], None] | None


@dataclass
class Finished:
    status: int | None  # None: killed at the time limit
    stderr: str


def runner_command(run_py: Path, argv: Sequence[str]) -> list[str]:
    return [sys.executable, str(run_py), *argv]


# The runner's variable (runner/run.py's PARENT_PID): with it, the runner dies when the process that started it does.
PARENT_PID = "ARGUS_GATE_PARENT_PID"


def child_environment(die_with_parent: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("TRITON_INTERPRET", None)  # the runner sets it for the stages that need it, and only those
    env.pop(PARENT_PID, None)
    env["PYTHONUNBUFFERED"] = "1"
    if die_with_parent:  # a cluster worker that is killed must not leave its runner holding the GPU
        env[PARENT_PID] = str(os.getpid())
    return env


POLL_S = 1.0  # how often a wait looks at the clock again


def _forward(line: str, lines: list[str], on_progress: Progress, clock: QueueClock) -> None:
    lines.append(line)
    clock.see(line)
    if on_progress is not None and line.startswith("[gate] "):
        on_progress(line.removeprefix("[gate] ").rstrip("\n"))


def _kill_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def run_blocking(
    run_py: Path, argv: Sequence[str], limit_s: float, on_progress: Progress = None, die_with_parent: bool = False
) -> Finished:
    process = subprocess.Popen(
        runner_command(run_py, argv),
        cwd=run_py.parent,
        env=child_environment(die_with_parent),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    lines: list[str] = []
    clock = QueueClock(limit_s)

    def pump() -> None:
        for raw in iter(process.stderr.readline, b""):
            _forward(raw.decode("utf-8", "replace"), lines, on_progress, clock)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    status = None
    try:
        while status is None and clock.left() > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = process.wait(timeout=min(clock.left(), POLL_S))
        if status is None:
            stop_blocking(process)
    except BaseException:  # KeyboardInterrupt: the runner must not outlive us
        stop_blocking(process)
        raise
    reader.join(timeout=5)
    return Finished(status, "".join(lines))


def stop_blocking(process: subprocess.Popen) -> None:
    _kill_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE_S)
    _kill_group(process.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=10)


async def run_async(run_py: Path, argv: Sequence[str], limit_s: float, on_progress: Progress = None) -> Finished:
    process = await asyncio.create_subprocess_exec(
        *runner_command(run_py, argv),
        cwd=run_py.parent,
        env=child_environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    lines: list[str] = []
    clock = QueueClock(limit_s)

    async def pump() -> None:
        while raw := await process.stderr.readline():
            _forward(raw.decode("utf-8", "replace"), lines, on_progress, clock)

    reader = asyncio.ensure_future(pump())
    status = None
    try:
        while status is None and clock.left() > 0:
            with contextlib.suppress(TimeoutError):
                status = await asyncio.wait_for(process.wait(), timeout=min(clock.left(), POLL_S))
        if status is None:
            await stop_async(process)
    except BaseException:  # cancelled: kill the runner and its workers, then let the cancellation go on
        await asyncio.shield(stop_async(process))
        reader.cancel()
        raise
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(reader, timeout=5)
    return Finished(status, "".join(lines))


async def stop_async(process: asyncio.subprocess.Process) -> None:
    _kill_group(process.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), timeout=KILL_GRACE_S)
    except TimeoutError:
        _kill_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), timeout=10)
    _kill_group(process.pid, signal.SIGKILL)


CUDA_PROBE = "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"


def gate_unavailable(device: str, timeout_s: float = 120.0) -> str:
    """Why no gate run can pass on `device` here, in the runner's words; "" when one can. torch and triton are
    looked for without importing them; for `cuda`, a child process asks torch for a GPU (the parent never
    imports torch). For a caller that would otherwise spend many gate runs finding out, one each."""
    missing = missing_packages()
    if missing:
        return missing_packages_message(missing)
    if device != "cuda":
        return ""
    try:
        probe = subprocess.run(
            [sys.executable, "-c", CUDA_PROBE], env=child_environment(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=timeout_s,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"torch did not say within {timeout_s:.0f} s whether there is a CUDA GPU here"
    if probe.returncode == 0:
        return ""
    if probe.returncode == 3:
        return NO_CUDA
    last = next((line for line in reversed(probe.stderr.splitlines()) if line.strip()), "")
    return f"torch cannot start here (exit status {probe.returncode}): {last.strip()[:300]}"
