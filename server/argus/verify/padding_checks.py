"""AR313: padding lanes reaching a reduction with a value that is not its identity (issue 17, class 2).

The evaluator keeps, for each float value, what its lanes hold (padding.Tree) next to the mask its loads
were made under (`Sym.valid`); its rules ask this module what a result's lanes hold (`lane_tree`, `combined`,
`chosen`, `loaded`). At `sum`, `max`, `min`, `argmax`, `argmin` and at a `dot`'s contraction, `padding` asks
z3 for a padding lane (the mask off) in a *live* row (one with a real lane along the reduced axis) whose
value would change the result: `other=0` under a `max`, `exp` of a 0 padding under a `sum`, `x - mean` not
re-masked before the variance's sum. A mask that is all true wherever the reduction looks (`requires
N % BN == 0`, a tile that covers the dimension exactly) proves it; a row made of padding only is dead (its
result is masked off on the way out) and is not asked about. AR314 (division by an exact 0) is here too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.data_zeros import counted_sum, is_nothing_selected
from argus.verify.model import Access, Context, Loop, Obligation, Sym
from argus.verify.padding import (
    IDENTITY,
    INF,
    NINF,
    PINF,
    REAL,
    UNDEFINED,
    Branch,
    Leaf,
    Tree,
    VSet,
    add,
    apply,
    bounded,
    branch,
    compare,
    const,
    harmless,
    is_zero,
    joined,
    leaves,
    move,
    mul,
    select,
)
from argus.verify.reached import reductions_reached
from argus.verify.terms import COORDS, depends_on, free_names, move_coords, slope, substitute
from argus.verify.values import aligned, coord_list, coord_ranges, is_float, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

HINT = {
    "sum": "load with other=0, or re-mask with where(mask, x, 0) before the sum",
    "dot": "load both operands with other=0, or re-mask with where(mask, x, 0) before the dot",
    "max": "load with other=-inf, or re-mask with where(mask, x, -inf) before the max",
    "argmax": "load with other=-inf, or re-mask with where(mask, x, -inf) before the argmax",
    "min": "load with other=inf, or re-mask with where(mask, x, inf) before the min",
    "argmin": "load with other=inf, or re-mask with where(mask, x, inf) before the argmin",
}


def lane_tree(ev: Evaluator, sym: Sym) -> Tree:
    """What the lanes of a value hold: its own tree, or what its integer term says, or a real number."""
    if sym.lanes is not None:
        return sym.lanes
    term = sym.term
    if term is not None and z3.is_bool(term):
        return branch(term, Leaf(const(1.0)), Leaf(const(0.0)))
    if term is not None and z3.is_int_value(term):
        return Leaf(const(float(term.as_long())))
    if term is not None and z3.is_const(term) and term.decl().name() in ev.shared.sizes:
        return Leaf(VSet(1.0, float("inf")))
    return Leaf(REAL)


def combined(ev: Evaluator, operands: list[Sym], rule: Callable[..., VSet] | None) -> Tree | None:
    """The lanes of an elementwise result, or None when an operand's padding is not known (given up).
    Only followed where obligations are kept: a loop's first pass and the other program's instance need
    none, and nothing they compute reaches a kept obligation."""
    if not ev.emitting or rule is None or any(s.valid is not None and s.lanes is None for s in operands):
        return None
    try:
        return bounded(apply(rule, [lane_tree(ev, s) for s in operands]))
    except (ArithmeticError, ValueError):  # value-set arithmetic that fails gives up, never guesses
        return None


def chosen(ev: Evaluator, c: Sym, a: Sym, b: Sym, condition: ir.Op | None = None) -> Tree | None:
    """The lanes of `where(c, a, b)`: a branch on the condition when it is an integer one; for a comparison of
    floats (`p > 0`), what it decides lane by lane from the compared values' lanes, where they are known."""
    if not ev.emitting or any(s.valid is not None and s.lanes is None for s in (a, b)):
        return None
    cond = c.term if c.term is not None and z3.is_bool(c.term) else None
    if condition is not None and condition.kind == "compare" and is_float(condition.operands[0].type):
        compared = [ev.get(v) for v in condition.operands]  # its term, if any, stands for unmodeled floats
        if all(s.valid is None or s.lanes is not None for s in compared):
            sign = condition.attrs["op"]
            decided = apply(lambda x, y: compare(sign, x, y), [lane_tree(ev, s) for s in compared])
            try:
                return bounded(apply(select, [decided, lane_tree(ev, a), lane_tree(ev, b)]))
            except (ArithmeticError, ValueError):
                return None
    return bounded(branch(cond, lane_tree(ev, a), lane_tree(ev, b)))


