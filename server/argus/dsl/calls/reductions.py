"""The type rule of the reductions along an axis: sum, max, min, argmax, argmin; sum, max and min also along
several axes at once (`sum(x, axis=(0, 1))`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import axis_arg, bind_args, constant_arg, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.ops import REDUCTIONS
from argus.dsl.scope import ERROR, V
from argus.dsl.spans import Span
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
    axis = reduced_axes(an, args["axis"], len(x.type.shape), name)
    if axis is None:
        return ERROR
    keep = False
    if "keep_dims" in args:
        keep = constant_arg(an, args["keep_dims"], "keep_dims", (bool, int))
        if keep is None:
            return ERROR
        keep = bool(keep)
    axes = axis if isinstance(axis, tuple) else (axis,)
    shape = [Dim(1) if k in axes else d for k, d in enumerate(x.type.shape) if keep or k not in axes]
    dtype = I32 if name.startswith("arg") else x.type.dtype
    if name == "sum" and dtype.is_integer and dtype.bits < 32:
        dtype = I32  # as Triton's tl.sum widens narrow integers
    result_type = TileT(dtype, tuple(shape)) if shape else ScalarT(dtype)
    attrs = {"fn": name, "axis": axis, "keep_dims": keep}
    return V(result_type, an.emit("reduce", [x.value], result_type, e.span, **attrs), span=e.span)


def reduced_axes(an: KernelAnalyzer, expr: ast.Expr, rank: int, name: str) -> int | tuple[int, ...] | None:
    """One axis (an int), or a tuple of two or more distinct axes in increasing order (sum, max, min): the IR's
    `axis` attribute. A tuple of one is that axis."""
    if not isinstance(expr, ast.Tuple):
        return axis_arg(an, expr, rank)
    if name not in ("sum", "max", "min"):
        return several_refused(an, expr.span, name)
    axes = []
    for element in expr.elts:
        axis = axis_arg(an, element, rank)
        if axis is None:
            return None
        if axis in axes:
            an.error("AR218", element.span, f"axis {axis} is named twice in the axes of {name}")
            return None
        axes.append(axis)
    return axes[0] if len(axes) == 1 else tuple(sorted(axes))


def several_refused(an: KernelAnalyzer, span: Span, name: str) -> None:
    an.error(
        "AR218",
        span,
        f"{name} takes one axis (an index along one axis, as torch.{name}); for the index into a flattened tile "
        f"reshape it first: {name}(reshape(x, (BM * BN,)), 0)",
    )
    return None
