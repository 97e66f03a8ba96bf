"""Symbolic evaluation of one program of a kernel over the tile IR.

Every IR value becomes a `Sym`: integer and boolean elements become z3 terms over the program ids, the loop
variables, the size symbols and the element's own coordinates (affine, with C-style division and remainder
by constants); float values carry no term, only their layout and tags. Along the way the evaluator records
the memory accesses and emits the obligations that belong to one op (contraction, alignment, tags,
invariants, hints). Loops are evaluated twice: a first pass finds which carried values change, the second
keeps the unchanged ones exact and havocs the rest (their tags are then constrained only by invariants).

The ops are grouped by theme: values, elementwise ops, shapes and `dot` here; tensor accesses in memory.py;
tags, assertions, invariants and hints in claims.py; `for` and `if` in control_flow.py.
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from argus.dsl import ir
from argus.dsl.spans import Span
from argus.verify import claims, control_flow, memory  # noqa: F401  (importing them registers their rules)
from argus.verify.model import Access, Context, Contraction, Entry, Key, Loop, Obligation, Sym, ZeroTrip
from argus.verify.padding import BINARY, MATH, POSITIVE, UNARY, Leaf, Tree, const, known, move
from argus.verify.padding_checks import (
    accumulation,
    chosen,
    combined,
    division,
    dot_output,
    dot_padding,
    lane_tree,
    reduce_padding,
    reduced_lanes,
)
from argus.verify.rules import RULES, UNSUPPORTED, rule
from argus.verify.shared import Shared
from argus.verify.terms import (
    COORDS,
    ceil_div,
    depends_on,
    move_coords,
    trunc_div,
    trunc_mod,
)
from argus.verify.values import (
    Unsupported,
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


class Evaluator:
    """Evaluates the body of one kernel for one program of the grid (instance suffix '' or "'"): the state of
    that evaluation, and the core every rule uses (values, terms, obligations, dispatch through RULES)."""

    def __init__(self, shared: Shared, suffix: str, record_obligations: bool):
        self.shared = shared
        self.kernel = shared.kernel
        self.suffix = suffix
        self.program = [z3.Int(f"pid{k}{suffix}") for k in range(len(self.kernel.grid))]
        self.values: dict[int, Sym] = dict(shared.launch_values)
        self.accesses: list[Access] = []
        self.obligations: list[Obligation] = []
        self.layouts: dict[int, tuple[Span, str, Sym]] = {}
        self.record_obligations = record_obligations
        self.recording = True
        self.invariants: list[tuple[ir.Op, z3.BoolRef]] = []
        self.accumulators: dict[int, Loop] = {}  # a loop's carried values (block arguments) -> the loop
        self.zero_trips: dict[int, ZeroTrip] = {}  # a loop's "runs no iteration" condition (z3 id) -> AR314
        self.contractions: dict[int, Contraction] = {}  # id of a dot op -> what it contracts here (AR315)
        # names known to be >= 0, so `//` and `%` of them need no case split on the sign
        self.nonnegative = {str(p) for p in self.program} | set(shared.sizes) | {str(c) for c in COORDS}

    # ---- entry points ---------------------------------------------------------------------------
    def launch(self) -> tuple[list[z3.BoolRef], list[z3.ArithRef]]:
        """Requires conditions and grid extents, from the launch block (no program ids)."""
        self.block(self.kernel.launch, Context())
        self.shared.launch_values = dict(self.values)
        requires = [self.bool_term(self.get(v)) for v, _ in self.kernel.requires]
        grid = [self.int_term(self.get(v)) for v in self.kernel.grid]
        return requires, grid

    def program_ranges(self, grid: list[z3.ArithRef]) -> list[z3.BoolRef]:
        return [z3.And(p >= 0, p < g) for p, g in zip(self.program, grid, strict=False)]

    def body_run(self) -> None:
        self.block(self.kernel.body, Context())

    # ---- values ---------------------------------------------------------------------------------
    def get(self, value: ir.Value) -> Sym:
        sym = self.values.get(value.id)
        if sym is not None:
            return sym
        if value.id in self.shared.scalars:
            term = self.shared.scalars[value.id]
            # a float launch scalar: a positive number in every lane
            return Sym((), term, lanes=Leaf(POSITIVE) if term is None else None)
        for name, size in self.kernel.sizes.items():
            if size.id == value.id:
                return Sym((), self.shared.sizes[name])
        raise Unsupported(f"value {value!r} is used before it is defined")

    def int_term(self, sym: Sym) -> z3.ArithRef:
        if sym.term is None or not z3.is_int(sym.term):
            if sym.term is not None and z3.is_bool(sym.term):
                return z3.If(sym.term, z3.IntVal(1), z3.IntVal(0))
            return self.shared.fresh("value")
        return sym.term

    def bool_term(self, sym: Sym) -> z3.BoolRef:
        if sym.term is None:
            return self.shared.fresh("condition", "bool")
        if z3.is_bool(sym.term):
            return sym.term
        return sym.term != 0

    def set(self, value: ir.Value, sym: Sym, span: Span) -> None:
        self.values[value.id] = sym
        if self.recording and self.record_obligations and value.name:
            self.layouts[value.id] = (span, value.name, sym)

    def result(self, op: ir.Op, sym: Sym) -> None:
        self.set(op.result, sym, op.span)

    # ---- blocks and ops -------------------------------------------------------------------------
    def block(self, block: ir.Block, context: Context) -> Context:
        for op in block.ops:
            context = self.op(op, context)
        return context

    def op(self, op: ir.Op, context: Context) -> Context:
        handler = RULES.get(op.kind)
        if handler is None:
            reason = UNSUPPORTED.get(op.kind)
            raise Unsupported(f"op `{op.kind}` at line {op.span.line + 1}" + (f": {reason}" if reason else ""))
        result = handler(self, op, context)
        return result if isinstance(result, Context) else context

    # ---- obligations ------------------------------------------------------------------------------
    @property
    def emitting(self) -> bool:
        """Whether an obligation made now is kept: not in the other program's instance (it only records
        accesses, for races), nor in a loop's first pass. Ops with no other effect check it before building one."""
        return self.recording and self.record_obligations

    def emit(self, obligation: Obligation) -> None:
        if self.emitting:
            self.obligations.append(obligation)


