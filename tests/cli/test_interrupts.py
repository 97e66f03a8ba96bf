"""Ctrl-C, SIGTERM and a closed pipe end `argus` the way a well-behaved command line tool ends: one line (or
none), the conventional exit status, no traceback, and nothing left running."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from cli_support import ARGUS, EXAMPLES, ROOT, copy_example, environment, processes_mentioning, wait_until


class Lines:
    """A child's stderr, read line by line on a thread, so the test can wait for a line and still collect all."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.reader.start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def has(self, fragment: str) -> bool:
        return any(fragment in line for line in self.lines)

    def rest(self) -> list[str]:
        self.reader.join(timeout=10)
        return self.lines


def as_from_a_terminal() -> None:
    """SIGINT as a terminal leaves it. A suite started in the background (`cmd &` without job control) inherits
    SIGINT ignored, which argus rightly keeps (as nohup means it), and these tests would see no Ctrl-C at all."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: list[str], env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [*ARGUS, *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, preexec_fn=as_from_a_terminal,
    )  # fmt: skip


PROMPTLY_S = 10  # what the gate's runner gets to stop (3 s, then SIGKILL), with room for a loaded machine


def interrupt(process: subprocess.Popen) -> int:
    """SIGINT to the process alone, as `kill -INT` sends it; its status, which must come promptly."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=PROMPTLY_S)
    finally:
        if process.poll() is None:
            process.kill()


def gate_compiling(tmp_path: Path) -> tuple[subprocess.Popen, Lines, Path]:
    """`argus gate` on the CPU with its own TMPDIR, once its stage worker compiles: the process, its stderr, the
    TMPDIR."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    kernel = copy_example(tmp_path)
    process = start(["gate", str(kernel), "--device", "cpu"], environment(TMPDIR=str(scratch)))
    stderr = Lines(process.stderr)
    assert wait_until(lambda: stderr.has("compiling for sm_90"), 60), stderr.lines
    return process, stderr, scratch


def test_ctrl_c_in_gate_exits_130_with_one_line_and_kills_the_gate_processes(tmp_path):
    process, stderr, scratch = gate_compiling(tmp_path)
    assert processes_mentioning(str(scratch)), "the gate runner should be running under the test's TMPDIR"
    status = interrupt(process)
    said = [line for line in stderr.rest() if not line.startswith("[gate] ")]
    assert status == 130 and said == ["argus gate: interrupted"], said
    assert wait_until(lambda: not processes_mentioning(str(scratch)), 10), "gate processes outlived the interrupt"
    assert wait_until(lambda: not any(scratch.iterdir()), 5), sorted(p.name for p in scratch.iterdir())


def test_sigterm_in_gate_exits_143_and_kills_the_gate_processes(tmp_path):
    process, stderr, scratch = gate_compiling(tmp_path)
    process.terminate()
    try:
        status = process.wait(timeout=PROMPTLY_S)
    finally:
        if process.poll() is None:
            process.kill()
    assert status == 143 and not [line for line in stderr.rest() if not line.startswith("[gate] ")], stderr.lines
    assert wait_until(lambda: not processes_mentioning(str(scratch)), 10), "gate processes outlived SIGTERM"
    assert wait_until(lambda: not any(scratch.iterdir()), 5), sorted(p.name for p in scratch.iterdir())


def test_ctrl_c_in_check_exits_130_with_one_line(tmp_path):
    for i in range(60):  # long enough to be interrupted in the middle of verifying
        shutil.copyfile(EXAMPLES / "matmul.argus", tmp_path / f"m{i:02}.argus")
    process = start(["check", str(tmp_path)])
    maps = Path(f"/proc/{process.pid}/maps")
    assert wait_until(lambda: maps.exists() and "libz3" in maps.read_text(), 60), "the check never loaded z3"
    status = interrupt(process)
    stderr = process.stderr.read()
    assert (status, stderr) == (130, "argus check: interrupted\n")


def test_ctrl_c_in_demo_during_its_gate_run_exits_130_with_one_line_and_leaves_nothing(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    process = start(["demo"], environment(TMPDIR=str(scratch), PYTHONUNBUFFERED="1"))  # its sections as they come
    for line in process.stdout:
        if "5. The gate" in line:
            break
    assert wait_until(lambda: processes_mentioning(str(scratch), "run.py"), 60), "the server never started the gate"
    status = interrupt(process)
    assert (status, process.stderr.read()) == (130, "argus demo: interrupted\n")  # no pygls traceback
    assert wait_until(lambda: not processes_mentioning(str(scratch)), 15), "the server or its gate outlived the demo"
    assert wait_until(lambda: not any(scratch.iterdir()), 5), sorted(p.name for p in scratch.iterdir())


def closed_stdout(*args: str) -> subprocess.CompletedProcess:
    """Run with stdout a pipe nobody reads any more: what `| head` leaves once it has its lines."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [*ARGUS, *args], cwd=ROOT, stdin=subprocess.DEVNULL, stdout=write, stderr=subprocess.PIPE, text=True,
            timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)


def test_a_closed_pipe_ends_check_json_quietly_with_141():
    done = closed_stdout("check", "--json", str(EXAMPLES))
    assert (done.returncode, done.stderr) == (141, "")


def test_a_closed_pipe_ends_skills_list_quietly_with_141():
    done = closed_stdout("skills", "list", "--json")
    assert (done.returncode, done.stderr) == (141, "")
