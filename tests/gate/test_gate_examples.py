"""Every item of every example (its kernels, and its models with the kernels they launch) passes compile (sm_90,
no GPU) and correct (the Triton interpreter, `small` sizes) on the CPU, through the real code generator;
`argus gate --json` prints results that validate; a bundle round-trips."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.gate import GateResult, GateRun, Status, read_result, run_bundle, run_gate_all, write_bundle

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.argus"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_passes_compile_and_correct_on_the_cpu(example):
    source = example.read_text(encoding="utf-8")
    analysis = check_source(source).analysis
    results = run_gate_all(source, path=str(example), device="cpu", stages=("compile", "correct"), trials=2)
    # every kernel and model the file gates on its own, the file's namesake among them; a kernel only a model
    # launches is compiled and run through that model
    assert [r.kernel for r in results] == analysis.gated and example.stem in analysis.gated
    launched = {launch.kernel for result in results for launch in result.compile.facts.launches}
    assert set(analysis.kernels) <= set(analysis.gated) | launched
    for result in results:
        assert (result.compile.status, result.correct.status) == (Status.passed, Status.passed), result.errors
        assert result.errors == []
        assert result.compile.facts.target == "sm_90" and result.compile.facts.registers > 0
        assert result.correct.facts.interpreter and result.correct.facts.trials == 2
        assert result.profile.status == Status.skipped


def test_argus_gate_json_prints_a_gate_run_that_validates():
    example = ROOT / "examples" / "vector_add.argus"
    command = [sys.executable, "-m", "argus", "gate", str(example), "--device", "cpu", "--stage", "correct"]
    done = subprocess.run([*command, "--json", "--trials", "1"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    run = GateRun.model_validate(json.loads(done.stdout))
    [result] = run.results
    assert isinstance(result, GateResult) and result.kernel == "vector_add" and result.passed
    assert "[gate] vector_add: correct" in done.stderr  # progress on stderr, JSON alone on stdout


def test_a_bundle_round_trips_through_run_py_and_read_result(tmp_path):
    source = (ROOT / "examples" / "softmax.argus").read_text(encoding="utf-8")
    run_py = write_bundle(source, tmp_path / "softmax", path="examples/softmax.argus")
    assert sorted(p.name for p in run_py.parent.iterdir()) == sorted(
        [
            "gate_common.py",
            "gate_compile.py",
            "gate_correct.py",
            "gate_interpreter.py",
            "gate_profile.py",
            "kernel.py",
            "manifest.json",
            "problem_softmax.py",
            "run.py",
            "source.argus",
        ]
    )
    [ran] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    read = read_result(run_py.parent / "result.json")
    assert read == ran and read.passed and read.source_path == "examples/softmax.argus"


def test_argus_gate_read_prints_a_result_file_and_exits_by_its_verdict(tmp_path):
    source = (ROOT / "examples" / "vector_add.argus").read_text(encoding="utf-8")
    run_py = write_bundle(source, tmp_path / "b")
    [result] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    result.correct.status = Status.failed  # a result file that says a stage failed
    failed = tmp_path / "failed.json"
    failed.write_text(GateRun(results=[result]).model_dump_json(), encoding="utf-8")
    shown = subprocess.run(
        [sys.executable, "-m", "argus", "gate", "--read", str(failed)], capture_output=True, text=True
    )
    assert shown.returncode == 1 and "✗ correct" in shown.stdout
    passed = subprocess.run(
        [sys.executable, "-m", "argus", "gate", "--read", str(run_py.parent / "result.json")],
        capture_output=True,
        text=True,
    )
    assert passed.returncode == 0 and "vector_add: passed" in passed.stdout
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"results": [{"kernel": 3}]}', encoding="utf-8")
    refused = subprocess.run(
        [sys.executable, "-m", "argus", "gate", "--read", str(garbage)], capture_output=True, text=True
    )
    assert refused.returncode == 2 and "not a gate result file" in refused.stderr


def test_the_parent_process_imports_neither_torch_nor_triton():
    probe = (
        "import sys\n"
        "from argus.gate import run_gate\n"
        "text = open(sys.argv[1]).read()\n"
        "result = run_gate(text, device='cpu', stages=('correct',), trials=1)\n"
        "assert result.passed, result.errors\n"
        "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(ROOT / "examples" / "vector_add.argus")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
