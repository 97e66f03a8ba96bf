"""Scans along one axis (cumsum, cumprod, cummax, cummin; issue 20 item 3): padding, layouts and integer values.

**Padding (AR313).** A scan is a reduction of each prefix: the running value at lane j combines lanes 0..j
(j..n-1 when reversed). A padding lane before a real lane along the axis (after it, reversed) therefore reaches
that real lane's result, and must hold the combination's identity: 0 for cumsum, 1 for cumprod, -inf (or a
value no larger than any real lane) for cummax, +inf for cummin. A padding lane after every real lane reaches
only padding results, which the store's mask drops: the usual `arange < N` mask puts the padding at the end,
which a forward scan never reads into a real lane, so `other=0` under a forward cummax is clean and under a
reverse one it is not. The check is padding_checks.padding with a direction: the live row must have a real
lane after (before) the padding lane.

What the result's lanes hold: a padding lane of the result (the mask is the operand's) holds the scan of
whatever came before it, real lanes included, so a later `sum` over the scanned axis sees real values in its
padding (`sum(cumsum(x, 1), 1)` under `rn < N` adds the total once per padding lane: reported there). The
value sets of the operand's lanes are closed under the combination (`closure`) for both real and padding lanes;
for a cummax over padding lanes that hold the real maximum this is an over-approximation (a later `max` is
told the padding may be any real value).

**Layouts.** An index that does not vary along the scanned axis (the row of a row-wise cumsum) is kept and
becomes a statistic (AR311 checks it is applied to its own rows, as for a reduction); an index along the axis
is kept as it is: the running value at lane j belongs to position j.

**Integer scans.** An integer scan is modelled where it is simple: a cumsum of a constant c is `c * (j + 1)`
(`c * (n - j)` reversed), a cummax or cummin of a value constant along the axis is that value, a cumprod of 0 or
1 is itself. Any other integer scan (a cumsum of a mask, the positions of kept elements) is an unconstrained
integer, one per scan and program: sound, and a claim that depends on it is unknown (AR312), never proved.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.model import Context, Entry, Sym
from argus.verify.padding import INF, Leaf, Tree, VSet, add, leaves, mul
from argus.verify.padding_checks import padding
from argus.verify.rules import rule
from argus.verify.terms import COORD_NAMES, COORDS, depends_on
from argus.verify.values import is_float, is_int, shape_of

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


def sum_closure(x: VSet) -> VSet:
    """The values a sum of one or more of x's values can take."""
    if not x.finite:
        return add(x, x) if x.ninf or x.pinf else x
    lo = x.lo if x.lo >= 0 else -INF
    hi = x.hi if x.hi <= 0 else INF
    flags = add(VSet(ninf=x.ninf, pinf=x.pinf, nan=x.nan), VSet(ninf=x.ninf, pinf=x.pinf, nan=x.nan))
    return VSet(lo, hi, flags.ninf, flags.pinf, flags.nan or x.nan or (x.ninf and x.pinf))


def product_closure(x: VSet) -> VSet:
    """The values a product of one or more of x's values can take."""
    if x.finite and x.lo == x.hi and x.lo in (0.0, 1.0) and not (x.ninf or x.pinf or x.nan):
        return x
    squared = mul(x, x)
    return VSet(-INF, INF, squared.ninf or x.ninf, squared.pinf or x.pinf, squared.nan or x.nan)


@dataclass(frozen=True, slots=True)
class Scan:
    reduction: str  # what padding_checks.harmless asks of its padding: sum, prod, max, min
    identity: str
    hint: str
    closure: Callable[[VSet], VSet]


# The verifier's entry for each scan built-in (argus.dsl.ops.SCANS).
SCANS: dict[str, Scan] = {
    "cumsum": Scan("sum", "0", "load with other=0, or re-mask with where(mask, x, 0) before the cumsum", sum_closure),
    "cumprod": Scan(
        "prod", "1", "load with other=1, or re-mask with where(mask, x, 1) before the cumprod", product_closure
    ),
    "cummax": Scan(
        "max", "-inf", "load with other=-inf, or re-mask with where(mask, x, -inf) before the cummax", lambda x: x
    ),
    "cummin": Scan(
        "min", "inf", "load with other=inf, or re-mask with where(mask, x, inf) before the cummin", lambda x: x
    ),
}


def scanned_lanes(scan: Scan, tree: Tree | None) -> Tree | None:
    """What every lane of the result may hold: the closure of everything the operand's lanes hold."""
    if tree is None:
        return None
    found = leaves(tree)
    values = found[0][1].values
    origins: tuple = ()
    for _, leaf in found:
        values = values.union(leaf.values)
        origins += tuple(s for s in leaf.origins if s not in origins)
    return Leaf(scan.closure(values), origins)


def integer_scan(ev: Evaluator, fn: str, x: Sym, axis: int, n: int, reverse: bool) -> z3.ExprRef:
    term = x.term
    if term is not None and z3.is_bool(term):
        term = z3.If(term, z3.IntVal(1), z3.IntVal(0))
    if term is not None and z3.is_int(term):
        simple = z3.simplify(term)
        lane = COORDS[axis]
        if fn in ("cummax", "cummin") and not depends_on(simple, [lane]):
            return simple
        if fn == "cumsum" and z3.is_int_value(simple):
            count = (n - lane) if reverse else (lane + 1)
            return simple * count
        if fn == "cumprod" and z3.is_int_value(simple) and simple.as_long() in (0, 1):
            return simple
    return ev.shared.fresh(f"{fn} of integers")


@rule("scan")
def scan_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    fn, axis, reverse = op.attrs["fn"], op.attrs["axis"], op.attrs["reverse"]
    scan = SCANS[fn]
    lane = COORDS[axis]
    if is_float(op.result.type):
        real = f"a real lane of the same row, {'before' if reverse else 'after'} it: {COORD_NAMES[axis]}"
        padding(
            ev,
            op,
            scan.reduction,
            x.lanes,
            x.valid,
            lane,
            x.shape[axis],
            x.shape,
            context,
            x,
            real=real,
            what=f"reach `{fn}`" + (" (reversed)" if reverse else ""),
            direction=-1 if reverse else 1,
            identity=scan.identity,
            hint=scan.hint,
        )
    layout = {}
    for key, entry in x.layout.items():
        if depends_on(entry.term, [lane]):
            layout[key] = entry
        else:
            layout[key] = Entry(entry.term, entry.label, True, op.span)
    shape = shape_of(op.result.type)
    term = integer_scan(ev, fn, x, axis, shape[axis], reverse) if is_int(op.result.type) else None
    lanes = scanned_lanes(scan, x.lanes) if x.valid is not None and is_float(op.result.type) else None
    ev.result(op, Sym(shape, term, layout, dict(x.tags), x.valid, lanes))
