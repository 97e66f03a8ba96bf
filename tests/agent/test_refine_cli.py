"""`argus refine` as a user runs it, in a subprocess, on the CPU: two real gate runs (the start and one
candidate) of the smallest example."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def argus(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "argus", "refine", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_refine_on_the_cpu_prints_a_json_summary_and_says_profiling_needs_a_gpu(tmp_path):
    kernel = tmp_path / "vector_add.argus"
    kernel.write_text((ROOT / "examples" / "vector_add.argus").read_text())
    log = tmp_path / "steps.jsonl"
    done = argus(str(kernel), "--device", "cpu", "--budget", "1", "--json", "--log", str(log), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["kernel"] == "vector_add" and summary["device"] == "cpu"
    assert summary["gate_runs"] == 1 and summary["kept"] == [] and summary["speedup"] is None
    assert any("profiling needs a GPU" in note for note in summary["notes"])
    assert summary["steps"][0]["feedback"]["stage"] == "profile"
    assert "[refine] step 1 [search] num_warps.row" in done.stderr and "gate runs  1 of 1" in done.stderr
    for run in ("the start", "gate run 1 of 1"):  # stderr is a pipe: one line as each stage starts
        for stage in ("compile", "correct"):
            said = re.findall(rf"^\[refine\] {run}: {stage} \(\d+\.\d s\)$", done.stderr, re.MULTILINE)
            assert len(said) == 1, (run, stage, done.stderr)
    assert "\r" not in done.stderr
    assert (tmp_path / ".argus" / "memory.jsonl").exists()  # no .git above tmp_path: the file's folder
    assert len(log.read_text().splitlines()) == 1


def test_usage_errors_exit_2(tmp_path):
    missing = argus(str(tmp_path / "none.argus"), cwd=tmp_path)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    kernel = tmp_path / "k.argus"
    kernel.write_text((ROOT / "examples" / "vector_add.argus").read_text())
    assert argus(str(kernel), "--kernel", "nope", cwd=tmp_path).returncode == 2


def test_an_llm_planner_without_a_server_exits_1_before_any_gate_run(tmp_path):
    kernel = tmp_path / "k.argus"
    kernel.write_text((ROOT / "examples" / "vector_add.argus").read_text())
    done = argus(str(kernel), "--planner", "llm", "--host", "http://127.0.0.1:9", "--device", "cpu", cwd=tmp_path)
    assert done.returncode == 1
    assert "no Ollama server answers at http://127.0.0.1:9" in done.stderr and "--planner search" in done.stderr
    assert "[refine] gating the start" not in done.stderr
