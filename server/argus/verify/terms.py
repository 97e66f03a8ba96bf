"""z3 terms for index arithmetic: element coordinates, C-style integer division, free-variable queries.

A tile value's element term is written over canonical coordinate variables `e0, e1, ...`, one per axis of
the tile itself; an op that moves axes (expand_dims, trans, broadcasting) substitutes them.
"""

from __future__ import annotations

from collections.abc import Iterator

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


def subterms(term: z3.ExprRef) -> Iterator[z3.ExprRef]:
    """Every distinct subterm of a term (shared ones once), the term itself included."""
    seen: set[int] = set()
    stack = [term]
    while stack:
        t = stack.pop()
        key = t.get_id()
        if key in seen:
            continue
        seen.add(key)
        yield t
        stack.extend(t.children())


def free_names(term: z3.ExprRef) -> set[str]:
    """Names of the uninterpreted constants a term mentions (variables, not functions)."""
    return {t.decl().name() for t in subterms(term) if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED}


def applications(term: z3.ExprRef, name: str) -> list[z3.ExprRef]:
    """Every application of the uninterpreted function `name` inside a term."""
    return [t for t in subterms(term) if z3.is_app(t) and t.num_args() > 0 and t.decl().name() == name]


def applies_any(term: z3.ExprRef, names) -> bool:
    """Whether a term applies any of the uninterpreted functions `names` (a loaded tensor's data: `idx[e0]`)."""
    return any(z3.is_app(t) and t.num_args() > 0 and t.decl().name() in names for t in subterms(term))


PROBE = z3.Int("?probe")


def depends_on(term: z3.ExprRef, variables: list[z3.ExprRef]) -> bool:
    """Whether a term mentions any of `variables`: one substitution in z3's C code (terms are hash-consed, so
    an unchanged term is the same term), much cheaper than walking it from Python."""
    if not variables:
        return False
    return not z3.substitute(term, *[(v, PROBE) for v in variables]).eq(term)


def is_nonnegative(term: z3.ExprRef, names: set[str]) -> bool:
    """A syntactic proof that an integer term is never negative: sums, products, quotients and remainders
    of non-negative constants and of variables known to be non-negative (program ids, sizes, coordinates),
    and a constant subtracted from a sum at least as large (`cdiv(N, BN)` is `(N + BN - 1) / BN`)."""
    bound = lower_bound(term, names)
    return bound is not None and bound >= 0


def lower_bound(term: z3.ExprRef, names: set[str], positive: set[str] | frozenset[str] = frozenset()) -> int | None:
    """A syntactic lower bound of an integer term, or None. Non-negative names count as 0 (a size is at
    least 1, but only its sign is known here). Quotients and remainders of non-negative terms are at least 0
    (or the quotient of the bounds, for a constant divisor): the shape of `cdiv` and of grouped decodes.
    Without the `- 1` case, `cdiv(N, 256)` was an `If` on the sign of N + 255, and every `//` and `%` by a
    tile count derived from it (a persistent GEMM's `t // (GROUP_M * tiles_n)`) nested three more `If`s.
    `positive`: names known to be at least 1 (sizes), which then count as 1."""
    if z3.is_int_value(term):
        return term.as_long()
    if z3.is_const(term):
        name = term.decl().name()
        return 1 if name in positive else 0 if name in names else None
    children = term.children()
    if z3.is_add(term):
        bounds = [lower_bound(c, names, positive) for c in children]
        return None if any(b is None for b in bounds) else sum(bounds)
    if z3.is_sub(term):
        first = lower_bound(children[0], names, positive)
        if first is None or not all(z3.is_int_value(c) for c in children[1:]):
            return None
        return first - sum(c.as_long() for c in children[1:])
    if z3.is_mul(term):
        bounds = [lower_bound(c, names, positive) for c in children]
        if any(b is None or b < 0 for b in bounds):
            return None
        product = 1
        for b in bounds:
            product *= b
        return product
    if z3.is_idiv(term) or z3.is_mod(term):
        a, b = (lower_bound(c, names, positive) for c in children)
        if a is None or b is None or a < 0 or b < 0:
            return None
        if z3.is_idiv(term) and z3.is_int_value(children[1]) and b > 0:
            return a // b
        return 0
    return None


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


