"""The "mask the access" quick fix for 1-D and 2-D loads and stores (issue 22: it was not offered for an
unmasked `load(x[row, cols])` or an unmasked 2-D store).

The server offers a fix of a verifier diagnostic only if the verifier, run on the fixed text, no longer reports
it (argus.lsp.diagnostics.fix_removes). These tests do the same with the real verifier: `offered` keeps the
fixes whose text no longer has the AR301, and every offered fix must leave a file that checks and verifies
clean.
"""

from __future__ import annotations

import pytest

from argus.analysis.quick_fixes import QuickFix, fixes_for
from argus.analysis.tuning_skills import apply_edits
from argus.dsl.check import check_source
from argus.dsl.diagnostics import Diagnostic
from argus.verify import verify_check


def kernel(params: str, grid: str, body: str, reference: str, sizes: str) -> str:
    lines = "".join(f"    {line}\n" for line in body.strip().split("\n"))
    return (
        f"kernel k({params}):\n    tile B = 64, BM = 32, BN = 64\n    grid {grid}\n{lines}\n"
        f"reference k(x):\n    return {reference}\n\nsizes k:\n    small: {sizes}\n"
    )


def out_of_bounds(text: str) -> Diagnostic:
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    (bounds,) = [d for d in verify_check(check).diagnostics if d.code == "AR301"]
    return bounds


def still_refuted(text: str, fix: QuickFix) -> bool:
    fixed = check_source(apply_edits(text, fix.edits))
    line = fix.diagnostic.range.start.line
    return fixed.has_errors or any(
        d.code == "AR301" and d.range.start.line == line for d in verify_check(fixed).diagnostics
    )


def offered(text: str) -> list[QuickFix]:
    """The mask fixes the server would offer for the file's one AR301: those the verifier re-proves."""
    diagnostic = out_of_bounds(text)
    masks = [f for f in fixes_for(text, check_source(text).module, diagnostic) if f.title.startswith("Mask")]
    return [fix for fix in masks if not still_refuted(text, fix)]


def verifies_clean(text: str) -> bool:
    check = check_source(text)
    return not check.diagnostics and not verify_check(check).diagnostics


def the_fix(text: str) -> tuple[str, str]:
    """The title of the one mask fix offered and the line it leaves in place of the access's line."""
    fixes = offered(text)
    assert len(fixes) == 1, [f.title for f in fixes]
    (fix,) = fixes
    fixed = apply_edits(text, fix.edits)
    assert verifies_clean(fixed), fixed
    return fix.title, fixed.split("\n")[fix.diagnostic.range.start.line].strip()


ROWS = "x: f32[M, N], y: out f32[M, N]"
ROW_GRID = "(M, cdiv(N, B))"
ROW_START = "row = program_id(0)\ncols = program_id(1) * B + arange(B)"
TILE_GRID = "(cdiv(M, BM), cdiv(N, BN))"
TILE_START = "rm = program_id(0) * BM + arange(BM)\nrn = program_id(1) * BN + arange(BN)"
SMALL = "M = 33, N = 100"


def test_1d_load():
    text = kernel(
        "x: f32[N], y: out f32[N]",
        "(cdiv(N, B),)",
        "i = program_id(0) * B + arange(B)\nv = load(x[i])\nstore(y[i], v, mask=i < N)",
        "x",
        "N = 100",
    )
    assert the_fix(text) == ("Mask the access: mask=i < N", "v = load(x[i], mask=i < N, other=0)")


def test_1d_store():
    text = kernel(
        "x: f32[N], y: out f32[N]",
        "(cdiv(N, B),)",
        "i = program_id(0) * B + arange(B)\nstore(y[i], load(x[i], mask=i < N, other=0) * 2)",
        "x * 2",
        "N = 100",
    )
    title, line = the_fix(text)
    assert (title, line) == (
        "Mask the access: mask=i < N",
        "store(y[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)",
    )


def test_1d_load_below_zero_bounds_both_ends():
    text = kernel(
        "x: f32[N], y: out f32[N]",
        "(cdiv(N, B),)",
        "i = program_id(0) * B + arange(B)\nv = load(x[i - 1], mask=i < N, other=0)\nstore(y[i], v, mask=i < N)",
        "torch.cat([x[:1] * 0, x[:-1]])",
        "N = 100",
    )
    assert the_fix(text)[1] == "v = load(x[i - 1], mask=(i < N) & (i - 1 >= 0) & (i - 1 < N), other=0)"


def test_2d_load_of_a_row_slice():
    """The issue's case: a scalar row and a vector of columns make a 1-D access, masked by one condition
    (a tuple of two entries would not fit it)."""
    text = kernel(
        ROWS, ROW_GRID, f"{ROW_START}\nv = load(x[row, cols])\nstore(y[row, cols], v, mask=cols < N)", "x", SMALL
    )
    assert the_fix(text) == ("Mask the access: mask=cols < N", "v = load(x[row, cols], mask=cols < N, other=0)")


