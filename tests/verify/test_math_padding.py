"""The verifier's rules for the elementwise math of issue 20 item 3: what the padding lanes of log1p, expm1, log10,
tan, sinh, cosh, floor, ceil, trunc, round and sign hold (argus.verify.padding.MATH), through to AR313 at a
reduction, and the integer term of sign (an access it indexes)."""

from __future__ import annotations

import math

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.padding import MATH, UNDEFINED, VSet, const

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
        ("max(floor(v), axis=1)", "-inf"),  # floor(-inf) = -inf
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
