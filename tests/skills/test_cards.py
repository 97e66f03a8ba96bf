"""Skill cards: extracted from lineage records with their evidence, risks and (absent) measurements; the
schema and precondition tables in docs/skills.md are current; the committed library is consistent."""

from __future__ import annotations

import json
import re

import pytest
from conftest import ROOT

from argus.skills.cards import Card, schema
from argus.skills.extract import extract
from argus.skills.library import LIBRARY, LINEAGES, load_cards, load_lineages, save_cards
from argus.skills.lineage.record import Candidate, Lineage, PreconditionCheck, Step
from argus.skills.preconditions import PRECONDITIONS
from argus.skills.predict import predict

DOC = (ROOT / "docs" / "skills.md").read_text(encoding="utf-8")


def test_docs_hold_the_current_card_schema():
    block = re.search(r"```json\n(.*?)\n```", DOC, re.S)
    assert block is not None and json.loads(block.group(1)) == schema()


def test_docs_list_every_precondition_and_transform():
    for name, meaning in PRECONDITIONS.items():
        assert f"| `{name}` | {meaning} |" in DOC
    from argus.skills.transforms import TRANSFORMS

    for name in TRANSFORMS:
        assert f"| `{name}` |" in DOC


def test_every_passing_candidate_becomes_evidence_on_its_card(softmax_walk, softmax_cards):
    record, _ = softmax_walk
    passing = {c.id for s in record.steps for c in s.candidates if c.verdict != "rejected"}
    cited = {e.candidate for card in softmax_cards for e in card.evidence}
    assert cited == passing
    assert all(card.id.endswith(".row") for card in softmax_cards)  # softmax has no loop that feeds a dot


def test_a_card_without_a_gpu_measurement_says_so_and_has_no_effect(softmax_cards):
    for card in softmax_cards:
        assert card.effect == [] and card.effect_status == "not measured" and "CPU" in card.effect_note


def test_a_rejected_candidate_becomes_a_risk_with_its_failed_precondition():
    rejected = Candidate(
        id="s1.c2", transform="exp2", title="undo exp2", params={}, anchor_line=3, diff="", verdict="rejected",
        checks=[PreconditionCheck(name="still_checks", holds=False, found="AR209 ...")], reason="still_checks: AR209",
    )  # fmt: skip
    passed = rejected.model_copy(update={"id": "s1.c1", "verdict": "accepted", "checks": [], "reason": ""})
    text = (ROOT / "skills" / "experts" / "softmax.argus").read_text(encoding="utf-8")
    record = Lineage(id="x.softmax", expert="x.argus", kernel="softmax", device="cpu", profiled=False, rule="cpu",
                     steps=[Step(index=1, text_before=text, candidates=[passed, rejected])])  # fmt: skip
    (card,) = extract([record])
    assert card.risks[0].precondition == "still_checks" and card.risks[0].evidence == "x.softmax#s1.c2"


def test_a_candidate_the_gpu_found_wrong_is_a_risk_and_makes_the_skill_needed_for_correctness():
    from argus.gate.result import CorrectResult, GateResult, Status

    message = "gemm: `C[0, 7]` is 5.7109375, the reference gives 5.6015625 (660787 of 16777216 elements differ)"
    wrong = GateResult(
        kernel="softmax", device="NVIDIA H200", correct=CorrectResult(status=Status.failed, message=message)
    )
    passed = Candidate(
        id="s1.c1", transform="exp2", title="undo exp2", params={}, anchor_line=3, diff="", verdict="passed", gate=wrong
    )
    text = (ROOT / "skills" / "experts" / "softmax.argus").read_text(encoding="utf-8")
    record = Lineage(id="x.softmax", expert="x.argus", kernel="softmax", device="NVIDIA H200", profiled=True,
                     rule="gpu", steps=[Step(index=1, text_before=text, candidates=[passed])])  # fmt: skip
    (card,) = extract([record])
    assert card.evidence[0].failed_stage == "correct" and card.effect == []
    assert card.effect_status == "needed for correctness" and "x.softmax (NVIDIA H200)" in card.effect_note
    (risk,) = card.risks
    assert (risk.stage, risk.status, risk.message) == ("correct", "failed", message)
    assert "on the NVIDIA H200 (the CPU's gate passed it)" in risk.what


def test_a_card_whose_every_measurement_came_from_a_spilling_kernel_says_so():
    from argus.gate.result import CompileFacts, CompileResult, GateResult, ProfileResult, Status

    def gate(spills: int) -> GateResult:
        facts = CompileFacts(target="sm_90", triton_version="3.6.0", config={}, spill_stores_bytes=spills)
        return GateResult(kernel="softmax", device="NVIDIA H200", compile=CompileResult(status=Status.passed,
                          facts=facts), profile=ProfileResult(status=Status.passed))  # fmt: skip

    text = (ROOT / "skills" / "experts" / "softmax.argus").read_text(encoding="utf-8")

    def card_with(spills_without: int) -> Card:
        undo = Candidate(id="s1.c1", transform="exp2", title="undo exp2", params={}, anchor_line=3, diff="",
                         verdict="accepted", gate=gate(spills_without), slowdown=2.0)  # fmt: skip
        step = Step(index=1, text_before=text, candidates=[undo])
        record = Lineage(id="x.softmax", expert="x.argus", kernel="softmax", device="NVIDIA H200", profiled=True,
                         rule="gpu", baseline=gate(0), steps=[step])  # fmt: skip
        (card,) = extract([record])
        return card

    spilling = card_with(2048)
    assert spilling.effect_needs_spills and spilling.evidence[0].spill_bytes == 2048
    assert spilling.evidence[0].spill_bytes_with == 0
    assert not card_with(48).effect_needs_spills


def test_more_warps_on_a_dot_gained_without_spills_only_on_exact_fp32():
    """The exact-fp32 GEMM lineage (2026-12-02) gained from 8 warps at 4 warps' 232 bytes of spills (the FMA path
    wants threads), and attention at D = 64 lost from them without spills: so the card no longer needs spills,
    and its predictions at non-spilling sites follow the operands."""
    (warps,) = [c for c in load_cards() if c.id == "num_warps.dot"]
    assert not warps.effect_needs_spills
    unspilled = [e for e in warps.evidence if e.profiled and e.spill_bytes is not None and e.spill_bytes < 1024]
    assert {e.lineage for e in unspilled} == {"fp32_gemm.gemm_exact", "attention64.attention64"}
    site = {"k_major": "A and B", "trans": "B", "bound": "compute", "spills": "none", "num_warps": 4}
    f16 = predict(warps, {**site, "operands": "f16", "num_stages": 3}, {"to": 8}, 0)
    assert f16.covered and f16.hurts is not None and f16.effect < 1.0
    exact = {**site, "operands": "f32 ieee", "k_major": "A", "trans": "neither", "num_stages": 2}
    assert predict(warps, exact, {"to": 8}, 0).effect > 2.0


def test_cards_round_trip_through_yaml(softmax_cards, tmp_path):
    save_cards(softmax_cards, tmp_path)
    assert load_cards(tmp_path) == softmax_cards


@pytest.mark.skipif(not list(LIBRARY.glob("*.yaml")), reason="no committed cards yet")
def test_every_committed_card_cites_candidates_of_committed_lineages():
    records = {r.id: r for r in load_lineages(LINEAGES)}
    for card in load_cards():
        assert isinstance(card, Card) and card.evidence
        for item in card.evidence:
            found = records[item.lineage].candidate(item.candidate)
            assert found is not None and found.verdict == item.verdict
        if card.effect_status != "measured":
            assert card.effect == [] and card.effect_note