def loaded(ev: Evaluator, op: ir.Op, mask: z3.BoolRef, other: Sym | None) -> Tree | None:
    """A masked load: real data where the mask is on, `other` (or undefined memory) where it is off. Integer
    data lies in its dtype's range, so `other` at the range's end (the i32 maximum before a `min`) is an
    identity."""
    if not ev.emitting:
        return None
    if other is None:
        pad = UNDEFINED
    else:
        tree = lane_tree(ev, other)
        pad = tree.values if isinstance(tree, Leaf) else REAL
    return Branch(mask, Leaf(dtype_range(op.result.type)), Leaf(pad, (op.span,)))


def dtype_range(type_) -> VSet:
    """The values real data of a type can hold: any finite number for a float, its range for an integer."""
    dtype = getattr(type_, "dtype", None)
    if dtype is None or dtype.kind not in ("int", "uint"):
        return REAL
    if dtype.kind == "uint":
        return VSet(0.0, float(2**dtype.bits - 1))
    return VSet(float(-(2 ** (dtype.bits - 1))), float(2 ** (dtype.bits - 1) - 1))


# ---- the obligation -----------------------------------------------------------------------------
def padding(
    ev: Evaluator,
    op: ir.Op,
    fn: str,
    tree: Tree | None,
    valid: z3.BoolRef | None,
    lane: z3.ArithRef | tuple[z3.ArithRef, ...],
    extent: int | z3.BoolRef | tuple[int, ...],
    frame: Frame,
    context: Context,
    source: Sym | None = None,
    real: str = "",
    what: str = "",
    direction: int = 0,
    identity: str = "",
    hint: str = "",
) -> None:
    """AR313 at a reduction along `lane` (a coordinate of `coords`, or a loop variable for an accumulation
    across iterations): every padding lane of a live row holds a value the reduction `fn` ignores. For a scan
    (`direction` 1, or -1 when reversed) the live row is one with a real lane after the padding lane (before
    it, reversed): only such a lane's running value takes the padding in; `identity` and `hint` then say what
    the scan lets through and how to mask for it (IDENTITY and HINT of `fn` otherwise). `extent`:
    the number of lanes along `lane`, or the condition on `lane` (over the variable itself) that says which
    values it takes; `frame`: the element coordinates and their ranges (a shape, or both spelled out),
    built only when some lane is asked about; `real`: how the witness names the real lane of the same
    row; `what`: how the message names the reduction; `source`: the reduced value, whose tensor indices
    the witness shows. A reduction along several axes gives a tuple of lanes and one of their extents: its row
    is every lane that differs only along them, and the witness names a real lane by each coordinate."""
    if not ev.emitting or tree is None or valid is None:
        return
    bad = reaching_leaves(fn, tree, valid, lane if isinstance(lane, tuple) else (lane,))
    if not bad:
        return
    if isinstance(frame, Spelled):
        coords, ranges = frame.coords, frame.ranges
    else:
        coords, ranges = coord_list(frame), coord_ranges(frame)
    lanes = lane if isinstance(lane, tuple) else (lane,)
    extents = extent if isinstance(extent, tuple) else (extent,)
    others = [z3.Int(f"{each}'") for each in lanes]
    shown = [(f"{t} index {d} ({e.label})", e.term) for (t, d), e in (source.layout if source else {}).items()]
    bounds = []
    for each, other, size in zip(lanes, others, extents, strict=True):
        condition = z3.And(each >= 0, each < size) if isinstance(size, int) else size
        bounds.append(substitute(condition, [(each, other)]))
    names = [next(n for n, c in coords if c.eq(each)) for each in lanes] if not real else []
    if real:
        reals = [(real, others[0])]
    elif len(lanes) == 1:
        reals = [("a real lane of the same row: " + names[0], others[0])]
    else:  # the witness's real lane, one coordinate at a time
        reals = [(f"a real lane reduced with it: {name}", other) for name, other in zip(names, others, strict=True)]
    live = substitute(valid, list(zip(lanes, others, strict=True)))
    # a scan along one lane: only a real lane after the padding lane (before it, reversed) takes the padding in
    order = [others[0] > lanes[0]] if direction > 0 else [others[0] < lanes[0]] if direction < 0 else []
    reaching = z3.Or(*[z3.And(*path) for path, _ in bad])
    held = bad[0][1].values
    for _, leaf in bad[1:]:
        held = held.union(leaf.values)
    origins = sorted({span for _, leaf in bad for span in leaf.origins}, key=lambda s: (s.line, s.col))
    lines = sorted({span.line + 1 for span in origins})
    where = f" (masked off at line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))})" if lines else ""
    ev.emit(
        Obligation(
            "padding",
            "AR313",
            op.span,
            f"padding lanes{where} {what or f'reach `{fn}`'} holding {held.text()}, not its identity "
            f"{identity or IDENTITY[fn]}",
            z3.Or(valid, z3.Not(reaching)),
            context.assumptions + ranges + [*bounds, live, *order],
            context.loops,
            ev.program,
            coords,
            [*shown, *reals],
            [(span, "the masked-off lanes are loaded here") for span in origins],
            hint or (HINT[fn] if not what else HINT[fn].replace(f"before the {fn}", "before accumulating")),
        )
    )


