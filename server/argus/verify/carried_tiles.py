"""AR318: a dot's accumulator carried from one tile into the next (issue 17).

A persistent kernel walks its output tiles in a loop (`for t in range(pid, ntiles, NUM_SMS)`) and must start
each tile's sum afresh. Without `acc = zeros(...)` at the top of the walk, the K loop of tile t starts from the
accumulator tile t - step left: every element stored at tile t also holds the products of the previous tile's
rows and columns. Every access is in bounds, every element is written once by one program, each K index reaches
it (AR316) and none twice within the tile: only the sums are wrong, and nothing else sees it.

The claim, for a write inside a loop L of a value `dot`s accumulated, when the value, followed back as
contributions.py follows it (a dot's accumulator, the loops that carry it, `+`, `-`, `*`, casts), reaches the
accumulator L carries from one iteration to the next, for each such dot inside L: the next iteration of L
computes the same tile (the indices of the dot's operands' other axes that vary across the tile, a's rows and
b's columns, are the same at iteration n + step as at n; a batch index the same for every lane is summed over,
as K is). Then carrying the sum on is a K split across iterations, as a K loop written
around the store is. z3 refutes it with an iteration, the next one, an element and the two row (or column)
indices; the fix is the reset at the top of the walk.
"""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.verify.contributions import carried_args, summed_values, written_values
from argus.verify.dataflow import carried_name, upstream
from argus.verify.model import Access, Contraction, Loop, Obligation
from argus.verify.terms import COORDS, depends_on, free_names, substitute
from argus.verify.values import coord_list, coord_ranges, is_float


def carried_tile_obligations(first) -> list[Obligation]:
    carried = carried_args(first.kernel)
    loops = {op.span: op for op in ir.walk_ops(first.kernel.body) if op.kind == "for"}
    obligations: list[Obligation] = []
    for write, value in written_values(first):
        summed = list(summed_values(value, carried))
        taken = {v.id for v in summed}
        dots = [v.op for v in summed if v.op is not None and v.op.kind == "dot"]
        for loop in write.context.loops:
            op = loops.get(loop.span)
            # the sum takes in what the loop carries from its previous iteration (one of its body's arguments)
            if op is None or not any(arg.id in taken for arg in op.regions[0].args[1:]):
                continue
            for dot in dots:
                c = first.contractions.get(id(dot))
                if c is not None and any(each.iv.eq(loop.iv) for each in c.loops):
                    found = next_tile(write, c, loop, op)
                    if found is not None:
                        obligations.append(found)
    return obligations


def next_tile(write: Access, c: Contraction, loop: Loop, op: ir.Op) -> Obligation | None:
    """AR318's claim for one dot: its tile at the next iteration of `loop` is the one at this iteration."""
    name = str(loop.iv)
    # an index that varies across the tile (a's row, b's column) and with the loop: a batch index that is the
    # same for every lane (`A[z, rm, rk]` summed over z) is summed over, as K is
    lanes = COORDS[: len(c.shape)]
    moving = {k: v for k, v in c.tile.items() if name in free_names(v[0]) and depends_on(v[0], lanes)}
    if not moving or loop.inside is None:
        return None
    following = loop.iv + loop.step
    pairs = [(loop.iv, following)]
    same = [term == substitute(term, pairs) for term, _ in moving.values()]
    coords = coord_list(c.shape)
    shown: list[tuple[str, z3.ExprRef]] = [(f"the next iteration: {loop.name}", following)]
    for (tensor, axis), (term, label) in moving.items():
        shown.append((f"{tensor} index {axis} ({label}) now", term))
        shown.append((f"{tensor} index {axis} ({label}) at the next iteration", substitute(term, pairs)))
    carried = op.attrs["carried"]
    names = ", ".join(f"`{n}`" for n in carried) if carried else "its accumulator"
    return Obligation(
        "carried_tile",
        "AR318",
        c.span,
        f"the accumulator the `{loop.name}` loop carries ({names}) is not reset per tile: the next iteration "
        f"computes another tile and starts from this one's sums",
        z3.And(*same),
        [*c.assumptions, substitute(loop.inside, pairs), *coord_ranges(c.shape)],
        list(c.loops),
        list(write.program),
        coords,
        shown,
        [(loop.span, f"each iteration of the `{loop.name}` loop computes a tile"), (write.span, "stored here")],
        f"start the tile's sum inside the `{loop.name}` loop (`acc = zeros(...)` before its K loop)",
    )


# ---- a sum without a dot, carried across a persistent walk ---------------------------------------------------


