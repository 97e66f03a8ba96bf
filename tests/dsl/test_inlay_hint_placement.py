"""Which inlay hints a document gets, where, and what they say (argus.dsl.inlay_hints), on examples/matmul.argus
with the verifier's real layouts. The end-to-end test over stdio is tests/lsp/test_inlay_hints.py."""

from __future__ import annotations

from pathlib import Path

from argus.dsl.check import check_source
from argus.dsl.inlay_hints import MAX_LAYOUT_LABEL, InlayHint, inlay_hints, layout_summary
from argus.dsl.spans import Span
from argus.verify import verify_check

TEXT = (Path(__file__).resolve().parents[2] / "examples" / "matmul.argus").read_text()
LINES = TEXT.split("\n")
CHECK = check_source(TEXT)
LAYOUTS = verify_check(CHECK, part="declared").layouts
EVERYWHERE = Span(0, 0, len(LINES), 0)


def line_of(needle: str) -> int:
    return next(n for n, line in enumerate(LINES) if needle in line)


def shown(hints: list[InlayHint]) -> list[str]:
    """Each hint written into its line, the way the editor shows it: `a⟦: f16[BM, BK]⟧ = load(...)`."""
    return [f"{LINES[h.line][: h.col].strip()}⟦{h.label}⟧" for h in hints]


def test_a_tile_target_gets_its_dtype_and_shape_and_its_statement_its_layout():
    line = line_of("a = load(A[rm, rk]")
    hints = inlay_hints(CHECK, Span(line, 0, line, len(LINES[line])), LAYOUTS)
    assert [(h.kind, h.label) for h in hints] == [
        ("type", ": f16[BM, BK]"),
        ("layout", "(i, j) → A[M: 128*pm + i, K: k0 + j]"),
    ]
    target, layout = hints
    assert (target.line, target.col) == (line, LINES[line].index("a =") + 1)  # right after the name
    assert LINES[line][: layout.col].endswith("other=0)")  # at the end of the code, before the comment
    assert "mask (M > 128*pm + i) & (K > k0 + j)" in layout.tooltip and "tags K=k0" in layout.tooltip


def test_scalars_get_no_hint_and_every_tile_assignment_does():
    targets = [h for h in inlay_hints(CHECK, EVERYWHERE, LAYOUTS) if h.kind == "type"]
    assert shown(targets) == [
        "rm⟦: i32[BM]⟧",
        "rn⟦: i32[BN]⟧",
        "acc⟦: f32[BM, BN]⟧",
        "rk⟦: i32[BK]⟧",
        "a⟦: f16[BM, BK]⟧",
        "b⟦: f16[BK, BN]⟧",
        "acc⟦: f32[BM, BN]⟧",
        "c⟦: f32[BM, BN]⟧",
    ]  # not pm, pn (scalars), nor `acc += ...` (no new value's type to show)


def test_a_value_with_no_tensor_index_gets_no_layout_hint():
    line = line_of("acc = zeros(")
    kinds = [h.kind for h in inlay_hints(CHECK, Span(line, 0, line, 200), LAYOUTS)]
    assert kinds == ["type"]


def test_without_layouts_only_the_types_are_given():
    assert {h.kind for h in inlay_hints(CHECK, EVERYWHERE)} == {"type"}


def test_only_hints_inside_the_requested_range_come_back():
    first, last = line_of("for k0 in"), line_of("acc = dot(")
    hints = inlay_hints(CHECK, Span(first, 0, last, 0), LAYOUTS)
    assert {h.line for h in hints} == {line_of("rk = k0"), line_of("a = load("), line_of("b = load(")}


def test_a_long_layout_is_cut_and_the_tooltip_keeps_all_of_it():
    line = line_of("c = 0.5 * acc")
    (layout,) = [h for h in inlay_hints(CHECK, Span(line, 0, line, 200), LAYOUTS) if h.kind == "layout"]
    assert len(layout.label) == MAX_LAYOUT_LABEL and layout.label.endswith("…")
    assert "bias[N: 256*pn + j]" in layout.tooltip


def test_several_targets_name_theirs_in_one_layout_hint():
    text = """kernel k(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm, rn = program_id(0) * BM + arange(BM), program_id(1) * BN + arange(BN)
    store(y[rm, rn], load(x[rm, rn], mask=(rm < M, rn < N), other=0), mask=(rm < M, rn < N))
"""
    check = check_source(text)
    hints = inlay_hints(check, Span(3, 0, 3, 200), verify_check(check, part="declared").layouts)
    assert [(h.kind, h.label) for h in hints] == [
        ("type", ": i32[BM]"),
        ("type", ": i32[BN]"),
        ("layout", "rm: (i) → 16*pid0 + i; rn: (i) → 32*pid1 + i"),
    ]


def test_a_broken_document_still_gets_the_hints_of_what_parses():
    text = TEXT.replace("acc = dot(a, b, acc)", "acc = dot(a, b, acc")  # an unclosed bracket
    hints = inlay_hints(check_source(text), EVERYWHERE)
    assert "a⟦: f16[BM, BK]⟧" in shown(hints)


def test_layout_summaries():
    assert layout_summary("[128] (i) -> value 128*pm + i") == "(i) → 128*pm + i"
    assert layout_summary("[128x256] (i, j) -> no tensor index") is None
    assert layout_summary("value pm") is None
    assert layout_summary("[4x8] (i, j) -> A[M: i]; B[N: j]; mask N > j; tags N=0") == "(i, j) → A[M: i]; B[N: j]"