def test_2d_store_of_a_row_slice():
    body = f"{ROW_START}\nv = load(x[row, cols], mask=cols < N, other=0)\nstore(y[row, cols], v)"
    assert the_fix(kernel(ROWS, ROW_GRID, body, "x", SMALL)) == (
        "Mask the access: mask=cols < N",
        "store(y[row, cols], v, mask=cols < N)",
    )


def test_2d_tile_load_masks_every_axis_that_can_fail():
    """The counterexample shows one element, out of bounds on one axis; masking that axis alone leaves the
    other one out (N is no multiple of BN either), so the fix the verifier proves bounds both."""
    body = f"{TILE_START}\nv = load(x[rm, rn])\nstore(y[rm, rn], v, mask=(rm < M, rn < N))"
    text = kernel(ROWS, TILE_GRID, body, "x", SMALL)
    candidates = [f.title for f in fixes_for(text, check_source(text).module, out_of_bounds(text))]
    assert len([t for t in candidates if t.startswith("Mask")]) == 2  # the narrow one is tried first
    assert the_fix(text) == (
        "Mask the access: mask=(rm < M, rn < N)",
        "v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)",
    )


def test_2d_tile_store():
    body = f"{TILE_START}\nv = load(x[rm, rn], mask=(rm < M, rn < N), other=0)\nstore(y[rm, rn], v * 2)"
    assert the_fix(kernel(ROWS, TILE_GRID, body, "x * 2", SMALL)) == (
        "Mask the access: mask=(rm < M, rn < N)",
        "store(y[rm, rn], v * 2, mask=(rm < M, rn < N))",
    )


def test_2d_tile_where_one_axis_divides_masks_only_the_other():
    """With `requires N % BN == 0` the columns stay in bounds: only the rows get a condition (the wider mask
    verifies too, and is offered beside it)."""
    body = f"requires N % BN == 0\n{TILE_START}\nv = load(x[rm, rn])\nstore(y[rm, rn], v, mask=(rm < M, None))"
    text = kernel(ROWS, TILE_GRID, body, "x", "M = 33, N = 128")
    titles = [f.title for f in offered(text)]
    assert titles[0] == "Mask the access: mask=(rm < M, None)"
    fixed = apply_edits(text, offered(text)[0].edits)
    assert verifies_clean(fixed)


def test_2d_broadcast_load_is_masked_with_one_conjunction():
    body = (
        f"{TILE_START}\nv = load(x[rm[:, None], rn[None, :]])\n"
        "store(y[rm[:, None], rn[None, :]], v, mask=(rm[:, None] < M) & (rn[None, :] < N))"
    )
    assert the_fix(kernel(ROWS, TILE_GRID, body, "x", SMALL)) == (
        "Mask the access: mask=(rm[:, None] < M) & (rn[None, :] < N)",
        "v = load(x[rm[:, None], rn[None, :]], mask=(rm[:, None] < M) & (rn[None, :] < N), other=0)",
    )


def test_2d_load_with_a_mask_for_one_axis_gets_the_other_spread_on_its_axis():
    body = (
        f"{TILE_START}\nv = load(x[rm, rn], mask=rn[None, :] < N, other=0)\nstore(y[rm, rn], v, mask=(rm < M, rn < N))"
    )
    assert the_fix(kernel(ROWS, TILE_GRID, body, "x", SMALL)) == (
        "Mask the access: mask=(rn[None, :] < N) & (rm < M)[:, None]",
        "v = load(x[rm, rn], mask=(rn[None, :] < N) & (rm < M)[:, None], other=0)",
    )


def test_a_row_past_the_last_gets_a_scalar_condition_beside_the_columns_mask():
    body = (
        "row = program_id(0) + 1\ncols = program_id(1) * B + arange(B)\n"
        "v = load(x[row, cols], mask=cols < N, other=0)\nstore(y[row - 1, cols], v, mask=cols < N)"
    )
    text = kernel(ROWS, ROW_GRID, body, "torch.cat([x[1:], x[:1] * 0])", SMALL)
    assert the_fix(text) == (
        "Mask the access: mask=(cols < N) & (row < M)",
        "v = load(x[row, cols], mask=(cols < N) & (row < M), other=0)",
    )


@pytest.mark.parametrize("other", ["other=0", "other=-1.0"])
def test_an_existing_other_is_kept_not_repeated(other):
    text = kernel(
        "x: f32[N], y: out f32[N]",
        "(cdiv(N, B),)",
        f"i = program_id(0) * B + arange(B)\nv = load(x[i], {other})\nstore(y[i], v, mask=i < N)",
        "x",
        "N = 100",
    )
    assert the_fix(text)[1] == f"v = load(x[i], {other}, mask=i < N)"


def test_an_unmasked_atomic_max_gets_the_mask_fix_too():
    """atomic_max, atomic_min and atomic_xchg take a mask like a store (atomic_cas takes none)."""
    text = kernel(
        "x: f32[N], y: out f32[N]",
        "(cdiv(N, B),)",
        "i = program_id(0) * B + arange(B)\natomic_max(y[i], load(x[i], mask=i < N, other=0))",
        "x",
        "N = 100",
    )
    assert the_fix(text) == (
        "Mask the access: mask=i < N",
        "atomic_max(y[i], load(x[i], mask=i < N, other=0), mask=i < N)",
    )