def carried_sum_obligations(first, grid: list[z3.ArithRef]) -> list[Obligation]:
    """AR318 for sums no dot feeds: in a persistent walk (`for row in range(program_id(a), n, P)` with P the
    grid's extent along a), each iteration is a new work item of this program. A value written inside the
    walk that takes in a float the walk carries from its previous iteration (a sum of squares zeroed once
    before a persistent RMSNorm's row loop) mixes in the earlier items. The claim, for each load the carried
    value sums: the next iteration reads the same elements; z3 refutes it with the two rows. Dots are left to
    `carried_tile_obligations` (a K split across iterations of one tile is right there)."""
    loops = {op.span: op for op in ir.walk_ops(first.kernel.body) if op.kind == "for"}
    loads = {id(a.op): a for a in first.accesses if a.kind == "load" and a.op is not None}
    obligations: list[Obligation] = []
    seen: set[tuple[int, int]] = set()
    for write, value in written_values(first):
        walks = [(loop, loops[loop.span]) for loop in write.context.loops if loop.span in loops]
        walks = [(loop, op) for loop, op in walks if persistent(loop, first.program, grid)]
        sources = upstream(value) if walks else {}
        for loop, op in walks:
            body = op.regions[0]
            for k, arg in enumerate(body.args[1:]):
                if arg.id not in sources or not is_float(arg.type) or (id(op), k) in seen:
                    continue
                if not accumulates(body.yields[k], {arg.id}):
                    continue  # a value carried as it is, or replaced (a row prefetched for the next iteration)
                summed = upstream(body.yields[k], stop=arg.id)
                if any(v.op is not None and v.op.kind == "dot" for v in summed.values()):
                    continue
                seen.add((id(op), k))
                access = next((loads[id(v.op)] for v in summed.values() if id(v.op) in loads), None)
                if access is not None:
                    obligations.append(next_item(access, loop, op, k, write))
    return obligations


def accumulates(value: ir.Value, carried: set[int]) -> bool:
    """Whether `value`, what a loop yields, adds to (or takes the max or min with) the value it carries, in
    `carried`: directly, through casts, or through an inner loop that starts from it and accumulates."""
    op = value.op
    if op is None:
        return False
    if op.kind == "cast":
        return accumulates(op.operands[0], carried)
    if op.kind == "for":
        k = next(n for n, r in enumerate(op.results) if r.id == value.id)
        inner = op.regions[0].args[1 + k]
        return op.operands[3 + k].id in carried and accumulates(op.regions[0].yields[k], carried | {inner.id})
    combines = (op.kind == "binary" and op.attrs.get("op") in ("+", "-")) or (
        op.kind == "math" and op.attrs.get("fn") in ("maximum", "minimum")
    )
    return combines and any(o.id in carried for o in op.operands)


def persistent(loop: Loop, program: list[z3.ArithRef], grid: list[z3.ArithRef]) -> bool:
    """A walk whose iterations are distinct work items of one program: it starts at a program id (times c)
    and steps by the grid's extent along that axis (times the same c)."""
    names = free_names(loop.start)
    for pid, extent in zip(program, grid, strict=False):
        if names != {str(pid)}:
            continue
        if z3.eq(z3.simplify(loop.start * extent - loop.step * pid), z3.IntVal(0)):
            return True
    return False


def next_item(access: Access, loop: Loop, op: ir.Op, k: int, write: Access) -> Obligation:
    """AR318's claim for one load a carried sum takes in: at the next iteration of the walk it reads the same
    elements (refuted: the sum starts from another item's)."""
    following = loop.iv + loop.step
    pairs = [(loop.iv, following)]
    same = [index == substitute(index, pairs) for index in access.indices]
    next_exists = [substitute(loop.inside, pairs)] if loop.inside is not None else []
    name = carried_name(op, k, "the sum")
    init = op.operands[3 + k].op
    span = init.span if init is not None else access.span
    shown: list[tuple[str, z3.ExprRef]] = [(f"the next iteration: {loop.name}", following)]
    for axis, (index, label) in enumerate(zip(access.indices, access.labels, strict=True)):
        shown.append((f"{access.tensor} index {axis} ({label}) now", index))
        shown.append((f"{access.tensor} index {axis} ({label}) at the next iteration", substitute(index, pairs)))
    return Obligation(
        "carried_tile",
        "AR318",
        span,
        f"`{name}` is carried across the `{loop.name}` loop, a persistent walk whose iterations are different "
        f"work items: the next one starts from this one's sum",
        z3.And(*same),
        [*access.context.assumptions, access.mask, *next_exists, *coord_ranges(access.shape)],
        list(access.context.loops),
        list(access.program),
        coord_list(access.shape),
        shown,
        [
            (access.span, "summed from here"),
            (loop.span, f"each iteration of `{loop.name}` is a new work item"),
            (write.span, "stored here"),
        ],
        f"start `{name}` inside the `{loop.name}` loop ({name} = zeros(...) at the top of each iteration)",
    )
