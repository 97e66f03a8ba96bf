"""Shape ops and reductions: `expand_dims`, `trans`, `broadcast_to` and `reshape` move a value's coordinates;
`reduce` drops an axis (or several), and what its layout kept along the others becomes a statistic (for AR311);
its padding lanes are checked by padding_checks.reduce_padding (AR313).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.infinite_rows import every_lane_ninf
from argus.verify.model import Context, Entry, Sym
from argus.verify.padding import known, move
from argus.verify.padding_checks import reduce_padding, reduced_lanes, reduced_padding
from argus.verify.rules import rule
from argus.verify.terms import COORDS, depends_on, move_coords
from argus.verify.values import aligned, is_int, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


def moved(ev: Evaluator, op: ir.Op, x: Sym, mapping: dict[int, z3.ArithRef], shape: tuple[int, ...]) -> None:
    """The op's result: `x` with its coordinates moved by `mapping` (result coordinates for each of x's axes)."""
    layout = {k: Entry(move_coords(e.term, mapping), e.label, e.stat, e.origin) for k, e in x.layout.items()}
    valid = move_coords(x.valid, mapping)
    lanes = move(x.lanes, mapping, known(x.valid, valid))
    ev.result(op, Sym(tuple(shape), move_coords(x.term, mapping), layout, dict(x.tags), valid, lanes))


@rule("expand_dims")
def expand_dims_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    shape = shape_of(op.result.type)
    added = set(op.attrs["axes"])
    kept = [k for k in range(len(shape)) if k not in added]
    moved(ev, op, x, {old: COORDS[new] for old, new in enumerate(kept)}, shape)


@rule("trans")
def trans_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    moved(ev, op, x, {0: COORDS[1], 1: COORDS[0]}, shape_of(op.result.type))


@rule("broadcast_to")
def broadcast_to_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    ev.result(op, aligned(ev.get(op.operands[0]), shape_of(op.result.type)))


@rule("reshape")
def reshape_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    shape = shape_of(op.result.type)
    linear = z3.IntVal(0)
    for k, n in enumerate(shape):
        linear = linear * n + COORDS[k]
    mapping, stride = {}, 1
    for k in reversed(range(len(x.shape))):
        mapping[k] = (linear / stride) % x.shape[k]
        stride *= x.shape[k]
    moved(ev, op, x, mapping, shape)


@rule("reduce")
def reduce_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    """One axis or several (`sum(x, axis=(0, 1))`): the padding of every reduced axis is checked at once, and
    the kept axes' coordinates close up (unless keep_dims)."""
    x = ev.get(op.operands[0])
    reduce_padding(ev, op, x, context)
    axes, keep = ir.reduced_axes(op), op.attrs["keep_dims"]
    shape = shape_of(op.result.type)
    mapping = {}
    for k in range(len(x.shape)):
        if k in axes:
            continue
        mapping[k] = COORDS[k] if keep else COORDS[k - sum(1 for a in axes if a < k)]
    reduced = [COORDS[a] for a in axes]
    layout = {}
    for key, entry in x.layout.items():
        if depends_on(entry.term, reduced):
            continue
        layout[key] = Entry(move_coords(entry.term, mapping), entry.label, True, op.span)
    term = ev.shared.fresh(f"{op.attrs['fn']} of integers") if is_int(op.result.type) else None
    lanes = None if term is not None else reduced_lanes(ev, x, axes, op.attrs["fn"], mapping)
    if lanes is None and term is None and ev.emitting and op.attrs["fn"] == "max":
        lanes = move(every_lane_ninf(x, axes), mapping)  # a row of -inf lanes has a max of -inf
    valid, padded = (None, None) if term is not None else reduced_padding(ev, op, x, mapping, lanes)
    if padded is not None:
        lanes = padded
    ev.result(op, Sym(shape, term, layout, dict(x.tags), valid if padded is not None else None, lanes))
