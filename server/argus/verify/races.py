"""Race obligations: pairs of accesses made by two different programs of one launch.

The second program is a copy of the first evaluated under other names (pid0', k0@13', ...); its element
coordinates are renamed too, so the two accesses may touch different elements of their tiles.
"""

from __future__ import annotations

from dataclasses import dataclass

import z3

from argus.dsl.atomics import ACCUMULATING, WRITES
from argus.verify.divisions import has_symbolic_division
from argus.verify.evaluate import Evaluator
from argus.verify.model import Access, Loop, Obligation, Second
from argus.verify.terms import COORDS, depends_on, substitute
from argus.verify.values import coord_list, coord_ranges

OTHER_COORDS = [z3.Int(f"f{k}") for k in range(len(COORDS))]


@dataclass(slots=True)
class PairObligation(Obligation):
    """A race obligation; `divides`: an index divides by a non-constant (a persistent or 1-D grouped tile
    index decoded by `t // (GROUP_M * tiles_n)`), so solve.Prover decides its linear form first."""

    divides: bool = False


def renamed(term: z3.ExprRef) -> z3.ExprRef:
    return substitute(term, list(zip(COORDS, OTHER_COORDS, strict=True)))


def race_obligations(
    first: Evaluator, second: Evaluator, second_ranges: list[z3.BoolRef], grid: list[z3.ArithRef]
) -> list[Obligation]:
    """Store/store pairs (each unordered pair once) and load/store pairs, on one tensor, by two programs."""
    obligations: list[Obligation] = []
    second_ranges = second_ranges + tiles_apart(tile_loops(first, second, grid))
    writes = [a for a in first.accesses if a.kind in WRITES]
    their_writes = [a for a in second.accesses if a.kind in WRITES]
    for index, mine in enumerate(writes):
        for position, theirs in enumerate(their_writes):
            if theirs.tensor != mine.tensor or position < index:
                continue  # position < index: the mirror image of a pair already checked
            if mine.kind == theirs.kind and mine.kind in ACCUMULATING:
                continue  # atomic_add with atomic_add (max with max, min with min): any order, one result
            message = write_race_message(mine, theirs)
            obligations.append(pair(mine, theirs, second_ranges, "race_store", "AR302", message))
    for mine in first.accesses:
        if mine.kind != "load":
            continue
        for theirs in their_writes:
            if theirs.tensor == mine.tensor:
                message = f"a program reads an element of `{mine.tensor}` that another program writes"
                obligations.append(pair(mine, theirs, second_ranges, "race_read", "AR303", message))
    return obligations


def write_race_message(mine: Access, theirs: Access) -> str:
    """AR302's message: two stores, two atomics whose order matters, or one of each."""
    kinds = {mine.kind, theirs.kind}
    if kinds == {"store"}:
        return f"two programs write the same element of `{mine.tensor}`"
    if kinds <= set(ACCUMULATING):
        return (
            f"two programs write the same element of `{mine.tensor}` with {mine.kind} and {theirs.kind}: "
            "the result depends on their order"
        )
    atomic = sorted(kinds - {"store"})
    if kinds & {"atomic_xchg", "atomic_cas"}:
        return (
            f"two programs write the same element of `{mine.tensor}` ({' and '.join(sorted(kinds))}): the value "
            "left, and the old value each returns, depend on their order"
        )
    return (
        f"two programs write the same element of `{mine.tensor}`, one with a store and one with {atomic[0]}: "
        "the result depends on their order"
    )


def counted(loops: list[Loop], programs: list[z3.ArithRef]) -> list[z3.BoolRef]:
    """`iv == start + step * n` with n >= 0 for each loop whose start depends on a program id (a grid-stride or
    persistent loop, `range(pid * BLOCK, N, num_programs(0) * BLOCK)`): implied by the loop's range, whose
    `(iv - start) % step == 0` z3 reads far less well than a count. A grid-stride store race took more than
    5,000,000 units without it and 12,968 with it; loops that start at a constant keep their queries as they were."""
    facts = []
    for loop in loops:
        if z3.is_int_value(loop.step) and loop.step.as_long() > 0 and depends_on(loop.start, programs):
            n = z3.Int(f"{loop.iv}#count")
            facts.append(z3.And(n >= 0, loop.iv == loop.start + loop.step * n))
    return facts


@dataclass(slots=True)
class TileLoop:
    """A persistent loop `for t in range(pid, n, num_programs(0))` in both programs' copies: t and t'."""

    mine: Loop
    theirs: Loop
    program: z3.ArithRef
    other: z3.ArithRef


def tile_loops(first: Evaluator, second: Evaluator, grid: list[z3.ArithRef]) -> list[TileLoop]:
    theirs = {str(loop.iv): loop for a in second.accesses for loop in a.context.loops}
    found = []
    for mine in {str(loop.iv): loop for a in first.accesses for loop in a.context.loops}.values():
        other = theirs.get(str(mine.iv) + "'")
        for axis, (p, g) in enumerate(zip(first.program, grid, strict=False)):
            if other is not None and mine.start.eq(p) and mine.step.eq(g):
                found.append(TileLoop(mine, other, p, second.program[axis]))
    return found


def tiles_apart(tiles: list[TileLoop]) -> list[z3.BoolRef]:
    """Two programs on the axis of a persistent loop run different tiles: `pid != pid'` implies `t != t'` (t %
    G is the program), which z3 would otherwise find through the loops' counts, and which a grouped order's
    decode of t needs at once. A consequence of the loop's range and the grid: it changes no verdict, only the
    work (the persistent grouped GEMM's store race took more than 5,000,000 units without it)."""
    return [z3.Implies(t.program != t.other, t.mine.iv != t.theirs.iv) for t in tiles]


def pair(mine: Access, theirs: Access, ranges, kind: str, code: str, message: str) -> Obligation:
    other_indices = [renamed(i) for i in theirs.indices]
    same = [a == b for a, b in zip(mine.indices, other_indices, strict=True)]
    distinct = z3.Or(*[a != b for a, b in zip(mine.program, theirs.program, strict=True)])
    assumptions = (
        mine.context.assumptions
        + [renamed(a) for a in theirs.context.assumptions]
        + coord_ranges(mine.shape)
        + coord_ranges(theirs.shape, OTHER_COORDS)
        + list(ranges)
        + [mine.mask, renamed(theirs.mask), distinct]
        + counted(mine.context.loops + theirs.context.loops, mine.program + theirs.program)
    )
    shown = [
        (f"{mine.tensor} index {d} ({label})", index)
        for d, (index, label) in enumerate(zip(mine.indices, mine.labels, strict=True))
    ]
    return PairObligation(
        kind,
        code,
        mine.span,
        message,
        z3.Not(z3.And(*same)) if same else z3.BoolVal(False),
        assumptions,
        mine.context.loops,
        mine.program,
        coord_list(mine.shape),
        shown,
        [],
        second=Second(
            theirs.span, theirs.kind, theirs.context.loops, theirs.program, coord_list(theirs.shape, OTHER_COORDS)
        ),
        divides=any(has_symbolic_division(i) for i in mine.indices + theirs.indices),
    )
