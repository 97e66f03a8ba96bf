"""z3 terms for index arithmetic: element coordinates, C-style integer division, free-variable queries.

A tile value's element term is written over canonical coordinate variables `e0, e1, ...`, one per axis of
the tile itself; an op that moves axes (expand_dims, trans, broadcasting) substitutes them.
"""

from __future__ import annotations

import z3

MAX_RANK = 4
COORDS = [z3.Int(f"e{k}") for k in range(MAX_RANK)]
COORD_NAMES = "ijklm"


def coord(k: int) -> z3.ArithRef:
    return COORDS[k]


def substitute(term: z3.ExprRef, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]) -> z3.ExprRef:
    pairs = [(a, b) for a, b in pairs if not a.eq(b)]
    return z3.substitute(term, *pairs) if pairs else term


def move_coords(term: z3.ExprRef | None, mapping: dict[int, z3.ExprRef]) -> z3.ExprRef | None:
    """Rewrite a term over this value's coordinates: coordinate k becomes mapping[k] (simultaneously)."""
    if term is None:
        return None
    return substitute(term, [(COORDS[k], v) for k, v in mapping.items()])


def free_names(term: z3.ExprRef) -> set[str]:
    """Names of the uninterpreted constants a term mentions (variables, not functions)."""
    seen: set[int] = set()
    names: set[str] = set()
    stack = [term]
    while stack:
        t = stack.pop()
        key = t.get_id()
        if key in seen:
            continue
        seen.add(key)
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            names.add(t.decl().name())
        stack.extend(t.children())
    return names


def applications(term: z3.ExprRef, name: str) -> list[z3.ExprRef]:
    """Every application of the uninterpreted function `name` inside a term."""
    seen: set[int] = set()
    found: list[z3.ExprRef] = []
    stack = [term]
    while stack:
        t = stack.pop()
        key = t.get_id()
        if key in seen:
            continue
        seen.add(key)
        if z3.is_app(t) and t.num_args() > 0 and t.decl().name() == name:
            found.append(t)
        stack.extend(t.children())
    return found


def uses_coord(term: z3.ExprRef, k: int) -> bool:
    return f"e{k}" in free_names(term)


def is_nonnegative(term: z3.ExprRef, names: set[str]) -> bool:
    """A syntactic proof that an integer term is never negative: sums, products, quotients and remainders
    of non-negative constants and of variables known to be non-negative (program ids, sizes, coordinates)."""
    if z3.is_int_value(term):
        return term.as_long() >= 0
    if z3.is_const(term):
        return term.decl().name() in names
    if z3.is_add(term) or z3.is_mul(term) or z3.is_idiv(term) or z3.is_mod(term):
        return all(is_nonnegative(child, names) for child in term.children())
    return False


def trunc_div(a: z3.ArithRef, b: z3.ArithRef, nonnegative: frozenset[str] | set[str] = frozenset()) -> z3.ArithRef:
    """Integer division rounding toward zero, as Triton (and C) compute `//` on integers."""
    if z3.is_int_value(b) and b.as_long() > 0:
        if z3.is_int_value(a):
            return z3.IntVal(int(a.as_long() / b.as_long()))
        if is_nonnegative(a, nonnegative):
            return a / b
        return z3.If(a >= 0, a / b, -((-a) / b))
    if is_nonnegative(a, nonnegative) and is_nonnegative(b, nonnegative):
        return a / b  # b is a size or a program id; a zero divisor is the launcher's problem, not an index
    return z3.If(a >= 0, z3.If(b > 0, a / b, -(a / -b)), z3.If(b > 0, -((-a) / b), (-a) / (-b)))


def trunc_mod(a: z3.ArithRef, b: z3.ArithRef, nonnegative: frozenset[str] | set[str] = frozenset()) -> z3.ArithRef:
    """The remainder that goes with trunc_div: it has the sign of the dividend."""
    if is_nonnegative(a, nonnegative) and (
        (z3.is_int_value(b) and b.as_long() > 0) or (not z3.is_int_value(b) and is_nonnegative(b, nonnegative))
    ):
        return a % b
    return a - b * trunc_div(a, b, nonnegative)


def ceil_div(a: z3.ArithRef, b: z3.ArithRef, nonnegative: frozenset[str] | set[str] = frozenset()) -> z3.ArithRef:
    return trunc_div(a + b - 1, b, nonnegative)


def show(term: z3.ExprRef) -> str:
    """A short readable text for a term (layout hover, messages)."""
    text = str(z3.simplify(term, som=True))
    return " ".join(text.split())
