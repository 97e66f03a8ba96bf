"""Values and elementwise ops: constants, program ids, `arange`, `zeros`, `full` and `cdiv`, which make a value
from attributes and scalars, and `binary`, `unary`, `compare`, `math`, `where` and `cast`, which broadcast their
operands to the result's shape and combine them element by element: terms, layouts (a statistic applied to
other indices than it was computed from is AR311), tags, masks and, for a float result, what its lanes hold.
A float `+`, `maximum` or `minimum` of a loop-carried value is an accumulation (AR313), a float `/` a division
(AR314): padding_checks.py; a sum divided by its tile's width is a mean that may count padding (AR322):
padded_means.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.infinite_rows import nan_created
from argus.verify.model import Context, Entry, Key, Obligation, Sym
from argus.verify.narrow_ints import narrow_result
from argus.verify.padded_means import padded_mean
from argus.verify.padding import BINARY, MATH, UNARY, Leaf, Tree, const
from argus.verify.padding_checks import accumulation, chosen, combined, division, lane_tree
from argus.verify.paired_axes import paired_axes
from argus.verify.rules import rule
from argus.verify.terms import COORDS, ceil_div, trunc_div, trunc_mod
from argus.verify.values import (
    aligned,
    coord_list,
    coord_ranges,
    is_bool,
    is_float,
    is_int,
    merge_tags,
    same_term,
    shape_of,
)

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator

INT_OPS = {
    "+": lambda a, b, _: a + b,
    "-": lambda a, b, _: a - b,
    "*": lambda a, b, _: a * b,
    "//": trunc_div,
    "%": trunc_mod,
}
COMPARES = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


@rule("const")
def const_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    value = op.attrs["value"]
    if isinstance(value, bool):
        term = z3.BoolVal(value)
    elif isinstance(value, int):
        term = z3.IntVal(value)
    else:
        term = None
    lanes = Leaf(const(float(value))) if isinstance(value, float) else None
    ev.result(op, Sym(shape_of(op.result.type), term, lanes=lanes))


@rule("program_id")
def program_id_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    ev.result(op, Sym((), ev.program[op.attrs["axis"]]))


@rule("num_programs")
def num_programs_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    ev.result(op, Sym((), ev.int_term(ev.get(ev.kernel.grid[op.attrs["axis"]]))))


@rule("arange")
def arange_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    ev.result(op, Sym((op.attrs["n"],), COORDS[0]))


@rule("zeros")
def zeros_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    dtype = op.attrs["dtype"]
    term = z3.BoolVal(False) if dtype.kind == "bool" else z3.IntVal(0) if dtype.is_integer else None
    lanes = None if dtype.is_integer else Leaf(const(0.0))
    ev.result(op, Sym(shape_of(op.result.type), term, lanes=lanes))


@rule("full")
def full_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    value = ev.get(op.operands[0])
    integer = op.attrs["dtype"].is_integer
    term = value.term if integer else None
    lanes = None if integer else lane_tree(ev, value)
    ev.result(op, Sym(shape_of(op.result.type), term, tags=dict(value.tags), lanes=lanes))


@rule("cdiv")
def cdiv_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    a, b = (ev.get(v) for v in op.operands)
    ev.result(op, Sym((), ceil_div(ev.int_term(a), ev.int_term(b), ev.nonnegative)))


# elementwise ops --------------------------------------------------------------------------------
def elementwise(
    ev: Evaluator,
    op: ir.Op,
    operands: list[Sym],
    term: z3.ExprRef | None,
    context: Context,
    lanes: Callable[[], Tree | None] | None = None,
) -> None:
    """`lanes`: what the lanes of a float result hold (padding_checks.combined; None when not known), asked
    only for a float result: most elementwise ops of a kernel are index arithmetic."""
    shape = shape_of(op.result.type)
    layout: dict[Key, Entry] = {}
    tags: dict[str, z3.ArithRef] = {}
    valid = None
    for sym in operands:
        if sym.valid is not None:
            valid = sym.valid if valid is None else z3.And(valid, sym.valid)
    misplaced = paired_axes(ev, op, operands, shape, context)
    for sym in operands:
        layout = merge_layouts(ev, layout, sym.layout, shape, op, context, valid)
        tags = merge_tags(tags, sym.tags)
    layout = {key: entry for key, entry in layout.items() if key not in misplaced}
    ev.result(op, Sym(shape, term, layout, tags, valid, lanes() if lanes and is_float(op.result.type) else None))


def merge_layouts(
    ev: Evaluator,
    a: dict[Key, Entry],
    b: dict[Key, Entry],
    shape: tuple[int, ...],
    op: ir.Op,
    context: Context,
    valid: z3.BoolRef | None = None,
) -> dict[Key, Entry]:
    merged = dict(a)
    for key, entry in b.items():
        other = merged.get(key)
        if other is None:
            merged[key] = entry
            continue
        if same_term(other.term, entry.term):
            merged[key] = other if not other.stat else entry
            continue
        if other.stat or entry.stat:
            stat, full = (other, entry) if other.stat else (entry, other)
            alignment(ev, op, key, stat, full, shape, context, valid)
            merged[key] = full if not full.stat else stat
        else:
            del merged[key]  # two different indices of one axis (a stencil): the value stands for neither
    return merged


def alignment(
    ev: Evaluator,
    op: ir.Op,
    key: Key,
    stat: Entry,
    full: Entry,
    shape: tuple[int, ...],
    context: Context,
    valid: z3.BoolRef | None = None,
) -> None:
    """Only elements a mask lets through count: padding combined with another row's statistic is harmless."""
    if not ev.emitting:
        return
    where = f"line {stat.origin.line + 1}" if stat.origin else "a reduction"
    related = [(stat.origin, "the statistic is computed here")] if stat.origin else []
    ev.emit(
        Obligation(
            "alignment",
            "AR311",
            op.span,
            f"a statistic reduced at {where} is applied to other {key[0]} indices (axis {key[1]}, "
            f"{full.label}) than it was computed from",
            full.term == stat.term,
            context.assumptions + coord_ranges(shape) + ([valid] if valid is not None else []),
            context.loops,
            ev.program,
            coord_list(shape),
            [(f"{key[0]} index of the element", full.term), (f"{key[0]} index of the statistic", stat.term)],
            related,
        )
    )


