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
from argus.verify.model import Access, Contraction, Loop, Obligation
from argus.verify.terms import COORDS, depends_on, free_names, substitute
from argus.verify.values import coord_list, coord_ranges


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
