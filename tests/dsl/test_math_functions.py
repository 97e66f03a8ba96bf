"""The type rules of the elementwise math of issue 20 item 3: log1p, expm1, log10, tan, sinh, cosh (float only),
floor, ceil, trunc, round (float; the identity on integers), sign (any number), and powers on tiles (`x ** y`,
`pow(x, y)`)."""

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
    for name in [*FLOAT_ONLY, *ROUNDING, "sign", "pow"]:
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


@pytest.mark.parametrize(
    ("expr", "dtype"),
    [
        ("v ** 3", "f32[B]"),
        ("hv ** 2", "f16[B]"),
        ("v ** -2", "f32[B]"),
        ("v ** 2.5", "f32[B]"),
        ("v ** v", "f32[B]"),
        ("2.0 ** v", "f32[B]"),
        ("s ** 0.5", "f32"),
        ("jv ** 2", "i32[B]"),
        ("jv ** 2.0", "f32[B]"),
        ("jv ** 0.5", "f32[B]"),
        ("v ** jv", "f32[B]"),
        ("pow(v, 3)", "f32[B]"),
        ("pow(hv, v)", "f32[B]"),
        ("2 ** 10", "i32 = 1024"),
    ],
)
def test_powers_of_tiles_and_scalars(expr, dtype):
    assert type_of(expr) == dtype


def test_a_power_is_one_binary_op_with_the_exponent_as_its_second_operand():
    (op,) = [op for op in ops("v ** 3", "binary") if op.attrs["op"] == "**"]
    assert op.operands[1].op.kind == "const" and op.operands[1].op.attrs["value"] == 3
    assert [op for op in ops("pow(v, 3)", "binary") if op.attrs["op"] == "**"]


def test_an_integer_to_a_negative_power_is_refused_as_in_pytorch():
    found = diagnostic("jv ** -1")
    assert found.code == "AR218"
    assert "integers to negative powers are not allowed" in found.message
    assert "x.to(f32) ** -1" in found.message


def test_an_integer_to_a_tile_of_powers_needs_a_float_base():
    found = diagnostic("jv ** jv")
    assert found.code == "AR204"
    assert "x.to(f32) ** y" in found.message


def test_a_power_of_a_mask_is_an_error():
    assert diagnostic("m ** 2").code == "AR204"


def test_no_message_suggests_exp2_of_log2_which_is_nan_for_negative_bases():
    for expr in ("jv ** jv", "jv ** -1", "m ** 2"):
        assert "log2" not in diagnostic(expr).message


def test_pow_takes_two_arguments():
    assert diagnostic("pow(v)").code == "AR207"


def test_an_integer_power_past_64_bits_is_refused():
    found = diagnostic("jv ** 65")
    assert found.code == "AR218" and "overflows 64 bits" in found.message
    assert type_of("jv ** 64") == "i32[B]"
