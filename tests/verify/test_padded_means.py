"""AR322 (verify/padded_means.py): a mean over a tile's lanes divides by the tile's width where lanes can be padding.

The buggy kernels and their fixed twins are in the corpus (`mean_*`), the correct-but-tricky ones in
corpus/tricky/ (`mean_*`); here, the witness and message of the plain case, the forms of the divisor the check
reads, and the forms of a correct mean that must stay clean: the real count (N, the mask's lanes, the last
block's `min(N - start, BN)`), a loop over blocks divided by N, a mask the sizes make full, a sliding window.
"""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

ROW = """
kernel row_mean(x: f32[M, N], y: out f32[M]):
    tile BN = 128
    {requires}
    grid (M,)
    row = program_id(0)
    cols = arange(BN)
    mask = cols < N
    v = load(x[row, cols], mask=mask, other=0)
    mean = {mean}
    store(y[row], mean)
"""


def diagnostics(source: str) -> list:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


def row_mean(mean: str, requires: str = "requires N <= BN") -> list:
    return diagnostics(ROW.format(requires=requires, mean=mean))


def test_a_sum_divided_by_the_tile_width_is_an_error_with_a_short_row():
    [found] = row_mean("sum(v, axis=0) / BN")
    assert (found.code, found.severity.value, found.range.start.line + 1) == ("AR322", "error", 10)
    assert "counts all `BN` = 128 lanes of the tile but only the first `N` hold data" in found.message
    assert "divide by `N`" in found.message
    witness = found.data["counterexample"]
    assert witness["kind"] == "padded_mean"
    n = witness["sizes"]["N"]
    assert 2 <= n < 128  # a row shorter than the tile, of two real lanes at least
    assert witness["element"]["i"] >= n  # the element named is a padding lane
    assert witness["values"]["x index 1 (N)"] == witness["element"]["i"]
    assert witness["values"]["a real lane summed with it: i"] < n
    assert witness["values"]["lanes the mean counts (BN)"] == 128
    assert witness["values"]["lanes that hold data (N)"] == n


def test_the_forms_of_the_tile_width_are_read():
    for mean in ("sum(v, axis=0) / (BN * 1.0)", "sum(v, axis=0) / BN.to(f32)", "sum(v, axis=0) / 128.0"):
        assert [d.code for d in row_mean(mean)] == ["AR322"], mean
    [found] = row_mean("sum(v, axis=0) * (1.0 / BN)")
    assert "is multiplied by `1.0 / BN`" in found.message


def test_a_tile_of_rows_summed_along_its_columns_is_an_error():
    source = """
kernel rmsnorm(x: f32[M, N], y: out f32[M, N]):
    tile BM = 4, BN = 64
    requires N <= BN
    grid (cdiv(M, BM),)
    rows = program_id(0) * BM + arange(BM)
    cols = arange(BN)
    v = load(x[rows, cols], mask=(rows < M, cols < N), other=0)
    ms = sum(v * v, axis=1, keep_dims=True) / BN
    store(y[rows, cols], v * rsqrt(ms + 1e-6), mask=(rows < M, cols < N))
"""
    [found] = diagnostics(source)
    assert (found.code, found.range.start.line + 1) == ("AR322", 9)
    witness = found.data["counterexample"]
    assert witness["element"]["j"] >= witness["sizes"]["N"]  # a padding column of a real row
    assert witness["values"]["x index 0 (M)"] < witness["sizes"]["M"]


def test_a_divisor_that_counts_the_real_lanes_is_clean():
    assert row_mean("sum(v, axis=0) / N") == []
    assert row_mean("sum(v, axis=0) / sum(mask.to(f32), axis=0)") == []
    assert row_mean("sum(v, axis=0) / minimum(N, BN).to(f32)") == []


def test_a_mask_the_sizes_make_full_is_clean():
    assert row_mean("sum(v, axis=0) / BN", requires="requires N == BN") == []
    assert row_mean("sum(v, axis=0) / BN", requires="requires N % BN == 0, N <= BN") == []


def test_what_is_not_a_mean_over_the_tile_is_clean():
    assert row_mean("sum(v, axis=0) / 2.0") == []  # a constant other than the width
    assert "AR322" not in [d.code for d in row_mean("max(v, axis=0) / BN")]  # not a sum (other=0: AR313)


def test_the_last_block_divided_by_its_own_count_is_clean():
    source = """
kernel block_means(x: f32[M, N], y: out f32[M, NB]):
    tile BN = 128
    requires NB == cdiv(N, BN)
    grid (M, cdiv(N, BN))
    row, blk = program_id(0), program_id(1)
    start = blk * BN
    cols = start + arange(BN)
    v = load(x[row, cols], mask=cols < N, other=0)
    store(y[row, blk], sum(v, axis=0) / minimum(N - start, BN).to(f32))
"""
    assert diagnostics(source) == []


def test_a_sum_over_column_blocks_divided_by_n_is_clean():
    source = """
kernel rmsnorm(x: f32[M, N], y: out f32[M, N]):
    tile BN = 128
    grid (M,)
    row = program_id(0)
    acc = zeros((BN,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        acc += v * v
    rstd = rsqrt(sum(acc, axis=0) / N + 1e-6)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        store(y[row, cols], v * rstd, mask=cols < N)
"""
    assert diagnostics(source) == []


def test_a_window_that_slides_with_the_program_is_not_judged():
    """An average pool that counts its padded taps (count_include_pad) divides by the window on purpose."""
    source = """
kernel avg_pool(x: f32[B, L], y: out f32[B, Lo]):
    tile KS = 4, PAD = 1, BO = 64
    requires L >= KS, Lo == L + 2 * PAD - KS + 1
    grid (cdiv(Lo, BO), B)
    ro = program_id(0) * BO + arange(BO)
    n = program_id(1)
    pos = ro[:, None] - PAD + arange(KS)[None, :]
    taps = load(x[n, pos], mask=(pos >= 0) & (pos < L) & (ro < Lo)[:, None], other=0)
    store(y[n, ro], sum(taps, axis=1) / KS, mask=ro < Lo)
"""
    assert diagnostics(source) == []