def operands_of(ev: Evaluator, op: ir.Op) -> list[Sym]:
    """The op's operands broadcast to its result's shape."""
    shape = shape_of(op.result.type)
    return [aligned(ev.get(v), shape) for v in op.operands]


@rule("binary")
def binary_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    a, b = operands_of(ev, op)
    name = op.attrs["op"]
    term = None
    if a.term is not None and b.term is not None:
        if z3.is_bool(a.term) and z3.is_bool(b.term) and name in ("&", "|", "^"):
            term = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[name](a.term, b.term)
        elif is_int(op.result.type) and name in INT_OPS:
            term = INT_OPS[name](ev.int_term(a), ev.int_term(b), ev.nonnegative)
        elif is_int(op.result.type) and name == "&" and (modulus := low_bits(b.term)) is not None:
            term = ev.int_term(a) % modulus  # x & (2^k - 1): x modulo 2^k, in two's complement too
        elif is_int(op.result.type) and name in ("<<", ">>") and z3.is_int_value(b.term):
            factor = z3.IntVal(2 ** b.term.as_long())
            term = a.term * factor if name == "<<" else trunc_div(ev.int_term(a), factor, ev.nonnegative)
        elif is_int(op.result.type) and name == "**" and z3.is_int_value(b.term) and b.term.as_long() <= 8:
            n, base = b.term.as_long(), ev.int_term(a)  # the analyzer refuses a negative exponent on integers
            term = z3.IntVal(1) if n == 0 else base
            for _ in range(n - 1):
                term = term * base
        elif is_int(op.result.type) or is_bool(op.result.type):
            term = ev.shared.fresh(f"bitwise {name}", "bool" if is_bool(op.result.type) else "int")
    if is_int(op.result.type):
        narrow_result(ev, op, a, b, term, context)
    if name == "+" and not is_int(op.result.type):
        accumulation(ev, op, "sum", [a, b], context)
    if name == "/" and is_float(op.result.type):
        division(ev, op, a, b, context)
    if name in ("/", "*") and is_float(op.result.type):
        padded_mean(ev, op, context)
    elementwise(ev, op, [a, b], term, context, lambda: combined(ev, [a, b], BINARY.get(name)))
    if name in ("+", "-") and is_float(op.result.type):
        nan_created(ev, op, a, b, ev.get(op.result), context)


def low_bits(mask: z3.ExprRef) -> int | None:
    """2^k where `mask` is the constant 2^k - 1 (a nibble's 15, a byte's 255)."""
    if not z3.is_int_value(mask):
        return None
    value = mask.as_long() + 1
    return value if value > 1 and value & (value - 1) == 0 else None


