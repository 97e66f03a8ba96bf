"""A float scalar parameter (a temperature, a scale, an epsilon) is taken to be positive and finite as an f32
holds it (argus.verify.padding.POSITIVE): never 0 and never inf, so `1 / temperature` is never 0 and a padding
lane of -inf scaled by it stays -inf."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.padding import POSITIVE, VSet, div, mul

SOFTMAX = """
kernel softmax_t(x: f32[M, V], y: out f32[M, V], temperature: f32 = 0.7):
    tile BV = 1024
    requires V <= BV, temperature > 0
    grid (M,)
    row = program_id(0)
    cols = arange(BV)
    mask = cols < V
    v = load(x[row, cols], mask=mask, other=-inf)
    k = {factor}
    num = exp2((v - max(v, axis=0)) * k)
    store(y[row, cols], num / sum(num, axis=0), mask=mask)
"""


def codes(source: str) -> list[str]:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def test_padding_scaled_by_a_reciprocal_temperature_stays_minus_inf():
    assert codes(SOFTMAX.format(factor="1.4426950408889634 / temperature")) == []
    assert codes(SOFTMAX.format(factor="1.0 / temperature")) == []


def test_padding_scaled_by_zero_is_still_nan():
    # what the rule is for: -inf * 0 is NaN, and a NaN padding lane poisons the sum
    assert codes(SOFTMAX.format(factor="temperature - temperature")) == ["AR313"]


def test_a_positive_parameter_is_never_zero_nor_inf():
    reciprocal = div(VSet(1.0, 1.0), POSITIVE)
    assert reciprocal.finite and reciprocal.lo > 0 and not (reciprocal.pinf or reciprocal.nan)
    assert mul(VSet(ninf=True), reciprocal) == VSet(ninf=True)
