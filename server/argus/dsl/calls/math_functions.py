"""Type rules of the elementwise math that is not float-only: the rounding functions (floor, ceil, trunc,
round: float math that is the identity on integers, as in PyTorch) and sign (any number). The float-only
functions (log1p, expm1, ...) are `transcendental` and typed by argus.dsl.calls.elementwise.call_math."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.calls.arguments import bind_args, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.ops import ROUNDING
from argus.dsl.scope import ERROR, V
from argus.dsl.types import BOOL, ErrorT, ScalarT, TileT

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


def plain(x: V) -> ScalarT | TileT:
    """x's type without its constant value: the type of an elementwise function of it."""
    return TileT(x.type.dtype, x.type.shape) if isinstance(x.type, TileT) else ScalarT(x.type.dtype)
