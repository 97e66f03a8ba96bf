"""AR313 (issue 17, class 2): masked-off lanes reaching a reduction with a value that is not its identity.

Each case is a buggy kernel and its fixed twin (the corpus holds more, tests/verify/corpus/padding_*), and a few
correct kernels that are easy to get wrong the other way: padding that a mask, a where, a product with 0, an
exp of -inf or an exact tiling makes harmless.
"""

from __future__ import annotations

import math

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.padding import (
    INF,
    MATH,
    REAL,
    UNDEFINED,
    VSet,
    add,
    const,
    div,
    harmless,
    maximum,
    mul,
    sub,
)
from argus.verify.padding_checks import summed

ROW = """
kernel k(x: f32[M, N], w: f32[N], y: out f32[M]):
    tile BM = 16, BN = 128
    {requires}
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    cols = arange(BN)
    mask = (rm[:, None] < M) & (cols[None, :] < N)
    v = load(x[rm, cols], mask=(rm < M, cols < N), other={other})
    g = load(w[cols], mask=cols < N, other={wother})
    r = {reduced}
    store(y[rm], r, mask=rm < M)
"""


def codes(source: str) -> list[str]:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def row(reduced: str, other: str = "0", requires: str = "requires N <= BN", wother: str = "0") -> list[str]:
    return codes(ROW.format(reduced=reduced, other=other, requires=requires, wother=wother))


# ---- buggy and fixed twins ---------------------------------------------------------------------------
TWINS = {
    "other=0 under max": ("max(v, axis=1)", "0", "max(v, axis=1)", "-inf"),
    "other=0 under min": ("min(v, axis=1)", "0", "min(v, axis=1)", "inf"),
    "other=0 under argmax": ("argmax(v, axis=1).to(f32)", "0", "argmax(v, axis=1).to(f32)", "-inf"),
    "exp of a 0 padding under sum": ("sum(exp(v), axis=1)", "0", "sum(exp(v), axis=1)", "-inf"),
    "exp of a 0 padding, re-masked": ("sum(exp(v), axis=1)", "0", "sum(where(mask, exp(v), 0), axis=1)", "0"),
    "x - mean squared": (
        "sum((v - sum(v, axis=1)[:, None] / N) * (v - sum(v, axis=1)[:, None] / N), axis=1)",
        "0",
        "sum(where(mask, v - sum(v, axis=1)[:, None] / N, 0) * where(mask, v - sum(v, axis=1)[:, None] / N, 0), "
        "axis=1)",
        "0",
    ),
    "re-masked with the wrong identity": (
        "max(where(mask, v, 0), axis=1)",
        "0",
        "max(where(mask, v, -inf), axis=1)",
        "0",
    ),
    "a shift of the padding": ("sum(v + 1.0, axis=1)", "0", "sum(v * 2.0, axis=1)", "0"),
}


@pytest.mark.parametrize("name", TWINS)
def test_buggy_kernel_reports_ar313_and_its_twin_is_clean(name):
    buggy, buggy_other, fixed, fixed_other = TWINS[name]
    assert "AR313" in row(buggy, buggy_other)
    assert row(fixed, fixed_other) == []


def test_padding_multiplied_by_zero_is_harmless():
    # exp(0) = 1 in the padding, but the weight's padding is 0 and the product is 0; with other=1 it is not
    assert row("sum(exp(v) * g[None, :], axis=1)") == []
    assert "AR313" in row("sum(exp(v) * g[None, :], axis=1)", wother="1")
    # a mask converted to a float is 0 where it is off
    assert row("sum(exp(v) * mask.to(f32), axis=1)") == []


def test_padding_no_larger_than_every_real_lane_is_harmless_under_max():
    assert row("max(abs(v), axis=1)") == []  # |x| >= 0, so the 0 padding never wins
    assert row("max(exp(v), axis=1)", "-inf") == []  # exp(-inf) = 0, and no exp is below 0
    assert "AR313" in row("max(exp(v), axis=1)")  # exp(0) = 1 beats a row of exp(-2)
    assert "AR313" in row("max(v * v - 1.0, axis=1)")


