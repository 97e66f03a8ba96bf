"""What the lanes of a float tile hold, abstractly: enough to tell whether padding reaches a reduction intact.

A lane is *padding* where a load's mask is off (the `valid` of a `Sym`); what it holds is the load's `other`,
then whatever the elementwise ops made of it. A float value's lanes are described by a `Tree`: `Leaf`s of
value sets (`VSet`: a range of finite numbers, and whether -inf, +inf or NaN can occur), chosen between by
`Branch`es on the integer conditions of `where` (z3 terms over the element coordinates). A reduction may
see padding lanes only if each holds its identity (0 for `sum` and a `dot`'s products, -inf or anything no
larger than every real lane for `max`, +inf or anything no smaller for `min`); the check is
`padding_checks.padding` (AR313, docs/diagnostics.md).

Assumptions, each the way kernel engineers read their own code: data loaded from a tensor is finite; a
float scalar parameter (a scale, a temperature, an epsilon) is positive and finite; a divisor is not zero
(where one is exactly 0, that is AR314: padding_checks.division).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import z3

from argus.dsl.spans import Span
from argus.verify.terms import move_coords

INF = math.inf
MAX_LEAVES = 16  # a tree larger than this is given up (no check), never guessed


@dataclass(frozen=True, slots=True)
class VSet:
    """A set of float values: the finite numbers in [lo, hi] (none when lo > hi; an infinite bound means
    unbounded, still finite), and whether -inf, +inf and NaN are in it."""

    lo: float = INF
    hi: float = -INF
    ninf: bool = False
    pinf: bool = False
    nan: bool = False

    @property
    def finite(self) -> bool:
        return self.lo <= self.hi

    def union(self, other: VSet) -> VSet:
        return VSet(
            min(self.lo, other.lo),
            max(self.hi, other.hi),
            self.ninf or other.ninf,
            self.pinf or other.pinf,
            self.nan or other.nan,
        )

    def atoms(self) -> list[VSet]:
        out = [VSet(self.lo, self.hi)] if self.finite else []
        out += [VSet(ninf=True)] if self.ninf else []
        out += [VSet(pinf=True)] if self.pinf else []
        return out + ([VSet(nan=True)] if self.nan else [])

    def text(self) -> str:
        if self.lo == -INF and self.hi == INF and self.ninf and self.pinf and self.nan:
            return "whatever memory held (a masked load without other)"
        parts = []
        if self.finite:
            if self.lo == self.hi:
                parts.append(number(self.lo))
            elif self.lo == -INF and self.hi == INF:
                parts.append("any finite value")
            elif self.lo == -INF:
                parts.append(f"a value <= {number(self.hi)}")
            elif self.hi == INF:
                parts.append(f"a value >= {number(self.lo)}")
            else:
                parts.append(f"a value in [{number(self.lo)}, {number(self.hi)}]")
        parts += ["-inf"] * self.ninf + ["inf"] * self.pinf + ["NaN"] * self.nan
        return " or ".join(parts) if parts else "nothing"


def is_zero(x: VSet) -> bool:
    """Exactly the number 0 (the start of a running sum, `zeros(...)`): what a divisor must never be."""
    return x.finite and x.lo == x.hi == 0 and not (x.ninf or x.pinf or x.nan)


def number(x: float) -> str:
    return str(int(x)) if math.isfinite(x) and x == int(x) and abs(x) < 1e15 else f"{x:g}"


def const(x: float) -> VSet:
    if math.isnan(x):
        return VSet(nan=True)
    if math.isinf(x):
        return VSet(ninf=x < 0, pinf=x > 0)
    return VSet(x, x)


REAL = VSet(-INF, INF)  # a finite value computed from real data
NINF = VSet(ninf=True)  # exactly -inf: `full(..., -inf)`, a load's `other=-inf`
PINF = VSet(pinf=True)
NAN = VSet(nan=True)
F32_TINY, F32_MAX = 1.1754943508222875e-38, 3.4028234663852886e38  # the least normal and the greatest f32
# A float scalar parameter (a scale, a temperature, an epsilon): positive and finite as an f32 holds it, so
# never 0 and never inf (`1 / temperature` is never 0, and -inf padding times it stays -inf).
POSITIVE = VSet(F32_TINY, F32_MAX)
UNDEFINED = VSet(-INF, INF, True, True, True)  # a masked load without `other`: whatever memory held


# ---- comparisons -----------------------------------------------------------------------------------------
TRUE, FALSE, EITHER = VSet(1.0, 1.0), VSet(0.0, 0.0), VSet(0.0, 1.0)  # a comparison's outcomes, as numbers


def ends(x: VSet) -> tuple[float, float]:
    """The least and the greatest number of an atom (an infinity is its own end)."""
    if x.ninf:
        return -math.inf, -math.inf
    if x.pinf:
        return math.inf, math.inf
    return x.lo, x.hi


def compare(sign: str, a: VSet, b: VSet) -> VSet:
    """Which outcomes `a sign b` can have over the values of a and b: TRUE, FALSE or EITHER. Padding lanes that
    loaded 0 fail `p > 0`, so `where(p > 0, p * log(p), 0)` holds 0 there (xlogy)."""
    truth: set[bool] = set()
    for x in a.atoms():
        for y in b.atoms():
            if x.nan or y.nan:
                truth.add(sign == "!=")
                continue
            (xl, xh), (yl, yh) = ends(x), ends(y)
            possible = {
                "<": (xl < yh, xh >= yl),
                "<=": (xl <= yh, xh > yl),
                ">": (xh > yl, xl <= yh),
                ">=": (xh >= yl, xl < yh),
                "==": (xl <= yh and yl <= xh, not (xl == xh == yl == yh)),
                "!=": (not (xl == xh == yl == yh), xl <= yh and yl <= xh),
            }.get(sign)
            if possible is None:
                return EITHER
            truth |= {True} if possible[0] else set()
            truth |= {False} if possible[1] else set()
    return TRUE if truth == {True} else FALSE if truth == {False} else EITHER


def select(c: VSet, a: VSet, b: VSet) -> VSet:
    """`where(c, a, b)` lane by lane, c one of compare's outcomes."""
    return a if c == TRUE else b if c == FALSE else a.union(b)