def division(ev: Evaluator, op: ir.Op, a: Sym, b: Sym, context: Context) -> None:
    """AR314 at a float `a / b`: no real lane divides by exactly 0. A divisor is exactly 0 where its lanes
    say so through conditions the verifier models: a value carried by a loop that may run no iteration and
    that starts at 0 (`l_i = zeros(...)`, control_flow.zero_trip_lanes), a `where(c, x, 0)`, a literal 0.
    Lanes masked off in both operands are padding (what they hold is AR313's business), and a `where` on a
    float comparison (`where(l == 0, 1, l)`, a guard) is not modelled, so nothing below it is asked about."""
    if not ev.emitting:
        return
    shape = a.shape if len(a.shape) >= len(b.shape) else b.shape
    zero = zero_paths(lane_tree(ev, b)) + integer_zero(ev, op.operands[1], b, shape)
    if not zero:
        return
    valids = [s.valid for s in (a, b) if s.valid is not None]
    trips = [ev.zero_trips[c.get_id()] for path in zero for c in path if c.get_id() in ev.zero_trips]
    selected = any(is_nothing_selected(c) for path in zero for c in path)
    shown: list[tuple[str, z3.ExprRef]] = []
    related: list = []
    if trips:
        trip = trips[0]
        loop, name = trip.loop, divisor_name(op.operands[1])
        message = (
            f"division by zero: `{name}` is still its initial 0 where the `{loop.name}` loop at line "
            f"{loop.span.line + 1} runs no iteration"
        )
        shown = [(f"{loop.name} first value", loop.start), (f"{loop.name} stop", trip.stop)]
        related = [(loop.span, f"the `{loop.name}` loop runs no iteration here; `{name}` keeps its 0")]
        hint = f"the `{loop.name}` loop must run at least once in every program that divides (check its range)"
    elif selected:
        name = divisor_name(op.operands[1])
        said, used = (f"`{name}`", name) if name != "the divisor" else ("the divisor", "the count")
        message = f"division by zero: {said} counts what a loaded mask selects, and is 0 where it selects nothing"
        hint = f"divide by maximum({used}, 1.0), or re-mask the quotient with where({used} > 0, ..., 0)"
    else:
        message = f"division by zero: `{divisor_name(op.operands[1])}` may be 0"
        hint = "divide by a value that is not 0 there, or re-mask the quotient with where"
    ev.emit(
        Obligation(
            "division",
            "AR314",
            op.span,
            message,
            z3.Not(z3.Or(*[z3.And(*path) for path in zero])),
            context.assumptions + coord_ranges(shape) + valids,
            context.loops,
            ev.program,
            coord_list(shape),
            shown,
            related,
            hint,
        )
    )


def integer_zero(ev: Evaluator, value: ir.Value, sym: Sym, shape: tuple[int, ...]) -> list[tuple[z3.BoolRef, ...]]:
    """Where an integer divisor (or one converted to a float: `(end - start).to(f32)`) is 0: its term == 0,
    unless the term is a number or a size (never 0), or mentions values the verifier does not model or a
    loop-carried havoc (the claim would only be undecided)."""
    term = sym.term
    if (term is None or z3.is_bool(term)) and value.op is not None and value.op.kind == "cast":
        term = aligned(ev.get(value.op.operands[0]), shape).term
    if term is None or z3.is_bool(term) or z3.is_int_value(term):
        return []
    if z3.is_const(term) and term.decl().name() in ev.shared.sizes:
        return []
    names = free_names(term)
    if any(n in ev.shared.gaps or n in ev.shared.carried for n in names):
        return []
    return [(term == 0,)]