def test_an_all_true_mask_is_proved_and_reports_nothing():
    assert row("max(v, axis=1)", requires="requires N == BN") == []
    # rows past M are padding too, but a row of padding only is masked off on the way out
    assert row("sum(exp(v), axis=1)", requires="requires N == BN") == []


LOOP = """
kernel k(x: f32[M, N], y: out f32[M]):
    tile BN = 128
    {requires}
    grid (M,)
    row = program_id(0)
    m = full((1,), -inf, f32)
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        m = maximum(m, max(v, axis=0, keep_dims=True))
    store(y[row + arange(1)], m)
"""


def test_a_loop_over_blocks_is_proved_when_the_blocks_tile_the_row():
    diagnostics = codes(LOOP.format(requires="requires N % BN == 0"))
    assert diagnostics == []
    check = check_source(LOOP.format(requires=""))
    found = [d for d in verify_check(check).diagnostics if d.code == "AR313"]
    assert len(found) == 1
    witness = found[0].data["counterexample"]
    assert witness["iteration"]["start"] % 128 == 0
    assert witness["iteration"]["start"] + witness["element"]["i"] >= witness["sizes"]["N"]


def test_the_witness_names_the_padding_lane_a_real_lane_the_load_and_the_fix():
    check = check_source(ROW.format(reduced="max(v, axis=1)", other="0", requires="requires N <= BN", wother="0"))
    (d,) = [d for d in verify_check(check).diagnostics if d.code == "AR313"]
    assert d.severity.value == "error" and d.data["verdict"] == "refuted" and d.data["kind"] == "padding"
    w = d.data["counterexample"]
    n, j, real = w["sizes"]["N"], w["element"]["j"], w["values"]["a real lane of the same row: j"]
    assert j >= n > real >= 0
    assert w["values"]["x index 1 (N)"] == j
    assert "holding 0, not its identity -inf" in d.message
    assert "other=-inf" in d.message  # the hint
    assert [r.message for r in d.related] == ["the masked-off lanes are loaded here"]
    assert d.related[0].range.start.line == 8  # the load


# ---- the correct-but-tricky ones ----------------------------------------------------------------------
ONLINE_SOFTMAX = """
kernel softmax(x: f16[M, N], y: out f16[M, N], temp: f32):
    tile BN = 256
    grid (M,)
    row = program_id(0)
    m_i = full((1,), -inf, f32)
    l_i = zeros((1,), f32)
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=-inf).to(f32) / temp
        m_new = maximum(m_i, max(v, axis=0, keep_dims=True))
        l_i = l_i * exp(m_i - m_new) + sum(exp(v - m_new), axis=0, keep_dims=True)
        m_i = m_new
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=-inf).to(f32) / temp
        store(y[row, cols], (exp(v - m_i) / l_i).to(f16), mask=cols < N)
"""

LAYERNORM_BLOCKS = """
kernel layernorm(x: f32[M, N], y: out f32[M, N]):
    tile BN = 256
    grid (M,)
    row = program_id(0)
    total = zeros((1,), f32)
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        total = total + sum(v, axis=0, keep_dims=True)
    mean = total / N
    sq = zeros((1,), f32)
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        d = {centered}
        sq = sq + sum(d * d, axis=0, keep_dims=True)
    rstd = rsqrt(sq / N + 1e-5)
    for start in range(0, N, BN):
        cols = start + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        store(y[row, cols], (v - mean) * rstd, mask=cols < N)
"""


def test_online_softmax_with_minus_inf_padding_is_clean():
    # -inf / temp is -inf (a temperature is positive), exp(-inf - m) = 0 under the sum
    assert codes(ONLINE_SOFTMAX) == []
    assert "AR313" in codes(
        ONLINE_SOFTMAX.replace("other=-inf).to(f32) / temp\n        m_new", "other=0).to(f32) / temp\n        m_new")
    )


def test_layernorm_over_blocks_re_masked_with_where_is_clean():
    assert codes(LAYERNORM_BLOCKS.format(centered="where(cols < N, v - mean, 0)")) == []
    assert "AR313" in codes(LAYERNORM_BLOCKS.format(centered="v - mean"))


