"""AR324: a carried result is replaced instead of accumulated (issue 17, loop-carried).

A scan longer than a tile (a cumsum along a long row) runs block by block: each block's scan is offset by a
carry that holds the total of every block before it, `store(y[...], cumsum(v, axis=0) + carry)`, and the
carry then takes in this block's total, `carry = carry + sum(v, axis=0)`. Writing `carry = sum(v, axis=0)`
instead keeps only the previous block's total: the second block is right, and from the third on each prefix
misses the blocks before the previous one. The same holds for `cumprod` (a product carry) and `cummax` and
`cummin` (a running extremum).

The check reads the loop body: a carried float that offsets a scan of this iteration's data (`cumsum(v) +
carry`, through broadcasts and casts) and whose next value is computed from that data but not from its own
previous value is an error. A carry computed from other data (a decoupled look-back that loads the total of
the blocks before from a global array) is not judged, nor is one that takes in its old value anywhere
(`where(reset, 0.0, carry + s)`). It is decided from the dataflow, not by z3; the witness is the loop's
third iteration, the first whose prefixes miss a block.

The second form (`replaced_accumulator_obligations`): a carried float the body never reads and the kernel uses
after the loop, replaced by a `dot` or a reduction of this iteration's loads (`acc = dot(a, b)` for
`dot(a, b, acc)`): only the last iteration's block survives; the witness is the second iteration.
"""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.verify.dataflow import PASS_THROUGH, assigned_span, carried_name, passed_through, upstream
from argus.verify.model import Context, Loop, Obligation
from argus.verify.values import coord_list, coord_ranges, is_float, shape_of

# each scan's combining op, and how its carry takes in a block (what the hint suggests)
COMBINES = {
    "cumsum": (("binary", "+"), "{c} + sum(v, axis=...)"),
    "cumprod": (("binary", "*"), "{c} * (the block's product)"),
    "cummax": (("math", "maximum"), "maximum({c}, max(v, axis=...))"),
    "cummin": (("math", "minimum"), "minimum({c}, min(v, axis=...))"),
}


def replaced_carry_obligations(ev, op: ir.Op, loop: Loop, context: Context) -> None:
    """AR324 for the `for` op `op` (its loop `loop`, its body's context `context`)."""
    body = op.regions[0]
    for k, (arg, value) in enumerate(zip(body.args[1:], body.yields, strict=True)):
        if not is_float(arg.type):
            continue
        scan = offset_scan(arg, ev.users)
        if scan is None:
            continue
        sources = upstream(value)
        data = scan.operands[0]
        if arg.id in sources or data.id not in sources:
            continue  # accumulated (or guarded), or taken from elsewhere (a look-back's loaded total)
        name = carried_name(op, k, "the carry")
        ev.emit(scan_obligation(ev, op, loop, context, scan, name, assigned_span(op, k), value))


def replaced_accumulator_obligations(ev, op: ir.Op, loop: Loop, context: Context) -> None:
    """AR324's second form: a carried float the body never reads and the kernel uses after the loop, whose next
    value is a `dot` or a reduction of this iteration's data (`acc = dot(a, b)` where `dot(a, b, acc)` was
    meant): every iteration but the last computes a block that nothing takes in."""
    body = op.regions[0]
    for k, (arg, value) in enumerate(zip(body.args[1:], body.yields, strict=True)):
        if not is_float(arg.type) or ev.users.get(arg.id) or not ev.users.get(op.results[k].id):
            continue  # read in the body (a pipelined value), or not used after the loop (a name reused)
        made = passed_through(value).op
        if (
            made is None
            or made.kind not in ("dot", "reduce")
            or not any(v.op is not None and v.op.kind == "load" for v in upstream(value).values())
        ):
            continue
        name = carried_name(op, k, "the accumulator")
        ev.emit(replaced_obligation(ev, op, loop, context, made, name, assigned_span(op, k), value))


def offset_scan(arg: ir.Value, users: dict[int, list[ir.Op]]) -> ir.Op | None:
    """The scan whose result `arg` offsets (`cumsum(v) + arg`, with the scan's own combining op), if any."""
    stack, seen = [arg], set()
    while stack:
        v = stack.pop()
        for use in users.get(v.id, []):
            if id(use) in seen or not use.results:
                continue
            seen.add(id(use))
            if use.kind in PASS_THROUGH:
                stack.append(use.results[0])
                continue
            combining = (use.kind, use.attrs.get("op") or use.attrs.get("fn"))
            for other in use.operands:
                scan = scan_of(other)
                if scan is not None and scan.attrs["fn"] in COMBINES and COMBINES[scan.attrs["fn"]][0] == combining:
                    return scan
    return None


def scan_of(value: ir.Value) -> ir.Op | None:
    """The scan `value` is, through casts and broadcasts."""
    made = passed_through(value).op
    return made if made is not None and made.kind == "scan" else None


def scan_obligation(ev, op: ir.Op, loop: Loop, context: Context, scan: ir.Op, name: str, span, value: ir.Value):
    fn = scan.attrs["fn"]
    return obligation(
        ev,
        op,
        loop,
        context,
        value,
        span,
        name,
        2,  # the third iteration, the first whose prefixes miss a block (the second misses none)
        f"`{name}` offsets this block's `{fn}` by what the blocks before it hold, but its next value is "
        f"computed from this block alone: from the third block on, the prefixes miss every block before the "
        f"previous one",
        "the first iteration whose prefixes miss a block",
        (scan.span, f"the `{fn}` that `{name}` offsets"),
        f"take this block in on top of the carry: `{name} = {COMBINES[fn][1].format(c=name)}`",
    )


def replaced_obligation(
    ev, op: ir.Op, loop: Loop, context: Context, made: ir.Op, name: str, span, value: ir.Value
) -> Obligation:
    what = "dot" if made.kind == "dot" else f"`{made.attrs.get('fn', 'reduction')}`"
    into = f"`dot(a, b, {name})`" if made.kind == "dot" else f"`{name} + ...`"
    return obligation(
        ev,
        op,
        loop,
        context,
        value,
        span,
        name,
        1,  # the second iteration: the first whose block replaces the one before it
        f"`{name}` is carried by the `{loop.name}` loop but each iteration replaces it with this block's "
        f"{what} and never reads it: only the last iteration's block reaches what follows the loop",
        "the first iteration that drops the block before it",
        (made.span, f"the {what} whose result replaces `{name}`"),
        f"accumulate into it: {into}",
    )


def obligation(
    ev,
    op: ir.Op,
    loop: Loop,
    context: Context,
    value: ir.Value,
    span,
    name: str,
    nth: int,
    message: str,
    iteration: str,
    related: tuple,
    hint: str,
) -> Obligation:
    """AR324 at `span`, witnessed by the loop's iteration `nth` (0: the first) where it runs."""
    shape = shape_of(value.type)
    at = [loop.iv == loop.start + nth * loop.step]
    if loop.stop is not None and z3.is_int_value(loop.step) and loop.step.as_long() > 0:
        at.append(loop.iv < loop.stop)
    return Obligation(
        "replaced_carry",
        "AR324",
        span,
        message,
        z3.BoolVal(False),
        [*context.assumptions, *at, *coord_ranges(shape)],
        context.loops,
        ev.program,
        coord_list(shape),
        [(f"{iteration}: {loop.name}", loop.iv)],
        [related, (op.span, f"the loop that carries `{name}`")],
        hint,
    )
