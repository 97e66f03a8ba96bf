"""The type rules of the elementwise math of issue 20 item 3: log1p, expm1, log10, tan, sinh, cosh (float only),
floor, ceil, trunc, round (float; the identity on integers) and sign (any number)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from argus.dsl import ir
from argus.dsl.check import check_source
from argus.dsl.ops import BUILTINS

PRELUDE = """\
kernel k(x: f32[N], h: f16[N], d: f64[N], q: i8[N], j: i32[N], s: f32 = 1.0):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i])
    hv = load(h[i])
    dv = load(d[i])
    qv = load(q[i])
    jv = load(j[i])
    m = i < N
"""
QUIET = {"AR107", "AR108"}


def expression(expr: str):
    text = dedent(PRELUDE + f"    r = {expr}\n")
    result = check_source(text)
    return result, [d for d in result.diagnostics if d.code not in QUIET]


def type_of(expr: str) -> str:
    result, diagnostics = expression(expr)
    assert diagnostics == [], [d.message for d in diagnostics]
    uses = [s for s in result.analysis.symbols if s.name == "r" and s.kind == "variable"]
    return uses[-1].type


def ops(expr: str, kind: str) -> list[ir.Op]:
    result, _ = expression(expr)
    return [op for op in ir.walk_ops(result.analysis.kernels["k"].body) if op.kind == kind]


def diagnostic(expr: str):
    _, diagnostics = expression(expr)
    assert len(diagnostics) == 1, [d.message for d in diagnostics]
    return diagnostics[0]


FLOAT_ONLY = ["log1p", "expm1", "log10", "tan", "sinh", "cosh"]
ROUNDING = ["floor", "ceil", "trunc", "round"]


def test_the_new_functions_are_declared_with_a_signature_and_a_doc_line():
    for name in [*FLOAT_ONLY, *ROUNDING, "sign"]:
        builtin = BUILTINS[name]
        assert builtin.signature.startswith(f"{name}(") and builtin.doc


@pytest.mark.parametrize("fn", FLOAT_ONLY + ROUNDING + ["sign"])
@pytest.mark.parametrize(("operand", "dtype"), [("v", "f32[B]"), ("hv", "f16[B]"), ("dv", "f64[B]"), ("s", "f32")])
def test_a_float_keeps_its_dtype_and_shape(fn, operand, dtype):
    assert type_of(f"{fn}({operand})") == dtype
    (op,) = [op for op in ops(f"{fn}({operand})", "math") if op.attrs["fn"] == fn]
    assert op.operands[0].type == op.result.type


@pytest.mark.parametrize("fn", FLOAT_ONLY)
def test_a_float_only_function_refuses_an_integer_tile(fn):
    found = diagnostic(f"{fn}(jv)")
    assert found.code == "AR204"
    assert found.message == f"{fn} needs floating point, not i32; convert with .to(f32)"


@pytest.mark.parametrize("fn", FLOAT_ONLY)
def test_a_float_only_function_of_an_integer_literal_computes_in_f32(fn):
    assert type_of(f"{fn}(2)") == "f32"


@pytest.mark.parametrize("fn", ROUNDING)
@pytest.mark.parametrize(("operand", "dtype"), [("jv", "i32[B]"), ("qv", "i8[B]"), ("3", "i32 = 3")])
def test_rounding_an_integer_is_the_integer_itself(fn, operand, dtype):
    assert type_of(f"{fn}({operand})") == dtype
    assert not [op for op in ops(f"{fn}({operand})", "math") if op.attrs["fn"] == fn]


@pytest.mark.parametrize("fn", [*ROUNDING, "sign"])
def test_rounding_or_sign_of_a_mask_is_an_error(fn):
    assert diagnostic(f"{fn}(m)").code == "AR204"


def test_sign_of_integers_keeps_their_dtype():
    assert type_of("sign(jv)") == "i32[B]"
    assert type_of("sign(qv)") == "i8[B]"