# ---- trees -------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Leaf:
    values: VSet
    origins: tuple[Span, ...] = ()  # the loads whose masked-off lanes this value came from


@dataclass(frozen=True, slots=True)
class Branch:
    cond: z3.BoolRef | None  # None: a condition the verifier does not model (either side may be taken)
    then: Tree
    orelse: Tree


Tree = Leaf | Branch


def leaves(tree: Tree, path: tuple[z3.BoolRef, ...] = ()) -> list[tuple[tuple[z3.BoolRef, ...], Leaf]]:
    """Every leaf with the conditions on the way to it."""
    if isinstance(tree, Leaf):
        return [(path, tree)]
    if tree.cond is None:
        return leaves(tree.then, path) + leaves(tree.orelse, path)
    return leaves(tree.then, (*path, tree.cond)) + leaves(tree.orelse, (*path, z3.Not(tree.cond)))


def size(tree: Tree) -> int:
    return 1 if isinstance(tree, Leaf) else size(tree.then) + size(tree.orelse)


def branch(cond: z3.BoolRef | None, then: Tree, orelse: Tree) -> Tree:
    if cond is not None:
        simple = z3.simplify(cond)
        if z3.is_true(simple):
            return then
        if z3.is_false(simple):
            return orelse
    if isinstance(then, Leaf) and isinstance(orelse, Leaf) and then.values == orelse.values:
        return Leaf(then.values, joined(then.origins, orelse.origins))
    return Branch(cond, then, orelse)


def choose(tree: Tree, known: dict[int, bool]) -> Tree:
    """The tree under conditions already decided on the way (the same z3 term, by identity)."""
    while isinstance(tree, Branch) and tree.cond is not None and tree.cond.get_id() in known:
        tree = tree.then if known[tree.cond.get_id()] else tree.orelse
    return tree


