"""Symbolic evaluation of one program of a kernel over the tile IR.

Every IR value becomes a `Sym`: integer and boolean elements become z3 terms over the program ids, the loop
variables, the size symbols and the element's own coordinates (affine, with C-style division and remainder
by constants); float values carry no term, only their layout and tags. Along the way the evaluator records
the memory accesses and emits the obligations that belong to one op (contraction, alignment, tags,
invariants, hints). Loops are evaluated twice: a first pass finds which carried values change, the second
keeps the unchanged ones exact and havocs the rest (their tags are then constrained only by invariants).

`Evaluator` holds one program's state (values, accesses, obligations, layouts, ...) and the core every rule
uses; the rule of each IR op kind is a function in `rules.RULES`, called with the evaluator, grouped by theme:
values and elementwise ops in elementwise.py, shape ops and reductions in shapes.py, `dot` in dot.py, tensor
accesses in memory.py, tags, assertions, invariants and hints in claims.py, `for` and `if` in control_flow.py;
scans in scans.py, atomics beyond atomic_add in atomics.py; what padding lanes hold (AR313, AR314) in
padding_checks.py. Importing this module registers them all.
"""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.dsl.spans import Span

# importing the rule modules registers their rules in RULES
from argus.verify import atomics, claims, control_flow, dot, elementwise, memory, scans, shapes  # noqa: F401
from argus.verify.dataflow import users_of, value_sources
from argus.verify.model import Access, Context, Contraction, Loop, Obligation, Sym, ZeroTrip
from argus.verify.padding import POSITIVE, Leaf
from argus.verify.rules import RULES, UNSUPPORTED
from argus.verify.shared import Shared
from argus.verify.terms import COORDS
from argus.verify.values import Unsupported, coord_list, coord_ranges


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
        # ids of the values whose numbers some loop's next iteration takes in (its yields' value sources): an
        # `acc + x` accumulates x across iterations only where its result is among them (padding_checks.accumulation)
        self.carried_next = {
            v for op in ir.walk_ops(self.kernel.body) if op.kind == "for" for v in value_sources(*op.regions[0].yields)
        }
        self.users = users_of(self.kernel.body)  # the ops that take each value in, by its id
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


__all__ = ["Evaluator", "Shared", "Unsupported", "coord_list", "coord_ranges"]
