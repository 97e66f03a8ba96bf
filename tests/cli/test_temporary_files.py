"""A gate run, one killed at its time limit, and a demo leave nothing in $TMPDIR."""

from __future__ import annotations

from pathlib import Path

from cli_support import argus, copy_example, environment, no_traceback


def left_in(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_gate_run_leaves_tmpdir_empty(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    kernel = copy_example(tmp_path)
    env = environment(TMPDIR=str(scratch))
    done = argus("gate", str(kernel), "--device", "cpu", "--stage", "compile", env=env)
    assert done.returncode == 0, done.stderr
    assert left_in(scratch) == []


def test_a_gate_run_killed_at_its_time_limit_leaves_tmpdir_empty(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    kernel = copy_example(tmp_path)
    env = environment(TMPDIR=str(scratch))
    # 0.5 s: the compile worker is still importing torch and triton (2 s let a quiet machine finish the compile)
    done = argus("gate", str(kernel), "--device", "cpu", "--stage", "compile", "--timeout", "0.5", env=env)
    no_traceback(done)
    assert done.returncode == 1 and "AR504" in done.stdout, done.stdout  # the compile worker was killed
    assert left_in(scratch) == []


def test_a_demo_leaves_no_server_log_behind(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = argus("demo", "--no-gate", env=environment(TMPDIR=str(scratch)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert left_in(scratch) == []
