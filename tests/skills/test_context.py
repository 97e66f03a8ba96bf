"""The context of a site (argus.skills.context): operand layouts and precisions, the accumulator, the work at the
`large` sizes and the bound, waves, rows against tiles; and the records that carry it. CPU only, no gate run:
the numbers asserted are computed by hand from the kernels' sizes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from argus.agent.plan import Proposal, Step
from argus.agent.trajectory import TrajectoryLog, read_trajectory, step_json
from argus.cli.main import main
from argus.gate.result import CompileFacts, GateResult
from argus.skills.context import SMS, SiteContext, kernel_context, site_at, site_contexts, with_compile
from argus.skills.document import Document
from argus.skills.lineage.bundle import load
from argus.skills.lineage.record import Candidate, Lineage
from argus.skills.lineage.record import Step as LineageStep
from argus.skills.lineage.walker import annotate

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def text_of(name: str) -> str:
    return (EXAMPLES / name).read_text(encoding="utf-8")


def sites_of(text: str, kernel: str, compiled=None) -> list[SiteContext]:
    return site_contexts(Document.parse(text), kernel, compiled)


@pytest.fixture(scope="module")
def fp32_gemm():
    return sites_of(text_of("fp32_gemm.argus"), "fp32_gemm")


def dot_site(sites: list[SiteContext]) -> SiteContext:
    return next(s for s in sites if s.site == "dot")


def test_a_kernel_has_a_site_for_itself_its_loop_and_its_dot(fp32_gemm):
    assert [(s.site, s.line) for s in fp32_gemm] == [("kernel", 8), ("loop", 17), ("dot", 21)]
    assert site_at(fp32_gemm, 21).site == "dot" and site_at(fp32_gemm, 9).site == "kernel"
    # the kernel and the loop carry their one dot's facts
    assert all(s.dot_line == 21 and s.b_k_major is True for s in fp32_gemm)
    assert fp32_gemm[1].loop_trips == 4096 // 64


def test_layout_b_k_makes_b_k_major_and_prec_resolves_to_tf32x3(fp32_gemm):
    dot = dot_site(fp32_gemm)
    assert (dot.a_dtype, dot.b_dtype, dot.input_precision, dot.precision_constant) == ("f32", "f32", "tf32x3", "PREC")
    assert dot.engine == "wgmma"
    assert (dot.a_tensor, dot.a_contiguous, dot.a_k_major, dot.a_layout_declared) == ("A", "K", True, False)
    assert (dot.b_tensor, dot.b_contiguous, dot.b_k_major, dot.b_layout_declared) == ("B", "K", True, True)
    assert dot.a_trans is False and dot.b_trans is False


def test_without_the_layout_b_is_row_major_and_not_k_major():
    text = text_of("fp32_gemm.argus").replace("    layout B: K\n", "")
    dot = dot_site(sites_of(text, "fp32_gemm"))
    assert (dot.b_contiguous, dot.b_k_major, dot.b_layout_declared) == ("N", False, False)


def test_a_weight_stored_n_k_through_trans_is_k_major():
    dot = dot_site(sites_of(text_of("fp32_linear_gelu.argus"), "fp32_linear_gelu"))
    assert (dot.b_tensor, dot.b_contiguous, dot.b_trans, dot.b_k_major) == ("W", "K", True, True)
    assert (dot.a_tensor, dot.a_trans, dot.a_k_major) == ("x", False, True)
    assert dot.input_precision == "tf32x3"


def test_an_f16_gemm_with_b_k_n_is_n_contiguous_and_has_no_input_precision():
    sites = sites_of(text_of("matmul.argus"), "matmul")
    dot = dot_site(sites)
    assert (dot.a_dtype, dot.b_dtype, dot.input_precision, dot.precision_constant) == ("f16", "f16", None, None)
    assert (dot.b_tensor, dot.b_contiguous, dot.b_k_major, dot.b_trans) == ("B", "N", False, False)
    assert dot.a_k_major is True
    # accumulator f32[128, 256] over 8 warps: 32768 elements / 256 threads, one 32-bit register each
    assert (dot.accumulator_shape, dot.accumulator_dtype, dot.accumulator_registers) == ([128, 256], "f32", 128.0)


def test_accumulator_registers_follow_the_warps():
    text = text_of("fp32_gemm.argus")
    assert dot_site(sites_of(text, "fp32_gemm")).accumulator_registers == 128 * 128 / (8 * 32)  # 64
    fewer = text.replace("num_warps = 8", "num_warps = 4")
    assert dot_site(sites_of(fewer, "fp32_gemm")).accumulator_registers == 128 * 128 / (4 * 32)  # 128


def test_gemm_work_at_large_is_2mnk_flops_and_the_operands_bytes(fp32_gemm):
    site = fp32_gemm[0]
    m = n = k = 4096
    assert site.size_set == "large" and site.sizes == {"M": m, "N": n, "K": k}
    assert site.flops == site.dot_flops == 2 * m * n * k == 137_438_953_472
    assert site.bytes == (m * k + k * n + m * n) * 4 == 201_326_592  # A, B and C in f32, once each
    assert site.arithmetic_intensity == round(2 * m * n * k / ((m * k + k * n + m * n) * 4), 3)
    assert site.bound == "compute"


def test_an_epilogue_adds_elementwise_flops_and_the_bias_bytes():
    site = sites_of(text_of("matmul.argus"), "matmul")[0]
    m = n = k = 4096
    assert site.dot_flops == 2 * m * n * k
    assert site.flops > site.dot_flops  # bias, GELU: counted over whole tiles
    assert site.bytes == (m * k + k * n + n + m * n) * 2 == 100_671_488


def test_waves_at_large_sizes(fp32_gemm):
    site = fp32_gemm[0]
    assert site.programs == (4096 // 128) * (4096 // 128) == 1024
    assert site.waves == round(1024 / SMS, 3) == 7.758
    assert site.tail_programs == 1024 - 7 * 132 == 100
    matmul = sites_of(text_of("matmul.argus"), "matmul")[0]
    assert (matmul.programs, matmul.tail_programs) == (32 * 16, 512 - 3 * 132)


def test_a_row_softmax_is_memory_bound_with_its_row_in_one_tile():
    sites = sites_of(text_of("softmax.argus"), "softmax")
    site = sites[0]
    assert [s.site for s in sites] == ["kernel"] and site.dots == 0 and site.dot_line is None
    assert (site.row_tensor, site.row_length, site.row_tile, site.row_wider_than_tile) == ("x", 4096, 4096, False)
    assert site.bytes == 32768 * 4096 * 2 * 2  # x read, y written, f16
    assert site.bound == "memory"
    assert (site.programs, site.waves) == (32768, round(32768 / 132, 3))
    assert site.a_dtype is None and site.accumulator_registers is None  # no dot: nothing invented


def test_a_long_row_through_a_loop_is_wider_than_its_tile():
    site = sites_of(text_of("layernorm.argus"), "layernorm")[0]
    assert (site.row_length, site.row_tile, site.row_wider_than_tile) == (4096, 2048, True)
    assert site.bound == "memory"


def test_compile_facts_come_from_a_gate_result_and_are_none_without_one(fp32_gemm):
    assert all(s.registers is None and s.spill_stores_bytes is None for s in fp32_gemm)
    facts = CompileFacts(
        target="sm_90", triton_version="3.9", config={}, registers=255, spill_stores_bytes=8, spill_loads_bytes=4,
        shared_memory_bytes=196_624,
    )  # fmt: skip
    result = GateResult(kernel="fp32_gemm", device="cpu")
    result.compile.facts = facts
    compiled = sites_of(text_of("fp32_gemm.argus"), "fp32_gemm", result)
    assert {(s.registers, s.spill_stores_bytes, s.spill_loads_bytes, s.shared_memory_bytes) for s in compiled} == {
        (255, 8, 4, 196_624)
    }
    assert with_compile(fp32_gemm, facts) == compiled
    assert compiled[0].shared_memory_estimate_bytes == fp32_gemm[0].shared_memory_estimate_bytes


def test_a_kernel_that_does_not_check_has_no_context():
    broken = text_of("matmul.argus").replace("acc = dot(a, b, acc)", "acc = dot(a, a, acc)")  # AR310-style misuse
    doc = Document.parse(broken)
    assert doc.facts["matmul"].check_errors  # the checker has an IR for it, with errors: no facts from it
    assert site_contexts(doc, "matmul") == [] and kernel_context(doc, "matmul") is None
    assert site_contexts(doc, "no_such_kernel") == []
    assert kernel_context(Document.parse(text_of("matmul.argus")), "matmul").site == "kernel"


def test_a_lineage_record_round_trips_with_and_without_contexts(fp32_gemm):
    def record(context) -> Lineage:
        candidate = Candidate(
            id="s1.c1", transform="pipelining", title="t", params={}, anchor_line=17, diff="", verdict="rejected",
            context=context,
        )  # fmt: skip
        step = LineageStep(index=1, text_before="", context=context, candidates=[candidate])
        return Lineage(id="x.k", expert="x.argus", kernel="k", device="cpu", profiled=False, rule="", steps=[step])

    with_context, without = record(fp32_gemm), record(None)
    assert Lineage.model_validate_json(with_context.model_dump_json()) == with_context
    assert Lineage.model_validate_json(without.model_dump_json()) == without
    assert without.steps[0].context is None and without.steps[0].candidates[0].context is None
    # a record written before contexts has no key for them at all
    data = json.loads(without.model_dump_json())
    del data["steps"][0]["context"], data["steps"][0]["candidates"][0]["context"]
    assert Lineage.model_validate(data) == without


def test_committed_records_carry_contexts_that_annotate_reproduces():
    committed = load(ROOT / "skills" / "lineages" / "softmax.softmax.json")
    assert all(s.context for s in committed.steps)
    assert all(c.context for s in committed.steps for c in s.candidates)
    # the record as written before contexts were recorded: annotate fills them in again, the same
    record = committed.model_copy(deep=True)
    for step in record.steps:
        step.context = None
        for candidate in step.candidates:
            candidate.context = None
    annotated = annotate(record)
    assert annotated == committed
    first = annotated.steps[0].context[0]
    assert first.registers == record.baseline.compile.facts.registers  # the baseline's compile
    assert Lineage.model_validate_json(annotated.model_dump_json()) == annotated
    assert record.steps[0].context is None  # annotate copies


def test_a_refine_step_records_the_context_it_starts_from(fp32_gemm):
    context = [s.model_dump(mode="json") for s in fp32_gemm]
    step = Step(0, "search", Proposal(kind="skill", skill="x", line=3), kept=False, reward=0.0, context=context)
    assert step_json(step)["context"] == context
    out = io.StringIO()
    TrajectoryLog(out).write(step)
    line = json.loads(out.getvalue())
    assert [SiteContext.model_validate(s) for s in line["context"]] == fp32_gemm
    assert step_json(Step(0, "search", Proposal(kind="skill"), kept=False, reward=0.0))["context"] is None


def test_a_trajectory_file_without_contexts_still_reads(tmp_path):
    log = tmp_path / "old.jsonl"
    log.write_text(json.dumps({"format": "argus-trajectory/1", "index": 0, "facts": {}}) + "\n", encoding="utf-8")
    assert read_trajectory(log)[0].get("context") is None


def test_examine_gives_a_state_its_context():
    from argus.agent import states

    state = states.examine(text_of("softmax.argus"), "softmax")
    assert state.context is not None and state.context[0]["row_length"] == 4096
    result = GateResult(kernel="softmax", device="cpu")
    result.compile.facts = CompileFacts(target="sm_90", triton_version="3.9", config={}, registers=40)
    states.add_compile(state, result)
    assert state.context[0]["registers"] == 40


def test_the_cli_prints_the_context_per_kernel_and_site(capsys):
    path = EXAMPLES / "fp32_linear_gelu.argus"
    assert main(["skills", "context", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    sites = data["kernels"]["fp32_linear_gelu"]
    assert [s["site"] for s in sites] == ["kernel", "loop", "dot"]
    assert sites[2]["b_trans"] is True and sites[2]["b_k_major"] is True
    assert main(["skills", "context", str(path)]) == 0
    out = capsys.readouterr().out
    assert "b: W, K contiguous (declared by `layout`): K-major, through trans" in out
    assert "bound: compute" in out
    assert main(["skills", "context", str(EXAMPLES / "no_such.argus")]) == 2


def test_docs_name_every_field_of_a_site_context():
    docs = (ROOT / "docs" / "skills.md").read_text(encoding="utf-8")
    section = docs[docs.index("## Context of a site") : docs.index("## Skill cards")]
    missing = [name for name in SiteContext.model_fields if f"`{name}`" not in section]
    assert not missing
