"""`argus refine` refuses a run that cannot succeed before it spends a gate run (a kernel the verifier refutes,
--device cuda where there is no GPU), and says what each gate run is doing while it runs: here on a terminal;
tests/agent/test_refine_cli.py checks the one line per stage of a pipe in its CPU run."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_support import ARGUS, EXAMPLES, ROOT, argus, copy_example, no_traceback

BUGGY = EXAMPLES / "buggy" / "matmul_next_k.argus"


def test_a_kernel_the_verifier_refutes_is_refused_naming_the_error_to_fix_first(tmp_path):
    kernel = tmp_path / "k.argus"
    kernel.write_text(BUGGY.read_text())
    checked = argus("check", str(kernel))
    (line,) = [int(m.group(1)) for m in re.finditer(r":(\d+):\d+: error\[AR310\]", checked.stdout)]
    done = argus("refine", str(kernel), "--device", "cpu", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert f"fix AR310 at line {line} first" in done.stderr
    assert f"{kernel}:{line}:" in done.stderr and "error[AR310]" in done.stderr  # the error itself, as check says it
    assert "[refine] gating" not in done.stderr and "gate run" not in done.stderr


no_gpu_here = pytest.mark.skipif(
    Path("/dev/nvidia0").exists() or Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA GPU"
)


@no_gpu_here
def test_device_cuda_without_a_gpu_fails_at_once(tmp_path):
    kernel = copy_example(tmp_path)
    done = argus("refine", str(kernel), "--device", "cuda", cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert "no CUDA GPU here" in done.stderr and "--device cpu" in done.stderr
    assert "[refine] gating" not in done.stderr
    assert not (tmp_path / ".argus").exists()  # nothing ran, so nothing was remembered


def test_on_a_terminal_the_running_stage_and_its_seconds_are_rewritten_in_place(tmp_path):
    kernel = copy_example(tmp_path)
    out = tmp_path / "new" / "folder" / "best.argus"
    leader, follower = os.openpty()
    try:
        process = subprocess.Popen(
            [*ARGUS, "refine", str(kernel), "--device", "cpu", "--budget", "0", "-o", str(out)],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=follower,
        )  # fmt: skip
        os.close(follower)
        shown = read_all(leader)
        assert process.wait(timeout=120) == 0, shown
    finally:
        os.close(leader)
    assert re.search(r"\r\x1b\[K\[refine\] the start: vector_add: correct[^\r\n]* \d+\.\d s", shown), shown
    assert "[refine] the start: compile (" not in shown  # the line-per-stage form is for pipes and files
    assert out.read_text() == kernel.read_text()  # -o made its folders; with no budget the best is the start


def read_all(fd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed its end of the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace")
