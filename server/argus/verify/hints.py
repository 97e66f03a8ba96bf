"""Hints for a failed or undecided obligation: the fix the kernel means, and a `requires` only where that is it.

A `requires` hint (which the editor turns into a quick fix) is offered only when the kernel is written for the
sizes it states (issue 17, class 8), never in place of a mask or a grid fix:

- in bounds (AR301), per dimension S of the failing axis of the access:
  - the access masks S but lets the index past it: the mask is wrong (`<= N` is named); no `requires`;
  - the index is not a tile (no `arange` in it: a gather, a decoded program id, `W[e + 1]`): no mask would be
    the fix; where the index is a loaded value itself (`logits[row, t]`, `t = load(target[row])`), what the
    caller guarantees is: `requires in_range(target, 0, V)`, or `in_range(target, 0, V, ignore=C)` first when
    the kernel compares that value with a constant C (`t != -100`: the entries it skips, for which the plain
    fact would fail at launch), each when z3 shows it proves the access; otherwise nothing is offered;
  - the access does not mask S, another access of the kernel does: the kernel handles a partial tile of S,
    so the fix is the same mask here; no `requires`;
  - no access of the kernel masks S (a kernel written for whole tiles): `requires S % C == 0`, or `S <= C`
    when the index is one tile (no program id, no loop), where C is a tile the index runs over along S (the
    `arange(C)` it is built from, by name: a tile of another dimension with the same value is not it), when
    z3 shows that it proves the access;
- coverage (AR304), per dimension S of the output:
  - a grid axis of `S // C` programs in a kernel that masks S: the grid rounds down, the fix is cdiv;
  - a grid axis that splits S (its extent mentions S) while the store's index along S does not use that
    program id: that, no `requires`;
  - a store index along S that is one tile (`arange(C)`, no program id, no loop): `requires S <= C`;
  - a grid axis of `S // C` in a kernel that masks S nowhere: `requires S % C == 0`;
  each `requires` again only when z3 shows that it proves the claim.

The rules read the kernel's IR (verify_kernel passes the kernel it verifies, as written or a tune variant);
without it no `requires` is offered at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import z3

from argus.dsl import ir
from argus.dsl.atomics import WRITES
from argus.verify.model import Obligation

MAX_CANDIDATES = 12
GATHER = "in_range"  # a candidate (GATHER, tensor, size, axis, ignore): the fact a gather's index needs
INDEX = re.compile(r"^(\w+) index (\d+) \((.+)\)$")  # the shown value of an access's index: "x index 0 (N)"
EXTENT = re.compile(r"^(\w+) extent (\d+)$")
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
SHAPE_OPS = ("expand_dims", "broadcast_to", "reshape", "cast", "hint")  # keep what an index stands for


def hint_for(prover, ob: Obligation, verdict, kernel: ir.KernelIR | None) -> str:
    """What the diagnostic of an obligation that was not proved suggests: the fix the kernel means (a mask, the
    grid, a `requires`), else the obligation's own hint.

    Nothing for an obligation z3 ran out of its budget (or of the wall-clock safety net) on: a narrower claim is
    easier, so some condition always "proves" it within the budget, and the hint would blame a kernel that may
    well be right (`requires M <= BK` on a correct matmul at 1 ms). The honest answer there is a larger budget,
    which the verdict's reason says."""
    if verdict.out_of_time:
        return ""
    hint = ""
    if verdict.status in ("refuted", "unknown") and ob.kind in ("in_bounds", "coverage") and kernel is not None:
        view = KernelView(kernel)
        witness = verdict.witness
        fix, candidates = (bounds_fix if ob.kind == "in_bounds" else coverage_fix)(view, ob, witness)
        hint = suggest_requires(prover, ob, candidates) or fix
    return hint or ob.hint


