"""A bundle's run.py, as a user runs it on another machine: it says when torch is missing (and how to install
it), says "no CUDA GPU" only when that is so, and its exit status tells whether every kernel passed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import EXAMPLES, argus


def bundle(tmp_path: Path, reference: str = "x + y") -> Path:
    source = (EXAMPLES / "vector_add.argus").read_text().replace("return x + y", f"return {reference}")
    tmp_path.mkdir(parents=True, exist_ok=True)
    kernel = tmp_path / "vector_add.argus"
    kernel.write_text(source)
    done = argus("gate", str(kernel), "--bundle", str(tmp_path / "bundle"))
    assert done.returncode == 0, done.stderr
    return tmp_path / "bundle" / "run.py"


def run_py(python: str, run: Path, *args: str) -> subprocess.CompletedProcess:
    command = [python, str(run), *args, "--out", str(run.parent / "out.json")]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def stage_messages(run: Path) -> list[str]:
    (result,) = json.loads((run.parent / "out.json").read_text())["results"]
    return [result[stage]["message"] for stage in ("compile", "correct")]


@pytest.fixture(scope="module")
def python_without_torch(tmp_path_factory) -> str:
    """A fresh virtual environment of the same Python, with no package in it: a GPU machine before pip."""
    folder = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = str(folder / "bin" / "python")
    probe = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=60)
    assert probe.returncode != 0, "the bare environment should not see torch"
    return python


@pytest.mark.parametrize("device", ["auto", "cuda"])
def test_without_torch_run_py_says_so_and_how_to_install_it(tmp_path, python_without_torch, device):
    run = bundle(tmp_path)
    done = run_py(python_without_torch, run, "--device", device)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert f"torch and triton are not installed for {python_without_torch}" in done.stderr
    assert "-m pip install torch triton" in done.stderr
    assert "no CUDA GPU" not in done.stderr
    assert all("torch and triton are not installed" in message for message in stage_messages(run))


def test_run_py_exits_1_when_a_kernel_fails_and_0_when_it_passes(tmp_path):
    wrong = bundle(tmp_path / "wrong", reference="x - y")
    failed = run_py(sys.executable, wrong, "--device", "cpu", "--stage", "correct", "--trials", "1")
    assert failed.returncode == 1, failed.stderr
    assert "vector_add: did not pass" in failed.stderr and "AR502" in (wrong.parent / "out.json").read_text()
    right = bundle(tmp_path / "right")
    passed = run_py(sys.executable, right, "--device", "cpu", "--stage", "compile")
    assert passed.returncode == 0, passed.stderr
    assert "vector_add: passed" in passed.stderr


@pytest.mark.skipif(Path("/dev/nvidiactl").exists(), reason="this machine has an NVIDIA GPU")
def test_with_torch_and_no_gpu_run_py_says_there_is_no_cuda_gpu(tmp_path):
    run = bundle(tmp_path)
    done = run_py(sys.executable, run, "--device", "cuda", "--stage", "compile")
    assert done.returncode == 1, done.stderr
    assert all(message.startswith("no CUDA GPU here") for message in stage_messages(run)[:1])
