"""`requires` hints only where they are what the kernel means (issue 17, class 8).

A failed in-bounds or coverage obligation used to be offered the first `S % C == 0` or `S <= C` (any size S
the claim mentions, any tile constant C) that proved it, so a missing mask got `requires M % BM == 0`, a
floor-division grid `requires N % BLOCK == 0`, a store that forgot its column block `requires N <= BM`, and a
missing K mask in a kernel whose tiles are all 32 wide `requires K % BM == 0` (wrong twice: BM is not K's
tile, and the fix is the mask). Now (verify/hints.py):

- AR301 whose access masks the dimension but lets the index past it: fix the mask (`<=` is named);
- AR301 whose access does not mask a dimension some other access of the kernel masks: mask it, as that one
  does, no `requires` (the kernel handles a partial tile there);
- AR301 on a dimension no access of the kernel masks: `requires S % C == 0` (or `S <= C` for a dimension in
  one tile) with C the tile the index runs over along that dimension, when it proves the access;
- AR304 from a grid that rounds down a dimension the kernel masks: cdiv, no `requires`;
- AR304 where the grid splits a dimension over a program id the store's index does not use: that, no
  `requires`;
- AR304 of a dimension held in one tile: `requires S <= C`, C that tile.
"""

from __future__ import annotations

from pathlib import Path

from argus.dsl.check import check_source
from argus.verify import verify_check

CORPUS = Path(__file__).parent / "corpus"


def diagnostic(text: str, code: str):
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return next(d for d in verify_check(check).diagnostics if d.code == code)


def corpus(name: str, code: str):
    return diagnostic((CORPUS / name).read_text(), code)


def hint_line(d) -> str:
    return next((line.strip() for line in d.message.split("\n") if line.strip().startswith("hint: ")), "")


# ---- wrong hints of before: each is now the mask or grid fix, with no `requires` -------------------------
def test_a_missing_row_mask_is_told_to_mask_the_rows_as_the_store_does():
    d = corpus("bounds_missing_edge_mask.argus", "AR301")  # was `requires M % BM == 0`
    assert "requires" not in d.data
    assert (
        hint_line(d)
        == "hint: mask axis 0 of `A` with `rm < M`, as line 17 does: the kernel handles a partial tile of M"
    )


def test_a_mask_that_lets_the_extent_through_is_told_to_compare_with_less_than():
    d = corpus("bounds_off_by_one_mask.argus", "AR301")  # was `requires N % BLOCK == 0`
    assert "requires" not in d.data
    assert hint_line(d) == "hint: fix the mask: `<= N` lets index N of `x` through; `< N` keeps it in bounds"


UNMASKED_LOAD = """kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 256
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    v = load(x[offs])
    store(y[offs], v * 2.0, mask=offs < N)
"""


def test_an_unmasked_load_beside_a_masked_store_is_told_to_mask_the_load():
    d = diagnostic(UNMASKED_LOAD, "AR301")  # docs/diagnostics.md's AR301; was `requires N % BLOCK == 0`
    assert "requires" not in d.data
    assert (
        hint_line(d)
        == "hint: mask axis 0 of `x` with `offs < N`, as line 6 does: the kernel handles a partial tile of N"
    )


def test_a_grid_that_rounds_down_is_told_to_use_cdiv():
    d = corpus("coverage_floor_grid.argus", "AR304")  # was `requires N % BLOCK == 0`
    assert "requires" not in d.data
    assert hint_line(d) == (
        "hint: the grid launches N // BLOCK programs along axis 0, which leaves the last N % BLOCK elements "
        "unwritten; launch cdiv(N, BLOCK)"
    )


def test_a_store_that_ignores_a_program_id_is_told_so():
    d = corpus("race_missing_column_block.argus", "AR304")  # was `requires N <= BM`
    assert "requires" not in d.data
    assert hint_line(d) == (
        "hint: the grid splits N over program axis 1 (`pn`), but the store's index along N does not use it"
    )


