"""The lineage walker on a real expert with the real CPU gate: steps chain, every accepted step passed compile
and correct, rejected candidates are kept, nothing pretends to be a measurement."""

from __future__ import annotations

from conftest import ROOT

from argus.dsl.check import check_source
from argus.skills.document import Document
from argus.skills.lineage import bundle
from argus.skills.lineage.record import Lineage
from argus.skills.lineage.walker import cpu_gate, try_candidate
from argus.skills.transforms import TRANSFORMS


def test_each_step_starts_from_the_text_the_step_before_accepted(softmax_walk):
    record, _ = softmax_walk
    accepted = [s for s in record.steps if s.accepted]
    assert accepted
    assert accepted[0].text_before == (ROOT / record.expert).read_text(encoding="utf-8")
    for before, after in zip(record.steps, record.steps[1:], strict=False):
        assert after.text_before == before.text_after
    assert record.final_text == accepted[-1].text_after


def test_an_accepted_step_passed_compile_and_correct_on_the_interpreter(softmax_walk):
    record, _ = softmax_walk
    for step in record.steps:
        if step.accepted:
            chosen = record.candidate(step.accepted)
            assert chosen.gate.compile.status == "passed"
            assert chosen.gate.correct.status == "passed" and chosen.gate.correct.facts.interpreter
            assert chosen.gate.profile.status == "skipped" and chosen.slowdown is None


def test_a_cpu_walk_is_marked_unprofiled_and_walks_until_nothing_simplifies(softmax_walk):
    record, _ = softmax_walk
    assert record.device == "cpu" and not record.profiled and record.rule.startswith("cpu:")
    assert record.steps[-1].accepted is None
    assert "exp2(" not in record.final_text  # exp2 was undone
    assert not [d for d in check_source(record.final_text).diagnostics if d.severity.value == "error"]


def test_the_record_round_trips_through_json(softmax_walk):
    record, _ = softmax_walk
    assert Lineage.model_validate_json(record.model_dump_json()) == record


def test_the_walk_shows_a_progress_bar(softmax_walk):
    _, progress = softmax_walk
    assert "[lineage] step 1 ▕" in progress and "done" in progress


def test_a_candidate_that_would_not_check_is_rejected_before_the_gate_and_kept():
    text = (ROOT / "skills" / "experts" / "attention.argus").read_text(encoding="utf-8")
    refused = [a for a in TRANSFORMS["f32_accumulation"].inverse(Document.parse(text)) if a.kernel == "attention"]
    assert refused and refused[0].failed.name == "still_checks"
    candidate, _ = try_candidate("s1.c1", text, refused[0], "attention", cpu_gate("attention.argus"), 0, "a.argus")
    assert candidate.verdict == "rejected" and candidate.gate is None
    assert candidate.reason.startswith("still_checks: the kernel would not check")


def test_bundle_mode_writes_a_gate_bundle_for_the_expert_and_every_text_that_passed(softmax_walk, tmp_path):
    record, _ = softmax_walk
    saved = tmp_path / "softmax.softmax.cpu.json"
    saved.write_text(record.model_dump_json(), encoding="utf-8")
    script = bundle.write(saved, tmp_path / "bundle")
    passed = [c.id for s in record.steps for c in s.candidates if c.verdict != "rejected"]
    text = script.read_text(encoding="utf-8")
    for name in ["base", *passed]:
        assert (tmp_path / "bundle" / name / "run.py").is_file()
    # the expert alone first (it measures the ceilings), then the candidates JOBS at a time, taking turns on the GPU
    base, listing, each = text.splitlines()[4:7]
    assert base.startswith("python3 base/run.py --device cuda") and "--references all" in base
    assert listing.split("|")[0].split()[2:] == passed and 'xargs -r -P "${JOBS:-1}"' in listing
    assert "--stage profile" in each and "--gpu-lock $PWD/gpu.lock" in each and "--references eager" in each


def test_reading_a_bundle_back_puts_the_gate_results_into_the_record(softmax_walk, tmp_path):
    import subprocess
    import sys

    record, _ = softmax_walk
    saved = tmp_path / "softmax.softmax.cpu.json"
    saved.write_text(record.model_dump_json(), encoding="utf-8")
    folder = tmp_path / "bundle"
    bundle.write(saved, folder)
    # the GPU machine's command, here on the CPU and for the expert only (compile: the fastest stage)
    argv = [sys.executable, "base/run.py", "--device", "cpu", "--stage", "compile", "--out", "base.result.json"]
    subprocess.run(argv, cwd=folder, check=True, capture_output=True, timeout=300)
    written = bundle.read_back(folder, tmp_path / "read.json")
    back = Lineage.model_validate_json(written.read_text(encoding="utf-8"))
    assert back.baseline.compile.status == "passed"
    assert not back.profiled  # no profile facts came back, so nothing was measured
    assert all(c.slowdown is None for s in back.steps for c in s.candidates)


def test_lineage_without_an_expert_is_a_usage_error(capsys):
    from argus.cli.main import main

    assert main(["lineage"]) == 2
    assert "EXPERT.argus" in capsys.readouterr().err


def test_each_step_records_the_facts_of_its_text(softmax_walk):
    record, _ = softmax_walk
    first = record.steps[0].facts
    assert first.bounded == [["N", "BN"]] and not first.dot_in_loop
    assert first.loaded == ["x"] and first.stored == ["y"] and first.verify_errors == 0


def test_each_step_and_candidate_records_its_context_with_the_gate_compile(softmax_walk):
    record, _ = softmax_walk
    first = record.steps[0].context
    assert first is not None and first[0].site == "kernel" and first[0].row_length is not None
    assert first[0].registers == record.baseline.compile.facts.registers  # the expert's own compile
    for step in record.steps:
        assert step.context is not None
        for candidate in step.candidates:
            assert candidate.context is not None  # the text after the rewrite, refused or gated
            if candidate.gate is not None and candidate.gate.compile.facts is not None:
                assert candidate.context[0].registers == candidate.gate.compile.facts.registers
    accepted = next(c for c in record.steps[0].candidates if c.id == record.steps[0].accepted)
    assert record.steps[1].context[0].registers == accepted.gate.compile.facts.registers


def test_the_facts_of_a_step_keep_a_string_tile_constant_and_its_tune_list():
    """An fp32 expert's `PREC = "tf32x3" tune ["ieee", "tf32x3"]`: the step's facts record it as written (the
    record once took numbers only, and the walk of skills/experts/fp32_gemm.argus stopped at its first step)."""
    from argus.skills.lineage.record import KernelFactsRecord
    from argus.skills.lineage.walker import facts_record

    text = (ROOT / "examples" / "fp32_gemm.argus").read_text(encoding="utf-8")
    facts = facts_record(text, "fp32_gemm", 0)
    assert facts.constants["PREC"] == "tf32x3" and facts.constants["BM"] == 128
    assert facts.tune["PREC"] == ["ieee", "tf32x3"]
    assert KernelFactsRecord.model_validate_json(facts.model_dump_json()) == facts
