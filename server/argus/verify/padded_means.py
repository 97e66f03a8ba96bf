"""AR322: a mean over a tile's lanes divides by the tile's width where some of its lanes are padding (issue 17).

A row shorter than its tile (N < BN) is loaded under `cols < N` with `other=0` and summed: the sum is the row's,
the padding adds 0. Divided by the tile's width BN instead of N, the mean is too small by N / BN in every row
shorter than the tile: an RMSNorm's mean of squares, a LayerNorm's mean, a column mean over a tile of rows.
Every access is in bounds and every padding lane holds the sum's identity, so no other check sees it.

The check reads the dataflow at a float `s / d` (or `s * (1.0 / d)`): the dividend is a `sum` (through casts and
shape ops) and the divisor a compile-time constant equal to the number of lanes the sum reduces (the tile
constant, `BN * 1.0`, `BN.to(f32)`). Only then is z3 asked for a row with a real lane and a masked-off one
along the reduced axes; a mask that is full wherever the sum looks (`requires N % BN == 0`, `N == BN`) proves
it. A divisor that is not that constant (N, a count of the mask's lanes, `min(N - c0, BN)`) is the real count
or a choice this check cannot judge: it is not asked about, and costs nothing.

Only a tile that reads its axis from a fixed place is judged: the index along the reduced axis at lane 0
mentions sizes and numbers only (no program id, loop variable, other coordinate or loaded value). Such a tile
is meant to cover the axis from its start (a row, a column); a window that slides with the program or a loop
(an average pool whose padded taps count, PyTorch's count_include_pad) divides by its width on purpose and
is left alone, as is a block of a loop over the row (its sum is a part of the row's).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.dataflow import passed_through
from argus.verify.model import Context, Obligation, Sym
from argus.verify.padding import leaves
from argus.verify.padding_checks import padding_leaves
from argus.verify.terms import COORDS, applies_any, depends_on, free_names, show, substitute
from argus.verify.values import coord_list, coord_ranges, is_float

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

REAL_LANE = "a real lane summed with it"  # the witness's real lane beside the padding one (visible.py)


def padded_mean(ev: Evaluator, op: ir.Op, context: Context) -> None:
    """AR322 at the float `binary` op `op` (a `/` or a `*`), when it divides a sum by its number of lanes."""
    if not ev.emitting or not is_float(op.result.type):
        return
    found = mean_of(op)
    if found is None:
        return
    reduce, divisor, done = found
    x = ev.values.get(reduce.operands[0].id)  # evaluated before the division (it is upstream in its block)
    if x is None:
        return
    axes = ir.reduced_axes(reduce)
    width = math.prod(x.shape[a] for a in axes)
    lanes = tuple(COORDS[a] for a in axes)
    if divisor != width or x.valid is None or not depends_on(x.valid, list(lanes)):
        return  # not the tile's width, or no lane of a row is ever masked off: nothing to ask
    if not fixed_start(ev, x, lanes):
        return
    ev.emit(obligation(ev, op, reduce, x, axes, lanes, width, done, context))


def mean_of(op: ir.Op) -> tuple[ir.Op, float, str] | None:
    """(the `sum` divided, the divisor as a number of lanes, what is done to the sum as the kernel writes it:
    "divided by `BN`", "multiplied by `1.0 / BN`") for `s / d` and for `s * r` with r = 1 / d, where s is a
    sum and d or r a constant; None otherwise."""
    name = op.attrs.get("op")
    a, b = op.operands
    if name == "/":
        reduce, constant = summed(a), constant_of(b)
        if reduce is None or constant is None or constant[0] == 0:
            return None
        return reduce, constant[0], f"divided by `{constant[1]}`"
    if name == "*":
        for s, r in ((a, b), (b, a)):
            reduce, constant = summed(s), constant_of(r)
            if reduce is not None and constant is not None and constant[0] > 0:
                return reduce, 1.0 / constant[0], f"multiplied by `{constant[1]}`"
    return None


def summed(value: ir.Value) -> ir.Op | None:
    """The `sum` a value is, through casts and shape ops (`sum(x, axis=1)[:, None]`)."""
    op = passed_through(value).op
    if op is not None and op.kind == "reduce" and op.attrs.get("fn") == "sum":
        return op
    return None


def constant_of(value: ir.Value) -> tuple[float, str] | None:
    """A compile-time number and its source text (`BN`, `(BN * 1.0)`, `4096.0`), through conversions: the
    front end folds constant expressions of tile constants into one `const` op."""
    op = value.op
    while op is not None and op.kind == "cast" and op.operands:
        op = op.operands[0].op
    if op is None or op.kind != "const":
        return None
    number = op.attrs.get("value")
    if isinstance(number, bool) or not isinstance(number, int | float):
        return None
    text = str(op.attrs.get("expr") or value.name or number)
    if text.startswith("(") and text.endswith(")"):  # the front end's folded `(BN * 1.0)`
        text = text[1:-1]
    return float(number), text


def fixed_start(ev: Evaluator, x: Sym, lanes: tuple[z3.ArithRef, ...]) -> bool:
    """Whether every tensor index that runs along the reduced lanes starts (at lane 0) at a place fixed by the
    sizes alone: a tile that covers its axis from the start, not a window that slides (module docstring)."""
    along = [entry.term for entry in x.layout.values() if depends_on(entry.term, list(lanes))]
    if not along:
        return False  # what the lanes stand for is not known: no claim
    allowed = set(ev.shared.sizes)
    for term in along:
        start = z3.simplify(substitute(term, [(lane, z3.IntVal(0)) for lane in lanes]))
        if not free_names(start) <= allowed or applies_any(start, ev.shared.functions):
            return False
    return True


def real_count(valid: z3.BoolRef, lane: z3.ArithRef) -> z3.ArithRef | None:
    """The number of real lanes where the mask is `lane < S` for S free of coordinates (`cols < N` on an
    `arange(BN)`): S; None for any other mask."""
    parts = [valid]
    while parts:
        c = parts.pop()
        if z3.is_and(c):
            parts.extend(c.children())
            continue
        if z3.is_not(c) and z3.is_le(c.arg(0)) and c.arg(0).arg(1).eq(lane):
            bound = c.arg(0).arg(0)  # Not(S <= lane)
        elif z3.is_lt(c) and c.arg(0).eq(lane):
            bound = c.arg(1)
        else:
            continue
        if not depends_on(bound, COORDS):
            return bound
    return None


def tile_width(reduce: ir.Op, axes: tuple[int, ...], width: int) -> str:
    """The reduced extent as the kernel names it: `BN`, `BM * BN`, else the number."""
    shape = getattr(reduce.operands[0].type, "shape", ())
    labels = [getattr(shape[a], "label", None) if a < len(shape) else None for a in axes]
    return " * ".join(str(label) for label in labels) if all(labels) else str(width)


def obligation(
    ev: Evaluator,
    op: ir.Op,
    reduce: ir.Op,
    x: Sym,
    axes: tuple[int, ...],
    lanes: tuple[z3.ArithRef, ...],
    width: int,
    done: str,
    context: Context,
) -> Obligation:
    """Every lane of a live row (one with a real lane along the reduced axes) is real. Stated in the summed
    tile's coordinates: the witness names the padding lane and a real lane of its row."""
    valid = x.valid
    assert valid is not None
    coords, ranges = coord_list(x.shape), coord_ranges(x.shape)
    others = [z3.Int(f"{lane}'") for lane in lanes]
    bounds = [z3.And(o >= 0, o < x.shape[a]) for o, a in zip(others, axes, strict=True)]
    live = substitute(valid, list(zip(lanes, others, strict=True)))
    names = [name for name, c in coords if any(c.eq(lane) for lane in lanes)]
    reals = [(f"{REAL_LANE}: {name}", o) for name, o in zip(names, others, strict=True)]
    tile = tile_width(reduce, axes, width)
    shown = [(f"{t} index {d} ({e.label})", e.term) for (t, d), e in x.layout.items()]
    bound = real_count(valid, lanes[0]) if len(lanes) == 1 else None
    count = show(bound) if bound is not None else None
    shown += [*reals, (f"lanes the mean counts ({tile})", z3.IntVal(width))]
    shown += [(f"lanes that hold data ({count})", bound)] if bound is not None else []
    origins = sorted(
        {span for _, leaf in padding_leaves(leaves(x.lanes), valid) for span in leaf.origins} if x.lanes else set(),
        key=lambda s: (s.line, s.col),
    )
    lines = sorted({span.line + 1 for span in origins})
    where = f" (masked off at line{'s' * (len(lines) > 1)} {', '.join(map(str, lines))})" if lines else ""
    axis = f"axis {axes[0]}" if len(axes) == 1 else f"axes {', '.join(map(str, axes))}"
    held = f"only the first `{count}` hold data" if count else "only the lanes its mask keeps hold data"
    named = f"`{tile}` = {width}" if tile != str(width) else str(width)
    message = (
        f"the mean counts all {named} lanes of the tile but {held}: the sum along {axis} is {done}, "
        f"which counts its padding lanes{where} as data"
    )
    hint = (
        f"divide by `{count}`, the number of real lanes, not by the tile's width `{tile}`"
        if count
        else f"divide by the number of real lanes (the row's length, or sum(mask.to(f32))), not by `{tile}`"
    )
    related = [(reduce.span, "the sum of the tile's lanes, padding included")]
    related += [(span, "the padding lanes are masked off here") for span in origins]
    return Obligation(
        "padded_mean",
        "AR322",
        op.span,
        message,
        valid,
        [*context.assumptions, *ranges, *bounds, live],
        context.loops,
        ev.program,
        coords,
        shown,
        related,
        hint,
    )
