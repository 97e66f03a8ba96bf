"""The tile IR: typed SSA values, ops with structured control flow (for, if), one kernel per KernelIR.

Op kinds, their operands and attrs: argus.dsl.ops.IR_OPS declares each one (and the built-ins that lower
to them).
Indices and masks of memory ops are already broadcast-compatible with the access tile, so code
generation and verification never re-derive the outer-product rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from argus.dsl.spans import Span
from argus.dsl.types import TensorT, Type


@dataclass(eq=False, slots=True)
class Value:
    id: int
    type: Type
    name: str | None = None
    op: Op | None = None  # None for block arguments

    def __repr__(self) -> str:
        return f"%{self.id}" + (f"({self.name})" if self.name else "")


@dataclass(eq=False, slots=True)
class Block:
    args: list[Value] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    yields: list[Value] = field(default_factory=list)
    yield_spans: list[Span] = field(default_factory=list)  # a loop body's: where each yielded value is last bound


@dataclass(eq=False, slots=True)
class Op:
    kind: str
    operands: list[Value]
    results: list[Value]
    span: Span
    attrs: dict[str, Any] = field(default_factory=dict)
    regions: list[Block] = field(default_factory=list)

    @property
    def result(self) -> Value:
        return self.results[0]


@dataclass(slots=True)
class MemoryAccess:
    tensor: Value
    indices: list[Value]
    value: Value | None
    mask: Value | None
    other: Value | None
    compare: Value | None = None  # atomic_cas's cmp


def memory_access(op: Op) -> MemoryAccess:
    """The named parts of a load, store or atomic (atomic_cas: cmp before the value)."""
    rank = op.attrs["rank"]
    tensor, indices, rest = op.operands[0], op.operands[1 : 1 + rank], list(op.operands[1 + rank :])
    compare = rest.pop(0) if op.kind == "atomic_cas" else None
    value = rest.pop(0) if op.kind != "load" else None
    mask = rest.pop(0) if op.attrs.get("mask") else None
    other = rest.pop(0) if op.attrs.get("other") else None
    return MemoryAccess(tensor, indices, value, mask, other, compare)


def reduced_axes(op: Op) -> tuple[int, ...]:
    """The axes a `reduce` op reduces, in increasing order: its `axis` is one int, or a tuple of several."""
    axis = op.attrs["axis"]
    return tuple(axis) if isinstance(axis, tuple | list) else (axis,)


@dataclass(slots=True)
class ParamIR:
    name: str
    type: TensorT | Type
    value: Value
    span: Span
    default: float | int | None = None
    is_out: bool = False  # the kernel writes it: `out` or `inout`
    is_inout: bool = False  # `inout`: it holds input data too (the reference gets a copy of it)


@dataclass(slots=True)
class Constant:
    """A tile constant or policy setting: a number, or for a tile constant a string naming a dot input
    precision (`tile PREC = "tf32x3" tune [...]`)."""

    name: str
    value: int | float | str
    tune: list[int | float | str]
    span: Span


@dataclass(slots=True)
class KernelIR:
    name: str
    params: list[ParamIR]
    sizes: dict[str, Value]  # size symbol -> its runtime scalar
    constants: dict[str, Constant]
    policy: dict[str, Constant]
    launch: Block  # ops computing requires and grid from sizes and constants
    requires: list[tuple[Value, Span]]
    grid: list[Value]
    body: Block
    span: Span
    layouts: dict[str, int] = field(default_factory=dict)  # tensor -> its axis declared contiguous (stride 1)

    def tensor(self, name: str) -> ParamIR | None:
        return next((p for p in self.params if p.name == name and isinstance(p.type, TensorT)), None)


def walk_ops(block: Block):
    """Every op of a block, nested regions included, in program order."""
    for op in block.ops:
        yield op
        for region in op.regions:
            yield from walk_ops(region)