def accumulation(
    ev: Evaluator,
    op: ir.Op,
    fn: str,
    operands: list[Sym],
    context: Context,
    values: list[ir.Value] | None = None,
) -> None:
    """AR313 at `acc + x` (fn "sum"), `maximum(acc, x)` ("max") or `minimum(acc, x)` ("min") where acc is a
    value carried by an enclosing loop and the result goes on to its next iteration: a reduction across them.
    A lane of x that is padding in this iteration and real in another one of the same loop must hold the
    identity. `values`: the IR values of the two operands (the op's own by default; a `where` written as a
    running max passes its last two)."""
    values = op.operands if values is None else values
    carried = [k for k, v in enumerate(values) if v.id in ev.accumulators]
    if len(carried) != 1 or len(operands) != 2 or op.results[0].id not in ev.carried_next:
        return
    loop = ev.accumulators[values[carried[0]].id]
    x = operands[1 - carried[0]]
    if loop.inside is None or x.valid is None or kept_where_padded(ev, op, values[carried[0]], x.valid):
        return
    shape = x.shape
    padding(
        ev,
        op,
        fn,
        x.lanes,
        x.valid,
        loop.iv,
        loop.inside,
        shape,
        context,
        x,
        real=f"an iteration where the lane is real: {loop.name}",
        what=f"are accumulated across the iterations of the `{loop.name}` loop",
    )
    beyond_the_walk(ev, op, fn, x, loop, context)


def kept_where_padded(ev: Evaluator, op: ir.Op, acc: ir.Value, valid: z3.BoolRef) -> bool:
    """Whether every use of `acc + x` is `where(mask, acc + x, acc)` with a mask that keeps only real lanes of
    x: there the padding lanes keep the accumulator and nothing is accumulated (Welford's per-lane mean and
    M2, left unchanged past the row's end)."""
    uses = ev.users.get(op.results[0].id, [])
    real = set(flat(valid))
    for use in uses:
        if use.kind != "where" or use.operands[1] is not op.results[0] or use.operands[2].id != acc.id:
            return False
        mask = ev.get(use.operands[0]).term
        if mask is None or not z3.is_bool(mask) or not real <= set(flat(mask)):
            return False
    return bool(uses)


def flat(term: z3.BoolRef) -> list[int]:
    """The ids of a condition's innermost conjuncts."""
    return [i for child in term.children() for i in flat(child)] if z3.is_and(term) else [term.get_id()]


ENDS = {"sum": is_zero, "max": lambda v: v == NINF, "min": lambda v: v == PINF}  # each accumulation's identity


def beyond_the_walk(ev: Evaluator, op: ir.Op, fn: str, x: Sym, loop: Loop, context: Context) -> None:
    """AR313 at an accumulation over a loop that walks a tensor axis in blocks over `range(lo, hi, step)` where
    hi is not the axis's extent (a segment `offsets[b] .. offsets[b + 1]`, a part of a row): no real lane whose
    index along the axis is hi or more may be accumulated, unless it holds the identity. A jagged sum whose load
    is masked by `rt < T` instead of `rt < end` adds the next segment's rows."""
    if loop.stop is None or x.lanes is None or not ev.emitting:
        return
    ends = exact_paths(x.lanes, ENDS[fn])
    kept = z3.Or(*[z3.And(*path) for path in ends]) if ends else z3.BoolVal(False)
    real = x.valid if x.valid is not None else z3.BoolVal(True)
    for (tensor, axis), entry in x.layout.items():
        index = entry.term
        if entry.stat or not blocks(index, loop, x.shape):
            continue
        param = ev.kernel.tensor(tensor)
        if param is None:
            continue
        extent = ev.shared.dims(param)[axis]
        if z3.is_true(z3.simplify(loop.stop == extent)):
            continue  # a walk of the whole axis: lanes past it are out of bounds (AR301) or masked
        ev.emit(
            Obligation(
                "padding",
                "AR313",
                op.span,
                f"lanes past the end of the `{loop.name}` loop's range are accumulated: `{tensor}`'s index along "
                f"{entry.label} reaches the loop's stop or more in a lane the load keeps, which another part owns",
                z3.Or(z3.Not(real), kept),
                context.assumptions + coord_ranges(x.shape) + [index >= loop.stop],
                context.loops,
                ev.program,
                coord_list(x.shape),
                [(f"{tensor} index {axis} ({entry.label})", index), (f"the `{loop.name}` loop's stop", loop.stop)],
                [],
                "mask the load by the loop's stop (`< end`), not by the tensor's extent",
            )
        )


