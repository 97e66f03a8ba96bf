"""Quick fixes for the verifier's diagnostics, on kernels of the verifier's bug corpus: each fix the server
offers removes its diagnostic when re-verified, and a fix that would not is filtered out."""

from __future__ import annotations

import pytest
from lsp_support import ROOT

from argus.analysis.quick_fixes import fixes_for
from argus.analysis.tuning_skills import apply_edits
from argus.dsl.check import check_source
from argus.lsp.diagnostics import DiagnosticsScheduler
from argus.verify import verify_check

CORPUS = ROOT / "tests" / "verify" / "corpus"


def fixes_of(name: str) -> list[tuple[str, str, bool]]:
    """(code, fix title, whether the server's re-verification accepts it) for every fix of every diagnostic."""
    text = (CORPUS / name).read_text()
    check = check_source(text)
    scheduler = DiagnosticsScheduler(server=None)
    return [
        (d.code, fix.title, scheduler.fix_removes(text, fix, 1000))
        for d in verify_check(check).diagnostics
        for fix in fixes_for(text, check.module, d)
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # the store masks M: the kernel handles a partial row tile, so the fix is the mask, not a `requires`
        ("bounds_missing_edge_mask.argus", [("AR301", "Mask the access: rm < M", True)]),
        ("contraction_b_next_k.argus", [("AR310", "Load `b` at `a`'s K index: `rk + BK` → `rk`", True)]),
        ("coverage_row_wider_than_tile.argus", [("AR304", "Add `requires N <= BN`", True)]),
        # u8 arithmetic that wraps: the operands widened first (a literal keeps its place and takes i32)
        ("wrap_awq_zero_point_in_u8.argus", [("AR320", "Compute `-` in i32: convert the operands first", True)]),
        ("wrap_int4_nibble_minus_eight.argus", [("AR320", "Compute `-` in i32: convert the operands first", True)]),
        # the prologue loaded the wrong A block: copying A's index into B's load would not fix it
        (
            "contraction_pipelined_prologue.argus",
            [("AR310", "Load `b` at `a`'s K index: `k0 + arange(BK)` → `BK + arange(BK)`", False)],
        ),
    ],
)
def test_fixes_of_verifier_diagnostics_are_accepted_only_if_the_verifier_agrees(name, expected):
    assert fixes_of(name) == expected


def test_a_requires_that_a_size_set_violates_is_not_offered():
    text = """kernel add(x: f32[N], y: out f32[N]):
    tile BLOCK = 1024
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    store(y[offs], load(x[offs]), mask=offs < N)

reference add(x):
    return x

sizes add:
    small: N = 1000
"""
    check = check_source(text)
    (bounds,) = [d for d in verify_check(check).diagnostics if d.code == "AR301"]
    titles = [fix.title for fix in fixes_for(text, check.module, bounds)]
    assert titles == ["Mask the access: mask=offs < N"]  # `requires N % BLOCK == 0` breaks `small: N = 1000`
    fixed = apply_edits(text, fixes_for(text, check.module, bounds)[0].edits)
    assert "load(x[offs], mask=offs < N, other=0)" in fixed
