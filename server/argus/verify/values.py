"""Small shared pieces of the symbolic evaluation: value kinds, coordinate ranges, broadcasting, merging tags."""

from __future__ import annotations

import z3

from argus.dsl.types import ScalarT, TileT
from argus.verify.model import Entry, Sym
from argus.verify.padding import known, move
from argus.verify.terms import COORD_NAMES, COORDS, move_coords


class Unsupported(Exception):
    """An op the evaluator cannot model; the kernel's obligations become unknown with this reason."""


def is_int(type_) -> bool:
    return isinstance(type_, ScalarT | TileT) and type_.dtype.is_integer and type_.dtype.kind != "bool"


def is_float(type_) -> bool:
    return isinstance(type_, ScalarT | TileT) and type_.dtype.is_float


def is_bool(type_) -> bool:
    return isinstance(type_, ScalarT | TileT) and type_.dtype.kind == "bool"


def shape_of(type_) -> tuple[int, ...]:
    return tuple(d.value for d in type_.shape) if isinstance(type_, TileT) else ()


def coord_ranges(shape: tuple[int, ...], coords: list[z3.ArithRef] | None = None) -> list[z3.BoolRef]:
    coords = coords or COORDS
    return [z3.And(coords[k] >= 0, coords[k] < n) for k, n in enumerate(shape)]


def coord_list(shape: tuple[int, ...], coords: list[z3.ArithRef] | None = None) -> list[tuple[str, z3.ArithRef]]:
    coords = coords or COORDS
    return [(COORD_NAMES[k], coords[k]) for k in range(len(shape))]


def aligned(sym: Sym, shape: tuple[int, ...]) -> Sym:
    """The value broadcast to `shape`: its coordinates moved right-aligned, size-1 axes pinned to 0."""
    rank, target = len(sym.shape), len(shape)
    mapping = {}
    for k in range(rank):
        axis = k + target - rank
        mapping[k] = z3.IntVal(0) if sym.shape[k] == 1 and shape[axis] != 1 else COORDS[axis]
    if all(v.eq(COORDS[k]) for k, v in mapping.items()):
        return Sym(shape, sym.term, sym.layout, sym.tags, sym.valid, sym.lanes)
    layout = {key: Entry(move_coords(e.term, mapping), e.label, e.stat, e.origin) for key, e in sym.layout.items()}
    moved = move_coords(sym.valid, mapping)
    lanes = move(sym.lanes, mapping, known(sym.valid, moved))
    return Sym(shape, move_coords(sym.term, mapping), layout, sym.tags, moved, lanes)


def merge_tags(a: dict[str, z3.ArithRef], b: dict[str, z3.ArithRef]) -> dict[str, z3.ArithRef]:
    """Tags of a value computed from two others: a tag both carry survives only where they agree."""
    merged = dict(a)
    for name, term in b.items():
        if name in merged and not merged[name].eq(term):
            if not z3.simplify(merged[name] - term).eq(z3.IntVal(0)):
                del merged[name]
            continue
        merged[name] = term
    return merged


def same_term(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """Syntactically equal, or equal after z3's simplifier (a cheap, sound, incomplete test)."""
    return a.eq(b) or z3.simplify(a - b).eq(z3.IntVal(0))


def substitute_all(term: z3.BoolRef, pairs) -> z3.BoolRef:
    pairs = [(a, b) for a, b in pairs if not a.eq(b)]
    return z3.substitute(term, *pairs) if pairs else term
