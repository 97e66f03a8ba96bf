"""Division by a symbolic divisor, made linear for the solver: `u // P` and `u % P` with P a term over sizes.

Persistent and 1-D grouped program orders decode a tile index t with `t // P` and `t % P`, where P is a
tile count such as `GROUP_M * cdiv(N, BN)`. z3 reads a division by a non-constant as non-linear, and a race
proof over it (two programs, two tile indices, equal stores imply equal t, so equal programs) ran past
5,000,000 resource units without an answer. What such proofs need of the division is linear: the remainder
lies in [0, P), and the pair (u // P, u % P) is a mixed-radix numeral of u, so it orders and identifies
dividends exactly as u does. `abstracted` replaces each such quotient and remainder by a fresh variable and
states those facts as axioms.

The result over-approximates the original (every model of the original gives one of the abstraction, with the
variables at the real quotients and remainders), so an unsatisfiable abstraction proves the claim; a model
of it may be spurious and is never reported (the caller then decides the original query).
"""

from __future__ import annotations

from dataclasses import dataclass

import z3
from z3 import z3core


@dataclass(slots=True)
class Division:
    """One dividend u of a symbolic divisor: q stands for u // divisor, r for u % divisor."""

    dividend: z3.ArithRef
    divisor: z3.ArithRef
    q: z3.ArithRef
    r: z3.ArithRef


def symbolic_division(t: z3.ExprRef) -> bool:
    return (z3.is_idiv(t) or z3.is_mod(t)) and not z3.is_int_value(t.arg(1))


def has_symbolic_division(term: z3.ExprRef, numerals: bool = False) -> bool:
    """Whether a term divides by a non-constant anywhere (with `numerals`, by anything), walked through z3's
    C API (each node costs a few calls, not the Python wrappers' dozens): cheap enough to ask of every pair
    of accesses."""
    ctx = term.ctx.ref()
    stack, seen = [term.as_ast()], set()
    while stack:
        a = stack.pop()
        key = z3core.Z3_get_ast_id(ctx, a)
        if key in seen or z3core.Z3_get_ast_kind(ctx, a) != z3.Z3_APP_AST:
            continue
        seen.add(key)
        n = z3core.Z3_get_app_num_args(ctx, a)
        kind = z3core.Z3_get_decl_kind(ctx, z3core.Z3_get_app_decl(ctx, a))
        divisor = z3core.Z3_get_app_arg(ctx, a, 1) if n == 2 else None
        if kind in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD) and (
            numerals or z3core.Z3_get_ast_kind(ctx, divisor) != z3.Z3_NUMERAL_AST
        ):
            return True
        stack.extend(z3core.Z3_get_app_arg(ctx, a, k) for k in range(n))
    return False


def post_order(term: z3.ExprRef) -> list[z3.ExprRef]:
    """The distinct symbolic divisions of a term, each after those inside its operands."""
    found: list[z3.ExprRef] = []
    seen: set[int] = set()
    stack: list[tuple[z3.ExprRef, bool]] = [(term, False)]
    while stack:
        t, done = stack.pop()
        if done:
            if symbolic_division(t):
                found.append(t)
            continue
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        stack.append((t, True))
        stack.extend((c, False) for c in t.children())
    return found


def abstracted(term: z3.BoolRef, limit: int = 16) -> z3.BoolRef | None:
    """`term` with its quotients and remainders by symbolic divisors replaced by variables, and the axioms
    that make them one; None when it has none, or more than `limit` dividends (the pairwise axioms grow
    with their square). A division inside another's dividend is replaced first, so every axiom is over
    the variables too (`(t % P) % Q`: the outer dividend is the inner remainder's variable)."""
    ctx = term.ctx
    divisions: list[Division] = []
    by_dividend: dict[tuple[int, int], Division] = {}
    pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    axioms: list[z3.BoolRef] = []
    for t in post_order(term):
        u, p = t.arg(0), t.arg(1)
        key = (u.get_id(), p.get_id())
        d = by_dividend.get(key)
        if d is None:
            if len(divisions) == limit:
                return None
            k = len(divisions)
            inner = z3.substitute(u, *pairs) if pairs else u
            divisor = z3.substitute(p, *pairs) if pairs else p
            d = Division(inner, divisor, z3.Int(f"?quotient#{k}", ctx), z3.Int(f"?remainder#{k}", ctx))
            axioms += division_axioms(d, [e for e in divisions if e.divisor.eq(divisor)])
            divisions.append(d)
            by_dividend[key] = d
        pairs.append((t, d.q if z3.is_idiv(t) else d.r))
    if not divisions:
        return None
    return z3.And(z3.substitute(term, *pairs), *axioms)