# values -------------------------------------------------------------------------------------------
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


# elementwise --------------------------------------------------------------------------------------
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
    for sym in operands:
        layout = merge_layouts(ev, layout, sym.layout, shape, op, context, valid)
        tags = merge_tags(tags, sym.tags)
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
        elif is_int(op.result.type) and name in ("<<", ">>") and z3.is_int_value(b.term):
            factor = z3.IntVal(2 ** b.term.as_long())
            term = a.term * factor if name == "<<" else trunc_div(ev.int_term(a), factor, ev.nonnegative)
        elif is_int(op.result.type) or is_bool(op.result.type):
            term = ev.shared.fresh(f"bitwise {name}", "bool" if is_bool(op.result.type) else "int")
    if name == "+" and not is_int(op.result.type):
        accumulation(ev, op, "sum", [a, b], context)
    if name == "/" and is_float(op.result.type):
        division(ev, op, a, b, context)
    elementwise(ev, op, [a, b], term, context, lambda: combined(ev, [a, b], BINARY.get(name)))


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
    elementwise(ev, op, [c, a, b], term, context, lambda: chosen(ev, c, a, b))


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
    if ev.emitting and not target.is_integer and not (x.valid is not None and x.lanes is None):
        lanes = lane_tree(ev, x)  # a float converted: the same values; an integer or a mask: its numbers
    ev.result(op, Sym(x.shape, term, dict(x.layout), dict(x.tags), x.valid, lanes))


# shapes -------------------------------------------------------------------------------------------
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
    x = ev.get(op.operands[0])
    reduce_padding(ev, op, x, context)
    axis, keep = op.attrs["axis"], op.attrs["keep_dims"]
    shape = shape_of(op.result.type)
    mapping = {}
    for k in range(len(x.shape)):
        if k == axis:
            continue
        mapping[k] = COORDS[k] if keep or k < axis else COORDS[k - 1]
    layout = {}
    for key, entry in x.layout.items():
        if depends_on(entry.term, [COORDS[axis]]):
            continue
        layout[key] = Entry(move_coords(entry.term, mapping), entry.label, True, op.span)
    term = ev.shared.fresh(f"{op.attrs['fn']} of integers") if is_int(op.result.type) else None
    lanes = None if term is not None else reduced_lanes(ev, x, axis, op.attrs["fn"], mapping)
    ev.result(op, Sym(shape, term, layout, dict(x.tags), lanes=lanes))


# dot ----------------------------------------------------------------------------------------------
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
    lane_range = z3.And(lane >= 0, lane < a.shape[-1])
    ev.contractions[id(op)] = Contraction(
        indices, masks, list(context.assumptions), list(context.loops), lane, lane_range, op.span, a.shape[-1]
    )


def dimensions(a_label: str, b_label: str) -> str:
    if a_label == b_label:
        return f"dimension {a_label}"
    return f"a contracts over {a_label}, b over {b_label}: a transposed operand needs `trans`"


__all__ = ["Evaluator", "Shared", "Unsupported", "coord_list", "coord_ranges"]