def blocks(index: z3.ArithRef, loop: Loop, shape: tuple[int, ...]) -> bool:
    """`a * iv + lane + b` whose consecutive iterations read consecutive blocks (a * step is the lane axis's
    width, or 1 with no lane): a block walk, not a window (a convolution's `ri + j` steps by 1 over a wide tile)."""
    step = slope(index, loop.iv)
    if step is None or step.as_long() <= 0 or not z3.is_int_value(loop.step):
        return False
    lanes = [slope(index, COORDS[k]) for k in range(len(shape))]
    if any(g is None or g.as_long() not in (0, 1) for g in lanes):
        return False
    width = next((shape[k] for k, g in enumerate(lanes) if g is not None and g.as_long() == 1), 1)
    return step.as_long() * loop.step.as_long() == width


def reduced_lanes(
    ev: Evaluator, x: Sym, axes: tuple[int, ...], fn: str, mapping: dict[int, z3.ArithRef]
) -> Tree | None:
    """What a reduction's result holds, where that matters to a division (AR314): a tree whose exact 0s sit on
    conditions that do not vary along the reduced axis (a loop that ran no iteration) keeps them (a `sum` or
    `max` of lanes that are all 0 is 0); any other leaf becomes a real number. None (as for every other
    reduction) when there is no such 0 or a condition varies along a reduced axis (a mask: AR313's business)."""
    if not ev.emitting or fn not in ("sum", "max", "min"):
        return None
    if x.lanes is None:  # an indicator made by a cast (`keep.to(f32)`): its term says 1 or 0
        return counted_sum(ev, lane_tree(ev, x)) if fn == "sum" and x.term is not None else None
    found = leaves(x.lanes)
    if not any(is_zero(leaf.values) for _, leaf in found):
        return signed(found)
    if any(depends_on(c, [COORDS[a] for a in axes]) for path, _ in found for c in path):
        counted = counted_sum(ev, x.lanes) if fn == "sum" else None  # a count the data can make 0
        return counted if counted is not None else signed(found)

    def reduced(tree: Tree) -> Tree:
        if isinstance(tree, Leaf):
            return Leaf(tree.values if is_zero(tree.values) else REAL, tree.origins)
        return Branch(tree.cond, reduced(tree.then), reduced(tree.orelse))

    return move(reduced(x.lanes), mapping)


def reduced_padding(
    ev: Evaluator, op: ir.Op, x: Sym, mapping: dict[int, z3.ArithRef], real: Tree | None
) -> tuple[z3.BoolRef | None, Tree | None]:
    """The padding a reduction passes on, as a dot does (`dot_output`): a row of x whose lanes are all masked
    off by a conjunct of x's mask that does not mention a reduced axis (`rn < L` of a [BN, D] tile summed over
    D) is a padding lane of the result, holding the reduction of padding values (a sum of 0s is 0, a max of
    -infs is -inf); `real` (or a real number) is what the other lanes hold. None, None where nothing is kept or
    the padding is not known, as before: then the result has no padding. Kept only where a later `sum`, `max`
    or `min` reduces the result along an axis the condition names: a row statistic broadcast back over its row
    (an attention's `m[:, None]`) would only grow the value trees past their bound."""
    fn, axes = op.attrs["fn"], ir.reduced_axes(op)
    if not ev.emitting or x.valid is None or x.lanes is None or fn not in ("sum", "max", "min"):
        return None, None
    later = [COORDS[a] for a in reductions_reached(ev.shared.uses, op.result, through_where=True)]
    parts = [c for c in kept(x.valid, *[COORDS[a] for a in axes]) if depends_on(move_coords(c, mapping), later)]
    if not parts:
        return None, None
    pads = padding_leaves(leaves(x.lanes), x.valid)
    if not pads:
        return None, None
    held, origins = VSet(), ()
    for _, leaf in pads:
        held, origins = held.union(leaf.values), joined(origins, leaf.origins)
    valid = move_coords(z3.And(*parts), mapping)
    total = summed(held) if fn == "sum" else held  # a max or min of values in a hull stays in it
    return valid, bounded(Branch(valid, real if real is not None else Leaf(REAL), Leaf(total, origins)))


