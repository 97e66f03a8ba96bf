"""What a value is computed from, in the kernel IR: the walk the loop-carried checks share (an accumulation
that reaches the next iteration, AR313; a sum carried across a persistent walk, AR318; a sum beside a running
max, AR321)."""

from __future__ import annotations

from argus.dsl import ir


def upstream(*values: ir.Value, stop: int | None = None) -> dict[int, ir.Value]:
    """The values `values` are computed from (themselves included), by id, through every op and the yields of
    its nested regions. A block argument ends the walk; `stop` (a value's id) is not passed either."""
    found: dict[int, ir.Value] = {}
    stack = list(values)
    while stack:
        v = stack.pop()
        if v.id in found or v.id == stop:
            continue
        found[v.id] = v
        if v.op is not None:
            stack.extend(v.op.operands)
            for region in v.op.regions:
                stack.extend(region.yields)
    return found