def apply(fn: Callable[..., VSet], trees: list[Tree], known: dict[int, bool] | None = None) -> Tree:
    """`fn` lane by lane: over every combination of leaves, branching where the operands branch."""
    known = dict(known or {})
    trees = [choose(t, known) for t in trees]
    for k, tree in enumerate(trees):
        if isinstance(tree, Branch):
            if tree.cond is None:
                then = apply(fn, [*trees[:k], tree.then, *trees[k + 1 :]], known)
                orelse = apply(fn, [*trees[:k], tree.orelse, *trees[k + 1 :]], known)
                return branch(None, then, orelse)
            key = tree.cond.get_id()
            then = apply(fn, [*trees[:k], tree.then, *trees[k + 1 :]], {**known, key: True})
            orelse = apply(fn, [*trees[:k], tree.orelse, *trees[k + 1 :]], {**known, key: False})
            return branch(tree.cond, then, orelse)
    origins: tuple[Span, ...] = ()
    for t in trees:
        origins = joined(origins, t.origins)
    return Leaf(fn(*[t.values for t in trees]), origins)


def joined(a: tuple[Span, ...], b: tuple[Span, ...]) -> tuple[Span, ...]:
    return a + tuple(s for s in b if s not in a)


def move(tree: Tree | None, mapping: dict[int, z3.ExprRef], done: dict[int, z3.BoolRef] | None = None) -> Tree | None:
    """The tree with its conditions' coordinates moved (broadcasting, expand_dims, trans, reshape); `done`:
    conditions already moved (by id), such as the value's mask, which is most trees' only condition."""
    if tree is None or isinstance(tree, Leaf):
        return tree
    done = {} if done is None else done
    cond = tree.cond
    if cond is not None:
        if cond.get_id() not in done:
            done[cond.get_id()] = move_coords(cond, mapping)
        cond = done[cond.get_id()]
    return Branch(cond, move(tree.then, mapping, done), move(tree.orelse, mapping, done))


def known(before: z3.BoolRef | None, after: z3.BoolRef | None) -> dict[int, z3.BoolRef]:
    """A condition already moved, for `move`: a value's mask and what it became."""
    return {} if before is None or after is None else {before.get_id(): after}


def bounded(tree: Tree | None) -> Tree | None:
    """The tree, or None (given up) when it has grown past MAX_LEAVES."""
    return tree if tree is None or size(tree) <= MAX_LEAVES else None


# ---- value-set arithmetic ------------------------------------------------------------------------------
def over_atoms(rule: Callable[[VSet, VSet], VSet]) -> Callable[[VSet, VSet], VSet]:
    def combined(a: VSet, b: VSet) -> VSet:
        out = VSet()
        for x in a.atoms():
            for y in b.atoms():
                out = out.union(VSet(nan=True) if x.nan or y.nan else rule(x, y))
        return out

    return combined


def signs(x: VSet) -> set[int]:
    """The signs of the numbers in x (-1, 0, 1), infinities included."""
    out = set()
    if x.ninf or (x.finite and x.lo < 0):
        out.add(-1)
    if x.finite and x.lo <= 0 <= x.hi:
        out.add(0)
    if x.pinf or (x.finite and x.hi > 0):
        out.add(1)
    return out


def infinity(sign: int) -> VSet:
    return VSet(ninf=sign < 0, pinf=sign > 0, nan=sign == 0)


@over_atoms
def add(x: VSet, y: VSet) -> VSet:
    if x.finite and y.finite:
        return VSet(x.lo + y.lo, x.hi + y.hi)
    if (x.ninf and y.pinf) or (x.pinf and y.ninf):
        return VSet(nan=True)
    return VSet(ninf=x.ninf or y.ninf, pinf=x.pinf or y.pinf)


def neg(x: VSet) -> VSet:
    return VSet(-x.hi, -x.lo, x.pinf, x.ninf, x.nan) if x.finite else VSet(ninf=x.pinf, pinf=x.ninf, nan=x.nan)


def sub(a: VSet, b: VSet) -> VSet:
    return add(a, neg(b))


def product(p: float, q: float) -> float:
    return 0.0 if p == 0 or q == 0 else p * q  # a finite zero times an unbounded (but finite) bound


@over_atoms
def mul(x: VSet, y: VSet) -> VSet:
    if x.finite and y.finite:
        ends = [product(p, q) for p in (x.lo, x.hi) for q in (y.lo, y.hi)]
        return VSet(min(ends), max(ends))
    out = VSet()
    for s in signs(x):
        for t in signs(y):
            out = out.union(infinity(s * t))
    return out


