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
    # serial: a stage's progress line comes from a runner here (a cluster's runners print on their workers)
    options = ("--device", "cpu", "--budget", "1", "--json", "--log", str(log), "--cluster", "serial")
    done = argus(str(kernel), *options, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["kernel"] == "vector_add" and summary["device"] == "cpu"
    assert summary["gate_runs"] == 1 and summary["kept"] == [] and summary["speedup"] is None
    assert any("profiling needs a GPU" in note for note in summary["notes"])
    assert summary["steps"][0]["feedback"]["stage"] == "profile"
    (first,) = re.findall(r"^\[refine\] step 1 \[search\] (\S+)", done.stderr, re.MULTILINE)
    assert first == summary["steps"][0]["proposal"]["skill"] and first.endswith(".row")
    assert "gate runs  1 of 1" in done.stderr
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


def test_gate_cache_and_library(tmp_path):
    """--gate-cache: a second run reads the start's and the candidate's results back (still 1 gate run of 1,
    its step marked cached); --library: the planner proposes from that folder's cards only."""
    kernel = tmp_path / "vector_add.argus"
    kernel.write_text((ROOT / "examples" / "vector_add.argus").read_text())
    cache = tmp_path / "cache"
    common = ("--device", "cpu", "--budget", "1", "--json", "--no-memory", "--gate-cache", str(cache))
    first = argus(str(kernel), *common, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert len(list(cache.glob("*.json"))) == 2  # the start and the candidate
    second = argus(str(kernel), *common, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert not one["start_cached"] and two["start_cached"]
    assert [s["cached"] for s in one["steps"]] == [False] and [s["cached"] for s in two["steps"]] == [True]
    assert two["gate_runs"] == one["gate_runs"] == 1 and two["steps"][0]["proposal"] == one["steps"][0]["proposal"]
    assert "(1 gate run, cached)" in second.stderr and "gate runs  1 of 1" in second.stderr
    assert "compile (" not in second.stderr  # no gate ran
    library = tmp_path / "cards"
    library.mkdir()
    (library / "tile_size.BM.dot.yaml").write_text((ROOT / "skills" / "library" / "tile_size.BM.dot.yaml").read_text())
    only_dot = argus(str(kernel), *common, "--library", str(library), cwd=tmp_path)
    assert only_dot.returncode == 0, only_dot.stderr
    summary = json.loads(only_dot.stdout)
    assert summary["steps"] == [] and summary["stopped"] == "planner" and summary["library"] == str(library)
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = argus(str(kernel), *common, "--library", str(empty), cwd=tmp_path)
    assert refused.returncode == 2 and "no skill cards" in refused.stderr