GEMM = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f32[M, N]):
    tile BM = 64, BN = 64, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N){b_other})
        acc = dot({a}, b, acc)
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""


def test_dot_products_of_padding_must_be_zero():
    assert codes(GEMM.format(a="a", b_other=", other=0")) == []
    # without other, b's masked-off lanes hold whatever memory held, an inf or a NaN among them: 0 * NaN is NaN
    assert "AR313" in codes(GEMM.format(a="a", b_other=""))
    # a's padding is 1 after the shift, but b's is 0 at the same K lanes, and 1 * 0 = 0
    assert codes(GEMM.format(a="a + 1.0", b_other=", other=0")) == []
    assert "AR313" in codes(GEMM.format(a="a + 1.0", b_other=", other=1"))


# ---- the value sets -------------------------------------------------------------------------------
def test_value_sets_follow_infinities_and_zeros():
    minus_inf, zero = const(-math.inf), const(0.0)
    assert MATH["exp"](minus_inf) == zero
    assert MATH["exp"](zero) == const(1.0)
    assert sub(minus_inf, REAL) == minus_inf
    assert add(minus_inf, const(math.inf)).nan
    assert mul(zero, REAL) == zero
    assert mul(zero, minus_inf).nan
    assert div(minus_inf, VSet(0.5, 2.0)) == minus_inf
    assert maximum(minus_inf, REAL) == REAL
    assert MATH["abs"](REAL) == VSet(0.0, math.inf)


def test_a_quotient_keeps_the_sign_its_divisor_cannot_change():
    nonnegative = VSet(0.0, math.inf)
    assert div(nonnegative, nonnegative) == nonnegative  # exp over its sum: a probability, >= 0
    assert div(VSet(-math.inf, 0.0), nonnegative) == VSet(-math.inf, 0.0)
    assert div(nonnegative, VSet(-math.inf, 0.0)) == VSet(-math.inf, 0.0)
    assert div(REAL, nonnegative) == REAL
    assert div(nonnegative, REAL) == REAL  # a divisor of either sign


# A router's top-1 probability: the softmax pads with -inf, so its padding probabilities are exactly 0, which a
# max of probabilities (each >= 0) cannot take; padded with 0 instead, exp(0 - max) is a real weight.
ROUTER = """
kernel top1(logits: f32[T, E], w: out f32[T]):
    tile BT = 16, BE = 16
    requires E <= BE, E >= 2
    grid (cdiv(T, BT),)
    rt = program_id(0) * BT + arange(BT)
    re = arange(BE)
    x = load(logits[rt, re], mask=(rt < T, re < E), other=PAD)
    mx = where(rt < T, max(x, axis=1), 0.0)
    p = exp(x - mx[:, None])
    p = p / where(rt < T, sum(p, axis=1), 1.0)[:, None]
    store(w[rt], max(p, axis=1), mask=rt < T)
"""


def test_the_max_of_softmax_probabilities_padded_with_zero_is_clean_and_with_a_real_weight_is_not():
    assert codes(ROUTER.replace("PAD", "-inf")) == []
    assert "AR313" in codes(ROUTER.replace("PAD", "0"))


def test_what_each_reduction_lets_through():
    assert harmless("sum", const(0.0), -math.inf, math.inf)
    assert not harmless("sum", const(1.0), -math.inf, math.inf)
    assert harmless("max", const(-math.inf), -math.inf, math.inf)
    assert not harmless("max", const(0.0), -math.inf, math.inf)
    assert harmless("max", const(0.0), 0.0, math.inf)  # no real lane is below 0
    assert harmless("min", const(math.inf), -math.inf, math.inf)
    assert not harmless("dot", UNDEFINED, -math.inf, math.inf)


# ---- accumulations across the iterations of a loop -------------------------------------------------
COLUMN_SUM = """
kernel colsum(x: f32[M, N], y: out f32[N]):
    tile BM = 32, BN = 64
    grid (cdiv(N, BN),)
    cols = program_id(0) * BN + arange(BN)
    acc = {init}
    for r0 in range(0, M, BM):
        rows = r0 + arange(BM)
        v = load(x[rows, cols], mask=(rows < M, cols < N), other={other})
        acc = {update}
    store(y[cols], {out}, mask=cols < N)
"""


