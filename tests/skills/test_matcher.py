"""The matcher: kernel-wide skills at a loop that feeds a dot, local ones on their line, refusals named."""

from __future__ import annotations

from kernels import DIVISIBLE_GEMM, NAIVE_GEMM

from argus.skills.apply import plan
from argus.skills.document import Document
from argus.skills.extract import extract
from argus.skills.lineage.record import Candidate, Lineage, Step
from argus.skills.matcher import match


def cards_for(*transforms: str, setting: str | None = None):
    """Cards as extraction makes them from a record whose candidates of these transforms passed (the record is
    written here: these tests are about matching, not about evidence)."""
    candidates = [
        Candidate(id=f"s1.c{i}", transform=t, title=t, params={"setting": setting} if setting else {}, anchor_line=1,
                  diff="", verdict="passed")
        for i, t in enumerate(transforms, 1)
    ]  # fmt: skip
    record = Lineage(id="t.mm", expert="t.argus", kernel="mm", device="cpu", profiled=False, rule="cpu",
                     steps=[Step(index=1, text_before=NAIVE_GEMM, candidates=candidates)])  # fmt: skip
    return extract([record])


def line_of(text: str, snippet: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if snippet in line)


def test_a_kernel_wide_skill_matches_at_the_loop_that_feeds_the_dot():
    cards = cards_for("pipelining", setting="num_stages")
    found = match(Document.parse(NAIVE_GEMM), line_of(NAIVE_GEMM, "for k0"), cards)
    assert [m.card.id for m in found] == ["pipelining.num_stages.dot"]
    assert found[0].applicable and found[0].application.params["to"] == 3


def test_a_local_skill_matches_only_on_its_line():
    cards = cards_for("drop_edge_masks")
    doc = Document.parse(DIVISIBLE_GEMM)
    assert match(doc, line_of(DIVISIBLE_GEMM, "a = load"), cards)
    assert not match(doc, line_of(DIVISIBLE_GEMM, "rk = k0"), cards)


def test_a_skill_whose_precondition_fails_is_listed_with_it_and_apply_refuses_it():
    (card,) = cards_for("drop_edge_masks")
    line = line_of(NAIVE_GEMM, "a = load")
    (found,) = match(Document.parse(NAIVE_GEMM), line, [card])
    assert not found.applicable and found.failed.name == "divisible_by_tile"
    outcome = plan(NAIVE_GEMM, card, line)
    assert outcome.text_after is None
    assert outcome.refused == "divisible_by_tile: needs `requires M % BM == 0`, not established here"


def test_apply_runs_the_verifier_on_the_result():
    (card,) = cards_for("drop_edge_masks")
    outcome = plan(DIVISIBLE_GEMM, card, line_of(DIVISIBLE_GEMM, "a = load"))
    assert outcome.refused is None and "a = load(A[rm, rk])" in outcome.text_after


def test_a_mask_entry_that_is_not_a_run_bound_is_named_as_such():
    (card,) = cards_for("drop_edge_masks")
    text = NAIVE_GEMM.replace("b = load(B[rk, rn], mask=(rk < K", "b = load(B[rk, rn], mask=(rk + 0 < K")
    assert text != NAIVE_GEMM
    (found,) = match(Document.parse(text), line_of(text, "b = load"), [card])
    assert not found.applicable
    assert plan(text, card, line_of(text, "b = load")).refused == (
        "divisible_by_tile: the mask entry `rk + 0 < K` is not of the form `run < size`"
    )
