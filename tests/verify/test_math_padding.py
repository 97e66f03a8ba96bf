"""The verifier's rules for the elementwise math of issue 20 item 3: what the padding lanes of log1p, expm1, log10,
tan, sinh, cosh, floor, ceil, trunc, round, sign and `**` hold (argus.verify.padding.MATH and BINARY["**"]),
through to AR313 at a reduction, and the integer terms of sign and `i ** n` (an access they index)."""

from __future__ import annotations

import math

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.padding import BINARY, MATH, UNDEFINED, VSet, const

ROW = """
kernel k(x: f32[M, N], y: out f32[M]):
    tile BM = 16, BN = 128
    requires N <= BN
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    cols = arange(BN)
    mask = (rm[:, None] < M) & (cols[None, :] < N)
    v = load(x[rm, cols], mask=(rm < M, cols < N), other={other})
    store(y[rm], {reduced}, mask=rm < M)
"""


def codes(source: str) -> list[str]:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def row(reduced: str, other: str = "0") -> list[str]:
    return codes(ROW.format(reduced=reduced, other=other))


@pytest.mark.parametrize(
    ("reduced", "other"),
    [
        ("sum(log1p(v), axis=1)", "0"),  # log1p(0) = 0
        ("sum(expm1(v), axis=1)", "0"),
        ("sum(sinh(v), axis=1)", "0"),
        ("sum(tan(v), axis=1)", "0"),
        ("sum(floor(v) + ceil(v) + trunc(v) + round(v), axis=1)", "0"),
        ("sum(sign(v), axis=1)", "0"),
        ("sum(v ** 2, axis=1)", "0"),
        ("sum(v ** 3 - v ** 5, axis=1)", "0"),
        ("max(floor(v), axis=1)", "-inf"),  # floor(-inf) = -inf
        ("max(v ** 3, axis=1)", "-inf"),  # an odd power keeps -inf
        ("min(round(v), axis=1)", "inf"),
        ("sum(where(mask, cosh(v), 0), axis=1)", "0"),
    ],
)
def test_padding_that_stays_the_identity_proves(reduced, other):
    assert row(reduced, other) == []


@pytest.mark.parametrize(
    ("reduced", "other"),
    [
        ("sum(cosh(v), axis=1)", "0"),  # cosh(0) = 1
        ("sum(log10(v), axis=1)", "0"),  # -inf
        ("sum(v ** 0, axis=1)", "0"),  # 1, as torch.pow(x, 0)
        ("sum((v + 1.0) ** 2, axis=1)", "0"),
        ("sum(v ** -1, axis=1)", "1"),
        ("max(v ** 2, axis=1)", "-inf"),  # an even power makes inf of -inf
        ("max(round(v), axis=1)", "0"),
        ("sum(sign(v + 1.0), axis=1)", "0"),
    ],
)
def test_padding_that_is_not_the_identity_is_ar313(reduced, other):
    assert row(reduced, other) == ["AR313"]


def test_sign_of_nan_padding_is_0_but_of_undefined_padding_anything():
    assert row("sum(sign(v), axis=1)", "nan") == []  # torch.sign(NaN) is 0, and so is the kernel's
    assert codes(ROW.format(reduced="sum(sign(v), axis=1)", other="0").replace(", other=0", "")) == ["AR313"]
    assert MATH["sign"](VSet(nan=True)) == const(0.0)
    assert MATH["sign"](UNDEFINED) == VSet(-1.0, 1.0)


@pytest.mark.parametrize(
    ("fn", "values", "expected"),
    [
        ("floor", VSet(-2.5, 3.5, ninf=True), VSet(-3.0, 3.0, ninf=True)),
        ("ceil", VSet(-2.5, 3.5), VSet(-2.0, 4.0)),
        ("trunc", VSet(-2.5, 3.5, pinf=True), VSet(-2.0, 3.0, pinf=True)),
        ("round", VSet(0.5, 2.5), VSet(0.0, 2.0)),  # halves to even
        ("log1p", VSet(-1.0, 0.0), VSet(-math.inf, 0.0, ninf=True)),
        ("cosh", VSet(-3.0, 1.0), VSet(1.0, math.cosh(3.0))),
        ("tan", VSet(-1.0, 1.0, pinf=True), VSet(math.tan(-1.0), math.tan(1.0), nan=True)),
        ("tan", VSet(-2.0, 1.0), VSet(-math.inf, math.inf)),
    ],
)
def test_lane_rules(fn, values, expected):
    assert MATH[fn](values) == expected


@pytest.mark.parametrize(
    ("base", "exponent", "expected"),
    [
        (VSet(-2.0, 3.0), 2.0, VSet(0.0, 9.0)),
        (VSet(-2.0, 3.0), 3.0, VSet(-8.0, 27.0)),
        (VSet(nan=True), 0.0, const(1.0)),  # torch.pow(nan, 0) is 1
        (VSet(ninf=True), 2.0, VSet(pinf=True)),
        (VSet(1.0, 2.0), -1.0, VSet(0.5, 1.0)),
        (VSet(1.0, 4.0), 0.5, VSet(0.0, math.inf, pinf=True)),
    ],
)
def test_power_lanes(base, exponent, expected):
    assert BINARY["**"](base, const(exponent)) == expected


def test_a_non_integer_power_of_a_possibly_negative_base_may_be_anything():
    assert BINARY["**"](VSet(-1.0, 2.0), const(0.5)) == UNDEFINED


INDEX = """
kernel k(x: f32[N], y: out f32[B]):
    tile B = 16
    grid (1,)
    k = arange(B)
    v = load(x[k ** 2], mask={mask}, other=0)
    store(y[k], v)
"""


def test_an_integer_power_indexes_with_its_exact_value():
    assert codes(INDEX.format(mask="k ** 2 < N")) == []
    assert codes(INDEX.format(mask="k < N")) == ["AR301"]


SIGNED = """
kernel k(x: f32[N], y: out f32[B]):
    tile B = 16
    grid (1,)
    k = arange(B)
    v = load(x[{index}], mask=k < N, other=0)
    store(y[k], v)
"""


def test_the_sign_of_an_integer_is_its_exact_value():
    assert codes(SIGNED.format(index="k * sign(k)")) == []  # k * sign(k) is k for k >= 0
    assert codes(SIGNED.format(index="k - sign(k)")) == []  # 0, then k - 1
    assert codes(SIGNED.format(index="k + sign(k)")) == ["AR301"]
