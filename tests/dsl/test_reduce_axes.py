"""Reductions along several axes at once (issue 20 item 3): `sum(x, axis=(0, 1))`, and max and min; one IR
`reduce` op whose `axis` is the tuple of reduced axes in increasing order. argmax and argmin take one axis."""

from __future__ import annotations

from textwrap import dedent

import pytest

from argus.dsl import ir
from argus.dsl.check import check_source

PRELUDE = """\
kernel k(x: f32[M, N], h: f16[M, N], q: i8[M, N]):
    tile BM = 16, BN = 32, BB = 4
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    a = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    g = load(h[rm, rn], mask=(rm < M, rn < N), other=0)
    c = load(q[rm, rn], mask=(rm < M, rn < N), other=0)
    t = broadcast_to(a[None, :, :], (BB, BM, BN))
"""
QUIET = {"AR107", "AR108"}


def expression(expr: str):
    result = check_source(dedent(PRELUDE + f"    r = {expr}\n"))
    return result, [d for d in result.diagnostics if d.code not in QUIET]


def type_of(expr: str) -> str:
    result, diagnostics = expression(expr)
    assert diagnostics == [], [d.message for d in diagnostics]
    return [s for s in result.analysis.symbols if s.name == "r" and s.kind == "variable"][-1].type


def reduce_op(expr: str) -> ir.Op:
    result, _ = expression(expr)
    return [op for op in ir.walk_ops(result.analysis.kernels["k"].body) if op.kind == "reduce"][-1]


def diagnostic(expr: str):
    _, diagnostics = expression(expr)
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    return diagnostics[0]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("sum(a, axis=(0, 1))", "f32"),
        ("sum(a, (1, 0))", "f32"),
        ("max(a, axis=(0, 1), keep_dims=True)", "f32[1, 1]"),
        ("min(g, axis=(0, -1))", "f16"),
        ("sum(c, axis=(0, 1))", "i32"),  # narrow integers widen, as for one axis
        ("sum(t, axis=(0, 2))", "f32[BM]"),
        ("sum(t, axis=(1, 2), keep_dims=True)", "f32[BB, 1, 1]"),
        ("max(t, axis=(0, 1))", "f32[BN]"),
        ("sum(a, axis=(1,))", "f32[BM]"),
    ],
)
def test_result_type(expr, expected):
    assert type_of(expr) == expected


def test_one_op_with_the_axes_in_increasing_order():
    op = reduce_op("sum(t, axis=(2, -3))")
    assert op.attrs["axis"] == (0, 2)
    assert ir.reduced_axes(op) == (0, 2)
    assert reduce_op("sum(a, axis=(1,))").attrs["axis"] == 1  # a tuple of one is that axis
    assert ir.reduced_axes(reduce_op("sum(a, 1)")) == (1,)


@pytest.mark.parametrize("fn", ["argmax", "argmin"])
def test_argmax_and_argmin_take_one_axis(fn):
    found = diagnostic(f"{fn}(a, axis=(0, 1))")
    assert found.code == "AR218"
    assert f"{fn} takes one axis" in found.message and "reshape" in found.message


def test_an_axis_named_twice_is_an_error():
    found = diagnostic("sum(a, axis=(1, -1))")
    assert found.code == "AR218" and "named twice" in found.message


def test_an_axis_out_of_range_in_the_tuple_is_ar213():
    assert diagnostic("sum(a, axis=(0, 2))").code == "AR213"


def test_a_runtime_axis_in_the_tuple_is_ar206():
    assert diagnostic("sum(a, axis=(0, program_id(0)))").code == "AR206"