@over_atoms
def div(x: VSet, y: VSet) -> VSet:
    if x.finite and y.finite:
        if x.lo == x.hi == 0:
            return VSet(0.0, 0.0)
        if y.lo <= 0 <= y.hi:  # a divisor is assumed not zero: one that cannot be negative is positive
            return same_sign(x, y)
        ends = [p / q if not (math.isinf(p) and math.isinf(q)) else 0.0 for p in (x.lo, x.hi) for q in (y.lo, y.hi)]
        return VSet(min(ends), max(ends))
    if x.finite:
        return VSet(0.0, 0.0)  # finite / infinite
    if not y.finite:
        return VSet(nan=True)
    out = VSet()
    for s in signs(x):
        for t in signs(y) - {0}:
            out = out.union(infinity(s * t))
    return out


def same_sign(x: VSet, y: VSet) -> VSet:
    """x / y for a divisor whose interval holds 0 (assumed not zero): the quotient keeps x's sign where y has
    one (a softmax's exp over its positive sum is >= 0), any finite value otherwise."""
    if y.lo >= 0:  # y > 0
        return VSet(0.0, INF) if x.lo >= 0 else VSet(-INF, 0.0) if x.hi <= 0 else REAL
    if y.hi <= 0:  # y < 0
        return VSet(-INF, 0.0) if x.lo >= 0 else VSet(0.0, INF) if x.hi <= 0 else REAL
    return REAL


@over_atoms
def maximum(x: VSet, y: VSet) -> VSet:
    if x.pinf or y.pinf:
        return VSet(pinf=True)
    if x.ninf:
        return y
    if y.ninf:
        return x
    return VSet(max(x.lo, y.lo), max(x.hi, y.hi))


def minimum(a: VSet, b: VSet) -> VSet:
    return neg(maximum(neg(a), neg(b)))


def safe(f: Callable[[float], float], x: float) -> float:
    try:
        return f(x)
    except OverflowError:
        return INF
    except ValueError:
        return math.nan


def monotone(f: Callable[[float], float], lo_domain: float = -INF) -> Callable[[VSet], VSet]:
    """An increasing function, defined from lo_domain on (-inf exactly at it if f diverges there). Finite
    numbers are taken to be in its domain (a kernel takes no square root of a negative real number; a NaN
    from one would be in its real lanes too); -inf below a domain bounded below gives NaN."""

    def on(x: VSet) -> VSet:
        out = VSet(nan=x.nan or (x.ninf and lo_domain > -INF))
        if x.finite:
            lo, hi = max(x.lo, lo_domain), max(x.hi, lo_domain)
            if lo <= hi:
                a, b = safe(f, lo), safe(f, hi)
                out = out.union(VSet(a, b) if not math.isinf(a) else VSet(-INF, b, ninf=lo == lo_domain))
        if x.ninf and lo_domain == -INF:
            out = out.union(const(safe(f, -INF)))
        if x.pinf:
            out = out.union(const(safe(f, INF)))
        return out

    return on


def log_of(x: float) -> float:
    return -INF if x == 0 else math.log(x)


def rsqrt(x: VSet) -> VSet:
    return div(VSet(1.0, 1.0), monotone(math.sqrt, 0.0)(x))


def absolute(x: VSet) -> VSet:
    out = VSet(nan=x.nan, pinf=x.ninf or x.pinf)
    if x.finite:
        lo = 0.0 if x.lo <= 0 <= x.hi else min(abs(x.lo), abs(x.hi))
        out = out.union(VSet(lo, max(abs(x.lo), abs(x.hi))))
    return out


def periodic(x: VSet) -> VSet:
    return VSet(-1.0, 1.0, nan=x.nan or x.ninf or x.pinf) if x.finite else VSet(nan=True)


# ---- more elementwise math (issue 20 item 3): rounding, sign, powers, log1p ... cosh --------------------------
def rounded(rule: Callable[[float], float]) -> Callable[[float], float]:
    """A rounding function on one float: infinities stay what they are (math.floor raises on them)."""
    return lambda v: v if math.isinf(v) else float(rule(v))


def signum(x: VSet) -> VSet:
    """torch.sign: -1, 0 or 1 by the sign (infinities included), and 0 for NaN."""
    out = const(0.0) if x.nan else VSet()
    for s in signs(x):
        out = out.union(const(float(s)))
    return out


