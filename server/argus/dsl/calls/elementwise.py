"""Type rules of elementwise math and conversions: x.to(dtype) and cast, the math built-ins (exp, abs, maximum,
...), where, and cdiv of integer scalars."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import bind_args, dtype_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.evaluate import cdiv
from argus.dsl.ops import FLOAT_MATH
from argus.dsl.scope import ERROR, V
from argus.dsl.shapes import result_dtype
from argus.dsl.spans import Span
from argus.dsl.types import BOOL, F32, I32, DType, ErrorT, ScalarT, TileT, is_weak

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def cast(an: KernelAnalyzer, x: V, dtype: DType, span: Span) -> V:
    result_type = TileT(dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(dtype)
    if x.type.dtype == dtype:
        return V(result_type if isinstance(x.type, TileT) else ScalarT(dtype, x.const), x.value, span=span)
    return V(result_type, an.emit("cast", [x.value], result_type, span, dtype=dtype), span=span)


@type_rule("to")
def call_to(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    func = e.func
    x = value_arg(an, func.value)
    args = bind_args(an, e, ["dtype"], 1)
    if args is None or isinstance(x.type, ErrorT):
        return ERROR
    dtype = dtype_arg(an, args["dtype"])
    return ERROR if dtype is None else cast(an, x, dtype, e.span)


@type_rule("cast")
def call_cast(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "dtype"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    dtype = dtype_arg(an, args["dtype"])
    if isinstance(x.type, ErrorT) or dtype is None:
        return ERROR
    return cast(an, x, dtype, e.span)


@type_rule(*FLOAT_MATH, "abs")
def call_math(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x"], 1)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if name in FLOAT_MATH and not x.type.dtype.is_float:
        if is_weak(x.type):
            x = cast(an, x, F32, e.span)
        else:
            return an.error("AR204", e.span, f"{name} needs floating point, not {x.type.dtype}; convert with .to(f32)")
    result_type = TileT(x.type.dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(x.type.dtype)
    return V(result_type, an.emit("math", [x.value], result_type, e.span, fn=name), span=e.span)


@type_rule("maximum", "minimum")
def call_maximum(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["a", "b"], 2)
    if args is None:
        return ERROR
    a, b = value_arg(an, args["a"]), value_arg(an, args["b"])
    if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
        return ERROR
    shape = an.broadcast_or_error(a, b, e.span, f"arguments of {name}")
    if shape is None:
        return ERROR
    dtype = result_dtype(a.type.dtype, is_weak(a.type), b.type.dtype, is_weak(b.type))
    result_type = an.make_type(dtype, shape)
    return V(result_type, an.emit("math", [a.value, b.value], result_type, e.span, fn=name), span=e.span)


@type_rule("where")
def call_where(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["cond", "a", "b"], 3)
    if args is None:
        return ERROR
    c, a, b = (value_arg(an, args[k]) for k in ("cond", "a", "b"))
    if any(isinstance(v.type, ErrorT) for v in (c, a, b)):
        return ERROR
    if c.type.dtype != BOOL:
        return an.error("AR204", args["cond"].span, f"where's condition is boolean, not {c.type.dtype}")
    shape = an.broadcast_or_error(a, b, e.span, "the choices of where")
    if shape is None:
        return ERROR
    shape = an.broadcast_or_error(c, V(an.make_type(BOOL, shape)), e.span, "where's condition and choices")
    if shape is None:
        return ERROR
    dtype = result_dtype(a.type.dtype, is_weak(a.type), b.type.dtype, is_weak(b.type))
    result_type = an.make_type(dtype, shape)
    return V(result_type, an.emit("where", [c.value, a.value, b.value], result_type, e.span), span=e.span)


@type_rule("cdiv")
def call_cdiv(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["a", "b"], 2)
    if args is None:
        return ERROR
    a, b = value_arg(an, args["a"]), value_arg(an, args["b"])
    if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
        return ERROR
    for v, part in ((a, args["a"]), (b, args["b"])):
        if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer:
            return an.error("AR204", part.span, f"cdiv takes integer scalars, not {v.type}")
    if isinstance(a.const, int) and isinstance(b.const, int) and b.const:
        value = cdiv(a.const, b.const)
        source = None
        if an.constant_expr(a) or an.constant_expr(b):
            source = f"cdiv({an.constant_expr(a) or a.const}, {an.constant_expr(b) or b.const})"
        return an.constant(value, ScalarT(I32, value, True), e.span, source)
    result_type = ScalarT(result_dtype(a.type.dtype, a.type.weak, b.type.dtype, b.type.weak))
    return V(result_type, an.emit("cdiv", [a.value, b.value], result_type, e.span), span=e.span)
