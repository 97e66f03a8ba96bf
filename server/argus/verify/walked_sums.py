"""AR323: a partial sum whose lanes walk the loop's axis is stored without reducing that axis (issue 17, axis).

A loop over blocks of an axis often keeps one partial sum a lane: a column mean adds `x[m0 + i, rn]` into
`acc[i, :]` for every block m0, so lane i of `acc` holds rows i, BM + i, 2 BM + i, ...; only a reduction over
that axis after the loop makes it a sum over the rows. Reducing the other axis instead (`sum(acc, axis=1)` for
`axis=0`), or reducing the wrong axis of each block before adding it (`acc += sum(x_tile, axis=1)`), leaves a
vector whose lane i is a strided sum over the walked dimension, and storing it at the program's columns
(`out[pid * BN + i]`) writes, for column i, a sum over rows. On a square tile (BM == BN) every shape checks.

The check reads, at each `for` loop, every carried `acc + x` (or a running max or min) whose addend x has a
lane axis along which its index moves with the loop variable (its layout: `m0 + i`), then follows the loop's
result through elementwise ops, broadcasts and reductions to the stores it reaches. A store that still has
that axis, at an index of another dimension that moves with a program id, is an error. Not reported: an axis
reduced on the way (the correct mean), a store of the lanes themselves (a workspace `ws[pid, arange(B)]`,
which a second pass reduces), and uses this check does not follow (a dot, a transpose, a reshape). It is
decided from the dataflow and the layouts, not by z3; the witness is the loop's second iteration, the first
where a lane takes in a second index of the walked dimension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.dsl.types import TensorT
from argus.verify.dataflow import accumulates, carried_name, upstream
from argus.verify.model import Context, Loop, Obligation
from argus.verify.terms import COORDS, depends_on
from argus.verify.values import coord_list, coord_ranges, is_float, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

ELEMENTWISE = ("binary", "unary", "math", "cast", "where")


def walked_sum_obligations(ev: Evaluator, op: ir.Op, loop: Loop, context: Context) -> None:
    """AR323 for the `for` op `op` (its loop `loop`, its body's context `context`)."""
    body = op.regions[0]
    for k, (arg, value) in enumerate(zip(body.args[1:], body.yields, strict=True)):
        update = value.op
        if update is None or not is_float(value.type) or not accumulates(update):
            continue
        addends = [o for o in update.operands if o is not arg]
        if len(addends) != 1 or len(shape_of(addends[0].type)) != len(shape_of(value.type)):
            continue
        walked = walked_axes(ev, addends[0], loop)
        if not walked:
            continue
        for store, axes, reduce in stores_reached(op.results[k], set(walked), ev.users):
            for axis, store_axis in axes.items():
                found = wrong_axis(ev, store, store_axis, walked[axis])
                if found is not None:
                    # the reduction that kept the walked axis is the mistake where there is one after the loop
                    at = reduce or update
                    ev.emit(obligation(ev, op, loop, context, k, at, addends[0], axis, walked[axis], store, found))
                    return


def walked_axes(ev: Evaluator, addend: ir.Value, loop: Loop) -> dict[int, tuple[str, str, z3.ArithRef]]:
    """Axis -> (tensor, dimension, index) of the addend's lane axes whose index moves with the loop variable."""
    sym = ev.values.get(addend.id)
    if sym is None:
        return {}
    found: dict[int, tuple[str, str, z3.ArithRef]] = {}
    for axis in range(len(sym.shape)):
        for (tensor, _), entry in sym.layout.items():
            if depends_on(entry.term, [COORDS[axis]]) and depends_on(entry.term, [loop.iv]):
                found.setdefault(axis, (tensor, entry.label, entry.term))
    return found


def stores_reached(
    start: ir.Value, axes: set[int], users: dict[int, list[ir.Op]]
) -> list[tuple[ir.Op, dict[int, int], ir.Op | None]]:
    """The stores `start`'s walked axes reach unreduced, each with walked axis -> the axis it is stored along,
    and the last reduction on the way (which reduced another axis)."""
    found: list[tuple[ir.Op, dict[int, int], ir.Op | None]] = []
    stack: list[tuple[ir.Value, dict[int, int], ir.Op | None]] = [(start, {a: a for a in axes}, None)]
    seen: set[int] = set()
    while stack:
        value, where, reduce = stack.pop()
        if value.id in seen or not where:
            continue
        seen.add(value.id)
        rank = len(shape_of(value.type))
        for op in users.get(value.id, []):
            if op.kind == "store" and ir.memory_access(op).value is value and op.attrs["rank"] == rank:
                found.append((op, where, reduce))
            elif op.kind in ELEMENTWISE and op.results and len(shape_of(op.result.type)) == rank:
                if op.kind == "where" and op.operands[0] is value:
                    continue  # a condition: its lanes choose, they are not stored
                stack.append((op.result, where, reduce))
            elif op.kind == "expand_dims":
                added = set(op.attrs["axes"])
                kept = [k for k in range(len(shape_of(op.result.type))) if k not in added]
                stack.append((op.result, {w: kept[a] for w, a in where.items()}, reduce))
            elif op.kind == "reduce" and not op.attrs.get("keep_dims"):
                reduced = ir.reduced_axes(op)
                left = {w: a - sum(r < a for r in reduced) for w, a in where.items() if a not in reduced}
                stack.append((op.result, left, op))
    return found


def wrong_axis(ev: Evaluator, store: ir.Op, axis: int, walked: tuple[str, str, z3.ArithRef]) -> str | None:
    """The dimension a store's axis is indexed along, where that is another dimension than the walked one and
    the index moves with a program id: a tile of the output this program owns, not a workspace of lanes."""
    access = ir.memory_access(store)
    param = ev.kernel.tensor(access.tensor.name or "")
    if param is None or not isinstance(param.type, TensorT):
        return None
    dim = param.type.shape[axis]
    label = dim.label or (dim.symbol or "")
    if not label or label == walked[1]:
        return None
    index = access.indices[axis]
    if not any(v.op is not None and v.op.kind == "program_id" for v in upstream(index).values()):
        return None
    return label


def obligation(
    ev: Evaluator,
    op: ir.Op,
    loop: Loop,
    context: Context,
    k: int,
    update: ir.Op,
    addend: ir.Value,
    axis: int,
    walked: tuple[str, str, z3.ArithRef],
    store: ir.Op,
    stored_dim: str,
) -> Obligation:
    acc = carried_name(op, k, "the sum")
    tensor, dim, index = walked
    out = ir.memory_access(store).tensor.name
    shape = shape_of(addend.type)
    second = [loop.iv == loop.start + loop.step]
    if loop.stop is not None and z3.is_int_value(loop.step) and loop.step.as_long() > 0:
        second.append(loop.iv + loop.step <= loop.stop)
    return Obligation(
        "walked_sum",
        "AR323",
        update.span,
        f"`{acc}` keeps one partial sum a lane along axis {axis}, whose lanes walk `{tensor}`'s {dim} with the "
        f"`{loop.name}` loop, and reaches `{out}` at line {store.span.line + 1} along its {stored_dim} axis "
        f"without that axis reduced: each {stored_dim} element gets a strided sum over {dim}",
        z3.BoolVal(False),
        [*context.assumptions, *second, *coord_ranges(shape)],
        context.loops,
        ev.program,
        coord_list(shape),
        [(f"{tensor}'s {dim} index in this lane", index)],
        [(store.span, f"the store of `{acc}`'s lanes at `{out}`'s {stored_dim} indices")],
        f"reduce axis {axis} of the partial sums (over {dim}) before the store, or sum each block over its "
        f"{dim} axis instead",
    )
