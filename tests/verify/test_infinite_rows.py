"""AR317 (verify/infinite_rows.py): -inf minus -inf in a real lane, where a row's mask keeps no lane."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

SOFTMAX = """
kernel masked_softmax(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 128
    requires N <= BN
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    cn = arange(BN)
    v = load(x[rm, cn], mask=(rm < M, cn < N), other=-inf)
    s = where(KEEP, v, -inf)
    m = MAX
    e = exp(s - m[:, None])
    store(y[rm, cn], e / sum(e, axis=1)[:, None], mask=(rm < M, cn < N))
"""

ONLINE = """
kernel attention(q: f32[S, D], k: f32[S, D], v: f32[S, D], o: out f32[S, D]):
    tile BM = 32, BN = 32, BD = 32
    requires D == BD
    grid (cdiv(S, BM),)
    rm = program_id(0) * BM + arange(BM)
    d = arange(BD)
    qt = load(q[rm, d], mask=(rm < S, None), other=0)
    m_i = full((BM,), -inf, f32)
    l_i = zeros((BM,), f32)
    acc = zeros((BM, BD), f32)
    for n0 in range(0, S, BN):
        rn = n0 + arange(BN)
        kt = load(k[rn, d], mask=(rn < S, None), other=0)
        vt = load(v[rn, d], mask=(rn < S, None), other=0)
        s = where(KEEP, dot(qt, trans(kt), input_precision="ieee"), -inf)
        m_new = maximum(m_i, max(s, axis=1))
        p = exp(s - m_new[:, None])
        alpha = exp(m_i - m_new)
        l_i = l_i * alpha + sum(p, axis=1)
        acc = acc * alpha[:, None] + dot(p, vt, input_precision="ieee")
        m_i = m_new
    store(o[rm, d], acc / l_i[:, None], mask=(rm < S, None))
"""


def findings(text: str, **parts: str) -> list:
    for name, part in parts.items():
        text = text.replace(name.upper(), part)
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return verify_check(check).diagnostics


def nan_at(diagnostics: list) -> list[int]:
    return [d.range.start.line + 1 for d in diagnostics if d.code == "AR317"]


def test_a_row_whose_mask_keeps_nothing_has_a_max_of_minus_inf():
    found = findings(SOFTMAX, keep="cn[None, :] < rm[:, None]", max="max(s, axis=1)")
    [d] = [d for d in found if d.code == "AR317"]
    assert d.severity.value == "error" and d.range.start.line + 1 == 11
    assert "`s - m` is -inf - -inf" in d.message
    assert "element: i=0, j=0" in d.message and "sizes: M=1, N=1" in d.message  # row 0, the smallest case
    assert "where(m == -inf, 0, m)" in d.message


def test_a_mask_that_keeps_a_lane_of_every_real_row_is_proved():
    assert findings(SOFTMAX, keep="cn[None, :] <= rm[:, None]", max="max(s, axis=1)") == []
    # rows past M keep nothing and their max is -inf, but no real lane reads them
    assert findings(SOFTMAX, keep="cn[None, :] < N", max="max(s, axis=1)") == []


def test_a_guarded_max_is_not_asked_about():
    guarded = "where(max(s, axis=1) == -inf, 0.0, max(s, axis=1))"
    assert nan_at(findings(SOFTMAX, keep="cn[None, :] < rm[:, None]", max=guarded)) == []


def test_a_running_max_keeps_minus_inf_only_where_the_first_block_left_it():
    # the first key block holds key 0 for every query: the running max is real from then on
    assert findings(ONLINE, keep="rn[None, :] < S") == []
    # the first block is masked for every query: -inf - -inf in the first iteration
    found = findings(ONLINE, keep="(rn[None, :] >= BN) & (rn[None, :] < S)")
    assert nan_at(found) == [18, 19]
    assert "iteration: n0=0, the 1st iteration" in next(d for d in found if d.code == "AR317").message


LANES = """
kernel lse(x: f32[M, N], y: out f32[M]):
    tile BN = 64
    grid (M,)
    row = program_id(0)
    m = full((BN,), -inf, f32)
    s = zeros((BN,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=-inf)
        m_new = maximum(m, v)
        base = BASE
        s = s * exp(m - base) + exp(v - base)
        m = m_new
    top = max(m, axis=0)
    total = sum(SUMMED, axis=0)
    store(y[row], top + log(total))
"""


def test_a_padding_lanes_nan_that_the_final_sum_takes_in_is_an_error():
    # lanes past N see only -inf when N < BN: NaN there, which the loop carries in `s` to the sum
    found = findings(LANES, base="m_new", summed="s * exp(m - top)")
    [first, *_] = [d for d in found if d.code == "AR317"]
    assert nan_at(found) == [13, 13] and first.severity.value == "error"
    assert "a reduction along axis 0 adds that lane to a row with real lanes" in first.message
    assert "element: i=1" in first.message and "sizes: M=1, N=1" in first.message  # a padding lane, N = 1


def test_a_padding_lanes_nan_masked_again_before_the_sum_or_guarded_is_not():
    # a `where` before the sum keeps the padding lanes out of it
    assert nan_at(findings(LANES, base="m_new", summed="where(m == -inf, 0.0, s * exp(m - top))")) == []
    assert nan_at(findings(LANES, base="where(m_new == -inf, 0.0, m_new)", summed="s * exp(m - top)")) == []
