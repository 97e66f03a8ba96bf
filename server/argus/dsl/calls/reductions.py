"""The type rule of the reductions along an axis: sum, max, min, argmax, argmin."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import axis_arg, bind_args, constant_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.ops import REDUCTIONS
from argus.dsl.scope import ERROR, V
from argus.dsl.types import I32, Dim, ErrorT, ScalarT, TileT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


@type_rule(*REDUCTIONS)
def call_reduce(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "axis", "keep_dims"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if not isinstance(x.type, TileT):
        hint = f"; for two values use {'maximum' if name == 'max' else 'minimum'}" if name in ("max", "min") else ""
        return an.error("AR216", args["x"].span, f"{name} reduces a tile, not {x.type}{hint}")
    axis = axis_arg(an, args["axis"], len(x.type.shape))
    if axis is None:
        return ERROR
    keep = False
    if "keep_dims" in args:
        keep = constant_arg(an, args["keep_dims"], "keep_dims", (bool, int))
        if keep is None:
            return ERROR
        keep = bool(keep)
    shape = list(x.type.shape)
    if keep:
        shape[axis] = Dim(1)
    else:
        shape.pop(axis)
    dtype = I32 if name.startswith("arg") else x.type.dtype
    if name == "sum" and dtype.is_integer and dtype.bits < 32:
        dtype = I32  # as Triton's tl.sum widens narrow integers
    result_type = TileT(dtype, tuple(shape)) if shape else ScalarT(dtype)
    attrs = {"fn": name, "axis": axis, "keep_dims": keep}
    return V(result_type, an.emit("reduce", [x.value], result_type, e.span, **attrs), span=e.span)
