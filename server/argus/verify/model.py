"""What the symbolic evaluation of a kernel produces: symbolic values, accesses and proof obligations."""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from argus.dsl.spans import Span
from argus.verify.padding import Tree

Key = tuple[str, int]  # (tensor, axis): one logical index space a tile axis can be mapped to


@dataclass(slots=True)
class Entry:
    """One component of a layout: the index of tensor axis `key` that each element of the value stands for."""

    term: z3.ArithRef  # over the value's element coordinates
    label: str  # the tensor dimension (size symbol or number) the index runs over, e.g. "K"
    stat: bool = False  # a statistic: the value went through a reduction that kept this index
    origin: Span | None = None  # where the statistic was reduced
    later: z3.ArithRef | None = None  # a carried entry `If(iv == start, first, later)`: its form after iteration 0


@dataclass(slots=True)
class Sym:
    """The symbolic meaning of one IR value of one program: its element term (integers and booleans only),
    its layout (which global index each element stands for), its tags, the mask it was loaded under, and for
    a float value what its lanes hold (padding.Tree; None: not known, so not checked)."""

    shape: tuple[int, ...]
    term: z3.ExprRef | None = None
    layout: dict[Key, Entry] = field(default_factory=dict)
    tags: dict[str, z3.ArithRef] = field(default_factory=dict)
    valid: z3.BoolRef | None = None
    lanes: Tree | None = None


@dataclass(slots=True)
class Loop:
    """An enclosing loop, for the witness: its variable and how to turn a value of it into an iteration."""

    name: str
    iv: z3.ArithRef
    start: z3.ArithRef
    step: z3.ArithRef
    span: Span
    inside: z3.BoolRef | None = None  # the values iv takes (start, stop and step), for a claim across iterations
    stop: z3.ArithRef | None = None  # its range's stop (walked_axes.py)


@dataclass(slots=True)
class ZeroTrip:
    """A loop that may run no iteration, leaving its carried values at their start (AR314): the loop, its stop."""

    loop: Loop
    stop: z3.ArithRef


@dataclass(slots=True)
class Contraction:
    """What one instance's `dot` contracted, in the coordinates of its result: the index of each tensor axis
    the contracted lane kk reads (`A index 1 (K)`: k0 + kk), the masks of its operands there, the conditions
    it ran under, its loops, and kk itself (a variable of this instance)."""

    indices: dict[tuple[str, int], tuple[z3.ArithRef, str]]
    masks: list[z3.BoolRef]
    assumptions: list[z3.BoolRef]
    loops: list[Loop]
    lane: z3.ArithRef
    lane_range: z3.BoolRef
    span: Span
    extent: int = 0  # the number of K lanes (a's last axis)
    # the operands' other axes (a's rows, b's columns) in the result's coordinates: the tile the dot computes
    tile: dict[tuple[str, int], tuple[z3.ArithRef, str]] = field(default_factory=dict)
    shape: tuple[int, ...] = ()  # the result's
    # what a `where` keeps of an operand along the contracted lane (`where(rk[None, :] <= rm[:, None], a, 0.0)`
    # of a triangular product), in the result's coordinates: the other lanes add 0 whatever the loop reads
    kept: list[z3.BoolRef] = field(default_factory=list)


@dataclass(slots=True)
class Context:
    """Where an op runs: the facts that hold there (loop ranges, branch conditions, invariants)."""

    assumptions: list[z3.BoolRef] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)

    def child(self, assumption: z3.BoolRef | None = None, loop: Loop | None = None) -> Context:
        return Context(
            self.assumptions + ([assumption] if assumption is not None else []),
            self.loops + ([loop] if loop is not None else []),
        )


@dataclass(slots=True)
class Access:
    kind: str  # load | store | an atomic (argus.dsl.atomics.ATOMICS)
    tensor: str
    indices: list[z3.ArithRef]  # over the access tile's coordinates
    mask: z3.BoolRef
    shape: tuple[int, ...]
    dims: list[z3.ArithRef]  # the tensor's extents
    labels: list[str]
    span: Span
    context: Context
    program: list[z3.ArithRef]  # the program ids of the instance that makes it
    op: object = None  # the ir.Op (an atomic_add's value is followed back to its dots: contributions.py)


@dataclass(slots=True)
class Obligation:
    """One claim to prove: `goal` holds for every assignment satisfying `assumptions`."""

    kind: str
    code: str
    span: Span
    message: str
    goal: z3.BoolRef
    assumptions: list[z3.BoolRef]
    loops: list[Loop]
    program: list[z3.ArithRef]
    coords: list[tuple[str, z3.ArithRef]] = field(default_factory=list)
    shown: list[tuple[str, z3.ExprRef]] = field(default_factory=list)  # values the witness reports
    related: list[tuple[Span, str]] = field(default_factory=list)
    hint: str = ""
    second: Second | None = None  # the other access of a race


@dataclass(slots=True)
class Second:
    span: Span
    what: str
    loops: list[Loop]
    program: list[z3.ArithRef]
    coords: list[tuple[str, z3.ArithRef]]
