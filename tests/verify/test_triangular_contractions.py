"""AR316 (verify/contraction_coverage.py) with an operand a `where` zeroes along the contracted lane: only the K
indices it keeps must reach an output element. A lower-triangular product tril(A) @ B stops its K loop at
the end of the diagonal block; the K indices right of the diagonal add 0 there."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

TRIL = """
kernel k(A: f32[M, M], B: f32[M, N], C: out f32[M, N]):
    tile BM = 16, BN = 16, BK = 16
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, minimum({stop}, M), BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < M), other=0)
        a = where({kept}, a, 0.0)
        b = load(B[rk, rn], mask=(rk < M, rn < N), other=0)
        acc = dot(a, b, acc, input_precision="ieee")
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""


def codes(stop: str, kept: str) -> list[str]:
    check = check_source(TRIL.format(stop=stop, kept=kept))
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def test_a_triangular_product_that_stops_after_the_diagonal_block_is_clean():
    assert codes("pm * BM + BM", "rk[None, :] <= rm[:, None]") == []


def test_one_that_stops_before_the_diagonal_block_misses_kept_indices():
    assert codes("pm * BM", "rk[None, :] <= rm[:, None]") == ["AR316"]


def test_a_where_on_the_rows_only_keeps_every_k():
    # a condition that does not name the contracted lane drops no K index: the truncated loop is a miss
    assert codes("pm * BM + BM", "rm[:, None] < M") == ["AR316"]
