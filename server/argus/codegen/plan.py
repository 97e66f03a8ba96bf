"""What the kernel body emitter needs to know before it writes a line: which ops matter, which values are
written inline, and how long each value lives (so a name can be reused once its old value is dead).

Positions number the ops in program order; a `for` or `if` also has an end position after its regions. A value
used inside a loop that it was defined outside of stays alive until the end of that loop, because the next
iteration reads it again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ir
from argus.dsl.atomics import ATOMICS

SIDE_EFFECTS = {"store", *ATOMICS}  # atomic_xchg and atomic_cas have a result too: statements that name it
DATA_FACTS = ("partition", "in_range", "permutation")  # ops of `requires` that speak of a tensor's contents
PROOF_ONLY = {"tag_read", "assert_tag", "assert", "invariant"}  # proved statically, nothing to run
PURE = {
    "const",
    "program_id",
    "num_programs",
    "arange",
    "zeros",
    "full",
    "binary",
    "unary",
    "compare",
    "math",
    "where",
    "cast",
    "expand_dims",
    "reshape",
    "broadcast_to",
    "trans",
    "reduce",
    "scan",
    "cdiv",
    "dot",
    "hint",
    "load",
}


@dataclass(slots=True)
class Plan:
    live: set[int] = field(default_factory=set)  # id(op) of ops whose effect or value is needed
    alias: dict[int, ir.Value] = field(default_factory=dict)  # value id -> the value it stands for (tag)
    inline: set[int] = field(default_factory=set)  # value ids written inside their single user
    position: dict[int, float] = field(default_factory=dict)  # id(op) -> position
    end: dict[int, float] = field(default_factory=dict)  # id(op) of for/if -> position after its regions
    region_end: dict[int, float] = field(default_factory=dict)  # id(block) -> position of its yields
    definition: dict[int, float] = field(default_factory=dict)  # value id -> position where it is defined
    last_use: dict[int, float] = field(default_factory=dict)  # value id -> last position it is read
    tag_names: dict[int, str] = field(default_factory=dict)  # value id -> the name its tagged alias was given

    def resolve(self, value: ir.Value) -> ir.Value:
        while value.id in self.alias:
            value = self.alias[value.id]
        return value

    def used_operands(self, op: ir.Op) -> list[ir.Value]:
        if op.kind in ("tag", "hint"):
            return [self.resolve(op.operands[0])]
        return [self.resolve(v) for v in op.operands]


def make_plan(body: ir.Block) -> Plan:
    plan = Plan()
    for op in ir.walk_ops(body):
        if op.kind == "tag":
            plan.alias[op.result.id] = op.operands[0]
            if op.operands[0].name is None and op.result.name is not None:
                plan.tag_names[plan.resolve(op.operands[0]).id] = op.result.name
    _mark_live(body, plan)
    users = _users(body, plan)
    _choose_inline(body, plan, users)
    _number(body, plan, [], 0.0)
    _last_uses(body, plan, [])
    return plan


def _mark_live(body: ir.Block, plan: Plan) -> None:
    needed: set[int] = set()
    ops = list(ir.walk_ops(body))
    changed = True
    while changed:
        changed = False
        for op in reversed(ops):
            if id(op) in plan.live or op.kind in PROOF_ONLY or op.kind == "tag":
                continue
            nested_live = any(id(inner) in plan.live for region in op.regions for inner in ir.walk_ops(region))
            if op.kind in SIDE_EFFECTS or nested_live or any(r.id in needed for r in op.results):
                plan.live.add(id(op))
                changed = True
                needed.update(v.id for v in plan.used_operands(op))
                for region in op.regions:
                    needed.update(plan.resolve(v).id for v in region.yields)


def _users(body: ir.Block, plan: Plan) -> dict[int, list[tuple[ir.Op | None, ir.Block]]]:
    """Value id -> its readers: (op, the block the op is in), or (None, block) for a block's yields."""
    users: dict[int, list[tuple[ir.Op | None, ir.Block]]] = {}

    def visit(block: ir.Block) -> None:
        for op in block.ops:
            if id(op) not in plan.live:
                continue
            for value in plan.used_operands(op):
                users.setdefault(value.id, []).append((op, block))
            for region in op.regions:
                visit(region)
                for value in region.yields:
                    users.setdefault(plan.resolve(value).id, []).append((None, region))

    visit(body)
    return users


