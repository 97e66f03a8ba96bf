"""The verifier on declared views: a view's axis is the product of the stored axes it merges, a nonlinear term, the
same one the body's `C * H * W` evaluates to, which z3 decides at once here (docs/verification.md has the
times)."""

from __future__ import annotations

import time

from argus.dsl.check import check_source
from argus.verify import verify_check


def verdicts(text: str) -> list[str]:
    """The codes of the verifier's diagnostics (AR312 for an unknown), in order."""
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics if d.severity.value == "error"]
    return [d.code for d in verify_check(check).diagnostics]


def verified(text: str):
    check = check_source(text)
    assert not check.has_errors
    return verify_check(check)


ROWS = """\
kernel rows(x: f16[B, C, H, W] as [B, C * H * W], y: out f32[B, C, H, W] as [B, C * H * W]):
    tile BN = 256
    grid (B,)
    b = program_id(0)
    for c0 in range(0, C * H * W, BN):
        cols = c0 + arange(BN)
        v = load(x[b, cols], mask=cols < BOUND, other=0)
        store(y[ROW, cols], v.to(f32), mask=cols < C * H * W)
"""


def rows(bound: str = "C * H * W", row: str = "b") -> str:
    return ROWS.replace("BOUND", bound).replace("ROW", row)


def test_accesses_of_a_view_bounded_by_the_product_of_its_sizes_are_proved_quickly():
    started = time.perf_counter()
    result = verified(rows())
    seconds = time.perf_counter() - started
    assert result.diagnostics == []
    assert result.stats.obligations == result.stats.proved >= 4  # two bounds, the store's race, coverage
    assert seconds < 30  # about 0.5 s on the development machine: nothing near the rlimit


def test_a_view_read_past_the_product_is_refuted_with_the_product_in_the_witness():
    found = verified(rows(bound="C * H * W + 1")).diagnostics
    assert [d.code for d in found] == ["AR301"]
    assert "x index 1 (C * H * W)" in found[0].message


def test_a_view_bounded_by_a_smaller_product_is_in_bounds_and_one_bounded_by_another_axis_is_not():
    assert verdicts(rows(bound="C * H")) == []
    assert verdicts(rows(bound="B * H * W")) == ["AR301"]


def test_every_program_storing_one_row_of_a_view_races_and_leaves_the_others_unwritten():
    assert verdicts(rows(row="0")) == ["AR302", "AR304"]