MISSING_K_MASK = """kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 32, BN = 32, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, None), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""


def test_a_missing_k_mask_is_not_a_requirement_on_another_tile():
    d = diagnostic(MISSING_K_MASK, "AR301")  # was `requires K % BM == 0`
    assert "requires" not in d.data
    assert (
        hint_line(d)
        == "hint: mask axis 1 of `A` with `rk < K`, as line 11 does: the kernel handles a partial tile of K"
    )


# ---- right hints: the kernel is written for sizes a multiple of (or within) its tile ---------------------
def test_a_kernel_that_masks_k_nowhere_is_offered_k_a_multiple_of_its_k_tile():
    text = MISSING_K_MASK.replace("mask=(rk < K, rn < N)", "mask=(None, rn < N)")
    d = diagnostic(text, "AR301")
    assert d.data["requires"] == "K % BK == 0"  # BM and BN are 32 too: the K index runs over BK
    assert hint_line(d) == "hint: `requires K % BK == 0` would prove it"


def test_a_kernel_with_no_mask_at_all_is_offered_a_multiple_of_its_block():
    text = UNMASKED_LOAD.replace(", mask=offs < N", "")
    d = diagnostic(text, "AR301")
    assert d.data["requires"] == "N % BLOCK == 0"


def test_a_row_in_one_tile_is_offered_that_it_fits():
    d = corpus("coverage_row_wider_than_tile.argus", "AR304")
    assert d.data["requires"] == "N <= BN"


def test_a_floor_grid_of_a_kernel_that_masks_nothing_is_offered_a_multiple():
    text = """kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 256
    grid (N // BLOCK,)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    store(y[offs], load(x[offs]) * 2.0)
"""
    d = diagnostic(text, "AR304")
    assert d.data["requires"] == "N % BLOCK == 0"


LOSS = """kernel nll(logp: f32[M, V], target: i64[M], loss: out f32[M]):
    grid (M,)
    row = program_id(0)
    t = load(target[row])
    {body}
"""


def test_a_gather_by_a_loaded_index_is_offered_the_range_fact():
    d = diagnostic(LOSS.format(body="store(loss[row], -load(logp[row, t]))"), "AR301")
    assert d.data["requires"] == "in_range(target, 0, V)"


def test_a_gather_that_skips_a_marked_entry_is_offered_the_fact_with_that_mark():
    body = """if t != -100:
        store(loss[row], -load(logp[row, t]))
    else:
        store(loss[row], 0.0)"""
    d = diagnostic(LOSS.format(body=body), "AR301")
    assert d.data["requires"] == "in_range(target, 0, V, ignore=-100)"
    fixed = LOSS.replace("    grid (M,)", "    requires in_range(target, 0, V, ignore=-100)\n    grid (M,)")
    check = check_source(fixed.format(body=body))
    assert [x.code for x in verify_check(check).diagnostics if x.code.startswith("AR3")] == []


def test_a_mark_the_access_is_not_guarded_by_is_not_offered():
    # the kernel compares t with -100, but reads logp[row, t] whatever it is (`where` computes both sides):
    # only the plain fact proves the load
    body = """store(loss[row], where(t == -100, 0.0, -load(logp[row, t])))"""
    d = diagnostic(LOSS.format(body=body), "AR301")
    assert d.data["requires"] == "in_range(target, 0, V)"


def test_the_hints_docs_diagnostics_shows_are_what_its_wrong_examples_get():
    import re

    doc = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code in ("AR301", "AR304"):
        section = doc.split(f"## {code}:")[1].split("\n## ")[0]
        wrong = re.search(r"\*\*Wrong\*\*\n\n```argus\n(.*?)```", section, re.DOTALL).group(1)
        shown = re.search(r"```\n  (hint: .*?)\n```", section).group(1)
        assert hint_line(diagnostic(wrong, code)) == shown