def _choose_inline(body: ir.Block, plan: Plan, users) -> None:
    """An unnamed value read once, by an op of its own block, is written inside that op's expression. A load
    moves only when no store, atomic or control flow lies between it and its reader."""

    def visit(block: ir.Block) -> None:
        index = {id(op): i for i, op in enumerate(block.ops)}
        for i, op in enumerate(block.ops):
            if id(op) not in plan.live:
                continue
            for region in op.regions:
                visit(region)
            if op.kind not in PURE or len(op.results) != 1:
                continue
            value = op.result
            if op.kind == "const":
                plan.inline.add(value.id)
                continue
            readers = users.get(value.id, [])
            if value.name is not None or value.id in plan.tag_names or len(readers) != 1:
                continue
            reader, reader_block = readers[0]
            if reader is None or reader_block is not block or repeats(plan, reader, value):
                continue
            if op.kind == "load":
                between = block.ops[i + 1 : index[id(reader)]]
                if any(b.kind in SIDE_EFFECTS or b.regions for b in between if id(b) in plan.live):
                    continue
            plan.inline.add(value.id)

    visit(body)


def repeats(plan: Plan, reader: ir.Op, value: ir.Value) -> bool:
    """Whether the reader's Triton text may write the value more than once: the base of `x ** 3` (`x * x * x`,
    argus.codegen.math_lowering.power) gets a name rather than being written inline three times."""
    power = reader.kind == "binary" and reader.attrs.get("op") == "**"
    return power and plan.resolve(reader.operands[0]).id == value.id


def _number(block: ir.Block, plan: Plan, loops: list, counter: float) -> float:
    for op in block.ops:
        if id(op) not in plan.live:
            continue
        counter += 1
        plan.position[id(op)] = counter
        for region in op.regions:
            for arg in region.args:
                plan.definition[arg.id] = counter + 0.5
            counter = _number(region, plan, loops, counter)
            counter += 1
            plan.region_end[id(region)] = counter
        if op.regions:
            counter += 1
            plan.end[id(op)] = counter
        for result in op.results:
            plan.definition[result.id] = plan.end.get(id(op), counter)
    return counter


def _last_uses(block: ir.Block, plan: Plan, loops: list[ir.Op]) -> None:
    emitted_at: dict[int, float] = {}  # value id of an inlined value -> where its text is written

    def emit_position(op: ir.Op) -> float:
        if len(op.results) == 1 and op.result.id in plan.inline:
            return emitted_at.get(op.result.id, plan.position[id(op)])
        return plan.position[id(op)]

    def record(value: ir.Value, at: float) -> None:
        defined = plan.definition.get(value.id, -1.0)
        for loop in loops:  # outermost first: the outermost loop that does not define the value ends last
            if defined < plan.position[id(loop)] + 0.5:
                at = max(at, plan.end[id(loop)])
                break
        plan.last_use[value.id] = max(plan.last_use.get(value.id, -1.0), at)

    # Readers come after what they read, so walking backwards sees an inlined value's reader first.
    for op in reversed(block.ops):
        if id(op) not in plan.live:
            continue
        at = emit_position(op)
        for value in plan.used_operands(op):
            if value.id in plan.inline:
                emitted_at[value.id] = at
            record(value, at if not op.regions else plan.position[id(op)])
        for region in op.regions:
            for value in region.yields:
                record(plan.resolve(value), plan.region_end[id(region)])
            inner_loops = [*loops, op] if op.kind == "for" else loops
            _last_uses(region, plan, inner_loops)
