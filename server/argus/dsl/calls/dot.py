"""The type rule of dot: operand shapes and dtypes, the accumulator, input_precision and out_dtype."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.builtins import INPUT_PRECISIONS
from argus.dsl.calls.arguments import bind_args, dtype_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, V
from argus.dsl.types import BOOL, F32, I32, ErrorT, StrT, TileT, shape_text

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


@type_rule("dot")
def call_dot(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["a", "b", "acc", "input_precision", "out_dtype"], 2)
    if args is None:
        return ERROR
    a, b = value_arg(an, args["a"]), value_arg(an, args["b"])
    if isinstance(a.type, ErrorT) or isinstance(b.type, ErrorT):
        return ERROR
    for v, part in ((a, args["a"]), (b, args["b"])):
        if not isinstance(v.type, TileT) or len(v.type.shape) not in (2, 3):
            return an.error("AR202", part.span, f"dot takes 2-D (or batched 3-D) tiles, not {v.type}")
    sa, sb = a.type.shape, b.type.shape
    if len(sa) != len(sb):
        return an.error("AR202", e.span, f"dot of {shape_text(sa)} and {shape_text(sb)}: ranks differ")
    if sa[-1].value != sb[-2].value:
        return an.error(
            "AR202",
            e.span,
            f"dot of {shape_text(sa)} and {shape_text(sb)}: a has {sa[-1]} columns but b has {sb[-2]} rows",
            a=[d.value for d in sa],
            b=[d.value for d in sb],
        )
    if len(sa) == 3 and sa[0].value != sb[0].value:
        return an.error("AR202", e.span, f"dot of {shape_text(sa)} and {shape_text(sb)}: batch sizes differ")
    for dim, what in ((sa[-2], "M"), (sb[-1], "N"), (sa[-1], "K")):
        if dim.value < 16:
            shown = f"{dim.label} = {dim.value}" if dim.label else str(dim.value)
            return an.error("AR215", e.span, f"dot needs {what} of at least 16, not {shown}")
    if a.type.dtype != b.type.dtype:
        return an.error("AR204", e.span, f"dot operands are {a.type.dtype} and {b.type.dtype}; cast one so they match")
    if a.type.dtype == BOOL or a.type.dtype.kind == "uint" or (a.type.dtype.is_integer and a.type.dtype.bits != 8):
        return an.error("AR204", e.span, f"dot takes floating-point or i8 tiles, not {a.type.dtype}")
    shape = (*sa[:-1], sb[-1])
    out_dtype = I32 if a.type.dtype.is_integer else F32
    if "out_dtype" in args:
        out_dtype = dtype_arg(an, args["out_dtype"])
        if out_dtype is None:
            return ERROR
    operands = [a.value, b.value]
    if "acc" in args and not isinstance(args["acc"], ast.NoneLit):
        acc = value_arg(an, args["acc"])
        if isinstance(acc.type, ErrorT):
            return ERROR
        if not isinstance(acc.type, TileT) or tuple(d.value for d in acc.type.shape) != tuple(d.value for d in shape):
            return an.error(
                "AR202",
                args["acc"].span,
                f"the accumulator must be {shape_text(shape)}, not {acc.type}",
            )
        out_dtype = acc.type.dtype
        operands.append(acc.value)
    precision, constant = "ieee", None
    if "input_precision" in args:
        v = an.expr(args["input_precision"])
        if isinstance(v.type, ErrorT):
            return ERROR
        if isinstance(v.type, StrT) and v.type.constant and v.type.value not in INPUT_PRECISIONS:
            return ERROR  # a string tile constant with a bad value: reported at its declaration
        if not isinstance(v.type, StrT) or v.type.value not in INPUT_PRECISIONS:
            choices = ", ".join(f'"{p}"' for p in INPUT_PRECISIONS)
            message = f"input_precision is one of {choices}, or a string tile constant naming one"
            return an.error("AR218", args["input_precision"].span, message)
        precision, constant = v.type.value, v.type.constant
    result_type = TileT(out_dtype, shape)
    # precision_constant: the string tile constant that chose it (codegen passes the constexpr; a tune list
    # varies it), or None for a literal
    attrs = {"input_precision": precision, "precision_constant": constant, "out_dtype": out_dtype}
    return V(result_type, an.emit("dot", operands, result_type, e.span, **attrs), span=e.span)
