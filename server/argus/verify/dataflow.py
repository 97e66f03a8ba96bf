"""What a value is computed from and what takes it in, in the kernel IR: the walks the loop-carried checks share
(an accumulation that reaches the next iteration, AR313; a sum carried across a persistent walk, AR318; a sum
beside a running max, AR321; partial sums stored along their walked axis, AR323; a walked axis read whole,
AR316)."""

from __future__ import annotations

from argus.dsl import ir
from argus.dsl.spans import Span


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


ACCUMULATE = {("binary", "+"), ("math", "maximum"), ("math", "minimum")}
PASS_THROUGH = ("cast", "expand_dims", "broadcast_to", "reshape")  # ops that keep a value what it is


def passed_through(value: ir.Value) -> ir.Value:
    """The value `value` is, under its casts and shape ops (`sum(x, axis=1)[:, None]` is the sum)."""
    while value.op is not None and value.op.kind in PASS_THROUGH and value.op.operands:
        value = value.op.operands[0]
    return value


def carried_name(loop: ir.Op, k: int, default: str) -> str:
    """The name of the `for` op's carried value `k`, as the kernel spells it."""
    names = loop.attrs.get("carried") or []
    return names[k] if k < len(names) else default


def assigned_span(loop: ir.Op, k: int) -> Span:
    """The line where the `for` op's body last assigns its carried value `k` (the loop's own, unknown)."""
    spans = loop.regions[0].yield_spans
    return spans[k] if k < len(spans) else loop.span


def accumulates(op: ir.Op) -> bool:
    """`acc + x`, `maximum(acc, x)` or `minimum(acc, x)`: the updates of a carried accumulator."""
    return (op.kind, op.attrs.get("op") or op.attrs.get("fn")) in ACCUMULATE


def users_of(block: ir.Block) -> dict[int, list[ir.Op]]:
    """The ops that take each value in (by the value's id), over a block and its nested regions."""
    users: dict[int, list[ir.Op]] = {}
    for op in ir.walk_ops(block):
        for operand in op.operands:
            users.setdefault(operand.id, []).append(op)
    return users


def value_sources(*values: ir.Value) -> set[int]:
    """Ids of the values whose numbers flow into `values` (themselves included): `upstream` without the edges
    that carry only a decision, a comparison's operands, a `where`'s condition, a load's indices and mask. A
    prefix sum compared against a threshold to choose lanes (top-p) decides what a carried sum takes in; it is
    not summed into it."""
    found: set[int] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if v.id in found:
            continue
        found.add(v.id)
        op = v.op
        if op is None or op.kind == "compare":
            continue
        if op.kind == "where":
            stack.extend(op.operands[1:])
        elif op.kind == "load":
            other = ir.memory_access(op).other
            stack.extend([other] if other is not None else [])
        else:
            stack.extend(op.operands)
        for region in op.regions:
            stack.extend(region.yields)
    return found
