"""AR319: an operand broadcast along the wrong axis. An elementwise op lines its operands up element by element;
`acc * s[:, None]` for `acc * s[None, :]` pairs row `pid0 * BM + i` of x with channel `pid1 * BN + i` of the
scale on axis 0, which type-checks whenever the two tiles have one size, and each element then stands for two
channels: the scale's `pid1 * BN + i` and W's `pid1 * BN + j`.

So two conditions, both on indices of loaded data (layouts, values.py): along one axis, two operands' indices
that vary along that axis alone, are affine, differ, and share no program id or loop variable (a shift `x[i]`
with `x[i + 1]`, a gather's data-dependent rows or a statistic never pair that way); and one of them has a
partner of its own dimension in the other operand, which the obligation says it equals. A filter `w[k]` beside
a chunk `x[k0 + k]` has no such partner and is not reported. A store is checked the same way (memory.py): its
value against a value made of the indices it is stored at, so an accumulator stored at `Ct[rn, rm]` without
`trans` is reported.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.model import Context, Entry, Key, Obligation, Sym
from argus.verify.terms import COORDS, depends_on, free_names, subterms
from argus.verify.values import coord_list, coord_ranges, same_term

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


Indices = list[tuple[Key, Entry, frozenset[str]]]  # an index of loaded data, its program ids and loop variables


def paired_axes(
    ev: Evaluator,
    op: ir.Op,
    operands: list[Sym],
    shape: tuple[int, ...],
    context: Context,
    guess: str = "an operand broadcast along the wrong axis?",
) -> set[Key]:
    """The keys of the pair reported, which the result drops: a value computed from it is not reported again.
    `guess`: what the message suggests went wrong."""
    if not ev.emitting or len(operands) < 2:
        return set()
    valid = [s.valid for s in operands if s.valid is not None]
    for axis, size in enumerate(shape):
        if size == 1:
            continue
        along = [runs_along(ev, sym, axis, len(shape)) for sym in operands]
        for (n, first), (m, second) in itertools.combinations(enumerate(along), 2):
            for (key_a, entry_a), (key_b, entry_b) in unrelated(first, second):
                claim = two_indices(key_b, entry_b, operands[n]) or two_indices(key_a, entry_a, operands[m])
                if claim is None:
                    continue  # a filter w[k] beside a chunk x[k0 + k]: the element stands for one index of each
                real = [c for sym in operands for entry in sym.layout.values() for c in inside(ev, entry)]
                emit(ev, op, axis, shape, claim, valid + real, context, guess)
                return {key_a, key_b}  # one report an op: the other axes' pairs follow from the same operand
    return set()


def two_indices(key: Key, entry: Entry, other: Sym) -> tuple[tuple[Key, Entry], tuple[Key, Entry]] | None:
    """The misplaced index beside the other operand's index of the same dimension: an element that stands for
    two channels (row i of x scaled by channel i, next to column j's channel j), which differ wherever i != j,
    so the failure shows in the output."""
    for other_key, other_entry in other.layout.items():
        if other_key != key and other_entry.label == entry.label and not other_entry.stat:
            return (key, entry), (other_key, other_entry)
    return None


def runs_along(ev: Evaluator, sym: Sym, axis: int, rank: int) -> Indices:
    """The loaded indices of `sym` that vary along `axis` alone, with the program ids and loop variables each
    is computed from (none of data, of a statistic, or of a value the verifier only names)."""
    others = [COORDS[k] for k in range(rank) if k != axis]
    found = []
    for key, entry in sym.layout.items():
        if entry.stat or not depends_on(entry.term, [COORDS[axis]]) or depends_on(entry.term, others):
            continue
        if any(
            z3.is_app(t) and t.num_args() > 0 and t.decl().kind() == z3.Z3_OP_UNINTERPRETED
            for t in subterms(entry.term)
        ):
            continue  # a gather: rows read from memory
        names = free_names(entry.term) - set(ev.shared.sizes) - {str(c) for c in COORDS}
        if not any(name.startswith("?") for name in names):
            found.append((key, entry, frozenset(names)))
    return found


def unrelated(first: Indices, second: Indices) -> Iterator[tuple[tuple[Key, Entry], tuple[Key, Entry]]]:
    """Pairs of different indices along one axis that no program id or loop variable ties together."""
    for key_a, entry_a, names_a in first:
        for key_b, entry_b, names_b in second:
            if key_a != key_b and not names_a & names_b and not same_term(entry_a.term, entry_b.term):
                yield (key_a, entry_a), (key_b, entry_b)


def inside(ev: Evaluator, entry: Entry) -> list[z3.BoolRef]:
    """The index within its dimension: the witness an element of real rows and columns, whatever masks the
    verifier kept (a dot's result keeps none)."""
    extent = ev.shared.sizes.get(entry.label)
    if extent is None and entry.label.isdigit():
        extent = z3.IntVal(int(entry.label))
    return [] if extent is None else [entry.term >= 0, entry.term < extent]


def emit(
    ev: Evaluator, op: ir.Op, axis: int, shape: tuple[int, ...], claim, facts: list, context: Context, guess: str
) -> None:
    """`claim`: two indices of one dimension an element must agree on; `facts`: the element is real (the
    operands' masks, every index inside its dimension)."""
    (key_a, entry_a), (key_b, entry_b) = claim
    what = f"each element stands for two {entry_a.label} indices, {key_a[0]}'s and {key_b[0]}'s"
    ev.emit(
        Obligation(
            "paired_axes",
            "AR319",
            op.span,
            f"{what}: axis {axis} pairs indices that no program id or loop ties together ({guess})",
            entry_a.term == entry_b.term,
            context.assumptions + coord_ranges(shape) + facts,
            context.loops,
            ev.program,
            coord_list(shape),
            [
                (f"{key_a[0]}'s {entry_a.label} index", entry_a.term),
                (f"{key_b[0]}'s {entry_b.label} index", entry_b.term),
            ],
        )
    )
