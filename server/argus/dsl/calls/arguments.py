"""What the type rules share: binding a call's arguments to the built-in's parameters, and checking the kinds of
argument many built-ins take (compile-time constants, dtypes, tile shapes, axes, values)."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from argus.dsl import ast
from argus.dsl.ops import BUILTINS, METHODS
from argus.dsl.scope import ERROR, V
from argus.dsl.shapes import is_power_of_two
from argus.dsl.types import Dim, DType, DTypeT, ErrorT, Shape, StrT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer

Number = int | float  # a compile-time argument (bool is an int)


def bind_args(an: KernelAnalyzer, call: ast.Call, params: list[str], required: int) -> dict[str, ast.Expr] | None:
    """The call's arguments by parameter name; None (after an AR207 error) when they do not fit `params`, of
    which the first `required` must be given."""
    name = call.func.id if isinstance(call.func, ast.Name) else call.func.attr
    if len(call.args) > len(params):
        an.error("AR207", call.span, f"{name} takes at most {len(params)} arguments, {len(call.args)} given")
        return None
    bound = dict(zip(params, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.name not in params:
            close = difflib.get_close_matches(keyword.name, params, n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            an.error("AR207", keyword.name_span, f"{name} has no argument `{keyword.name}`{hint}")
            return None
        if keyword.name in bound:
            an.error("AR207", keyword.name_span, f"argument `{keyword.name}` given twice")
            return None
        bound[keyword.name] = keyword.value
    missing = [p for p in params[:required] if p not in bound]
    if missing:
        an.error("AR207", call.span, f"{name} is missing `{missing[0]}`: {signature(name)}")
        return None
    return bound


def signature(name: str) -> str:
    entry = BUILTINS.get(name) or METHODS.get(name)
    return entry.signature if entry else name


def constant_arg(an: KernelAnalyzer, expr: ast.Expr, what: str, kinds: tuple[type, ...] = (int,)) -> Number | None:
    """A compile-time argument; its folding leaves no ops behind."""
    return constant_arg_source(an, expr, what, kinds)[0]


def constant_arg_source(
    an: KernelAnalyzer, expr: ast.Expr, what: str, kinds: tuple[type, ...] = (int,)
) -> tuple[Number | None, str | None]:
    """A compile-time argument and the tile-constant expression it came from (None for a plain literal)."""
    mark = len(an.block.ops)
    v = an.expr(expr)
    if isinstance(v.type, ErrorT):
        return None, None
    if isinstance(v.type, StrT):
        kind = "integer" if kinds == (int,) else "number"
        an.error("AR204", expr.span, f"{what} must be a compile-time {kind}, not {an.describe(v)}")
        return None, None
    source = an.constant_expr(v)
    const = v.const
    if const is None or (isinstance(const, bool) and bool not in kinds) or not isinstance(const, kinds):
        an.error("AR206", expr.span, f"{what} must be a compile-time {'integer' if kinds == (int,) else 'number'}")
        return None, None
    del an.block.ops[mark:]
    return const, source


def dtype_arg(an: KernelAnalyzer, expr: ast.Expr) -> DType | None:
    v = an.expr(expr)
    if isinstance(v.type, DTypeT):
        return v.type.dtype
    if not isinstance(v.type, ErrorT):
        an.error("AR204", expr.span, f"expected a dtype such as f16 or f32, found {an.describe(v)}")
    return None


def shape_arg_sources(an: KernelAnalyzer, expr: ast.Expr) -> tuple[Shape | None, list[str | None]]:
    """A tile shape and, per dimension, the tile-constant expression it came from (for code generation)."""
    elements = expr.elts if isinstance(expr, ast.Tuple | ast.List) else [expr]
    dims, sources = [], []
    for element in elements:
        size, source = constant_arg_source(an, element, "a tile dimension")
        if size is None:
            return None, []
        if not is_power_of_two(size):
            an.error("AR205", element.span, f"tile dimensions are powers of two, not {size}")
            return None, []
        dims.append(Dim(size, element.id if isinstance(element, ast.Name) else ""))
        sources.append(source)
    return tuple(dims), sources


def axis_arg(an: KernelAnalyzer, expr: ast.Expr, rank: int) -> int | None:
    axis = constant_arg(an, expr, "the axis")
    if axis is None:
        return None
    if not -rank <= axis < rank:
        an.error("AR213", expr.span, f"axis {axis} is out of range for a tile with {rank} axes")
        return None
    return axis % rank


def value_arg(an: KernelAnalyzer, expr: ast.Expr) -> V:
    v = an.expr(expr)
    return v if an.require_value(v, expr.span) else ERROR
