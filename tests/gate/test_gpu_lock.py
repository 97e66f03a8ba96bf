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
