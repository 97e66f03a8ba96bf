"""Type rules of the built-ins that rearrange a tile's elements: reshape, broadcast_to, trans."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import bind_args, shape_arg_sources, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, V
from argus.dsl.shapes import fits
from argus.dsl.types import ErrorT, TileT, shape_of, shape_text

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


@type_rule("reshape")
def call_reshape(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "shape"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    shape, sources = shape_arg_sources(an, args["shape"])
    if isinstance(x.type, ErrorT) or shape is None:
        return ERROR
    before = math.prod(d.value for d in shape_of(x.type))
    after = math.prod(d.value for d in shape)
    if before != after:
        return an.error(
            "AR214",
            e.span,
            f"reshape from {shape_text(shape_of(x.type))} ({before} elements) to "
            f"{shape_text(shape)} ({after} elements)",
        )
    result_type = TileT(x.type.dtype, shape)
    op_value = an.emit("reshape", [x.value], result_type, e.span, shape=shape, shape_exprs=sources)
    return V(result_type, op_value, span=e.span)


@type_rule("broadcast_to")
def call_broadcast_to(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x", "shape"], 2)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    shape, sources = shape_arg_sources(an, args["shape"])
    if isinstance(x.type, ErrorT) or shape is None:
        return ERROR
    if not fits(shape_of(x.type), shape):
        return an.error("AR201", e.span, f"{shape_text(shape_of(x.type))} does not broadcast to {shape_text(shape)}")
    result_type = TileT(x.type.dtype, shape)
    op_value = an.emit("broadcast_to", [x.value], result_type, e.span, shape=shape, shape_exprs=sources)
    return V(result_type, op_value, span=e.span)


@type_rule("trans")
def call_trans(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    args = bind_args(an, e, ["x"], 1)
    if args is None:
        return ERROR
    x = value_arg(an, args["x"])
    if isinstance(x.type, ErrorT):
        return ERROR
    if not isinstance(x.type, TileT) or len(x.type.shape) != 2:
        return an.error("AR213", e.span, f"trans takes a 2-D tile, not {x.type}")
    result_type = TileT(x.type.dtype, (x.type.shape[1], x.type.shape[0]))
    return V(result_type, an.emit("trans", [x.value], result_type, e.span), span=e.span)