@rule("unary")
def unary_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    (x,) = operands_of(ev, op)
    name = op.attrs["op"]
    term = None
    if x.term is not None:
        if z3.is_bool(x.term):
            term = z3.Not(x.term) if name in ("~", "not") else x.term
        elif name == "-":
            term = -x.term
        elif name == "+":
            term = x.term
        elif name == "~":
            term = -x.term - 1
        elif name == "not":
            term = x.term == 0
    elementwise(ev, op, [x], term, context, lambda: combined(ev, [x], UNARY.get(name)))


@rule("compare")
def compare_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    a, b = operands_of(ev, op)
    term = None
    if a.term is not None and b.term is not None:
        if z3.is_bool(a.term) != z3.is_bool(b.term):
            term = COMPARES[op.attrs["op"]](ev.int_term(a), ev.int_term(b))
        else:
            term = COMPARES[op.attrs["op"]](a.term, b.term)
    elif is_int(op.operands[0].type) or is_int(op.operands[1].type):
        term = ev.shared.fresh("comparison", "bool")
    elementwise(ev, op, [a, b], term, context)


@rule("math")
def math_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    xs = operands_of(ev, op)
    fn = op.attrs["fn"]
    term = None
    if is_int(op.result.type) and all(x.term is not None for x in xs):
        if fn in ("maximum", "minimum"):
            a, b = (ev.int_term(x) for x in xs)
            term = z3.If(a >= b, a, b) if fn == "maximum" else z3.If(a <= b, a, b)
        elif fn == "abs":
            a = ev.int_term(xs[0])
            term = z3.If(a >= 0, a, -a)
        elif fn == "sign":
            a = ev.int_term(xs[0])
            term = z3.If(a > 0, z3.IntVal(1), z3.If(a < 0, z3.IntVal(-1), z3.IntVal(0)))
    if fn in ("maximum", "minimum") and not is_int(op.result.type):
        accumulation(ev, op, "max" if fn == "maximum" else "min", xs, context)
    elementwise(ev, op, xs, term, context, lambda: combined(ev, xs, MATH.get(fn)))


@rule("where")
def where_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    c, a, b = operands_of(ev, op)
    term = None
    if a.term is not None and b.term is not None:
        if z3.is_bool(a.term) == z3.is_bool(b.term):
            term = z3.If(ev.bool_term(c), a.term, b.term)
        else:
            term = z3.If(ev.bool_term(c), ev.int_term(a), ev.int_term(b))
    fn = running_extremum(op)
    if fn is not None and not is_int(op.result.type):
        accumulation(ev, op, fn, [a, b], context, op.operands[1:])
    elementwise(ev, op, [c, a, b], term, context, lambda: chosen(ev, c, a, b, op.operands[0].op))


def running_extremum(op: ir.Op) -> str | None:
    """ "max" for `where(v > best, v, best)` (or `best < v`, `>=`), "min" for `where(v < best, v, best)`: a
    running max or min written with a comparison, as a running argmax keeps its value beside the index."""
    cond = op.operands[0].op
    if cond is None or cond.kind != "compare":
        return None
    x, y = cond.operands
    a, b = op.operands[1:]
    sign = cond.attrs["op"]
    if (x, y) == (b, a):
        sign = {">": "<", ">=": "<=", "<": ">", "<=": ">="}.get(sign, sign)
    elif (x, y) != (a, b):
        return None
    return {">": "max", ">=": "max", "<": "min", "<=": "min"}.get(sign)


@rule("cast")
def cast_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    (x,) = operands_of(ev, op)
    target = op.attrs["dtype"]
    term = None
    if target.kind == "bool":
        term = ev.bool_term(x) if x.term is not None else ev.shared.fresh("cast", "bool")
    elif target.is_integer:
        if x.term is not None:
            term = ev.int_term(x)
        else:
            term = ev.shared.fresh("float converted to an integer")
    lanes = None
    if ev.emitting and not target.is_integer and not (x.valid is not None and x.lanes is None and x.term is None):
        lanes = lane_tree(ev, x)  # a float converted: the same values; an integer or a mask: its numbers (its
        # term holds the padding too: a masked load of a mask is `If(mask, data != 0, other)`)
    ev.result(op, Sym(x.shape, term, dict(x.layout), dict(x.tags), x.valid, lanes))
