"""AR324 (verify/replaced_carries.py): a blocked scan's carry takes each block in on top of itself.

The buggy kernels and their fixed twins are in the corpus (`replaced_carry_*`); here, the witness's iteration
and the carries that are right without taking in their old value: a decoupled look-back that loads the total
of the blocks before, a segmented scan that resets its carry, an offset that is not the scan's combining op.
"""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

ROW = """
kernel k(x: f32[M, N], totals: f32[M, NB], y: out f32[M, N]):
    tile BN = 16
    requires NB == cdiv(N, BN)
    grid (M,)
    row = program_id(0)
    carry = 0.0
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        cm = cols < N
        v = load(x[row, cols], mask=cm, other=0.0)
        store(y[row, cols], {offset}, mask=cm)
        {update}
"""


def diagnostics(offset: str, update: str) -> list:
    check = check_source(ROW.format(offset=offset, update=update))
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


def test_a_replaced_carry_is_an_error_at_the_third_block():
    [found] = diagnostics("cumsum(v, axis=0) + carry", "carry = sum(v, axis=0)")
    assert (found.code, found.range.start.line + 1) == ("AR324", 13)
    witness = found.data["counterexample"]
    assert witness["iteration"]["c0"] == 32  # the loop's third iteration
    assert witness["sizes"]["N"] > 32


def test_an_accumulated_carry_is_clean():
    assert diagnostics("cumsum(v, axis=0) + carry", "carry = carry + sum(v, axis=0)") == []
    assert diagnostics("carry + cumsum(v, axis=0)", "carry += sum(v, axis=0)") == []


def test_a_carry_loaded_from_the_totals_of_the_blocks_before_is_not_judged():
    # a decoupled look-back: the carry comes from another pass's totals, not from this block's data
    update = "carry = load(totals[row, c0 // BN])"
    assert [d.code for d in diagnostics("cumsum(v, axis=0) + carry", update)] == []


def test_a_carry_that_takes_in_its_old_value_anywhere_is_not_judged():
    update = "carry = where(c0 % 64 == 48, 0.0, carry + sum(v, axis=0))"  # a segmented scan's reset
    assert [d.code for d in diagnostics("cumsum(v, axis=0) + carry", update)] == []


def test_an_offset_by_another_op_than_the_scans_is_not_judged():
    # a scaled scan (cumsum times a per-block factor) is no blocked prefix: the carry is no running total
    assert [d.code for d in diagnostics("cumsum(v, axis=0) * carry", "carry = sum(v, axis=0)")] == []


GEMM = """
kernel k(A: f32[M, K], B: f32[K, N], C: out f32[M, N]):
    tile BM = 16, BN = 16, BK = 16
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        {update}
    store(C[rm, rn], {result}, mask=(rm < M, rn < N))
"""


def gemm(update: str, result: str = "acc") -> list:
    check = check_source(GEMM.format(update=update, result=result))
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


def test_a_dot_that_replaces_the_accumulator_is_an_error_at_the_second_iteration():
    [found] = gemm('acc = dot(a, b, input_precision="ieee")')
    assert (found.code, found.range.start.line + 1) == ("AR324", 12)
    assert "only the last iteration's block" in found.message
    assert found.data["counterexample"]["iteration"]["k0"] == 16


def test_a_dot_that_accumulates_is_clean():
    assert gemm('acc = dot(a, b, acc, input_precision="ieee")') == []
    assert gemm('acc += dot(a, b, input_precision="ieee")') == []


def test_a_name_reused_inside_the_loop_and_not_after_it_is_not_judged():
    # `acc` is only a scratch name here: the loop's last value is never used
    update = 'acc = dot(a, b, input_precision="ieee")\n        store(C[rm, rn], acc, mask=(rm < M, rn < N))'
    assert "AR324" not in [d.code for d in gemm(update, result="zeros((BM, BN), f32)")]