def suggest_requires(prover, ob: Obligation, candidates: list[tuple[str, str, str]] | None = None) -> str:
    """The first candidate `(size, "%" or "<=", constant)` (S % C == 0, S <= C) that proves the claim."""
    built = []
    for candidate in candidates or []:
        if candidate[0] == GATHER:
            built += gather_fact(prover, ob, *candidate[1:])
            continue
        size, relation, constant = candidate
        value = prover.constants.get(constant)
        term = prover.sizes.get(size)
        if term is None or not isinstance(value, int) or isinstance(value, bool) or value <= 1:
            continue
        if relation == "%":
            built.append((f"{size} % {constant} == 0", term % value == 0))
        else:
            built.append((f"{size} <= {constant}", term <= value))
    if not built:
        return ""
    claim = prover.here(z3.And(*ob.assumptions, z3.Not(ob.goal)))
    for text, condition in built[:MAX_CANDIDATES]:
        solver = prover.solver()
        solver.add(claim, prover.here(condition))
        answer, _, _ = prover.check(solver, share=4)  # a quarter of the budget each, like the shrinking queries
        if answer == z3.unsat:
            return f"`requires {text}` would prove it"
    return ""


def gather_fact(prover, ob: Obligation, source: str, size: str, axis: str, ignore: int | None) -> list:
    """`in_range(source, 0, size[, ignore])` for a gather along `axis`, as the condition it puts on the index
    there (the index is the loaded value itself: the fact bounds it exactly, or lets `ignore` through)."""
    index = next((t for name, t in ob.shown if (m := INDEX.match(name)) and m.group(2) == axis), None)
    extent = prover.sizes.get(size)
    if index is None or extent is None:
        return []
    inside = z3.And(index >= 0, index < extent)
    if ignore is None:
        return [(f"in_range({source}, 0, {size})", inside)]
    return [(f"in_range({source}, 0, {size}, ignore={ignore})", z3.Or(inside, index == ignore))]


# ---- what the kernel's IR says ---------------------------------------------------------------------------
@dataclass
class Mentions:
    """What a value is computed from: sizes, the tiles of its aranges, program axes, loop variables."""

    sizes: set[str] = field(default_factory=set)
    tiles: list[str] = field(default_factory=list)  # arange(C)'s C, by name, in the order met
    programs: set[int] = field(default_factory=set)
    loops: set[int] = field(default_factory=set)  # value ids of loop variables
    compares: list[tuple[str, str]] = field(default_factory=list)  # (op, size) of `x <op> S`


