"""Broadcasting and dtype rules for tiles, shared by every operation."""

from __future__ import annotations

from argus.dsl.types import F32, Dim, DType, Shape, promote


def broadcast(a: Shape, b: Shape) -> Shape | None:
    """numpy broadcasting of two constant shapes; None when they do not fit."""
    if len(a) < len(b):
        a, b = b, a
    b = (Dim(1),) * (len(a) - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x.value == y.value:
            out.append(x if x.label or not y.label else y)
        elif y.value == 1:
            out.append(x)
        elif x.value == 1:
            out.append(y)
        else:
            return None
    return tuple(out)


def fits(value: Shape, target: Shape) -> bool:
    """Whether a value of one shape broadcasts to exactly the target shape."""
    result = broadcast(value, target)
    return result is not None and tuple(d.value for d in result) == tuple(d.value for d in target)


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def result_dtype(a: DType, a_weak: bool, b: DType, b_weak: bool) -> DType:
    """Binary-operation dtype with weakly typed literals: `x_f16 * 2.0` stays f16, `i_tile * 0.5` is f32."""
    if a_weak and not b_weak:
        a, b = b, a
        a_weak, b_weak = b_weak, a_weak
    if b_weak and not a_weak:
        if b.is_float and not a.is_float:
            return F32
        if a.kind == "bool" and b.kind != "bool":
            return b
        return a
    return promote(a, b)


def true_division_dtype(dtype: DType) -> DType:
    return dtype if dtype.is_float else F32