NEGATED = {z3.Z3_OP_LE: ">", z3.Z3_OP_LT: ">=", z3.Z3_OP_GE: "<", z3.Z3_OP_GT: "<="}
COMPARISONS = {z3.Z3_OP_LE: "<=", z3.Z3_OP_LT: "<", z3.Z3_OP_GE: ">=", z3.Z3_OP_GT: ">", z3.Z3_OP_EQ: "=="}


def show(term: z3.ExprRef, names: dict[str, str] | None = None) -> str:
    """A term as Argus-like source text (layout hover, messages): `128*pm + i`, `(rm < M) & (k0 + j < K)`;
    `names` renames the verifier's variables (pid0 -> pm, e0 -> i, k0@13 -> k0)."""
    names = names or {}
    return text_of(z3.simplify(term, som=True), names)


def text_of(t: z3.ExprRef, names: dict[str, str]) -> str:
    kind = t.decl().kind() if z3.is_app(t) else None
    args = t.children()
    if z3.is_int_value(t):
        return str(t.as_long())
    if z3.is_true(t) or z3.is_false(t):
        return str(z3.is_true(t))
    if z3.is_const(t):
        return names.get(str(t), str(t))
    if kind == z3.Z3_OP_ADD:
        out = text_of(args[0], names)
        for a in args[1:]:
            part = text_of(a, names)
            out += f" - {part[1:]}" if part.startswith("-") else f" + {part}"
        return out
    if kind == z3.Z3_OP_MUL:
        return "*".join(wrap(a, names) for a in args)
    if kind == z3.Z3_OP_SUB:
        return " - ".join(wrap(a, names) for a in args)
    if kind == z3.Z3_OP_UMINUS:
        return "-" + wrap(args[0], names)
    if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD):
        return f"{wrap(args[0], names)} {'//' if kind == z3.Z3_OP_IDIV else '%'} {wrap(args[1], names)}"
    if kind in COMPARISONS:
        return f"{text_of(args[0], names)} {COMPARISONS[kind]} {text_of(args[1], names)}"
    if kind == z3.Z3_OP_NOT and args and z3.is_app(args[0]) and args[0].decl().kind() in NEGATED:
        inner = args[0].children()
        return f"{text_of(inner[0], names)} {NEGATED[args[0].decl().kind()]} {text_of(inner[1], names)}"
    if kind == z3.Z3_OP_NOT:
        return f"~{wrap(args[0], names)}"
    if kind in (z3.Z3_OP_AND, z3.Z3_OP_OR):
        return (" & " if kind == z3.Z3_OP_AND else " | ").join(wrap(a, names) for a in args)
    if kind == z3.Z3_OP_ITE:
        return f"where({', '.join(text_of(a, names) for a in args)})"
    if kind == z3.Z3_OP_UNINTERPRETED and args:
        return f"{t.decl().name()}[{', '.join(text_of(a, names) for a in args)}]"
    return " ".join(str(t).split())


def wrap(t: z3.ExprRef, names: dict[str, str]) -> str:
    text = text_of(t, names)
    simple = z3.is_const(t) or z3.is_int_value(t) or (z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED)
    return text if simple else f"({text})"


def slope(index: z3.ArithRef, var: z3.ArithRef) -> z3.IntNumRef | None:
    """How much `index` grows when `var` grows by 1, when that is a number."""
    step = z3.simplify(substitute(index, [(var, z3.IntVal(1))]) - substitute(index, [(var, z3.IntVal(0))]))
    return step if z3.is_int_value(step) else None