class KernelView:
    def __init__(self, kernel: ir.KernelIR):
        self.kernel = kernel
        self.size_of = {value.id: name for name, value in kernel.sizes.items()}
        self.loop_vars: set[int] = set()
        self.accesses: list[tuple[ir.Op, ir.MemoryAccess, str]] = []
        for op in ir.walk_ops(kernel.body):
            if op.kind == "for" and op.regions and op.regions[0].args:
                self.loop_vars.add(op.regions[0].args[0].id)
            if op.kind == "load" or op.kind in WRITES:
                parts = ir.memory_access(op)
                param = next((p for p in kernel.params if p.value.id == parts.tensor.id), None)
                if param is not None:
                    self.accesses.append((op, parts, param.name))

    def mentions(self, value: ir.Value | None) -> Mentions:
        found = Mentions()
        stack, seen = ([value] if value is not None else []), set()
        while stack:
            v = stack.pop()
            if v.id in seen:
                continue
            seen.add(v.id)
            if v.id in self.size_of:
                found.sizes.add(self.size_of[v.id])
            if v.id in self.loop_vars:
                found.loops.add(v.id)
            op = v.op
            if op is None:
                continue
            if op.kind == "arange" and op.attrs.get("n_expr"):
                found.tiles.append(str(op.attrs["n_expr"]))
            elif op.kind == "program_id":
                found.programs.add(op.attrs["axis"])
            elif op.kind == "compare" and len(op.operands) == 2:
                left, right = (self.size_of.get(o.id) for o in op.operands)
                if right is not None:  # `x <= N`
                    found.compares.append((op.attrs["op"], right))
                if left is not None:  # `N >= x`, read as `x <= N`
                    found.compares.append((FLIPPED.get(op.attrs["op"], op.attrs["op"]), left))
            if op.kind == "load":
                continue  # data: what it was loaded from is not what the value is computed from
            stack.extend(reversed(op.operands))
        return found

    def source_name(self, value: ir.Value) -> str | None:
        """The name the source gives an index (`rm` for `rm[:, None]`)."""
        while value is not None:
            if value.name:
                return value.name
            op = value.op
            if op is None or op.kind not in SHAPE_OPS or not op.operands:
                return None
            value = op.operands[0]
        return None

    def loaded_from(self, value: ir.Value) -> tuple[ir.Op, str] | None:
        """The load and the tensor an index is read from, when it is that load's value (through broadcasts
        and casts): `t = load(target[row])` for `logits[row, t]`."""
        while value is not None and value.op is not None:
            op = value.op
            if op.kind == "load":
                parts = ir.memory_access(op)
                param = next((p for p in self.kernel.params if p.value.id == parts.tensor.id), None)
                return (op, param.name) if param is not None else None
            if op.kind not in SHAPE_OPS or not op.operands:
                return None
            value = op.operands[0]
        return None

    def compared_constants(self, load_op: ir.Op) -> list[int]:
        """The integer constants the kernel compares a load's value with (`t != -100`): the marks of entries
        it skips, which `in_range(..., ignore=C)` lets through."""
        found: list[int] = []
        for op in ir.walk_ops(self.kernel.body):
            if op.kind != "compare" or len(op.operands) != 2:
                continue
            for mine, other in (op.operands, reversed(op.operands)):
                source = self.loaded_from(mine)
                constant = other.op.attrs.get("value") if other.op is not None and other.op.kind == "const" else None
                marks = isinstance(constant, int) and not isinstance(constant, bool) and constant not in found
                if source is not None and source[0] is load_op and marks:
                    found.append(constant)
        return found

    def access_at(self, ob: Obligation) -> tuple[ir.Op, ir.MemoryAccess, str] | None:
        return next((a for a in self.accesses if a[0].span == ob.span), None)

    def masking(self, size: str, but: ir.Op | None = None) -> ir.Op | None:
        """An access other than `but` whose mask mentions `size`."""
        for op, parts, _ in self.accesses:
            if op is not but and parts.mask is not None and size in self.mentions(parts.mask).sizes:
                return op
        return None

    def grid_axes(self) -> list[tuple[int, ir.Op | None, Mentions]]:
        return [(g, value.op, self.mentions(value)) for g, value in enumerate(self.kernel.grid)]


def labels_of(kernel: ir.KernelIR, tensor: str) -> list[str]:
    param = kernel.tensor(tensor)
    return [str(d) for d in param.type.shape] if param is not None else []


def failing_axes(ob: Obligation, witness) -> list[int]:
    """The axes whose index is outside the tensor at the witness (all of them without one)."""
    if witness is None:
        return [int(m.group(2)) for name, _ in ob.shown if (m := INDEX.match(name))]
    index = {int(m.group(2)): v for k, v in witness.values.items() if (m := INDEX.match(k))}
    extent = {int(m.group(2)): v for k, v in witness.values.items() if (m := EXTENT.match(k))}
    return [
        d
        for d in sorted(index)
        if isinstance(index[d], int) and isinstance(extent.get(d), int) and not 0 <= index[d] < extent[d]
    ]