def column(other: str, update: str = "acc + v", init: str = "zeros((BM, BN), f32)", out: str = "sum(acc, axis=0)"):
    return codes(COLUMN_SUM.format(other=other, update=update, init=init, out=out))


def test_an_accumulator_must_receive_the_identity_in_lanes_real_in_other_iterations():
    assert column("0") == []
    assert "AR313" in column("1")  # the last block's rows past M add 1 to lanes that held real rows before
    assert column("-inf", "maximum(acc, v)", "full((BM, BN), -inf, f32)", "max(acc, axis=0)") == []
    assert "AR313" in column("0", "maximum(acc, v)", "full((BM, BN), -inf, f32)", "max(acc, axis=0)")


def test_a_running_max_written_with_a_comparison_is_an_accumulation_too():
    # `where(v > acc, v, acc)`, as a running argmax keeps its value: padding 0 can win for all-negative columns
    init, out = "full((BM, BN), -inf, f32)", "max(acc, axis=0)"
    for update in ("where(v > acc, v, acc)", "where(acc < v, v, acc)", "where(v >= acc, v, acc)"):
        assert "AR313" in column("0", update, init, out)
        assert column("-inf", update, init, out) == []
    # a running min wants +inf
    assert "AR313" in column("0", "where(v < acc, v, acc)", "full((BM, BN), inf, f32)", "min(acc, axis=0)")
    assert column("inf", "where(v < acc, v, acc)", "full((BM, BN), inf, f32)", "min(acc, axis=0)") == []


def test_a_lane_that_is_padding_in_every_iteration_is_dead():
    # columns past N are masked off in every iteration (and on the way out): only whole-tile row blocks
    assert column("1").count("AR313") == 1
    assert (
        codes(
            COLUMN_SUM.format(other="1", update="acc + v", init="zeros((BM, BN), f32)", out="sum(acc, axis=0)").replace(
                "    grid", "    requires M % BM == 0\n    grid"
            )
        )
        == []
    )


# ---- padding in a dot's result ----------------------------------------------------------------------
SCORES = """
kernel scores(q: f16[M, D], k: f16[N, D], y: out f32[M]):
    tile BM = 32, BN = 64, BD = 64
    requires D == BD
    {requires}
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    d = arange(BD)
    qt = load(q[rm, d], mask=(rm < M, d < D), other=0)
    kt = load(k[rn, d], mask=(rn < N, d < D), other=0)
    s = {scores}
    store(y[rm], max(s, axis=1), mask=rm < M)
"""


def scores(expression: str, requires: str = "requires N <= BN") -> list[str]:
    return codes(SCORES.format(scores=expression, requires=requires))


def test_a_dot_against_masked_off_keys_gives_padding_scores():
    # keys past N are loaded as 0, so their scores are 0: the row max must not see them
    assert "AR313" in scores("dot(qt, trans(kt))")
    assert scores("where(rn[None, :] < N, dot(qt, trans(kt)), -inf)") == []
    assert scores("dot(qt, trans(kt))", "requires N == BN") == []
    # rows past M are padding of the result too, but whole rows of it: dead, never asked about
    assert scores("where(rn[None, :] < N, dot(qt, trans(kt)), -inf) + 1.0") == []


# ---- padding in a reduction's result ------------------------------------------------------------------
ROW_SCORES = """
kernel scores(q: f32[D], k: f32[N, D], y: out f32[1]):
    tile BN = 64, D = 32
    requires N <= BN
    grid (1,)
    rn = arange(BN)
    d = arange(D)
    kt = load(k[rn, d], mask=(rn < N, None), other={other})
    qv = load(q[d])
    s = {row}
    store(y[rn * 0], {reduced}, mask=rn == 0)
"""


def row_scores(row: str, reduced: str = "max(s, axis=0)", other: str = "0") -> list[str]:
    return codes(ROW_SCORES.format(row=row, reduced=reduced, other=other))


