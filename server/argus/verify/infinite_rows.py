"""AR317: -inf minus -inf in a real lane, the NaN of a row whose mask keeps nothing (issue 17), or of a padding
lane that a reduction then takes into a real row.

An online softmax or log-sum-exp subtracts a running max from scores that a mask set to -inf. Where every score
of a row is -inf, the row's max is -inf too, and `s - m` is -inf - -inf = NaN, which the sum and the output
then carry. Correct kernels keep at least one lane of every row in the first block (a causal mask `rn <= rm`
keeps the diagonal) or guard the max (`where(m == -inf, 0, m)`); an off-by-one mask (`rn < rm`: query 0 sees no
key) or a missing guard where a lane may see only padding does neither.

Three pieces, on the lanes the padding analysis already tracks (padding.Tree):

- `every_lane_ninf`: a `max` along an axis is exactly -inf where each of its lanes is (the lanes are written out
  one by one: at most MAX_SPREAD of them);
- `running_maxima` and `later_iterations`: a value a loop carries as `maximum(m, x)` from a start of -inf holds
  its start in the first iteration and, in any later one, at most the -inf lanes the first iteration left (a
  running max only ever drops -inf lanes), so its lanes are `iv == start ? start : after the first`;
- `nan_created`: the obligation at `a - b` (and `a + b`) that no real lane (its loads' masks on) holds exactly
  -inf on both sides (+inf against -inf for a sum), through modelled conditions only; where the result reaches
  a `sum`, `max` or `min` lane by lane (`reductions_reached`), a padding lane counts too when its row along
  the reduced axes has a real lane (an online log-sum-exp without the guard, whose padding lanes' NaN the
  final sum adds to the row).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.model import Context, Obligation, Sym
from argus.verify.padding import NAN, NINF, PINF, REAL, Leaf, Tree, VSet, apply, bounded, branch, leaves
from argus.verify.padding_checks import exact_paths, lane_tree
from argus.verify.reached import reductions_reached
from argus.verify.shared import Uses
from argus.verify.terms import COORDS, free_names, substitute
from argus.verify.values import coord_list, coord_ranges

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

MAX_SPREAD = 256  # lanes along a reduced axis written out one by one for "every lane is -inf"


def is_ninf(values: VSet) -> bool:
    """Exactly -inf: `full(..., -inf)`, `where(keep, s, -inf)`, a load's `other=-inf`."""
    return values == NINF


def is_nan(values: VSet) -> bool:
    return values.nan


def every_lane_ninf(x: Sym, axes: tuple[int, ...]) -> Tree | None:
    """The lanes of `max(x, axis)` in x's coordinates (the reduced one gone): -inf where every lane along the
    axis is, a real number elsewhere. None when no lane of x is exactly -inf on a modelled path, or the
    reduction is not along one axis of at most MAX_SPREAD lanes."""
    if x.lanes is None or len(axes) != 1 or x.shape[axes[0]] > MAX_SPREAD:
        return None
    paths = exact_paths(x.lanes, is_ninf)
    if not paths:
        return None
    axis = COORDS[axes[0]]
    anywhere = z3.Or(*[z3.And(*path) for path in paths])
    every = z3.simplify(z3.And(*[substitute(anywhere, [(axis, z3.IntVal(k))]) for k in range(x.shape[axes[0]])]))
    origins = tuple(span for _, leaf in leaves(x.lanes) if is_ninf(leaf.values) for span in leaf.origins)
    return branch(every, Leaf(NINF, origins), Leaf(REAL))


def running_maxima(body: ir.Block, inits: list[Sym]) -> list[int]:
    """The carried values the body yields as `maximum(carried, x)` and that start with lanes of exactly -inf."""
    found = []
    for k, (init, value) in enumerate(zip(inits, body.yields, strict=True)):
        op = value.op
        if init.lanes is None or op is None or op.kind != "math" or op.attrs.get("fn") != "maximum":
            continue
        if body.args[k + 1] not in op.operands or not exact_paths(init.lanes, is_ninf):
            continue
        found.append(k)
    return found


def later_iterations(first: Tree | None, start: Tree, iv: z3.ArithRef, begin: z3.ArithRef) -> Tree:
    """A running max's lanes at any iteration: its start in the first, and where the first iteration left it
    (`first`, the body's yield with the loop variable at its first value) in every later one; a real number
    there when that is not known."""
    if first is None:
        return branch(iv == begin, start, Leaf(REAL))
    return branch(iv == begin, start, at_first(first, iv, begin))


def mentions(tree: Tree, names: set[str]) -> bool:
    """Whether a condition of the tree mentions one of the variables `names` (a carried value's havoc)."""
    if isinstance(tree, Leaf):
        return False
    if tree.cond is not None and free_names(tree.cond) & names:
        return True
    return mentions(tree.then, names) or mentions(tree.orelse, names)


def at_first(tree: Tree, iv: z3.ArithRef, begin: z3.ArithRef) -> Tree:
    if isinstance(tree, Leaf):
        return tree
    cond = None if tree.cond is None else z3.simplify(substitute(tree.cond, [(iv, begin)]))
    return branch(cond, at_first(tree.then, iv, begin), at_first(tree.orelse, iv, begin))