def division_axioms(d: Division, same_divisor: list[Division]) -> list[z3.BoolRef]:
    """What holds of u // P and u % P for P > 0 (a tile count; z3's division is floored there, and the
    kernel's `//` of a non-negative dividend is the same): the remainder in [0, P), a non-negative quotient
    and a remainder at most u for u >= 0, and with every other dividend v of P the lexicographic order of
    (quotient, remainder) for the order of the dividends, equality included."""
    p, u = d.divisor, d.dividend
    facts = [
        z3.Implies(p > 0, z3.And(d.r >= 0, d.r < p)),
        z3.Implies(z3.And(p > 0, u >= 0), z3.And(d.q >= 0, d.r <= u)),
        z3.Implies(z3.And(p > 0, u >= 0, u < p), z3.And(d.q == 0, d.r == u)),
    ]
    for e in same_divisor:
        v = e.dividend
        facts.append(z3.Implies(p > 0, (u == v) == z3.And(d.q == e.q, d.r == e.r)))
        facts.append(z3.Implies(p > 0, (u < v) == z3.Or(d.q < e.q, z3.And(d.q == e.q, d.r < e.r))))
    return facts


def all_divisions(term: z3.ExprRef) -> list[z3.ExprRef]:
    """The distinct divisions and remainders of a term, by any divisor, each after those inside its operands."""
    found: list[z3.ExprRef] = []
    seen: set[int] = set()
    stack: list[tuple[z3.ExprRef, bool]] = [(term, False)]
    while stack:
        t, done = stack.pop()
        if done:
            if z3.is_idiv(t) or z3.is_mod(t):
                found.append(t)
            continue
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        stack.append((t, True))
        stack.extend((c, False) for c in t.children())
    return found


def defined(term: z3.BoolRef) -> z3.BoolRef | None:
    """`term` with every quotient and remainder (by a constant too) replaced by a variable pair (q, r) and its
    definition `divisor > 0 -> dividend == q * divisor + r, 0 <= r < divisor`; None when it has no division.

    For a positive divisor the definition has one solution, z3's own `/` and `%`; for any other divisor q and
    r are free: the result over-approximates `term`, so its unsatisfiability proves the claim. z3 decides
    some claims far better so: a coverage guess through Triton's grouped order with a narrower last group
    (`pid < cdiv(M, BM) * cdiv(N, BN)` with pid rebuilt as `group * GROUP_M * tiles_n + tn * group_size + r`,
    over `x // BM` and `cdiv(N, BN)`) ran past 50,000,000 units as written and took about 700,000 so: the
    products of tile counts are then over plain variables, where z3's non-linear reasoning finds the
    monotonicity it needs."""
    ctx = term.ctx
    pairs: list[tuple[z3.ExprRef, z3.ExprRef]] = []
    made: dict[tuple[int, int], tuple[z3.ArithRef, z3.ArithRef, z3.ArithRef, z3.ArithRef]] = {}
    axioms: list[z3.BoolRef] = []
    for t in all_divisions(term):
        u, b = t.arg(0), t.arg(1)
        inner = z3.substitute(u, *pairs) if pairs else u
        divisor = z3.substitute(b, *pairs) if pairs else b
        key = (inner.get_id(), divisor.get_id())
        if key not in made:
            k = len(made)
            q, r = z3.Int(f"?q#{k}", ctx), z3.Int(f"?r#{k}", ctx)
            made[key] = (q, r, inner, divisor)  # the terms kept alive with their ids
            axioms.append(z3.Implies(divisor > 0, z3.And(inner == q * divisor + r, r >= 0, r < divisor)))
        q, r, _, _ = made[key]
        pairs.append((t, q if z3.is_idiv(t) else r))
    if not made:
        return None
    return z3.And(z3.substitute(term, *pairs), *axioms)
