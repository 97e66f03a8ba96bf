"""Affine loop counters (issue 17, class 6): a carried integer the body advances by the same amount every
iteration (`k_off += BK`) is `init + (iv - start) / step * c` in the real pass, with no `invariant`. Before,
it was havocked, and every access through it was AR312."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

GEMM = """\
kernel mm(A: f16[M, K], B: f16[K, N], C: out f32[M, N]):
    tile BM = 64, BN = 64, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    k_off = START
    for k0 in range(0, K, BK):
        rk = k_off + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[k0 + arange(BK), rn], mask=(k0 + arange(BK) < K, rn < N), other=0)
        acc = dot(a, b, acc)
        UPDATE
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""


def codes(update: str, start: str = "0") -> list[str]:
    check = check_source(GEMM.replace("UPDATE", update).replace("START", start))
    assert not check.has_errors, [d.text_line("mm") for d in check.diagnostics]
    return sorted(d.code for d in verify_check(check).diagnostics)


def test_a_k_offset_advanced_by_the_step_verifies_clean():
    assert codes("k_off += BK") == []
    assert codes("k_off = k_off + BK") == []
    assert codes("k_off = 32 + k_off") == []


def test_a_counter_advanced_by_twice_the_step_is_a_contraction_error():
    assert codes("k_off += 2 * BK") == ["AR310"]


def test_a_counter_starting_a_block_late_is_a_contraction_error():
    assert codes("k_off += BK", start="BK") == ["AR310"]


def test_an_update_that_moves_with_the_loop_variable_stays_unknown():
    # k_off += k0 is not affine in the iteration count: still havocked, not proved
    assert "AR312" in codes("k_off += k0")
    assert "AR312" in codes("k_off = k_off * 2")