def summed(values: VSet) -> VSet:
    """What a sum of one or more lanes each holding a value of `values` may be."""
    if is_zero(values):
        return values
    out = VSet(ninf=values.ninf, pinf=values.pinf, nan=values.nan or (values.ninf and values.pinf))
    if values.finite:
        out = out.union(VSet(values.lo if values.lo >= 0 else -INF, values.hi if values.hi <= 0 else INF))
    return out


def signed(found: list[tuple[tuple[z3.BoolRef, ...], Leaf]]) -> Tree | None:
    """A sum, max or min of lanes that are all >= 0 (a softmax's exponentials, squares) is >= 0, and of lanes
    all <= 0 is <= 0: a real number of that sign, which a division by it keeps (the probabilities a router's
    top-k takes). None where the lanes may have either sign: a real number, as before."""
    finite = [leaf.values for _, leaf in found if leaf.values.finite]
    if finite and all(v.lo >= 0 for v in finite) and not any(leaf.values.ninf for _, leaf in found):
        return Leaf(VSet(0.0, INF))
    if finite and all(v.hi <= 0 for v in finite) and not any(leaf.values.pinf for _, leaf in found):
        return Leaf(VSet(-INF, 0.0))
    return None


def reduce_padding(ev: Evaluator, op: ir.Op, x: Sym, context: Context) -> None:
    """Along several axes at once (`sum(x, axis=(0, 1))`), a lane's row is every lane that differs from it only
    along the reduced axes: live when one of them is real."""
    axes = ir.reduced_axes(op)
    lanes = tuple(COORDS[a] for a in axes)
    extents = tuple(x.shape[a] for a in axes)
    kept = [*([x.valid] if x.valid is not None else []), *where_kept(ev, op.operands[0], list(lanes))]
    padding(
        ev,
        op,
        op.attrs["fn"],
        x.lanes,
        z3.And(*kept) if len(kept) > 1 else kept[0] if kept else None,
        lanes[0] if len(axes) == 1 else lanes,
        extents[0] if len(axes) == 1 else extents,
        x.shape,
        context,
        x,
    )


ELEMENTWISE = ("binary", "unary", "math", "cast")


def where_kept(ev: Evaluator, value: ir.Value, lanes: list[z3.ArithRef]) -> list[z3.BoolRef]:
    """The lanes a `where` keeps on the way to a reduction, where it gives the others a constant along the
    reduced `lanes` (`where(rn < n_keys, qk, 0.0)`, `where(cols < N, x - mean, 0.0)`): those lanes are padding
    too, so the constant must be the reduction's identity, as a load's `other` must. Followed through the
    elementwise ops of the reduced value's own shape, whose lanes are the where's lanes."""
    found, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        op = v.op
        if op is None or v.id in seen or shape_of(v.type) != shape_of(value.type):
            continue
        seen.add(v.id)
        if op.kind in ELEMENTWISE:
            stack.extend(o for o in op.operands if is_float(o.type))
        elif op.kind == "where":
            cond = ev.get(op.operands[0]).term
            then, orelse = (ev.get(o) for o in op.operands[1:])
            if cond is None or not z3.is_bool(cond) or not depends_on(cond, lanes):
                stack.extend(op.operands[1:])
            elif constant(orelse) and not constant(then):
                found.append(cond)
                stack.append(op.operands[1])
            elif constant(then) and not constant(orelse):
                found.append(z3.Not(cond))
                stack.append(op.operands[2])
    return found


def constant(sym: Sym) -> bool:
    """A float constant in every lane (`0.0`, `-inf`, `full(..., 0.0)`): no load, no padding of its own."""
    return sym.valid is None and isinstance(sym.lanes, Leaf) and sym.lanes.values.lo == sym.lanes.values.hi


