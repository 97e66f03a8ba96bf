"""Which reductions a value's lanes reach, each lane as it is (for AR313 and the infinite rows of AR317)."""

from __future__ import annotations

from argus.dsl import ir
from argus.verify.shared import Uses

SAME_LANES = ("binary", "unary", "math", "cast")


def reductions_reached(uses: Uses, value: ir.Value, through_where: bool = False) -> set[int]:
    """The axes (in `value`'s coordinates) along which a `sum`, `max` or `min` takes in `value`'s lanes, each
    lane as it is: followed forward through elementwise ops that keep the shape and through what a loop
    carries to its next iteration and its result; a `where` (which may mask the lane again), a store (its own
    mask), a `dot` and any op that moves lanes end the walk, claiming nothing. An online log-sum-exp's `s`,
    NaN in a padding lane, reaches `sum(s * exp(m - top), axis=0)` after the loop. With `through_where`, a
    `where` is followed too (its lanes stay in place: where the lane is padding is what the caller asks)."""
    users, carried = uses
    axes: set[int] = set()
    seen: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        stack += carried.get(v.id, [])
        for op in users.get(v.id, []):
            if op.kind == "reduce" and op.attrs.get("fn") in ("sum", "max", "min"):
                axes |= set(ir.reduced_axes(op))
            elif (op.kind in SAME_LANES or (through_where and op.kind == "where")) and op.result.type == v.type:
                stack.append(op.result)
            elif op.kind == "for" and v in op.operands[3:]:
                stack.append(op.regions[0].args[1 + op.operands[3:].index(v)])
    return axes
