"""AR315: each index of a contraction reaches an atomic sum once (issue 17, gap 3 of tests/verify/gaps).

Split-K GEMMs (and any kernel that adds partial `dot` products into one output with `atomic_add`) are right only
if the programs adding into one output element together take each K index once: slice ks of SPLIT walks K
blocks ks, ks + SPLIT, ... A slice loop that steps one block (`range(ks * BK, K, BK)`) still writes every
element, in bounds and without a race (atomics never race), so nothing else sees that K blocks are added up to
SPLIT times.

The obligation pairs the two instances of the evaluator as the race check does: two distinct programs whose
`atomic_add`s of the same tensor meet at one element, each adding a value that a `dot` accumulated (followed
back through the accumulator, the loop that carries it, `+`, `*` and casts), must not have read one K index,
unmasked, in their dots. Each dot records its contracted index per instance (dot.contraction, `Contraction`)
with the conditions it ran under (its loops' ranges), so the claim is quantifier-free: z3 looks for a K index
both programs multiplied into the element.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import z3

from argus.dsl import ir
from argus.dsl.atomics import WRITES
from argus.verify.coverage import TARGETS, Guess
from argus.verify.model import Access, Context, Contraction, Obligation, Second
from argus.verify.races import OTHER_COORDS, PairObligation, renamed
from argus.verify.terms import COORDS, substitute
from argus.verify.values import coord_list, coord_ranges


@dataclass(slots=True)
class DoubleCountObligation(PairObligation):
    """AR315's claim, with `sufficient`: a claim that implies it and is easier for z3 (each program, iteration
    and K lane recovered from the element and the K index it adds: `injective`); solve.Prover tries it first."""

    sufficient: z3.BoolRef | None = None


FOLLOWED = ("cast", "binary", "unary")  # elementwise ops that keep the element a dot's sum lands in


def carried_args(kernel: ir.KernelIR) -> dict[int, tuple[ir.Op, int]]:
    """Each loop-carried block argument (by value id) -> its `for` and position."""
    out = {}
    for op in ir.walk_ops(kernel.body):
        if op.kind == "for":
            for k, arg in enumerate(op.regions[0].args[1:]):
                out[arg.id] = (op, k)
    return out


def summed_dots(kernel: ir.KernelIR) -> set[int]:
    """The ids (`id(op)`) of the dots some `atomic_add` of the kernel sums."""
    carried = carried_args(kernel)
    found: set[int] = set()
    for op in ir.walk_ops(kernel.body):
        if op.kind == "atomic_add":
            found.update(id(dot) for dot in contributing_dots(ir.memory_access(op).value, carried))
    return found


def contributing_dots(value: ir.Value, carried: dict[int, tuple[ir.Op, int]]) -> list[ir.Op]:
    """The `dot`s whose sums `value` adds up, element by element (`summed_values`)."""
    return [v.op for v in summed_values(value, carried) if v.op is not None and v.op.kind == "dot"]


def summed_values(value: ir.Value, carried: dict[int, tuple[ir.Op, int]]) -> Iterator[ir.Value]:
    """The values `value` adds up, element by element, itself first: through a dot's accumulator, the loop that
    carries it (the value before the loop and the body's yield, and the body's argument in between), `+`, `-`,
    `*` and casts. Anything else (a `trans`, a reduction, a load) moves or ends the sum: the values found before
    it are the ones that count."""
    stack, seen = [value], set()
    while stack:
        v = stack.pop()
        if v.id in seen:
            continue
        seen.add(v.id)
        yield v
        op = v.op
        if op is None:
            if v.id in carried:
                loop, k = carried[v.id]
                stack += [loop.operands[3 + k], loop.regions[0].yields[k]]
            continue
        if op.kind == "dot":
            stack += op.operands[2:]
        elif op.kind == "for":
            k = next(n for n, r in enumerate(op.results) if r.id == v.id)
            stack += [op.operands[3 + k], op.regions[0].yields[k]]
        elif op.kind == "binary" and op.attrs.get("op") in ("+", "-", "*"):
            stack += [o for o in op.operands if o.type == v.type]
        elif op.kind in ("cast", "unary"):
            stack.append(op.operands[0])


def written_values(first) -> Iterator[tuple[Access, ir.Value]]:
    """Each store or atomic the evaluator recorded with the value it writes."""
    for write in first.accesses:
        if write.kind in WRITES and write.op is not None:
            value = ir.memory_access(write.op).value
            if value is not None:
                yield write, value


def double_count_obligations(first, second, grid: list[z3.ArithRef]) -> list[Obligation]:
    """AR315 for each pair of `atomic_add`s of one tensor (an atomic with itself included) by two programs."""
    carried = carried_args(first.kernel)
    second_ranges = second.program_ranges(grid)
    atomics = [a for a in first.accesses if a.kind == "atomic_add" and a.op is not None]
    theirs_all = [a for a in second.accesses if a.kind == "atomic_add" and a.op is not None]
    obligations = []
    for mine in atomics:
        my_dots = contributing_dots(ir.memory_access(mine.op).value, carried)
        for theirs in theirs_all:
            if theirs.tensor != mine.tensor:
                continue
            their_dots = contributing_dots(ir.memory_access(theirs.op).value, carried)
            for a in my_dots:
                for b in their_dots:
                    ca, cb = first.contractions.get(id(a)), second.contractions.get(id(b))
                    if ca is None or cb is None or not (set(ca.indices) & set(cb.indices)):
                        continue
                    ob = double_count(mine, theirs, ca, cb, second_ranges)
                    ob.sufficient = injective(first, mine, ca, grid) if theirs.op is mine.op and a is b else None
                    obligations.append(ob)
    return obligations


def counted_ranges(c: Contraction) -> list[z3.BoolRef]:
    """The conditions a dot ran under, each loop's `iv >= start, iv < stop, (iv - start) % step == 0` (a positive
    number step) as `iv == start + step * n, n >= 0, iv < stop`: a split-K slice loop `range(ks * BK, K, BK *
    SPLIT)` paired with another program's took more than 5,000,000 units with the remainder and few with the
    count (z3 solves the mixed-radix equations `BK * ks + BK * SPLIT * n + kk` directly)."""
    forms = {}
    for loop in c.loops:
        inside = loop.inside
        if inside is None or not z3.is_int_value(loop.step) or loop.step.as_long() <= 0 or not z3.is_and(inside):
            continue
        n = z3.Int(f"{loop.iv}#count")
        forms[inside.get_id()] = z3.And(n >= 0, loop.iv == loop.start + loop.step * n, inside.children()[1])
    return [forms.get(a.get_id(), a) for a in c.assumptions]


def double_count(mine: Access, theirs: Access, ca: Contraction, cb: Contraction, ranges) -> Obligation:
    same_element = [x == renamed(y) for x, y in zip(mine.indices, theirs.indices, strict=True)]
    keys = [k for k in ca.indices if k in cb.indices]
    same_k = [ca.indices[k][0] == renamed(cb.indices[k][0]) for k in keys]
    distinct = z3.Or(*[a != b for a, b in zip(mine.program, theirs.program, strict=True)])
    assumptions = (
        mine.context.assumptions
        + [renamed(a) for a in theirs.context.assumptions]
        + counted_ranges(ca)
        + [renamed(a) for a in counted_ranges(cb)]
        + coord_ranges(mine.shape)
        + coord_ranges(theirs.shape, OTHER_COORDS)
        + [ca.lane_range, cb.lane_range, *ca.masks, *[renamed(m) for m in cb.masks]]
        + list(ranges)
        + [mine.mask, renamed(theirs.mask), distinct]
    )
    tensor, axis = keys[0]
    index, label = ca.indices[keys[0]]
    loop = ca.loops[-1] if len(ca.loops) > len(mine.context.loops) else None
    span = loop.span if loop is not None else mine.span
    shown = [
        (f"{mine.tensor} index {d} ({lab})", i)
        for d, (i, lab) in enumerate(zip(mine.indices, mine.labels, strict=True))
    ]
    shown += [(f"{tensor} index {axis} ({label})", index), ("kk", ca.lane), ("kk (other program)", cb.lane)]
    where = f"the `{loop.name}` loop" if loop is not None else "the contraction"
    related = [(mine.span, f"the partial sums meet here, added with atomic_add into `{mine.tensor}`")]
    related.append((ca.span, "the dot whose K index both programs read"))
    return DoubleCountObligation(
        "double_count",
        "AR315",
        span,
        f"two programs add the same {label} index of a contraction into one element of `{mine.tensor}`: the "
        f"{label} ranges of {where} overlap across the programs that atomic_add into it",
        z3.Not(z3.And(*same_element, *same_k)),
        assumptions,
        ca.loops,
        mine.program,
        coord_list(mine.shape),
        shown,
        related,
        f"each {label} index must reach an output element once: split the {label} range between the programs "
        "(slice ks takes blocks ks, ks + SPLIT, ...: a step of BK * SPLIT)",
        second=Second(theirs.span, theirs.kind, cb.loops, theirs.program, coord_list(theirs.shape, OTHER_COORDS)),
        divides=False,
    )


def lane_access(write: Access, c: Contraction, key: tuple[str, int], assumptions: list[z3.BoolRef]) -> Access:
    """The write and the K index its dot reads through operand `key` as one access: the K lane a coordinate of
    its own (the next after the write's), under the write's mask and the operands' masks, in the dot's loops
    and under `assumptions`."""
    lane = COORDS[len(write.shape)]
    index = substitute(c.indices[key][0], [(c.lane, lane)])
    masks = [substitute(m, [(c.lane, lane)]) for m in c.masks]
    return Access(
        write.kind,
        write.tensor,
        [*write.indices, index],
        z3.And(write.mask, *masks),
        (*write.shape, c.extent),
        write.dims,
        [*write.labels, c.indices[key][1]],
        write.span,
        Context(assumptions, list(c.loops)),
        write.program,
    )


def injective(first, write: Access, c: Contraction, grid: list[z3.ArithRef]) -> z3.BoolRef | None:
    """ "Each program, iteration of the dot's loops and K lane is the only one that adds its K index into its
    element": the write and its K index as one access (the K lane a coordinate of its own) whose program,
    iteration counts and K lane coverage.Guess solves from the element and the K index; the claim is that the
    solution gives them back. It implies AR315 (two programs adding one K index into one element would be
    one), and with mixed-radix indices (`BK * ks + BK * SPLIT * n + kk`) z3 proves it in few units where the
    pair of programs it replaces ran out of budget. None when the guess cannot be made (the proof then rests
    on the pair alone)."""
    rank = len(write.shape)
    lane = COORDS[rank]
    fake = lane_access(write, c, next(iter(c.indices)), list(c.assumptions))
    guess = Guess(first, fake, grid, TARGETS[: rank + 1])
    if guess.goal is None:
        return None
    image = list(zip(TARGETS[: rank + 1], fake.indices, strict=True))
    counts = dict(zip([loop.iv for loop in c.loops], guess.counts, strict=True))
    recovered = [p == substitute(guess.at(p), image) for p in write.program]
    for loop in c.loops:
        n = (loop.iv - loop.start) / loop.step  # the iteration count, exact inside the loop
        recovered.append(n == substitute(guess.at(counts[loop.iv]), image))
    recovered.append(lane == substitute(guess.at(guess.coords[rank]), image))
    real = [z3.And(p >= 0, p < g) for p, g in zip(write.program, grid, strict=False)]
    real += list(c.assumptions) + coord_ranges(fake.shape) + list(write.context.assumptions) + [fake.mask]
    return z3.Implies(z3.And(*real), z3.And(*recovered))