def bounds_fix(view: KernelView, ob: Obligation, witness) -> tuple[str, list[tuple[str, str, str]]]:
    """(the fix's text, `requires` candidates) for an access that may leave its tensor."""
    found = view.access_at(ob)
    if found is None:
        return "", []
    op, parts, tensor = found
    labels = labels_of(view.kernel, tensor)
    own = view.mentions(parts.mask) if parts.mask is not None else Mentions()
    for d in failing_axes(ob, witness):
        if d >= len(labels) or d >= len(parts.indices) or labels[d] not in view.kernel.sizes:
            continue
        size, index = labels[d], parts.indices[d]
        name = view.source_name(index)
        if size in own.sizes:
            if witness is None:
                return "", []
            if ("<=", size) in own.compares:
                return (
                    f"fix the mask: `<= {size}` lets index {size} of `{tensor}` through; `< {size}` keeps it in bounds",
                    [],
                )
            return f"fix the mask: it does not keep index {d} of `{tensor}` below {size}", []
        uses = view.mentions(index)
        if not uses.tiles:
            # not a tile's tail (a gather, a decoded program id, `W[e + 1]`): a mask is no fix; an index read
            # straight from a tensor is the caller's to guarantee, which `in_range` states
            gathered = view.loaded_from(index)
            if gathered is None:
                return "", []
            load_op, source = gathered
            ignores = view.compared_constants(load_op)
            # a value the kernel compares with a constant marks entries it skips: with it the plain fact would
            # fail at launch, so the `ignore=` form comes first
            return "", [(GATHER, source, size, str(d), ignore) for ignore in [*ignores, None]]
        other = view.masking(size, but=op)
        if other is not None:
            if witness is None:
                return "", []
            what = f"`{name} < {size}`" if name else f"its index < {size}"
            return (
                f"mask axis {d} of `{tensor}` with {what}, as line {other.span.line + 1} does: the kernel handles "
                f"a partial tile of {size}"
            ), []
        relation = "%" if uses.programs or uses.loops else "<="
        candidates = [(size, relation, tile) for tile in dict.fromkeys(uses.tiles)]
        what = f"`{name} < {size}`" if name else f"its index < {size}"
        return (f"mask axis {d} of `{tensor}` with {what}" if witness is not None else ""), candidates
    return "", []


def coverage_fix(view: KernelView, ob: Obligation, witness) -> tuple[str, list[tuple[str, str, str]]]:
    """(the fix's text, `requires` candidates) for an output that may have elements no program writes."""
    found = view.access_at(ob)
    if found is None:
        return "", []
    tensor = found[2]
    labels = [label for label in labels_of(view.kernel, tensor) if label in view.kernel.sizes]
    stores = [(o, p) for o, p, t in view.accesses if t == tensor and o.kind in WRITES]
    grid = view.grid_axes()
    candidates: list[tuple[str, str, str]] = []
    for size in labels:
        for g, grid_op, uses in grid:
            if size not in uses.sizes:
                continue
            floor = floor_division(view, grid_op, size)
            if floor is not None:
                if view.masking(size) is not None:
                    return (
                        f"the grid launches {size} // {floor} programs along axis {g}, which leaves the last "
                        f"{size} % {floor} elements unwritten; launch cdiv({size}, {floor})"
                    ), []
                candidates.append((size, "%", floor))
                continue
            axis_of = labels_of(view.kernel, tensor)
            ignored = all(
                g not in view.mentions(parts.indices[axis_of.index(size)]).programs
                for _, parts in stores
                if size in axis_of and axis_of.index(size) < len(parts.indices)
            )
            if ignored and stores:
                names = program_names(view.kernel)
                who = f" (`{names[g]}`)" if g < len(names) and not names[g].startswith("program_id") else ""
                return (
                    f"the grid splits {size} over program axis {g}{who}, but the store's index along {size} does "
                    "not use it"
                ), []
    for size in labels:
        axis_of = labels_of(view.kernel, tensor)
        for _, parts in stores:
            d = axis_of.index(size)
            if d >= len(parts.indices):
                continue
            uses = view.mentions(parts.indices[d])
            if not uses.programs and not uses.loops:
                candidates += [(size, "<=", tile) for tile in dict.fromkeys(uses.tiles)]
    return "", candidates


def floor_division(view: KernelView, grid_op: ir.Op | None, size: str) -> str | None:
    """C when a grid axis is `size // C` (C a tile constant): a grid that rounds down."""
    if grid_op is None or grid_op.kind != "binary" or grid_op.attrs.get("op") != "//":
        return None
    numerator, divisor = grid_op.operands
    if size not in view.mentions(numerator).sizes or divisor.op is None or divisor.op.kind != "const":
        return None
    expr = divisor.op.attrs.get("expr")
    return str(expr) if expr and str(expr).isidentifier() else None


def program_names(kernel: ir.KernelIR) -> list[str]:
    names = [f"program_id({k})" for k in range(len(kernel.grid))]
    for op in ir.walk_ops(kernel.body):
        if op.kind == "program_id" and op.result.name and names[op.attrs["axis"]].startswith("program_id"):
            names[op.attrs["axis"]] = op.result.name
    return names