def dot_padding(
    ev: Evaluator,
    op: ir.Op,
    a: Sym,
    b: Sym,
    a_map: dict[int, z3.ArithRef],
    b_map: dict[int, z3.ArithRef],
    kk: z3.ArithRef,
    coords: list[tuple[str, z3.ArithRef]],
    ranges: list[z3.BoolRef],
    context: Context,
) -> None:
    """AR313 at a dot: each product a[i, kk] * b[kk, j] a padding lane of either operand makes must be 0."""
    if a.valid is None and b.valid is None:
        return
    if any(s.valid is not None and s.lanes is None for s in (a, b)):
        return
    if not ev.emitting:
        return
    if not any_product_reaches(a, lane_tree(ev, b)) and not any_product_reaches(b, lane_tree(ev, a)):
        return  # every product a padding lane makes is 0: nothing to move into the dot's coordinates
    trees = [move(lane_tree(ev, s), m) for s, m in ((a, a_map), (b, b_map))]
    valids = [move_coords(s.valid, m) for s, m in ((a, a_map), (b, b_map)) if s.valid is not None]
    extent = a.shape[-1]
    try:
        products = bounded(apply(mul, trees))
    except (ArithmeticError, ValueError):
        return
    padding(ev, op, "dot", products, z3.And(*valids), kk, extent, Spelled(coords, ranges), context)


def dot_output(ev: Evaluator, a: Sym, b: Sym, rank: int) -> tuple[z3.BoolRef | None, Tree | None]:
    """The padding of a dot's result: its lane (i, j) is padding where a's row i or b's column j is masked
    off whatever the K lane (the conjuncts of their masks that do not mention it), and holds the sum of the
    products there: 0 when each is 0 (a padding of 0 against finite values). None, None when there is no
    such padding or an operand's is not known."""
    if not ev.emitting or any(s.valid is not None and s.lanes is None for s in (a, b)):
        return None, None
    parts = [c for c in kept(a.valid, COORDS[rank - 1]) + kept(b.valid, COORDS[rank - 2])]
    if not parts:
        return None, None
    products = VSet()
    for padded, other in ((a, b), (b, a)):
        if padded.valid is None:
            continue
        pads = [leaf.values for _, leaf in padding_leaves(leaves(padded.lanes), padded.valid)]
        every = [leaf.values for _, leaf in leaves(lane_tree(ev, other))]
        for pad in pads:
            for value in every:
                products = products.union(mul(pad, value))
    total = products if products == const(0.0) else add(products, REAL)
    origins = tuple(
        {span for s in (a, b) if s.lanes is not None for _, leaf in leaves(s.lanes) for span in leaf.origins}
    )
    valid = z3.And(*parts)
    return valid, Branch(valid, Leaf(REAL), Leaf(total, origins))


@dataclass(frozen=True, slots=True)
class Spelled:
    """The element coordinates of a reduction and their ranges given outright (a dot's i, kk, j)."""

    coords: list[tuple[str, z3.ArithRef]]
    ranges: list[z3.BoolRef]


Frame = tuple[int, ...] | Spelled  # a shape: the coordinates and ranges of its elements, built when needed


def reaching_leaves(
    fn: str, tree: Tree, valid: z3.BoolRef, lanes: tuple[z3.ArithRef, ...]
) -> list[tuple[tuple[z3.BoolRef, ...], Leaf]]:
    """The leaves of `tree` on a path that is not a real lane of `valid` whose values would change `fn`:
    what AR313 asks z3 about. Empty for most reductions, and found without building a z3 term. Only a
    condition on the reduced `lanes` tells a real lane from padding within a row: a re-mask by the row's own
    condition (`where((rm < S)[:, None], qk, -inf)` before a max along the keys) leaves the padded keys of
    every live row as they were."""
    found = leaves(tree)
    finite = [leaf.values for _, leaf in found if leaf.values.finite]
    low = min((v.lo for v in finite), default=float("inf"))
    high = max((v.hi for v in finite), default=float("-inf"))
    chosen = padding_leaves(found, valid, lanes)
    return [(path, leaf) for path, leaf in chosen if not harmless(fn, leaf.values, low, high)]


def divisor_name(value: ir.Value) -> str:
    """The name the kernel gives a divisor, through the shape ops and casts around it (`l_i[:, None]`)."""
    while not value.name and value.op is not None and value.op.kind in ("expand_dims", "broadcast_to", "cast"):
        value = value.op.operands[0]
    return value.name or "the divisor"


def zero_paths(tree: Tree) -> list[tuple[z3.BoolRef, ...]]:
    """The conditions on the way to each leaf of `tree` that holds exactly 0, through modelled conditions only:
    below a condition the verifier does not model (a float comparison) the value may be guarded."""
    return exact_paths(tree, is_zero)