def test_a_row_reduced_over_a_kept_mask_stays_padding():
    # keys past N are rows of 0s: their sum over D is 0, and a max over the keys must not see it
    assert "AR313" in row_scores("sum(kt * qv[None, :], axis=1)")
    assert row_scores("where(rn < N, sum(kt * qv[None, :], axis=1), -inf)") == []
    # re-masked one key too far (`rn <= N`): the key at N is still a 0 of padding
    assert "AR313" in row_scores("where(rn <= N, sum(kt * qv[None, :], axis=1), -inf)")
    # a row max of -inf padding is -inf, the identity of the max over the keys
    assert row_scores("max(kt, axis=1)", other="-inf") == []
    # a sum of -inf padding is -inf: not the identity of a sum over the keys
    assert "AR313" in row_scores("max(kt, axis=1)", reduced="sum(s, axis=0)", other="-inf")


def test_a_sum_of_lanes_from_a_value_set_keeps_its_sign():
    assert summed(const(0.0)) == const(0.0)
    assert summed(VSet(1.0, 2.0)) == VSet(1.0, INF)
    assert summed(VSet(-2.0, -1.0)) == VSet(-INF, -1.0)
    assert summed(VSet(-1.0, 1.0)) == REAL
    assert summed(VSet(ninf=True, pinf=True)).nan  # -inf + inf


INTEGER_MIN = """
kernel k(x: i32[M, N], y: out i32[N]):
    tile BM = 16, BN = 32
    requires M <= BM
    grid (cdiv(N, BN),)
    rm = arange(BM)
    rn = program_id(0) * BN + arange(BN)
    w = load(x[rm, rn], mask=(rm < M, rn < N), other={other})
    store(y[rn], {reduced}(w, axis=0), mask=rn < N)
"""


@pytest.mark.parametrize(
    ("reduced", "other", "expected"),
    [("min", "2147483647", []), ("max", "-2147483648", []), ("min", "1000", ["AR313"]), ("max", "0", ["AR313"])],
)
def test_integer_padding_at_the_end_of_its_dtype_range_is_an_identity(reduced, other, expected):
    """Integer data lies in its dtype's range: the i32 maximum before a `min` (an integer atomic_min's usual
    padding) is its identity, as -inf is a float max's."""
    assert codes(INTEGER_MIN.format(reduced=reduced, other=other)) == expected


# ---- lanes past a block walk's stop ------------------------------------------------------------------
PARTS = """
kernel part_sums(x: f32[T], offsets: i32[P + 1], out: out f32[P]):
    tile BT = 32
    requires partition(offsets, T)
    grid (P,)
    p = program_id(0)
    lo = load(offsets[p])
    hi = load(offsets[p + 1])
    acc = zeros((BT,), f32)
    for t0 in range(lo, hi, BT):
        rt = t0 + arange(BT)
        acc += LOADED
    store(out[p], sum(acc, axis=0))
"""


def test_a_block_walk_over_a_part_must_not_add_rows_past_its_stop():
    assert codes(PARTS.replace("LOADED", "load(x[rt], mask=rt < hi, other=0)")) == []
    # re-masked before the sum: the lanes past hi add 0
    assert codes(PARTS.replace("LOADED", "where(rt < hi, load(x[rt], mask=rt < T, other=0), 0.0)")) == []
    assert "AR313" in codes(PARTS.replace("LOADED", "load(x[rt], mask=rt < T, other=0)"))


def test_a_window_is_not_a_block_walk():
    # a convolution's taps: `ri + j` steps by 1 under a 64-wide tile, and reads past the tap loop's stop
    conv = """
kernel conv(x: f32[L], w: f32[KS], y: out f32[L]):
    tile BL = 64
    grid (cdiv(L, BL),)
    ri = program_id(0) * BL + arange(BL)
    acc = zeros((BL,), f32)
    for j in range(0, KS):
        acc += load(x[ri + j], mask=ri + j < L, other=0) * load(w[j])
    store(y[ri], acc, mask=ri < L)
"""
    assert "AR313" not in codes(conv)
