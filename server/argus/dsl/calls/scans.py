"""The type rule of the scans along one axis: cumsum, cumprod, cummax, cummin (values only; torch.cummax's
indices are not computed), each with `reverse=False`.

The result has the operand's shape. Its dtype is the operand's, except that cumsum and cumprod of an integer
tile narrower than 32 bits (bool, i8, i16, u8) give i32, as Triton's tl.cumsum and tl.cumprod widen them (to
int32 for signed, uint32 for bool and u8, which Argus has not: the lowering asks for int32). A bool tile is
taken by cumsum only (counting the true lanes: the positions of kept elements); convert it for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import axis_arg, bind_args, constant_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.ops import SCANS
from argus.dsl.scope import ERROR, V
from argus.dsl.types import BOOL, I32, ErrorT, TileT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer

WIDENED = ("cumsum", "cumprod")  # narrow integers are scanned in i32


@type_rule(*SCANS)
def call_scan(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "axis", "reverse"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if not isinstance(x.type, TileT):
        return an.error("AR216", args["x"].span, f"{name} scans a tile along an axis, not {x.type}")
    dtype = x.type.dtype
    if dtype == BOOL and name != "cumsum":
        return an.error("AR204", args["x"].span, f"{name} scans numbers, not a bool tile; convert it: x.to(i32)")
    axis = axis_arg(an, args["axis"], len(x.type.shape))
    if axis is None:
        return ERROR
    reverse = False
    if "reverse" in args:
        flag = constant_arg(an, args["reverse"], "reverse", (bool, int))
        if flag is None:
            return ERROR
        reverse = bool(flag)
    if name in WIDENED and dtype.is_integer and dtype.bits < 32:
        dtype = I32
    result_type = TileT(dtype, x.type.shape)
    attrs = {"fn": name, "axis": axis, "reverse": reverse}
    return V(result_type, an.emit("scan", [x.value], result_type, e.span, **attrs), span=e.span)
