"""Data facts about loaded integers (issue 17, class 4): `requires in_range(T, lo, hi)` states that every
element of T lies in lo <= T[...] < hi; the verifier assumes it for the values loaded from T (a gather whose
index comes from T is in bounds), the checker keeps it in `requires`, and the launcher checks it (tests/codegen)."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

GATHER = """
kernel pick(x: f32[M, C], target: i64[M], out: out f32[M]):
    FACT
    grid (M,)
    row = program_id(0)
    t = load(target[row])
    store(out[row], load(x[row, t]))
"""


def codes(fact: str) -> list[str]:
    check = check_source(GATHER.replace("FACT", fact))
    if check.has_errors:
        return [d.code for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics if d.severity.value == "error"]


def test_a_gather_through_a_stated_range_is_in_bounds():
    assert codes("requires in_range(target, 0, C)") == []


def test_without_the_fact_the_gather_may_be_out_of_bounds():
    assert codes("requires M > 0") == ["AR301"]


@pytest.mark.parametrize(
    ("fact", "expected"),
    [("requires in_range(target, 1, C)", []), ("requires in_range(target, 0, C + 1)", ["AR301"])],
)
def test_the_stated_range_is_what_is_assumed(fact, expected):
    # 1 <= t < C is inside x's columns; 0 <= t < C + 1 lets t reach C, one past the last column
    assert codes(fact) == expected


# A cross entropy's targets: a class in 0..C-1, or ignore_index -100, whose row the kernel skips.
IGNORED = """
kernel pick(x: f32[M, C], target: i64[M], out: out f32[M]):
    FACT
    grid (M,)
    row = program_id(0)
    t = load(target[row])
    store(out[row], load(x[row, t], mask=t != -100, other=0))
"""


def ignored_codes(fact: str) -> list[str]:
    check = check_source(IGNORED.replace("FACT", fact))
    assert not check.has_errors, check.diagnostics
    return [d.code for d in verify_check(check).diagnostics if d.severity.value == "error"]


@pytest.mark.parametrize(
    ("fact", "expected"),
    [
        ("requires in_range(target, 0, C, ignore=-100)", []),  # the one value outside is the skipped one
        ("requires in_range(target, -100, C)", ["AR301"]),  # admits -1, which the mask lets through
        ("requires in_range(target, 0, C, ignore=-1)", ["AR301"]),  # -1 is allowed and not skipped
    ],
)
def test_an_ignored_value_is_allowed_besides_the_range(fact, expected):
    assert ignored_codes(fact) == expected


def test_ignore_is_an_integer_scalar():
    wrong = check_source(IGNORED.replace("FACT", "requires in_range(target, 0, C, ignore=0.5)"))
    assert any(d.code == "AR204" and "ignore" in d.message for d in wrong.diagnostics)


def test_the_fact_belongs_in_requires_and_takes_an_integer_tensor():
    outside = GATHER.replace("FACT", "tile B = 1").replace("store(", "ok = in_range(target, 0, C)\n    store(")
    assert "AR216" in [d.code for d in check_source(outside).diagnostics]
    wrong = check_source(GATHER.replace("FACT", "requires in_range(x, 0, C)"))
    assert any(d.code == "AR204" and "integer tensor" in d.message for d in wrong.diagnostics)


# Fused MoE as vLLM writes it: sorted_ids lists each of the R = T * TOPK (token, choice) rows once, grouped by
# expert in blocks of BM and padded with R; each program multiplies one block by its expert's weight and stores
# the rows back where they came from. Without the fact, two programs could read the same row id (AR302).
FUSED_MOE = """
kernel fused_moe(A: f16[T, K], W: f16[E, N, K], sorted_ids: i32[S], expert_ids: i32[NB], C: out f16[R, N]):
    tile BM = 16, BN = 32, BK = 32, TOPK = 2
    requires in_range(expert_ids, 0, E), FACT, R == T * TOPK, NB * BM == S
    grid (cdiv(S, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rows = pm * BM + arange(BM)
    tok = load(sorted_ids[rows])
    live = tok < R
    e = load(expert_ids[pm])
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[tok // TOPK, rk], mask=(live, rk < K), other=0)
        w = load(W[e, rn, rk], mask=(rn < N, rk < K), other=0)
        acc = dot(a, trans(w), acc)
    store(C[STORED, rn], acc.to(f16), mask=(live, rn < N))
"""


def moe_codes(fact: str, stored: str = "tok") -> list[str]:
    check = check_source(FUSED_MOE.replace("FACT", fact).replace("STORED", stored))
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics if d.severity.value == "error"]


def test_rows_stored_through_a_permutation_do_not_race():
    assert moe_codes("permutation(sorted_ids, R)") == []


def test_without_the_permutation_two_programs_may_store_the_same_row():
    assert moe_codes("in_range(sorted_ids, 0, R + 1)") == ["AR302"]


def test_a_permutation_does_not_make_a_many_to_one_row_map_race_free():
    # each token's TOPK rows land on one row of C: two lanes holding 2t and 2t + 1 collide
    assert "AR302" in moe_codes("permutation(sorted_ids, R)", stored="tok // TOPK")


def test_the_permutation_fact_checks_its_arguments():
    source = FUSED_MOE.replace("FACT", "permutation(W, R)").replace("STORED", "tok")
    assert [d.code for d in check_source(source).diagnostics if d.severity.value == "error"] == ["AR204"]
    source = FUSED_MOE.replace("FACT, ", "").replace("STORED", "tok")
    source = source.replace("live = tok < R", "live = permutation(sorted_ids, R)")
    assert "AR216" in [d.code for d in check_source(source).diagnostics]


COLUMNS = """
kernel index_select_cols(x: f16[M, N], idx: i64[J], y: out f16[M, J]):
    tile BM = 16, BJ = 32
    requires in_range(idx, 0, HI)
    grid (cdiv(M, BM), cdiv(J, BJ))
    rm = program_id(0) * BM + arange(BM)
    rj = program_id(1) * BJ + arange(BJ)
    c = load(idx[rj], mask=rj < J, other=0)
    v = load(x[rm, c], mask=(rm < M, rj < J), other=0)
    store(y[rm, rj], v, mask=(rm < M, rj < J))
"""


def test_a_gathered_index_broadcast_along_another_axis_keeps_its_range():
    # `c` is loaded along axis 0 of its own tile and read along axis 1 of x's: the range holds there too
    diagnostics = verify_check(check_source(COLUMNS.replace("HI", "N"))).diagnostics
    assert diagnostics == []
    [d] = verify_check(check_source(COLUMNS.replace("HI", "N + 1"))).diagnostics
    assert d.code == "AR301" and d.severity.value == "error" and "idx[0]=" in d.message