def exact_paths(
    tree: Tree, holds: Callable[[VSet], bool], path: tuple[z3.BoolRef, ...] = ()
) -> list[tuple[z3.BoolRef, ...]]:
    """The conditions on the way to each leaf of `tree` whose values satisfy `holds`, through modelled
    conditions only (below a float comparison, `where(m == -inf, 0, m)`, the value may be guarded)."""
    if isinstance(tree, Leaf):
        return [path] if holds(tree.values) else []
    if tree.cond is None:
        return []
    return exact_paths(tree.then, holds, (*path, tree.cond)) + exact_paths(
        tree.orelse, holds, (*path, z3.Not(tree.cond))
    )


def padding_leaves(
    found, valid: z3.BoolRef, lanes: tuple[z3.ArithRef, ...] = ()
) -> list[tuple[tuple[z3.BoolRef, ...], Leaf]]:
    """The leaves (with their paths) on no path through a real lane of `valid` (a conjunct of it taken; with
    `lanes`, a conjunct that depends on one of them)."""
    real_lanes = set(conjuncts(valid, lanes))
    return [(path, leaf) for path, leaf in found if not any(c.get_id() in real_lanes for c in path)]


def any_product_reaches(padded: Sym, other: Tree) -> bool:
    """Whether a padding lane of the dot operand `padded` times some value of the other operand may be
    non-zero: a cheap test before the products are built in the dot's coordinates (it never says no where
    `padding` would find a product that reaches the contraction)."""
    if padded.valid is None or padded.lanes is None:
        return False
    others = [leaf.values for _, leaf in leaves(other)]
    try:
        pads = [leaf.values for _, leaf in padding_leaves(leaves(padded.lanes), padded.valid)]
        return any(not harmless("dot", mul(pad, value), 0.0, 0.0) for pad in pads for value in others)
    except (ArithmeticError, ValueError):
        return True  # the full computation gives it up the same way


def conjuncts(term: z3.BoolRef, lanes: tuple[z3.ArithRef, ...] = ()) -> list[int]:
    """The ids of a mask and of its conjuncts (with `lanes`, those that depend on one): a lane under any of
    them is a real lane."""
    out = [term.get_id()] if not lanes or depends_on(term, list(lanes)) else []
    if z3.is_and(term):
        for child in term.children():
            out += conjuncts(child, lanes)
    return out


def kept(mask: z3.BoolRef | None, *contracted: z3.ArithRef) -> list[z3.BoolRef]:
    """The conjuncts of a dot operand's mask (a reduced value's) that do not mention its contracted (reduced)
    coordinates."""
    if mask is None:
        return []
    if z3.is_and(mask):
        return [c for child in mask.children() for c in kept(child, *contracted)]
    return [] if depends_on(mask, list(contracted)) else [mask]


def atomic_padding(ev: Evaluator, op: ir.Op, made: Access, context: Context) -> None:
    """AR313 at an `atomic_add` whose index comes from masked loads: in a lane those loads mask off (the
    index is then their `other`, an element like any other) and the atomic's own mask keeps, the value added
    must be 0. A histogram `atomic_add(hist[b], 1)` without the load's mask counts every padding lane into
    the bin of `other`."""
    if not ev.emitting or made.kind != "atomic_add":
        return
    parts = ir.memory_access(op)
    indices = [aligned(ev.get(v), made.shape) for v in parts.indices]
    masked_off = [z3.Not(i.valid) for i in indices if i.valid is not None]
    if not masked_off or parts.value is None:
        return
    value = aligned(ev.get(parts.value), made.shape)
    zero = zero_paths(lane_tree(ev, value))
    ev.emit(
        Obligation(
            "padding",
            "AR313",
            op.span,
            f"padding lanes add to `{made.tensor}`: where the loads of the index mask a lane off, the index is "
            "their `other` and the atomic_add still adds its value there, which is not 0",
            z3.Or(*[z3.And(*path) for path in zero]) if zero else z3.BoolVal(False),
            context.assumptions + coord_ranges(made.shape) + [made.mask, z3.Or(*masked_off)],
            context.loops,
            ev.program,
            coord_list(made.shape),
            [],
            [],
            "mask the atomic_add with the mask its index was loaded under (mask=offs < N)",
        )
    )
