"""`dot`: the contraction check (AR310: a's column index and b's row index read the same element of the
contracted dimension), what each instance contracts for AR315 (contributions.py), the padding of its products
(padding_checks.dot_padding, AR313) and its result's layout: the operands' axes that are not contracted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.elementwise import merge_layouts
from argus.verify.model import Context, Contraction, Entry, Key, Obligation, Sym
from argus.verify.padding import BINARY
from argus.verify.padding_checks import combined, dot_output, dot_padding, where_kept
from argus.verify.rules import rule
from argus.verify.terms import COORDS, depends_on, free_names, move_coords
from argus.verify.values import aligned, coord_ranges, is_int, merge_tags, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


@rule("dot")
def dot_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    a, b = ev.get(op.operands[0]), ev.get(op.operands[1])
    rank = len(a.shape)
    i, kk, j = z3.Int("i"), z3.Int("kk"), z3.Int("j")
    batch = [COORDS[0]] if rank == 3 else []
    a_map = {**dict(enumerate(batch)), rank - 2: i, rank - 1: kk}
    b_map = {**dict(enumerate(batch)), rank - 2: kk, rank - 1: j}
    a_axis, b_axis = [COORDS[rank - 1]], [COORDS[rank - 2]]
    a_contracted = {k: e for k, e in a.layout.items() if depends_on(e.term, a_axis)}
    b_contracted = {k: e for k, e in b.layout.items() if depends_on(e.term, b_axis)}
    shape = shape_of(op.result.type)
    ranges = [z3.And(i >= 0, i < a.shape[-2]), z3.And(kk >= 0, kk < a.shape[-1]), z3.And(j >= 0, j < b.shape[-1])]
    ranges += coord_ranges(shape[:-2])
    pairs = [(ak, ae, bk, be) for ak, ae in a_contracted.items() for bk, be in b_contracted.items()]
    same = [p for p in pairs if p[1].label == p[3].label]
    # Axes of the same dimension must be read at the same index. When no contracted axis of a shares a
    # dimension with one of b (x's K against W's N: a Linear's W used without `trans`), every pair must: tiles
    # of equal size would otherwise check clean while contracting over different dimensions (issue 17, 1).
    for a_key, a_entry, b_key, b_entry in (same or pairs) if ev.emitting else ():
        a_index, b_index = move_coords(a_entry.term, a_map), move_coords(b_entry.term, b_map)
        if not same and same_run(a_index, b_index):
            continue  # one run read through two encodings: W4's packed row rk // 2 against A's rk
        both = [v for v in (move_coords(a.valid, a_map), move_coords(b.valid, b_map)) if v is not None]
        ev.emit(
            Obligation(
                "contraction",
                "AR310",
                op.span,
                f"dot contraction mismatch: a's column index into {a_key[0]} differs from b's row index "
                f"into {b_key[0]} ({dimensions(a_entry.label, b_entry.label)})",
                z3.Implies(z3.And(*both), a_index == b_index) if both else a_index == b_index,
                context.assumptions + ranges,
                context.loops,
                ev.program,
                [("i", i), ("kk", kk), ("j", j)],
                [(f"a's {a_entry.label} index", a_index), (f"b's {b_entry.label} index", b_index)],
            )
        )
    dot_padding(ev, op, a, b, a_map, b_map, kk, [("i", i), ("kk", kk), ("j", j)], ranges, context)
    if ev.recording and id(op) in ev.shared.summed_dots:
        contraction(ev, op, a, b, a_contracted, b_contracted, batch, context)
    out_map_a = {**dict(enumerate(batch)), rank - 2: COORDS[rank - 2]}
    out_map_b = {**dict(enumerate(batch)), rank - 1: COORDS[rank - 1]}
    layout: dict[Key, Entry] = {}
    for key, entry in a.layout.items():
        if key not in a_contracted:
            layout[key] = Entry(move_coords(entry.term, out_map_a), entry.label, entry.stat, entry.origin)
    for key, entry in b.layout.items():
        if key not in b_contracted:
            layout[key] = Entry(move_coords(entry.term, out_map_b), entry.label, entry.stat, entry.origin)
    tags = merge_tags(a.tags, b.tags)
    term = ev.shared.fresh("integer dot") if is_int(op.result.type) else None
    valid, lanes = dot_output(ev, a, b, rank)
    sym = Sym(shape, term, layout, tags, valid, lanes)
    if len(op.operands) > 2:
        acc = aligned(ev.get(op.operands[2]), shape)
        merged = merge_layouts(ev, acc.layout, layout, shape, op, context)
        total = None if valid is None else combined(ev, [acc, sym], BINARY["+"])
        valid = valid if acc.valid is None or valid is None else z3.And(acc.valid, valid)
        sym = Sym(shape, term, merged, merge_tags(tags, acc.tags), valid if total is not None else None, total)
    ev.result(op, sym)


def contraction(
    ev: Evaluator,
    op: ir.Op,
    a: Sym,
    b: Sym,
    a_contracted: dict[Key, Entry],
    b_contracted: dict[Key, Entry],
    batch: list[z3.ArithRef],
    context: Context,
) -> None:
    """What this instance's dot contracts, in its result's coordinates, for AR315 (contributions.py): the
    index each contracted axis reads at lane kk (a variable of this instance), the operands' masks there."""
    rank = len(a.shape)
    lane = z3.Int(f"kk@{op.span.line + 1}{ev.suffix}")
    a_map = {**dict(enumerate(batch)), rank - 2: COORDS[rank - 2], rank - 1: lane}
    b_map = {**dict(enumerate(batch)), rank - 2: lane, rank - 1: COORDS[rank - 1]}
    indices = {k: (move_coords(e.term, a_map), e.label) for k, e in a_contracted.items()}
    indices.update({k: (move_coords(e.term, b_map), e.label) for k, e in b_contracted.items()})
    masks = [move_coords(s.valid, m) for s, m in ((a, a_map), (b, b_map)) if s.valid is not None]
    kept = [
        move_coords(c, m)
        for value, m, axis in ((op.operands[0], a_map, rank - 1), (op.operands[1], b_map, rank - 2))
        for c in where_kept(ev, value, [COORDS[axis]])
    ]
    lane_range = z3.And(lane >= 0, lane < a.shape[-1])
    out_a = {**dict(enumerate(batch)), rank - 2: COORDS[rank - 2]}
    out_b = {**dict(enumerate(batch)), rank - 1: COORDS[rank - 1]}
    tile = {k: (move_coords(e.term, out_a), e.label) for k, e in a.layout.items() if k not in a_contracted}
    tile.update({k: (move_coords(e.term, out_b), e.label) for k, e in b.layout.items() if k not in b_contracted})
    ev.contractions[id(op)] = Contraction(
        indices,
        masks,
        list(context.assumptions),
        list(context.loops),
        lane,
        lane_range,
        op.span,
        a.shape[-1],
        tile,
        shape_of(op.result.type),
        kept,
    )


def same_run(a_index: z3.ExprRef, b_index: z3.ExprRef) -> bool:
    """Whether two contracted indices of different dimensions move with the same loop variables and program
    ids, beyond the lane: a packed or grouped encoding of one run (`Bq[rk // 2, rn]` beside `A[rm, rk]`), not
    a transposed operand, whose index moves with another run (W's `rn` where x's `rk` belongs)."""
    lanes = {"i", "kk", "j"} | {str(c) for c in COORDS}
    a_names, b_names = free_names(a_index) - lanes, free_names(b_index) - lanes
    return bool(a_names) and a_names == b_names


def dimensions(a_label: str, b_label: str) -> str:
    if a_label == b_label:
        return f"dimension {a_label}"
    return f"a contracts over {a_label}, b over {b_label}: a transposed operand needs `trans`"
