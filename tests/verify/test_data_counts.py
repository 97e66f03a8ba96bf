"""AR314 on a count the data can make 0 (verify/data_zeros.py): the sum of indicators a loaded mask selects."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

MEAN = """
kernel masked_mean(x: f32[M, N], keep: bool[M, N], y: out f32[M]):
    tile BN = 64
    grid (M,)
    row = program_id(0)
    tot = zeros((BN,), f32)
    cnt = zeros((BN,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        k = load(keep[row, cols], mask=cols < N, other=False)
        v = load(x[row, cols], mask=cols < N, other=0.0)
        tot += where(k, v, 0.0)
        cnt += COUNTED
    c = sum(cnt, axis=0)
    store(y[row], QUOTIENT)
"""


def findings(counted: str = "where(k, 1.0, 0.0)", quotient: str = "sum(tot, axis=0) / c") -> list:
    text = MEAN.replace("COUNTED", counted).replace("QUOTIENT", quotient)
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return verify_check(check).diagnostics


def test_an_unclamped_count_of_a_loaded_mask_divides_by_zero():
    [d] = findings()
    assert d.code == "AR314" and d.severity.value == "error" and d.range.start.line + 1 == 15
    assert "`c` counts what a loaded mask selects, and is 0 where it selects nothing" in d.message
    assert "maximum(c, 1.0)" in d.message


def test_a_count_through_a_cast_of_the_mask_too():
    [d] = findings(counted="k.to(f32)")
    assert d.code == "AR314"


def test_a_clamped_count_is_proved():
    assert findings(quotient="sum(tot, axis=0) / maximum(c, 1.0)") == []


def test_a_count_of_a_mask_on_coordinates_is_never_0():
    # every row has a column 0 < N: the count of `cols < N` is at least 1
    assert findings(counted="where(cols < N, 1.0, 0.0)") == []


def test_a_sum_of_loaded_values_is_not_a_count():
    # data values are assumed to make no divisor 0 (a norm, a sum of exponentials): only indicators are counted
    assert findings(counted="where(k, v * v + 1.0, 0.0)") == []


def test_a_count_without_a_loop():
    text = """
kernel kept_fraction(keep: bool[M, N], y: out f32[M]):
    tile BN = 128
    requires N <= BN
    grid (M,)
    row = program_id(0)
    cols = arange(BN)
    k = load(keep[row, cols], mask=cols < N, other=False)
    kept = sum(where(k, 1.0, 0.0), axis=0)
    store(y[row], sum(where(k, 2.0, 0.0), axis=0) / kept)
"""
    check = check_source(text)
    [d] = verify_check(check).diagnostics
    assert d.code == "AR314" and "`kept` counts what a loaded mask selects" in d.message
