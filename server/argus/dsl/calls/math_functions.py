"""Type rules of the elementwise math that is not float-only: the rounding functions (floor, ceil, trunc,
round: float math that is the identity on integers, as in PyTorch), sign (any number), and powers, `x ** y`
and `pow(x, y)`, on scalars and tiles. The float-only functions (log1p, expm1, ...) are `transcendental` and
typed by argus.dsl.calls.elementwise.call_math."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import bind_args, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.ops import ROUNDING
from argus.dsl.scope import ERROR, V
from argus.dsl.spans import Span
from argus.dsl.types import BOOL, DType, ErrorT, ScalarT, Shape, TileT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


@type_rule(*ROUNDING)
def call_rounding(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x"], 1)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if x.type.dtype == BOOL:
        return an.error("AR204", e.span, f"{name} rounds numbers, not {x.type.dtype}")
    if x.type.dtype.is_integer:
        return V(x.type, x.value, span=e.span)  # already an integer: torch.floor(i) is i
    return V(plain(x), an.emit("math", [x.value], plain(x), e.span, fn=name), span=e.span)


@type_rule("sign")
def call_sign(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x"], 1)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if x.type.dtype == BOOL:
        return an.error("AR204", e.span, f"sign takes a number, not {x.type.dtype}; a mask is already 0 or 1")
    return V(plain(x), an.emit("math", [x.value], plain(x), e.span, fn=name), span=e.span)


@type_rule("pow")
def call_pow(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "y"], 2)
    if args is None:
        return ERROR
    x, y = an.expr(args["x"]), an.expr(args["y"])
    return an.binary("**", x, y, e.span)


def plain(x: V) -> ScalarT | TileT:
    """x's type without its constant value: the type of an elementwise function of it."""
    return TileT(x.type.dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(x.type.dtype)


def integer_exponent(b: V) -> int | None:
    """The exponent as an integer when it is a constant scalar of integral value (`3`, `2.0`), else None."""
    value = b.const
    if not isinstance(b.type, ScalarT) or isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    return int(value) if isinstance(value, float) and value.is_integer() else None


def power(an: KernelAnalyzer, a: V, b: V, dtype: DType, shape: Shape, span: Span) -> V:
    """`a ** b` where the operands are not both constants: one `binary` op `**` of the result's dtype and shape.
    Integers need a constant exponent that is not negative (as in PyTorch); a float result takes any."""
    if a.type.dtype == BOOL or b.type.dtype == BOOL:
        return an.error("AR204", span, f"`**` takes numbers, not {a.type.dtype} and {b.type.dtype}")
    exponent = integer_exponent(b)
    if dtype.is_integer:
        if exponent is None:
            return an.error(
                "AR204",
                span,
                "`**` of integers needs a constant exponent; for a tile of exponents convert the base: x.to(f32) ** y",
            )
        if exponent < 0:
            return an.error(
                "AR218",
                span,
                f"an integer to the power {exponent}: integers to negative powers are not allowed (as in PyTorch); "
                f"convert the base: x.to(f32) ** {exponent}",
            )
        if exponent > 64:
            return an.error(
                "AR218",
                span,
                f"an integer to the power {exponent} overflows 64 bits for every base but -1, 0 and 1; "
                f"convert the base: x.to(f32) ** {exponent}",
            )
    result_type = an.make_type(dtype, shape)
    return V(result_type, an.emit("binary", [a.value, b.value], result_type, span, op="**"), span=span)
