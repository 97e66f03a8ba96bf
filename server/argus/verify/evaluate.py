"""Symbolic evaluation of one program of a kernel over the tile IR.

Every IR value becomes a `Sym`: integer and boolean elements become z3 terms over the program ids, the loop
variables, the size symbols and the element's own coordinates (affine, with C-style division and remainder
by constants); float values carry no term, only their layout and tags. Along the way the evaluator records
the memory accesses and emits the obligations that belong to one op (contraction, alignment, tags,
invariants, hints). Loops are evaluated twice: a first pass finds which carried values change, the second
keeps the unchanged ones exact and havocs the rest (their tags are then constrained only by invariants).
"""

from __future__ import annotations

import itertools

import z3

from argus.dsl import ir
from argus.dsl.spans import Span
from argus.dsl.types import ScalarT, TensorT, TileT
from argus.verify.facts import DataFacts, Partition
from argus.verify.model import Access, Context, Entry, Key, Loop, Obligation, Sym
from argus.verify.origins import TagOrigins
from argus.verify.terms import (
    COORD_NAMES,
    COORDS,
    ceil_div,
    depends_on,
    free_names,
    is_nonnegative,
    move_coords,
    trunc_div,
    trunc_mod,
)
from argus.verify.terms import (
    show as show_term,
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


class Unsupported(Exception):
    """An op the evaluator cannot model; the kernel's obligations become unknown with this reason."""


def is_int(type_) -> bool:
    return isinstance(type_, ScalarT | TileT) and type_.dtype.is_integer and type_.dtype.kind != "bool"


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


class Shared:
    """Names every program of a launch shares: sizes, scalar parameters, tensor data, havoc counters."""

    def __init__(self, kernel: ir.KernelIR):
        self.kernel = kernel
        self.sizes = {name: z3.Int(name) for name in kernel.sizes}
        self.scalars: dict[int, z3.ExprRef | None] = {}
        self.tensors: dict[int, ir.ParamIR] = {}
        for param in kernel.params:
            if isinstance(param.type, TensorT):
                self.tensors[param.value.id] = param
            elif is_int(param.type):
                self.scalars[param.value.id] = z3.Int(param.name)
            elif is_bool(param.type):
                self.scalars[param.value.id] = z3.Bool(param.name)
            else:
                self.scalars[param.value.id] = None
        self.counter = itertools.count()
        self.gaps: set[str] = set()  # havoc variables standing for values the evaluator does not model
        self.carried: dict[str, bool] = {}  # havoc variable of a carried value -> its loop has an invariant
        self.functions: dict[str, z3.FuncDeclRef] = {}
        self.launch_values: dict[int, Sym] = {}
        self.facts = DataFacts()
        self._origins: TagOrigins | None = None

    @property
    def origins(self) -> TagOrigins:
        """Where tags are set, for related information (built on first use)."""
        if self._origins is None:
            self._origins = TagOrigins(self.kernel)
        return self._origins

    def fresh(self, hint: str, sort: str = "int", gap: bool = True) -> z3.ExprRef:
        name = f"?{hint}#{next(self.counter)}"
        if gap:
            self.gaps.add(name)
        return z3.Bool(name) if sort == "bool" else z3.Int(name)

    def data(self, tensor: str, rank: int) -> z3.FuncDeclRef:
        if tensor not in self.functions:
            self.functions[tensor] = z3.Function(tensor, *([z3.IntSort()] * rank), z3.IntSort())
        return self.functions[tensor]

    def dims(self, param: ir.ParamIR) -> list[z3.ArithRef]:
        dims = []
        for d in param.type.shape:
            dims.append(z3.IntVal(d.offset) if d.symbol is None else self.sizes[d.symbol] + d.offset)
        return dims


class Evaluator:
    """Evaluates the body of one kernel for one program of the grid (instance suffix '' or "'")."""

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
            return Sym((), self.shared.scalars[value.id])
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

    def aligned(self, sym: Sym, shape: tuple[int, ...]) -> Sym:
        """The value broadcast to `shape`: its coordinates moved right-aligned, size-1 axes pinned to 0."""
        rank, target = len(sym.shape), len(shape)
        mapping = {}
        for k in range(rank):
            axis = k + target - rank
            mapping[k] = z3.IntVal(0) if sym.shape[k] == 1 and shape[axis] != 1 else COORDS[axis]
        if all(v.eq(COORDS[k]) for k, v in mapping.items()):
            return Sym(shape, sym.term, sym.layout, sym.tags, sym.valid)
        layout = {key: Entry(move_coords(e.term, mapping), e.label, e.stat, e.origin) for key, e in sym.layout.items()}
        return Sym(shape, move_coords(sym.term, mapping), layout, sym.tags, move_coords(sym.valid, mapping))

    # ---- blocks and ops -------------------------------------------------------------------------
    def block(self, block: ir.Block, context: Context) -> Context:
        for op in block.ops:
            context = self.op(op, context)
        return context

    def op(self, op: ir.Op, context: Context) -> Context:
        handler = getattr(self, f"op_{op.kind}", None)
        if handler is None:
            raise Unsupported(f"op `{op.kind}` at line {op.span.line + 1}")
        result = handler(op, context)
        return result if isinstance(result, Context) else context

    def result(self, op: ir.Op, sym: Sym) -> None:
        self.set(op.result, sym, op.span)

    def op_const(self, op: ir.Op, context: Context) -> None:
        value = op.attrs["value"]
        if isinstance(value, bool):
            term = z3.BoolVal(value)
        elif isinstance(value, int):
            term = z3.IntVal(value)
        else:
            term = None
        self.result(op, Sym(shape_of(op.result.type), term))

    def op_program_id(self, op: ir.Op, context: Context) -> None:
        self.result(op, Sym((), self.program[op.attrs["axis"]]))

    def op_num_programs(self, op: ir.Op, context: Context) -> None:
        self.result(op, Sym((), self.int_term(self.get(self.kernel.grid[op.attrs["axis"]]))))

    def op_arange(self, op: ir.Op, context: Context) -> None:
        self.result(op, Sym((op.attrs["n"],), COORDS[0]))

    def op_zeros(self, op: ir.Op, context: Context) -> None:
        dtype = op.attrs["dtype"]
        term = z3.BoolVal(False) if dtype.kind == "bool" else z3.IntVal(0) if dtype.is_integer else None
        self.result(op, Sym(shape_of(op.result.type), term))

    def op_full(self, op: ir.Op, context: Context) -> None:
        value = self.get(op.operands[0])
        term = value.term if op.attrs["dtype"].is_integer else None
        self.result(op, Sym(shape_of(op.result.type), term, tags=dict(value.tags)))

    # elementwise --------------------------------------------------------------------------------
    def elementwise(self, op: ir.Op, operands: list[Sym], term, context: Context) -> None:
        shape = shape_of(op.result.type)
        layout: dict[Key, Entry] = {}
        tags: dict[str, z3.ArithRef] = {}
        valid = None
        for sym in operands:
            if sym.valid is not None:
                valid = sym.valid if valid is None else z3.And(valid, sym.valid)
        for sym in operands:
            layout = self.merge_layouts(layout, sym.layout, shape, op, context, valid)
            tags = merge_tags(tags, sym.tags)
        self.result(op, Sym(shape, term, layout, tags, valid))

    def merge_layouts(
        self, a: dict[Key, Entry], b: dict[Key, Entry], shape, op: ir.Op, context: Context, valid=None
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
                self.alignment(op, key, stat, full, shape, context, valid)
                merged[key] = full if not full.stat else stat
            else:
                del merged[key]  # two different indices of one axis (a stencil): the value stands for neither
        return merged

    def alignment(self, op: ir.Op, key: Key, stat: Entry, full: Entry, shape, context: Context, valid=None) -> None:
        """Only elements a mask lets through count: padding combined with another row's statistic is harmless."""
        where = f"line {stat.origin.line + 1}" if stat.origin else "a reduction"
        related = [(stat.origin, "the statistic is computed here")] if stat.origin else []
        self.emit(
            Obligation(
                "alignment",
                "AR311",
                op.span,
                f"a statistic reduced at {where} is applied to other {key[0]} indices (axis {key[1]}, "
                f"{full.label}) than it was computed from",
                full.term == stat.term,
                context.assumptions + coord_ranges(shape) + ([valid] if valid is not None else []),
                context.loops,
                self.program,
                coord_list(shape),
                [(f"{key[0]} index of the element", full.term), (f"{key[0]} index of the statistic", stat.term)],
                related,
            )
        )

    def operands(self, op: ir.Op) -> list[Sym]:
        shape = shape_of(op.result.type)
        return [self.aligned(self.get(v), shape) for v in op.operands]

    def op_binary(self, op: ir.Op, context: Context) -> None:
        a, b = self.operands(op)
        name = op.attrs["op"]
        term = None
        if a.term is not None and b.term is not None:
            if z3.is_bool(a.term) and z3.is_bool(b.term) and name in ("&", "|", "^"):
                term = {"&": z3.And, "|": z3.Or, "^": z3.Xor}[name](a.term, b.term)
            elif is_int(op.result.type) and name in INT_OPS:
                term = INT_OPS[name](self.int_term(a), self.int_term(b), self.nonnegative)
            elif is_int(op.result.type) and name in ("<<", ">>") and z3.is_int_value(b.term):
                factor = z3.IntVal(2 ** b.term.as_long())
                term = a.term * factor if name == "<<" else trunc_div(self.int_term(a), factor, self.nonnegative)
            elif is_int(op.result.type) or is_bool(op.result.type):
                term = self.shared.fresh(f"bitwise {name}", "bool" if is_bool(op.result.type) else "int")
        self.elementwise(op, [a, b], term, context)

    def op_unary(self, op: ir.Op, context: Context) -> None:
        (x,) = self.operands(op)
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
        self.elementwise(op, [x], term, context)

    def op_compare(self, op: ir.Op, context: Context) -> None:
        a, b = self.operands(op)
        term = None
        if a.term is not None and b.term is not None:
            if z3.is_bool(a.term) != z3.is_bool(b.term):
                term = COMPARES[op.attrs["op"]](self.int_term(a), self.int_term(b))
            else:
                term = COMPARES[op.attrs["op"]](a.term, b.term)
        elif is_int(op.operands[0].type) or is_int(op.operands[1].type):
            term = self.shared.fresh("comparison", "bool")
        self.elementwise(op, [a, b], term, context)

    def op_math(self, op: ir.Op, context: Context) -> None:
        xs = self.operands(op)
        fn = op.attrs["fn"]
        term = None
        if is_int(op.result.type) and all(x.term is not None for x in xs):
            if fn in ("maximum", "minimum"):
                a, b = (self.int_term(x) for x in xs)
                term = z3.If(a >= b, a, b) if fn == "maximum" else z3.If(a <= b, a, b)
            elif fn == "abs":
                a = self.int_term(xs[0])
                term = z3.If(a >= 0, a, -a)
        self.elementwise(op, xs, term, context)

    def op_where(self, op: ir.Op, context: Context) -> None:
        c, a, b = self.operands(op)
        term = None
        if a.term is not None and b.term is not None:
            if z3.is_bool(a.term) == z3.is_bool(b.term):
                term = z3.If(self.bool_term(c), a.term, b.term)
            else:
                term = z3.If(self.bool_term(c), self.int_term(a), self.int_term(b))
        self.elementwise(op, [c, a, b], term, context)

    def op_cast(self, op: ir.Op, context: Context) -> None:
        (x,) = self.operands(op)
        target = op.attrs["dtype"]
        term = None
        if target.kind == "bool":
            term = self.bool_term(x) if x.term is not None else self.shared.fresh("cast", "bool")
        elif target.is_integer:
            if x.term is not None:
                term = self.int_term(x)
            else:
                term = self.shared.fresh("float converted to an integer")
        self.result(op, Sym(x.shape, term, dict(x.layout), dict(x.tags), x.valid))

    def op_hint(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        n, fn = op.attrs["n"], op.attrs["fn"]
        term = self.int_term(x)
        if fn == "multiple_of":
            goal = trunc_mod(term, z3.IntVal(n), self.nonnegative) == 0
            ranges = coord_ranges(x.shape)
            claim = f"multiple_of(x, {n}): every element is a multiple of {n}"
        else:
            last = len(x.shape) - 1
            if last < 0:
                goal, ranges = z3.BoolVal(True), []
            else:
                nxt = move_coords(term, {last: COORDS[last] + 1})
                inside = z3.And(trunc_mod(COORDS[last], z3.IntVal(n)) != n - 1, COORDS[last] + 1 < x.shape[last])
                goal = z3.Implies(inside, nxt == term + 1)
                ranges = coord_ranges(x.shape)
            claim = f"max_contiguous(x, {n}): runs of {n} consecutive values"
        self.emit(
            Obligation(
                "hint",
                "AR309",
                op.span,
                f"compiler hint not established: {claim}",
                goal,
                context.assumptions + ranges,
                context.loops,
                self.program,
                coord_list(x.shape),
                [("x", term)],
            )
        )
        self.result(op, x)

    # shapes --------------------------------------------------------------------------------------
    def moved(self, op: ir.Op, x: Sym, mapping: dict[int, z3.ArithRef], shape) -> None:
        layout = {k: Entry(move_coords(e.term, mapping), e.label, e.stat, e.origin) for k, e in x.layout.items()}
        sym = Sym(tuple(shape), move_coords(x.term, mapping), layout, dict(x.tags), move_coords(x.valid, mapping))
        self.result(op, sym)

    def op_expand_dims(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        shape = shape_of(op.result.type)
        added = set(op.attrs["axes"])
        kept = [k for k in range(len(shape)) if k not in added]
        self.moved(op, x, {old: COORDS[new] for old, new in enumerate(kept)}, shape)

    def op_trans(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        self.moved(op, x, {0: COORDS[1], 1: COORDS[0]}, shape_of(op.result.type))

    def op_broadcast_to(self, op: ir.Op, context: Context) -> None:
        self.result(op, self.aligned(self.get(op.operands[0]), shape_of(op.result.type)))

    def op_reshape(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        shape = shape_of(op.result.type)
        linear = z3.IntVal(0)
        for k, n in enumerate(shape):
            linear = linear * n + COORDS[k]
        mapping, stride = {}, 1
        for k in reversed(range(len(x.shape))):
            mapping[k] = (linear / stride) % x.shape[k]
            stride *= x.shape[k]
        self.moved(op, x, mapping, shape)

    def op_reduce(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
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
        term = self.shared.fresh(f"{op.attrs['fn']} of integers") if is_int(op.result.type) else None
        self.result(op, Sym(shape, term, layout, dict(x.tags)))

    def op_cdiv(self, op: ir.Op, context: Context) -> None:
        a, b = (self.get(v) for v in op.operands)
        self.result(op, Sym((), ceil_div(self.int_term(a), self.int_term(b), self.nonnegative)))

    # dot -----------------------------------------------------------------------------------------
    def op_dot(self, op: ir.Op, context: Context) -> None:
        a, b = self.get(op.operands[0]), self.get(op.operands[1])
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
        for a_key, a_entry in a_contracted.items():
            for b_key, b_entry in b_contracted.items():
                if a_entry.label != b_entry.label:
                    continue
                a_index, b_index = move_coords(a_entry.term, a_map), move_coords(b_entry.term, b_map)
                both = [v for v in (move_coords(a.valid, a_map), move_coords(b.valid, b_map)) if v is not None]
                self.emit(
                    Obligation(
                        "contraction",
                        "AR310",
                        op.span,
                        f"dot contraction mismatch: a's column index into {a_key[0]} differs from b's row index "
                        f"into {b_key[0]} (dimension {a_entry.label})",
                        z3.Implies(z3.And(*both), a_index == b_index) if both else a_index == b_index,
                        context.assumptions + ranges,
                        context.loops,
                        self.program,
                        [("i", i), ("kk", kk), ("j", j)],
                        [(f"a's {a_entry.label} index", a_index), (f"b's {b_entry.label} index", b_index)],
                    )
                )
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
        term = self.shared.fresh("integer dot") if is_int(op.result.type) else None
        sym = Sym(shape, term, layout, tags)
        if len(op.operands) > 2:
            acc = self.get(op.operands[2])
            sym = Sym(
                shape, term, self.merge_layouts(acc.layout, layout, shape, op, context), merge_tags(tags, acc.tags)
            )
        self.result(op, sym)

    # memory --------------------------------------------------------------------------------------
    def access(self, op: ir.Op, context: Context) -> Access:
        parts = ir.memory_access(op)
        param = self.shared.tensors[parts.tensor.id]
        shape = shape_of(op.result.type) if op.kind == "load" else self.access_shape(parts)
        indices = [self.int_term(self.aligned(self.get(v), shape)) for v in parts.indices]
        mask = z3.BoolVal(True)
        if parts.mask is not None:
            mask = self.bool_term(self.aligned(self.get(parts.mask), shape))
        labels = [str(d) for d in param.type.shape]
        access = Access(
            op.kind, param.name, indices, mask, shape, self.shared.dims(param), labels, op.span, context, self.program
        )
        if self.recording:
            self.accesses.append(access)
        self.bounds(access)
        return access

    def access_shape(self, parts: ir.MemoryAccess) -> tuple[int, ...]:
        """The broadcast of the indices, the value and the mask: the shape of the stored tile."""
        shapes = [shape_of(v.type) for v in [*parts.indices, parts.value, parts.mask] if v is not None]
        rank = max((len(s) for s in shapes), default=0)
        result = [1] * rank
        for shape in shapes:
            for k, n in enumerate(shape):
                axis = k + rank - len(shape)
                result[axis] = max(result[axis], n)
        return tuple(result)

    def bounds(self, access: Access) -> None:
        inside = [z3.And(index >= 0, index < dim) for index, dim in zip(access.indices, access.dims, strict=True)]
        shown = [
            (f"{access.tensor} index {d} ({label})", idx)
            for d, (idx, label) in enumerate(zip(access.indices, access.labels, strict=True))
        ]
        shown += [(f"{access.tensor} extent {d}", dim) for d, dim in enumerate(access.dims)]
        self.emit(
            Obligation(
                "in_bounds",
                "AR301",
                access.span,
                f"{access.kind} of `{access.tensor}` may be out of bounds",
                z3.And(*inside) if inside else z3.BoolVal(True),
                access.context.assumptions + coord_ranges(access.shape) + [access.mask],
                access.context.loops,
                self.program,
                coord_list(access.shape),
                shown,
            )
        )

    def op_load(self, op: ir.Op, context: Context) -> None:
        access = self.access(op, context)
        parts = ir.memory_access(op)
        param = self.shared.tensors[parts.tensor.id]
        term = None
        if is_int(op.result.type) or is_bool(op.result.type):
            data = self.shared.data(param.name, len(access.indices))(*access.indices)
            self.shared.facts.note(param.name, data)
            if is_bool(op.result.type):
                data = data != 0
            other = self.aligned(self.get(parts.other), access.shape).term if parts.other is not None else None
            if other is None:
                other = self.shared.fresh("masked-off element", "bool" if is_bool(op.result.type) else "int")
            if z3.is_bool(other) != z3.is_bool(data):
                other = other != 0 if z3.is_bool(data) else z3.If(other, 1, 0)
            term = data if parts.mask is None else z3.If(access.mask, data, other)
        layout, tags = {}, {}
        counts = {label: access.labels.count(label) for label in access.labels}
        origin = [z3.IntVal(0)] * len(access.shape)
        for axis, (index, label) in enumerate(zip(access.indices, access.labels, strict=True)):
            layout[(param.name, axis)] = Entry(index, label)
            if counts[label] == 1 and label.isidentifier():
                tags[label] = move_coords(index, dict(enumerate(origin)))
        valid = None if parts.mask is None else access.mask
        self.result(op, Sym(access.shape, term, layout, tags, valid))

    def op_store(self, op: ir.Op, context: Context) -> None:
        self.access(op, context)

    def op_atomic_add(self, op: ir.Op, context: Context) -> None:
        self.access(op, context)

    # tags ----------------------------------------------------------------------------------------
    def op_tag(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        tags = dict(x.tags)
        for name, value in zip(op.attrs["names"], op.operands[1:], strict=True):
            tags[name] = self.int_term(self.get(value))
        self.result(op, Sym(x.shape, x.term, x.layout, tags, x.valid))

    def op_tag_read(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        name = op.attrs["name"]
        if name in x.tags:
            self.result(op, Sym((), x.tags[name]))
            return
        known = ", ".join(sorted(x.tags)) or "none"
        what = op.operands[0].name or "the value"
        self.emit(
            Obligation(
                "tag_missing",
                "AR308",
                op.span,
                f"`{what}` has no tag `{name}` here (its tags: {known})",
                z3.BoolVal(False),
                list(context.assumptions),
                context.loops,
                self.program,
            )
        )
        self.result(op, Sym((), self.shared.fresh(f"missing tag {name}")))

    def op_assert_tag(self, op: ir.Op, context: Context) -> None:
        x = self.get(op.operands[0])
        what = op.operands[0].name or "the value"
        for name, value in zip(op.attrs["names"], op.operands[1:], strict=True):
            expected = self.int_term(self.get(value))
            if name not in x.tags:
                goal, shown = z3.BoolVal(False), [("expected", expected)]
                message = f"`{what}` has no tag `{name}` here (its tags: {', '.join(sorted(x.tags)) or 'none'})"
                kind, code = "tag_missing", "AR308"
            else:
                goal, shown = x.tags[name] == expected, [(f"{what}.{name}", x.tags[name]), ("expected", expected)]
                message, kind, code = (
                    f"tag assertion fails: {what}.{name} differs from the stated value",
                    "tag",
                    "AR305",
                )
            self.emit(
                Obligation(
                    kind,
                    code,
                    op.span,
                    message,
                    goal,
                    list(context.assumptions),
                    context.loops,
                    self.program,
                    [],
                    shown,
                    self.shared.origins.sites(op.operands[0], name) if self.recording else [],
                )
            )

    def op_assert(self, op: ir.Op, context: Context) -> None:
        cond = self.get(op.operands[0])
        self.emit(
            Obligation(
                "tag",
                "AR305",
                op.span,
                "tag assertion fails",
                self.bool_term(cond),
                context.assumptions + coord_ranges(cond.shape),
                context.loops,
                self.program,
                coord_list(cond.shape),
                tag_reads(op, self),
                self.shared.origins.reads(op.operands[0]) if self.recording else [],
            )
        )

    def op_invariant(self, op: ir.Op, context: Context) -> Context:
        cond = self.get(op.operands[0])
        term = self.bool_term(cond)
        if cond.shape:
            term = z3.ForAll(
                [COORDS[k] for k in range(len(cond.shape))], z3.Implies(z3.And(*coord_ranges(cond.shape)), term)
            )
        self.invariants.append((op, term))
        return context.child(term)

    # control flow --------------------------------------------------------------------------------
    invariants: list

    def op_for(self, op: ir.Op, context: Context) -> None:
        start, stop, step = (self.int_term(self.get(v)) for v in op.operands[:3])
        inits = [self.get(v) for v in op.operands[3:]]
        body = op.regions[0]
        iv = z3.Int(f"{op.attrs['var']}@{op.span.line + 1}{self.suffix}")
        loop = Loop(op.attrs["var"], iv, start, step, op.span)
        if z3.is_int_value(step):
            s = step.as_long()
            if s > 0:
                inside = z3.And(iv >= start, iv < stop, (iv - start) % s == 0)
            else:
                inside = z3.And(iv <= start, iv > stop, (start - iv) % (-s) == 0)
        else:
            t = self.shared.fresh(f"iteration of {op.attrs['var']}", gap=False)
            inside = z3.And(
                t >= 0, iv == start + step * t, z3.Or(z3.And(step > 0, iv < stop), z3.And(step < 0, iv > stop))
            )
        if z3.is_int_value(step) and step.as_long() > 0 and is_nonnegative(start, self.nonnegative):
            self.nonnegative.add(str(iv))
        inner = context.child(inside, loop)
        has_invariant = any(o.kind == "invariant" for o in body.ops)
        # pass 1: every carried value havocked, to learn which ones the body leaves unchanged
        havoc = [self.havoc(init, name, has_invariant) for init, name in zip(inits, op.attrs["carried"], strict=True)]
        saved, saved_invariants = self.recording, self.invariants
        self.recording, self.invariants = False, []
        yields = self.run_body(body, iv, havoc, inner)
        self.recording = saved
        args = [self.refine(init, h, y, loop) for init, h, y in zip(inits, havoc, yields, strict=True)]
        # pass 2: the real one, repeated (its records dropped) while a carried layout is not inductive
        for attempt in range(4):
            marks = (len(self.obligations), len(self.accesses))
            self.invariants = []
            yields = self.run_body(body, iv, args, inner)
            stale = [self.not_inductive(arg, yielded, loop) for arg, yielded in zip(args, yields, strict=True)]
            if not any(stale):
                break
            del self.obligations[marks[0] :], self.accesses[marks[1] :]
            for arg, keys in zip(args, stale, strict=True):
                for key in keys if attempt < 2 else list(arg.layout):
                    arg.layout.pop(key, None)  # from the third attempt on: no carried layout at all
        if self.recording:
            self.prove_invariants(op, loop, context, inner, inits, args, yields)
        self.invariants = saved_invariants
        for result, init, arg in zip(op.results, inits, args, strict=True):
            self.set(result, self.after_loop(init, arg, op.attrs["var"]), op.span)

    def run_body(self, body: ir.Block, iv, args: list[Sym], context: Context) -> list[Sym]:
        self.values[body.args[0].id] = Sym((), iv)
        for value, sym in zip(body.args[1:], args, strict=True):
            self.values[value.id] = sym
        self.block(body, context)
        return [self.get(v) for v in body.yields]

    def havoc(self, init: Sym, name: str, has_invariant: bool) -> Sym:
        def fresh(hint, sort="int"):
            var = self.shared.fresh(f"{name}.{hint}", sort, gap=False)
            self.shared.carried[str(var)] = has_invariant
            return var

        term = None
        if init.term is not None:
            term = fresh("value", "bool" if z3.is_bool(init.term) else "int")
        tags = {tag: fresh(tag) for tag in init.tags}
        return Sym(init.shape, term, dict(init.layout), tags, None)

    @staticmethod
    def not_inductive(arg: Sym, yielded: Sym, loop: Loop) -> list[Key]:
        """The carried layout entries one iteration does not reproduce for the next (index at iv + step)."""
        stale = []
        for key, entry in arg.layout.items():
            after = yielded.layout.get(key)
            form = entry.later if entry.later is not None else entry.term
            expected = substitute_all(form, [(loop.iv, loop.iv + loop.step)])
            if after is None or not same_term(after.term, expected):
                stale.append(key)
        return stale

    def refine(self, init: Sym, havoc: Sym, yielded: Sym, loop: Loop) -> Sym:
        """The carried value for the real pass: exact where the body leaves it unchanged, havoc elsewhere.

        A carried layout entry is kept when it is the same every iteration, or when it follows the loop
        variable (a tile prefetched for the next iteration, `A[M: ..., K: iv + j]`): the index the body yields
        for iteration iv + step, shifted back to iv; where that does not give the index from before the loop
        at the first value, iteration 0 keeps the one from before the loop (`If(iv == start, ...)`). The real
        pass then checks that the body reproduces it (`not_inductive`)."""
        iv = loop.iv
        term = (
            init.term
            if havoc.term is not None and yielded.term is not None and yielded.term.eq(havoc.term)
            else havoc.term
        )
        tags = {}
        for name, var in havoc.tags.items():
            tags[name] = init.tags[name] if name in yielded.tags and yielded.tags[name].eq(var) else var
        # a tag set only inside the loop is not carried: iteration 0 does not have it
        layout = {}
        iv_name = str(iv)
        for key, entry in yielded.layout.items():
            first = init.layout.get(key)
            names = free_names(entry.term)
            unchanged = first is not None and same_term(first.term, entry.term)
            invariant = first is None and iv_name not in names and not any(n.startswith("?") for n in names)
            if unchanged or invariant:
                layout[key] = entry
                continue
            if first is None or any(n.startswith("?") for n in names):
                continue
            shifted = substitute_all(entry.term, [(iv, iv - loop.step)])
            if same_term(substitute_all(shifted, [(iv, loop.start)]), first.term):
                layout[key] = Entry(shifted, entry.label, entry.stat, entry.origin)
            else:  # iteration 0 holds what came before the loop (a prologue), later ones what the body fetched
                term = z3.If(iv == loop.start, first.term, shifted)
                layout[key] = Entry(term, entry.label, entry.stat, entry.origin, later=shifted)
        return Sym(init.shape, term, layout, tags, None)

    def after_loop(self, init: Sym, arg: Sym, var: str) -> Sym:
        term = arg.term
        if term is not None and (init.term is None or not term.eq(init.term)):
            term = self.shared.fresh(f"{var}-loop result", "bool" if z3.is_bool(term) else "int")
        tags = {}
        for name, value in arg.tags.items():
            if init.tags.get(name) is not None and value.eq(init.tags[name]):
                tags[name] = value
            else:
                tags[name] = self.shared.fresh(f"tag {name} after the {var} loop")
        return Sym(arg.shape, term, dict(arg.layout), tags, None)

    def prove_invariants(self, op: ir.Op, loop: Loop, outer: Context, inner: Context, inits, args, yields) -> None:
        if not self.invariants:
            return
        entry_pairs = [(loop.iv, loop.start)]
        step_pairs = [(loop.iv, loop.iv + loop.step)]
        for init, arg, yielded in zip(inits, args, yields, strict=True):
            if arg.term is not None and init.term is not None and not arg.term.eq(init.term):
                entry_pairs.append((arg.term, init.term))
                if yielded.term is not None:
                    step_pairs.append((arg.term, yielded.term))
            for name, var in arg.tags.items():
                if init.tags.get(name) is not None and var.eq(init.tags[name]):
                    continue
                entry_pairs.append((var, init.tags.get(name, self.shared.fresh(f"unset tag {name}"))))
                step_pairs.append((var, yielded.tags.get(name, self.shared.fresh(f"unset tag {name}"))))
        runs = z3.Or(
            z3.And(loop.step > 0, loop.start < self.int_term(self.get(op.operands[1]))),
            z3.And(loop.step < 0, loop.start > self.int_term(self.get(op.operands[1]))),
        )
        stop = self.int_term(self.get(op.operands[1]))
        nxt = loop.iv + loop.step
        has_next = z3.Or(z3.And(loop.step > 0, nxt < stop), z3.And(loop.step < 0, nxt > stop))
        # the body's assumptions: the loop range and every invariant, as the body saw them
        body_facts = list(inner.assumptions) + [t for _, t in self.invariants]
        for inv, term in self.invariants:
            reads = tag_reads(inv, self)
            related = [(op.span, "the loop"), *self.shared.origins.reads(inv.operands[0])]
            self.emit(
                Obligation(
                    "invariant_entry",
                    "AR306",
                    inv.span,
                    "loop invariant does not hold on entry to the loop",
                    substitute_all(term, entry_pairs),
                    [*outer.assumptions, runs],
                    outer.loops,
                    self.program,
                    [],
                    [(f"{loop.name} (first value)", loop.start)]
                    + [(f"{name} on entry", substitute_all(t, entry_pairs)) for name, t in reads],
                    related,
                )
            )
            self.emit(
                Obligation(
                    "invariant_step",
                    "AR307",
                    inv.span,
                    "loop invariant is not preserved by an iteration",
                    substitute_all(term, step_pairs),
                    [*body_facts, has_next],
                    inner.loops,
                    self.program,
                    [],
                    [(f"{loop.name} (next value)", nxt)]
                    + [(f"{name} after the iteration", substitute_all(t, step_pairs)) for name, t in reads],
                    related,
                )
            )

    def op_if(self, op: ir.Op, context: Context) -> None:
        cond = self.bool_term(self.get(op.operands[0])) if op.operands else self.shared.fresh("if", "bool")
        then_block, else_block = op.regions
        self.block(then_block, context.child(cond))
        then_values = [self.get(v) for v in then_block.yields]
        self.block(else_block, context.child(z3.Not(cond)))
        else_values = [self.get(v) for v in else_block.yields]
        for result, a, b in zip(op.results, then_values, else_values, strict=True):
            shape = shape_of(result.type)
            a, b = self.aligned(a, shape), self.aligned(b, shape)
            term = None
            if a.term is not None and b.term is not None:
                if z3.is_bool(a.term) == z3.is_bool(b.term):
                    term = z3.If(cond, a.term, b.term)
                else:
                    term = z3.If(cond, self.int_term(a), self.int_term(b))
            layout = {k: e for k, e in a.layout.items() if k in b.layout and b.layout[k].term.eq(e.term)}
            tags = {n: z3.If(cond, t, b.tags[n]) for n, t in a.tags.items() if n in b.tags}
            self.set(result, Sym(shape, term, layout, tags), op.span)

    def op_partition(self, op: ir.Op, context: Context) -> None:
        param = self.shared.tensors[op.operands[0].id]
        total = self.int_term(self.get(op.operands[1]))
        function = self.shared.data(param.name, 1)
        self.shared.facts.partitions[param.name] = Partition(function, total, self.shared.dims(param)[0])
        self.result(op, Sym((), z3.BoolVal(True)))

    # ---- obligations ------------------------------------------------------------------------------
    def emit(self, obligation: Obligation) -> None:
        if self.recording and self.record_obligations:
            self.obligations.append(obligation)

    def source_names(self) -> dict[str, str]:
        """The verifier's variable names as the kernel writes them: pid0 -> pm, e0 -> i, k0@13 -> k0."""
        names = {f"e{k}": COORD_NAMES[k] for k in range(len(COORDS))}
        for op in ir.walk_ops(self.kernel.body):
            if op.kind == "program_id" and op.result.name:
                names.setdefault(f"pid{op.attrs['axis']}{self.suffix}", op.result.name)
            elif op.kind == "for":
                names[f"{op.attrs['var']}@{op.span.line + 1}{self.suffix}"] = op.attrs["var"]
        return names

    def layout_text(self, sym: Sym, names: dict[str, str] | None = None) -> str:
        names = names if names is not None else self.source_names()

        def show(term):
            return show_term(term, names)

        parts = []
        tensors: dict[str, list[tuple[int, Entry]]] = {}
        for (tensor, axis), entry in sym.layout.items():
            tensors.setdefault(tensor, []).append((axis, entry))
        for tensor, entries in tensors.items():
            axes = ", ".join(f"{e.label}: {show(e.term)}" for _, e in sorted(entries, key=lambda p: p[0]))
            stat = " (statistic)" if any(e.stat for _, e in entries) else ""
            parts.append(f"{tensor}[{axes}]{stat}")
        text = "; ".join(parts) if parts else "no tensor index"
        if sym.term is not None and not sym.layout:
            text = f"value {show(sym.term)}"
        if sym.valid is not None:
            text += f"; mask {show(sym.valid)}"
        if sym.tags:
            text += "; tags " + ", ".join(f"{n}={show(t)}" for n, t in sorted(sym.tags.items()))
        coords = ", ".join(COORD_NAMES[k] for k in range(len(sym.shape)))
        shape = "x".join(str(n) for n in sym.shape)
        return f"[{shape}] ({coords}) -> {text}" if sym.shape else text


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


def tag_reads(op: ir.Op, evaluator: Evaluator) -> list[tuple[str, z3.ExprRef]]:
    """The tag values a condition reads, for the witness: `a.k`, `b.k`."""
    shown = []
    stack, seen = [op.operands[0]], set()
    while stack:
        value = stack.pop()
        if value.id in seen or value.op is None:
            continue
        seen.add(value.id)
        if value.op.kind == "tag_read":
            source = value.op.operands[0].name or "value"
            sym = evaluator.values.get(value.id)
            if sym is not None and sym.term is not None:
                shown.append((f"{source}.{value.op.attrs['name']}", sym.term))
            continue
        stack.extend(value.op.operands)
    return shown