def tangent(x: VSet) -> VSet:
    """tan: increasing inside (-pi/2, pi/2), any finite value over a wider range; NaN at an infinity."""
    out = VSet(nan=x.nan or x.ninf or x.pinf)
    if x.finite:
        inside = x.lo > -1.5 and x.hi < 1.5
        out = out.union(VSet(math.tan(x.lo), math.tan(x.hi)) if inside else VSet(-INF, INF))
    return out


def cosh(x: VSet) -> VSet:
    return monotone(math.cosh, 0.0)(absolute(x))


def integer_power(n: int) -> Callable[[float], float]:
    def on(v: float) -> float:
        try:
            return v**n
        except OverflowError:
            return math.copysign(INF, v) if n % 2 else INF

    return on


def power(x: VSet, y: VSet) -> VSet:
    """x ** y as torch.pow: for a constant integer y exact in sign (odd powers keep it, even ones drop it, x ** 0 is
    1 even for NaN); for any other y nothing below 0 for x >= 0, and anything (NaN included) for a negative x."""
    if y.finite and y.lo == y.hi and not (y.ninf or y.pinf or y.nan) and float(y.lo).is_integer():
        n = int(y.lo)
        if n == 0:
            return const(1.0)
        r = monotone(integer_power(abs(n)))(absolute(x) if n % 2 == 0 else x)
        return div(const(1.0), r) if n < 0 else r
    if not x.ninf and (not x.finite or x.lo >= 0):
        return VSet(0.0, INF, pinf=True, nan=x.nan or y.nan)
    return UNDEFINED


BINARY: dict[str, Callable[[VSet, VSet], VSet]] = {"+": add, "-": sub, "*": mul, "/": div, "**": power}
MATH: dict[str, Callable[..., VSet]] = {
    "exp": monotone(math.exp),
    "exp2": monotone(lambda v: 2.0**v),
    "log": monotone(log_of, 0.0),
    "log2": monotone(lambda v: -INF if v == 0 else math.log2(v), 0.0),
    "sqrt": monotone(math.sqrt, 0.0),
    "rsqrt": rsqrt,
    "sigmoid": monotone(lambda v: 1.0 / (1.0 + math.exp(-v)) if v > -700 else 0.0),
    "tanh": monotone(math.tanh),
    "erf": monotone(math.erf),
    "sin": periodic,
    "cos": periodic,
    "abs": absolute,
    "maximum": maximum,
    "minimum": minimum,
    # more elementwise math (issue 20 item 3)
    "log1p": monotone(lambda v: -INF if v == -1 else math.log1p(v), -1.0),
    "expm1": monotone(math.expm1),
    "log10": monotone(lambda v: -INF if v == 0 else math.log10(v), 0.0),
    "tan": tangent,
    "sinh": monotone(math.sinh),
    "cosh": cosh,
    "floor": monotone(rounded(math.floor)),
    "ceil": monotone(rounded(math.ceil)),
    "trunc": monotone(rounded(math.trunc)),
    "round": monotone(rounded(round)),  # Python's round is torch.round's: halves to even
    "sign": signum,
}
UNARY: dict[str, Callable[[VSet], VSet]] = {"-": neg, "+": lambda x: x}


# ---- what a reduction lets through ---------------------------------------------------------------------
IDENTITY = {"sum": "0", "dot": "0", "max": "-inf", "argmax": "-inf", "min": "inf", "argmin": "inf"}


def harmless(fn: str, values: VSet, low: float, high: float) -> bool:
    """Whether lanes holding `values` leave the reduction `fn` unchanged, given that the lanes it reduces
    hold no finite value below `low` nor above `high`."""
    if values.nan:
        return False
    if fn in ("sum", "dot"):
        return not values.ninf and not values.pinf and values.finite and values.lo == values.hi == 0
    if fn in ("max", "argmax"):
        return not values.pinf and (not values.finite or values.hi <= low)
    if fn in ("min", "argmin"):
        return not values.ninf and (not values.finite or values.lo >= high)
    if fn == "prod":  # a running product (cumprod): only 1 leaves it unchanged
        return not values.ninf and not values.pinf and values.finite and values.lo == values.hi == 1
    return True
