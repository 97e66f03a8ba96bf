"""Type rules of the built-ins that make values from nothing: program ids and counts, arange, zeros and full;
and of range and static_range, which only a `for` loop may call."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import (
    bind_args,
    constant_arg,
    constant_arg_source,
    dtype_arg,
    shape_arg_sources,
    value_arg,
)
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, V
from argus.dsl.shapes import is_power_of_two
from argus.dsl.types import F32, I32, Dim, ErrorT, ScalarT, TileT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def program_axis(an: KernelAnalyzer, e: ast.Call) -> int | None:
    args = bind_args(an, e, ["axis"], 1)
    if args is None:
        return None
    axis = constant_arg(an, args["axis"], "the grid axis")
    if axis is None:
        return None
    if axis not in (0, 1, 2):
        an.error("AR218", args["axis"].span, f"grid axes are 0, 1 and 2, not {axis}")
        return None
    if an.grid_rank is not None and axis >= an.grid_rank:
        axes = "1 axis" if an.grid_rank == 1 else f"{an.grid_rank} axes"
        an.error("AR402", e.span, f"axis {axis} is outside the grid, which has {axes}")
        return None
    return axis


@type_rule("program_id")
def call_program_id(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    axis = program_axis(an, e)
    if axis is None:
        return ERROR
    return V(ScalarT(I32), an.emit("program_id", [], ScalarT(I32), e.span, axis=axis), span=e.span)


@type_rule("num_programs")
def call_num_programs(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    axis = program_axis(an, e)
    if axis is None:
        return ERROR
    return V(ScalarT(I32), an.emit("num_programs", [], ScalarT(I32), e.span, axis=axis), span=e.span)


@type_rule("arange")
def call_arange(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["n"], 1)
    if args is None:
        return ERROR
    n, source = constant_arg_source(an, args["n"], "arange's length")
    if n is None:
        return ERROR
    if not is_power_of_two(n):
        return an.error("AR205", args["n"].span, f"arange's length must be a power of two, not {n}")
    label = args["n"].id if isinstance(args["n"], ast.Name) else ""
    result_type = TileT(I32, (Dim(n, label),))
    return V(result_type, an.emit("arange", [], result_type, e.span, n=n, n_expr=source), span=e.span)


@type_rule("zeros")
def call_zeros(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["shape", "dtype"], 1)
    if args is None:
        return ERROR
    shape, sources = shape_arg_sources(an, args["shape"])
    dtype = dtype_arg(an, args["dtype"]) if "dtype" in args else F32
    if shape is None or dtype is None:
        return ERROR
    result_type = TileT(dtype, shape)
    attrs = {"shape": shape, "dtype": dtype, "shape_exprs": sources}
    return V(result_type, an.emit("zeros", [], result_type, e.span, **attrs), span=e.span)


@type_rule("full")
def call_full(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["shape", "value", "dtype"], 3)
    if args is None:
        return ERROR
    shape, sources = shape_arg_sources(an, args["shape"])
    value = value_arg(an, args["value"])
    dtype = dtype_arg(an, args["dtype"])
    if shape is None or dtype is None or isinstance(value.type, ErrorT):
        return ERROR
    if isinstance(value.type, TileT):
        return an.error("AR216", args["value"].span, "full() takes a scalar fill value")
    result_type = TileT(dtype, shape)
    op_value = an.emit("full", [value.value], result_type, e.span, shape=shape, dtype=dtype, shape_exprs=sources)
    return V(result_type, op_value, span=e.span)


@type_rule("range", "static_range")
def call_loop_iterable(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    """Typed by the `for` statement (KernelAnalyzer.for_loop); anywhere else it is an error."""
    return an.error("AR216", e.span, f"{name}(...) is only allowed as the iterable of a `for` loop")