def nan_created(ev: Evaluator, op: ir.Op, a: Sym, b: Sym, result: Sym, context: Context) -> None:
    """AR317 at a float `a - b` or `a + b`: no real lane holds exactly -inf on both sides of `-` (+inf and -inf
    for `+`), each through conditions the verifier models. A value that only may overflow to an infinity (a
    power of an unbounded number) is not an exact infinity and is not asked about."""
    if not ev.emitting:
        return
    sign = op.attrs["op"]
    trees = [lane_tree(ev, s) for s in (a, b)]
    if not all(any(exact_infinity(leaf.values) for _, leaf in leaves(t)) for t in trees):
        return
    try:
        clash = bounded(apply(lambda x, y: NAN if cancels(x, y, sign) else REAL, trees))
    except (ArithmeticError, ValueError):
        return
    paths = exact_paths(clash, is_nan) if clash is not None else []
    if not paths:
        return
    shape = result.shape
    real = [result.valid] if result.valid is not None else []
    axes = sorted(reductions_reached(ev.shared.uses, op.result)) if result.valid is not None else []
    if axes:
        # a padding lane's NaN that a reduction along `axes` takes in spoils its row when the row has a real
        # lane: that lane, not this one, is what must be real
        others = [z3.Int(f"real#{k}") for k in axes]
        real = [substitute(result.valid, [(COORDS[k], o) for k, o in zip(axes, others, strict=True)])]
        real += [z3.And(o >= 0, o < shape[k]) for k, o in zip(axes, others, strict=True)]
    left, right = (operand_name(v) for v in op.operands)
    ev.emit(
        Obligation(
            "nan",
            "AR317",
            op.span,
            nan_message(f"`{left} {sign} {right}` is -inf {sign} {'-' if sign == '-' else ''}inf", axes),
            z3.Not(z3.Or(*[z3.And(*path) for path in paths])),
            context.assumptions + coord_ranges(shape) + real,
            context.loops,
            ev.program,
            coord_list(shape),
            [],
            [],
            "keep at least one lane of every row in the first block (check the mask: `<=` where `<` drops the "
            "diagonal), or guard the max: where(m == -inf, 0, m) before subtracting it",
        )
    )


def uses(kernel: ir.KernelIR) -> Uses:
    """Each value's users (by id), and where each value a loop body yields goes: the body's argument for the
    next iteration and the loop's result."""
    users: dict[int, list[ir.Op]] = {}
    carried: dict[int, list[ir.Value]] = {}
    for op in ir.walk_ops(kernel.body):
        for operand in op.operands:
            users.setdefault(operand.id, []).append(op)
        if op.kind == "for":
            body = op.regions[0]
            for arg, yielded, result in zip(body.args[1:], body.yields, op.results, strict=False):
                carried.setdefault(yielded.id, []).extend([arg, result])
    return users, carried


def nan_message(clash: str, padding_axes: list[int]) -> str:
    if not padding_axes:
        return f"NaN in a real lane: {clash}, where a row's mask keeps no lane and its max stays -inf"
    axes = ", ".join(map(str, padding_axes))
    return (
        f"NaN that a reduction takes in: {clash} in a lane the mask keeps off, and a reduction along axis {axes} "
        "adds that lane to a row with real lanes"
    )


def nan_stored(ev: Evaluator, op: ir.Op, value: Sym, mask: z3.BoolRef, context: Context) -> None:
    """AR317 at a store: no lane the store keeps holds the NaN of -inf - -inf where the value's own loads mask
    the lane off (a real lane's NaN is asked where it is made, by nan_created). A causal softmax whose load
    mask `cols < row` drops the diagonal leaves row 0 nothing but -inf: its max is -inf, every lane of
    `exp(v - m) / s` is NaN, and a store masked by `cols < S` writes them."""
    if not ev.emitting or value.valid is None:
        return
    paths = exact_paths(lane_tree(ev, value), lambda values: values == NAN)
    if not paths:
        return
    shape = value.shape
    ev.emit(
        Obligation(
            "nan",
            "AR317",
            op.span,
            f"NaN written to `{ir.memory_access(op).tensor.name}`: the value is -inf - -inf in a lane its loads "
            "mask off and the store keeps, where a row's mask keeps no lane and its max stays -inf",
            z3.Not(z3.Or(*[z3.And(*path) for path in paths])),
            context.assumptions + coord_ranges(shape) + [mask, z3.Not(value.valid)],
            context.loops,
            ev.program,
            coord_list(shape),
            [],
            [],
            "keep at least one lane of every row (check the mask: `<=` where `<` drops the diagonal), guard "
            "the max (where(m == -inf, 0, m)), or store under the mask the loads use",
        )
    )


def exact_infinity(values: VSet) -> bool:
    return values in (NINF, PINF)


def cancels(x: VSet, y: VSet, sign: str) -> bool:
    """Two exact infinities whose difference (`-`) or sum (`+`) is NaN."""
    if not (exact_infinity(x) and exact_infinity(y)):
        return False
    return (x == y) if sign == "-" else (x != y)


def operand_name(value: ir.Value) -> str:
    """The name the kernel gives an operand, through the shape ops around it (`m_new[:, None]`)."""
    while not value.name and value.op is not None and value.op.kind in ("expand_dims", "broadcast_to"):
        value = value.op.operands[0]
    return value.name or "the operand"
