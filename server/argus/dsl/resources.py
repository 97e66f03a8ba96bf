"""What each configuration of a kernel needs of an sm_90 program, known before anything is compiled: the shared
memory Triton allocates (an estimate from the tile IR), for every configuration the autotuned launcher may pick,
and the check that each one fits (AR410).

The estimate is calibrated against Triton 3.9's sm_90 compiles of every example, expert and held-out kernel
across their tune lists, and of bench/variants/shared_memory_calibration.argus (`bench/shared_memory.py` prints
the table; docs/codegen.md holds it). What it counts:

- **pipelined operands**: a tile a loop loads and feeds to a `dot` in that loop (through casts, transposes and
  same-shape elementwise ops: `dot(a, b * s[:, None])` pipelines b) is kept in `num_stages` buffers when the dot
  runs on Hopper's wgmma (f16, bf16, fp8, or f32 as tf32 / tf32x3; at least 4 warps, a multiple of 4, and 64
  rows), in max(1, num_stages - 1) otherwise: mma.sync (fewer warps or rows, 8-bit integers), the CUDA cores
  (f32 with `input_precision="ieee"`, f64), and bf16x3 / bf16x6, which also keep b's 2 or 3 bf16 parts. tf32x3
  keeps a copy of a where the tile is wider than tall. Each element takes the loaded dtype's bytes (4 for f32).
- **resident operands**: a dot operand loaded before the dot's loop (attention's q) takes one buffer, live
  through the loop; so does a second operand computed from no load (wgmma reads b from shared memory). A first
  operand computed in registers (attention's p) takes none.
- loops run one after another: only the largest loop's buffers count, plus the resident ones.
- **after the loops** Triton reuses the loops' memory: a store through TMA (`policy tma = 1`) stages its tile,
  a transposed tile changes layout through shared memory, an mma.sync accumulator is converted for its store, a
  reduction across warps takes 4 bytes a warp, and a dot outside every loop holds its loaded operands. The
  largest of these counts where it exceeds the loops' memory; under warp specialization (4 warps: Triton does
  not specialize more) the TMA store staging comes on top instead, with 488 bytes of its barriers.
- **a store in a loop around a pipelined loop** (a persistent kernel's tile loop around its K loop) cannot reuse
  the K loop's buffers, which the next tile needs: under TMA the largest such store's staging comes on top of
  them (Triton 3.9: `gemm_persistent` at 4 stages 262,176 bytes, 64 KiB of C's 128 x 256 tile more than its loop).
- TMA loads wait on an 8-byte barrier per buffer (two pipelined loops: a 1 KiB block).

Where it is off (the table): 8-bit integer loops at 4 stages over-count, a tf32x3 tile taller than wide
over-counts a buffer, and a dimension written as an expression (`arange(2 * BN)`) counts at its declared value.
On Triton 3.6 (an H200) the TMA store staging came on top of the loop buffers on the CUDA-core path: the expert
gemm_exact at 128 x 128 x 64 with 4 stages, the one configuration that failed, needed 262,168 bytes against an
estimate of 196,632, and gemm_tf32x3's "ieee" configurations at 3 stages 196,624 against 131,088 (the same 64 KiB
more; they fit), while on wgmma (tf32x3) and with bf16x6 the staging still reused the loops' memory there. The
arithmetic stays 3.9's: a few measurements on another version are not a calibration.
The gate compiles the configurations themselves and stays the judge.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from argus.dsl import ast, ir
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.evaluate import evaluate
from argus.dsl.spans import Span
from argus.dsl.types import TileT

# sm_90: at most 227 KiB of shared memory per program (232,448 bytes), the H100's and the H200's limit.
SHARED_MEMORY_LIMIT = 227 * 1024
DEFAULT_NUM_STAGES = 3  # Triton's defaults when `policy` does not say
DEFAULT_NUM_WARPS = 4
# Policy settings the autotuned launcher keeps at their declared values: it drops them from each triton.Config
# (codegen/runtime.py, _autotuned), so their tune lists add no configuration the autotuner may pick.
FIXED_IN_AUTOTUNE = ("tma", "warp_specialize", "flatten")
# The most configurations the check walks one by one; above it, each tune value is checked at its worst case.
MAX_CONFIGS = 4096
PASS_THROUGH = {"cast", "trans", "expand_dims", "reshape", "broadcast_to", "tag", "hint"}
ELEMENTWISE = {"binary", "unary", "math", "where"}
WGMMA_FLOAT_PRECISIONS = ("tf32", "tf32x3")  # f32 operands that wgmma reads as they were loaded
SPLIT_PARTS = {"bf16x3": 2, "bf16x6": 3}  # f32 operands split into bf16 parts: b's parts go to shared memory
BARRIER_BYTES = 8
LOOPS_BARRIER_BYTES = 1024  # measured: TMA barriers of two pipelined loops take a 1 KiB block (attention_causal)
WARP_SPECIALIZE_BYTES = 488  # measured: the producer/consumer barriers beyond a barrier a buffer (attention)
REDUCE_BYTES_PER_WARP = 4

Config = dict[str, int | float | str]


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"


# ---- the model: buffers with symbolic dimensions --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile's size in bytes under any configuration: each dimension is a tile constant's name (its value
    changes with the configuration) or a fixed number."""

    dims: tuple[str | int, ...]
    element_bytes: int

    @classmethod
    def of(cls, type_: TileT, constants: dict) -> Tile:
        dims = tuple(d.label if d.label in constants else d.value for d in type_.shape)
        return cls(dims, max(type_.dtype.bits, 8) // 8)

    def bytes(self, values: Config) -> int:
        return math.prod(int(values[d]) if isinstance(d, str) else d for d in self.dims) * self.element_bytes

    def text(self, dtype: str) -> str:
        return f"{dtype}[{', '.join(str(d) for d in self.dims)}]"


@dataclass(frozen=True, slots=True)
class Buffer:
    tile: Tile
    what: str  # what it holds, for related information: "the `A` tile loaded at line 15"
    span: Span


@dataclass(frozen=True, slots=True)
class Dot:
    rows: str | int  # the result's row dimension: wgmma needs at least 64
    dtype: str  # the operands' dtype
    precision: str  # input_precision as written
    precision_constant: str | None  # the string tile constant that names it, if one does
    accumulator: Buffer  # converted through shared memory for its store, on mma.sync
    a: Tile  # the operands' tiles, for what a split precision adds
    b: Tile

    def precision_at(self, values: Config) -> str:
        return str(values.get(self.precision_constant, self.precision)) if self.precision_constant else self.precision

    def engine(self, values: Config) -> str:
        """wgmma, mma (mma.sync), split (f32 split into bf16 parts) or fma (the CUDA cores)."""
        precision = self.precision_at(values)
        if self.dtype == "f32" and precision in SPLIT_PARTS:
            return "split"
        if self.dtype == "f64" or (self.dtype == "f32" and precision not in WGMMA_FLOAT_PRECISIONS):
            return "fma"
        if self.dtype in ("i8", "u8"):
            return "mma"
        rows = int(values[self.rows]) if isinstance(self.rows, str) else self.rows
        warps = int(values.get("num_warps", DEFAULT_NUM_WARPS))
        return "wgmma" if warps % 4 == 0 and rows >= 64 else "mma"


@dataclass(slots=True)
class Loop:
    buffers: list[Buffer] = field(default_factory=list)  # its pipelined dot operands
    dots: list[int] = field(default_factory=list)  # indices of the dots in it


@dataclass(frozen=True, slots=True)
class Part:
    buffer: Buffer
    copies: int
    bytes: int


@dataclass(frozen=True, slots=True)
class Estimate:
    bytes: int
    parts: tuple[Part, ...]  # the buffers of the phase that decides it, largest first


@dataclass(slots=True)
class SharedMemoryModel:
    """Every buffer the estimate counts, built once from a kernel's IR, then evaluated per configuration."""

    dots: list[Dot] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    resident: list[Buffer] = field(default_factory=list)  # loaded before a loop whose dot reads them
    outside: list[Buffer] = field(default_factory=list)  # operands of dots outside every loop
    transposed: list[Buffer] = field(default_factory=list)
    stores: list[Buffer] = field(default_factory=list)  # tiles of rank 2 or more a store writes (TMA stages them)
    stores_around: list[Buffer] = field(default_factory=list)  # those of them in a loop around a pipelined loop
    reduces: bool = False
    names: frozenset[str] = frozenset()  # the tile constants the estimate depends on

    @property
    def empty(self) -> bool:
        return not (self.dots or self.transposed or self.reduces)

    def copies(self, loop: Loop, values: Config) -> int:
        """How many buffers a loop keeps of each pipelined operand: num_stages on wgmma, one fewer otherwise."""
        stages = max(1, int(values.get("num_stages", DEFAULT_NUM_STAGES)))
        return stages if any(self.dots[i].engine(values) == "wgmma" for i in loop.dots) else max(1, stages - 1)

    def split_parts(self, loop: Loop, values: Config) -> list[Part]:
        """What a loop's dots add on precisions that split f32: bf16x3 and bf16x6 keep b's 2 or 3 bf16 parts in
        shared memory; tf32x3 keeps a copy of a where the tile is wider than tall (measured, Triton 3.9)."""
        found = []
        for i in loop.dots:
            dot = self.dots[i]
            precision = dot.precision_at(values)
            if dot.engine(values) == "split":
                parts = SPLIT_PARTS[precision]
                tile = Tile(dot.b.dims, 2)
                found.append(Part(Buffer(tile, f"b's {parts} bf16 parts ({precision})", dot.accumulator.span), parts,
                                  tile.bytes(values) * parts))  # fmt: skip
            elif precision == "tf32x3" and dot.engine(values) == "wgmma":
                rows, columns = (int(values[d]) if isinstance(d, str) else d for d in dot.accumulator.tile.dims[-2:])
                if columns > rows:
                    found.append(
                        Part(Buffer(dot.a, "a copy of a (tf32x3)", dot.accumulator.span), 1, dot.a.bytes(values))
                    )
        return found

    def estimate(self, values: Config) -> Estimate:
        def part(buffer: Buffer, copies: int = 1) -> Part:
            return Part(buffer, copies, buffer.tile.bytes(values) * copies)

        tma = bool(values.get("tma", 0))
        in_loops = [
            [part(b, self.copies(loop, values)) for b in loop.buffers] + self.split_parts(loop, values)
            for loop in self.loops
        ]
        main = [part(b) for b in self.resident] + max(in_loops, key=total, default=[])
        # TMA loads wait on a barrier per buffer, live with the loops' buffers
        pipelined = [loop for loop in self.loops if loop.buffers]
        barriers = sum(BARRIER_BYTES * self.copies(loop, values) for loop in pipelined) if tma else 0
        barriers = LOOPS_BARRIER_BYTES if tma and len(pipelined) > 1 else barriers
        staging = [part(b) for b in self.stores] if tma else []
        warps = int(values.get("num_warps", DEFAULT_NUM_WARPS))
        if tma and values.get("warp_specialize", 0) and warps == 4:  # Triton specializes 4-warp loops only
            chosen = [*main, max(staging, key=lambda p: p.bytes)] if staging else main
            needed = total(chosen) + barriers + WARP_SPECIALIZE_BYTES
        else:
            if tma and self.stores_around:  # staged while the pipelined loop's buffers wait for the next tile
                main = [*main, max((part(b) for b in self.stores_around), key=lambda p: p.bytes)]
            epilogue = staging + [part(b) for b in self.transposed]
            epilogue += [part(d.accumulator) for d in self.dots if d.engine(values) == "mma"]
            largest = [max(epilogue, key=lambda p: p.bytes)] if epilogue else []
            outside = [part(b) for b in self.outside]
            phases = [(total(main) + barriers, main), (total(outside), outside), (total(largest), largest)]
            needed, chosen = max(phases, key=lambda phase: phase[0])
        if self.reduces:
            needed = max(needed, REDUCE_BYTES_PER_WARP * int(values.get("num_warps", DEFAULT_NUM_WARPS)))
        return Estimate(needed, tuple(sorted(chosen, key=lambda p: -p.bytes)))

    def bytes(self, values: Config) -> int:
        return self.estimate(values).bytes

    def bound(self, values: Config) -> int:
        """At least the estimate of every configuration whose numbers are at most these (each buffer grows with
        the tile constants and the stages): every loop at num_stages buffers and every accumulator converted,
        whatever the precisions and the warps."""
        stages = max(1, int(values.get("num_stages", DEFAULT_NUM_STAGES)))
        tma = bool(values.get("tma", 0))

        def size(buffers) -> int:
            return sum(b.tile.bytes(values) for b in buffers)

        def split(loop: Loop) -> int:  # the most a split precision may add (bf16x6's b parts and tf32x3's a)
            dots = [self.dots[i] for i in loop.dots if self.dots[i].dtype == "f32"]
            return sum(3 * d.b.bytes(values) // 2 + d.a.bytes(values) for d in dots)

        in_loops = (size(loop.buffers) * stages + split(loop) for loop in self.loops)
        main = size(self.resident) + max(in_loops, default=0)
        staging = max((b.tile.bytes(values) for b in self.stores), default=0) if tma else 0
        after = [b.tile.bytes(values) for b in self.transposed] + [size([d.accumulator]) for d in self.dots]
        if tma and values.get("warp_specialize", 0):
            needed = main + staging + WARP_SPECIALIZE_BYTES
        else:
            around = max((b.tile.bytes(values) for b in self.stores_around), default=0) if tma else 0
            needed = max(main + around, size(self.outside), staging, *after)
        needed += max(BARRIER_BYTES * stages * len(self.loops), LOOPS_BARRIER_BYTES) if tma else 0
        warps = int(values.get("num_warps", DEFAULT_NUM_WARPS))
        return max(needed, REDUCE_BYTES_PER_WARP * warps if self.reduces else 0)


def total(parts: list[Part]) -> int:
    return sum(p.bytes for p in parts)


def sources(value: ir.Value) -> tuple[list[ir.Op], bool]:
    """The loads a dot operand comes from, through pass-through ops and same-shape elementwise ones, and
    whether some part of it is computed from no load."""
    op = value.op
    if op is None:
        return [], True
    if op.kind == "load":
        return [op], False
    if op.kind in PASS_THROUGH and op.operands:
        return sources(op.operands[0])
    if op.kind in ELEMENTWISE and isinstance(value.type, TileT):
        size = elements(value.type)
        same = [o for o in op.operands if isinstance(o.type, TileT) and elements(o.type) == size]
        loads, computed = [], not same
        for operand in same:
            found, more = sources(operand)
            loads += [f for f in found if all(f is not seen for seen in loads)]
            computed = computed or more
        return loads, computed
    return [], True


def elements(type_: TileT) -> int:
    return math.prod(d.value for d in type_.shape)


def walk_in_loops(block: ir.Block, loop: ir.Op | None = None):
    """(op, its innermost enclosing `for` or None) for every op of a block, nested regions included."""
    for op in block.ops:
        yield op, loop
        for region in op.regions:
            yield from walk_in_loops(region, op if op.kind == "for" else loop)


def bounds_mask(mask: ir.Value | None, sizes: frozenset[int]) -> bool:
    """Whether a store's mask only bounds its indices from above by sizes (`rm < M`, per axis or joined by `&`),
    as a TMA store's must (codegen.tma checks the bounds exactly); any other mask (`rm < end` of a loaded row
    bound) keeps the pointer store, unstaged. `sizes`: the ids of the kernel's size values."""
    op = None if mask is None else mask.op
    if op is None:
        return mask is None
    if op.kind == "binary" and op.attrs["op"] == "&":
        return all(bounds_mask(v, sizes) for v in op.operands)
    if op.kind in ("expand_dims", "broadcast_to"):
        return bounds_mask(op.operands[0], sizes)
    return op.kind == "compare" and op.attrs["op"] == "<" and op.operands[1].id in sizes


def outer_loops(loop: ir.Op, enclosing: dict[int, ir.Op | None]) -> list[ir.Op]:
    """The loops around `loop`, innermost first."""
    found = []
    while (loop := enclosing.get(id(loop))) is not None:
        found.append(loop)
    return found


def model_of(kernel: ir.KernelIR) -> SharedMemoryModel:
    """The buffers of a kernel's shared memory, with their sizes in terms of its tile constants."""
    model = SharedMemoryModel()
    ops = list(walk_in_loops(kernel.body))
    enclosing = {id(op): loop for op, loop in ops}
    loops: dict[int, Loop] = {}
    counted: set[int] = set()  # load ops already counted
    read_by_dots: set[int] = set()  # values a dot reads, and what they pass through to
    store_loops: list[tuple[Buffer, ir.Op | None]] = []  # each staged store with its innermost loop
    sizes = frozenset(v.id for v in kernel.sizes.values())

    def buffer(type_: TileT, what: str, span: Span) -> Buffer:
        return Buffer(Tile.of(type_, kernel.constants), what, span)

    for op, loop in ops:
        if op.kind == "reduce" and op.operands and isinstance(op.operands[0].type, TileT):
            model.reduces = True
        elif op.kind == "store":
            value = ir.memory_access(op).value
            staged = bounds_mask(ir.memory_access(op).mask, sizes)
            if isinstance(value.type, TileT) and len(value.type.shape) >= 2 and staged:
                tensor = kernel.tensor(op.attrs["tensor"])
                stored = TileT(tensor.type.dtype, value.type.shape) if tensor is not None else value.type
                model.stores.append(buffer(stored, f"the tile stored into `{op.attrs['tensor']}`", op.span))
                store_loops.append((model.stores[-1], loop))
        elif op.kind == "dot" and all(isinstance(o.type, TileT) for o in op.operands[:2]):
            add_dot(model, kernel, op, loop, enclosing, loops, counted, read_by_dots, buffer)
    for op, _ in ops:
        if op.kind == "trans" and id(op.result) not in read_by_dots and isinstance(op.result.type, TileT):
            model.transposed.append(buffer(op.result.type, f"the tile transposed at line {op.span.line + 1}", op.span))
    model.loops = list(loops.values())
    around = {
        id(outer) for op, _ in ops if id(op) in loops and loops[id(op)].buffers for outer in outer_loops(op, enclosing)
    }
    model.stores_around = [b for b, loop in store_loops if loop is not None and id(loop) in around]
    every = [*model.resident, *model.outside, *model.transposed, *model.stores]
    every += [b for loop in model.loops for b in loop.buffers] + [d.accumulator for d in model.dots]
    names = {d for b in every for d in b.tile.dims if isinstance(d, str)}
    names |= {d.rows for d in model.dots if isinstance(d.rows, str)}
    names |= {d.precision_constant for d in model.dots if d.precision_constant}
    model.names = frozenset(names)
    return model


def add_dot(model, kernel, op, loop, enclosing, loops, counted, read_by_dots, buffer) -> None:
    a = op.operands[0]
    index = len(model.dots)
    accumulator = buffer(op.result.type, f"the accumulator of the dot at line {op.span.line + 1}", op.span)
    rows = accumulator.tile.dims[-2]
    precision = str(op.attrs.get("input_precision") or "ieee")
    operands = [Tile.of(o.type, kernel.constants) for o in op.operands[:2]]
    model.dots.append(
        Dot(rows, str(a.type.dtype), precision, op.attrs.get("precision_constant"), accumulator, *operands)
    )
    if loop is not None:
        loops.setdefault(id(loop), Loop()).dots.append(index)
    for position, operand in enumerate(op.operands[:2]):
        mark = operand
        read_by_dots.add(id(mark))
        while mark.op is not None and mark.op.kind in PASS_THROUGH and mark.op.operands:
            mark = mark.op.operands[0]
            read_by_dots.add(id(mark))
        loads, computed = sources(operand)
        for load in loads:
            if id(load) in counted:
                continue
            counted.add(id(load))
            found = buffer(
                load.result.type, f"the `{load.attrs['tensor']}` tile loaded at line {load.span.line + 1}", load.span
            )
            if loop is None:
                model.outside.append(found)
            elif enclosing.get(id(load)) is loop:
                loops[id(loop)].buffers.append(found)
            else:
                model.resident.append(found)
        if computed and position == 1:  # wgmma reads its second operand from shared memory
            found = buffer(operand.type, f"the second operand of the dot at line {op.span.line + 1}", op.span)
            (model.outside if loop is None else model.resident).append(found)


# ---- configurations -------------------------------------------------------------------------------------


def declared_values(kernel: ir.KernelIR) -> Config:
    """The declared value of every tile constant and policy setting: the configuration the plain launcher runs."""
    return {**{n: c.value for n, c in kernel.constants.items()}, **{n: c.value for n, c in kernel.policy.items()}}


def autotuned(kernel: ir.KernelIR) -> dict[str, list]:
    """The settings whose tune lists reach triton.autotune, each with its distinct values in order."""
    found = {}
    for name, setting in {**kernel.constants, **kernel.policy}.items():
        if setting.tune and name not in FIXED_IN_AUTOTUNE:
            found[name] = list(dict.fromkeys(setting.tune))
    return found


def autotune_configs(kernel: ir.KernelIR) -> list[Config]:
    """Every configuration the autotuned launcher hands triton.autotune, as the values of its tuned settings: the
    product of the tune lists (codegen.module.tune_configs) less tma, warp_specialize and flatten, which the
    launcher keeps at their declared values."""
    tuned = autotuned(kernel)
    return [dict(zip(tuned, values, strict=True)) for values in itertools.product(*tuned.values())]


@dataclass(slots=True)
class Settings:
    """A kernel's `tile` and `policy` settings as written: the spans a diagnostic points at, and how to work out
    the constants that derive from tuned ones (`tile BN2 = 2 * BN`) under another configuration."""

    nodes: dict[str, ast.Setting]
    derived: list[ast.Setting]  # tile settings whose value is an expression, in declaration order
    requires: list[ast.Expr]  # the kernel's `requires` conditions

    @classmethod
    def of(cls, kernel: ast.Kernel) -> Settings:
        nodes: dict[str, ast.Setting] = {}
        derived, requires = [], []
        for stmt in kernel.body:
            if isinstance(stmt, ast.TileDecl | ast.PolicyDecl):
                for setting in stmt.settings:
                    nodes.setdefault(setting.name, setting)
                    if isinstance(stmt, ast.TileDecl) and not isinstance(setting.value, ast.Int | ast.Float | ast.Str):
                        derived.append(setting)
            elif isinstance(stmt, ast.Requires):
                requires += stmt.conditions
        return cls(nodes, derived, requires)

    def launchable(self, values: Config) -> bool:
        """Whether no `requires` condition on the tile constants alone fails (`BM % BN == 0`): the launcher, and
        the autotuner's pruning, refuse such a configuration at every size, so it never launches."""
        return all(evaluate(condition, values) is not False for condition in self.requires)

    def values(self, declared: Config, chosen: Config) -> Config:
        values = {**declared, **chosen}
        for setting in self.derived if chosen else ():
            if setting.name not in chosen:
                value = evaluate(setting.value, values)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    values[setting.name] = value
        return values

    def depends(self, names: frozenset[str]) -> set[str]:
        """`names` and every setting a derived one among them is computed from."""
        found, todo = set(names), list(names)
        while todo:
            setting = self.nodes.get(todo.pop())
            if setting is None or setting not in self.derived:
                continue
            for node in walk_names(setting.value):
                if node not in found:
                    found.add(node)
                    todo.append(node)
        return found

    def tune_span(self, name: str, value) -> Span | None:
        setting = self.nodes.get(name)
        if setting is None or setting.tune is None:
            return None
        for element in setting.tune.elts:
            if getattr(element, "value", None) == value and type(getattr(element, "value", None)) is type(value):
                return element.span
        return setting.tune.span

    def value_span(self, name: str) -> Span | None:
        setting = self.nodes.get(name)
        return setting.value.span if setting is not None else None


def walk_names(expr) -> list[str]:
    if isinstance(expr, ast.Name):
        return [expr.id]
    found = []
    for name in getattr(expr, "__dataclass_fields__", {}):
        if name != "span":
            child = getattr(expr, name)
            for item in child if isinstance(child, list) else [child]:
                if hasattr(item, "__dataclass_fields__"):
                    found += walk_names(item)
    return found


# ---- the check: AR410 -----------------------------------------------------------------------------------


def describe(values: Config, order: list[str]) -> str:
    return ", ".join(f"{name} = {values[name]}" for name in order if name in values)


def limit_text() -> str:
    return f"an sm_90 program has {kib(SHARED_MEMORY_LIMIT)}"


def related_parts(estimate: Estimate, dtypes: dict[Buffer, str] | None = None) -> list[tuple[Span, str]]:
    found = []
    for part in estimate.parts[:3]:
        copies = f" × {part.copies} buffers" if part.copies > 1 else ""
        found.append((part.buffer.span, f"{part.buffer.what}: {kib(part.bytes)}{copies}"))
    return found


def check_resources(kernel: ast.Kernel, kernel_ir: ir.KernelIR) -> list[Diagnostic]:
    """AR410 where a configuration the kernel may launch with needs more shared memory than an sm_90 program
    has: the declared one (at the setting that sizes it), or one the autotuner may pick (at its tune values)."""
    model = model_of(kernel_ir)
    if model.empty:
        return []
    settings = Settings.of(kernel)
    declared = declared_values(kernel_ir)
    order = list(settings.nodes)
    relevant = settings.depends(model.names)
    relevant |= {"num_stages", "num_warps"}
    space = {name: values for name, values in autotuned(kernel_ir).items() if name in relevant}
    estimate = model.estimate(settings.values(declared, {}))
    if estimate.bytes > SHARED_MEMORY_LIMIT:
        return [declared_overflow(kernel, settings, declared, model, estimate, order)]
    if fits_everywhere(model, settings, declared, space):
        return []
    search = Search(model, settings, declared, space)
    search.run()
    return search.diagnostics(order)


def fits_everywhere(model: SharedMemoryModel, settings: Settings, declared: Config, space: dict) -> bool:
    """Whether even the upper bound at the largest tune values fits (the cheap answer for most kernels)."""
    if any(s.name in model.names or s.name in space for s in settings.derived):
        return False  # a derived constant need not grow with the tuned ones
    largest = {name: max(values) for name, values in space.items() if all(isinstance(v, int | float) for v in values)}
    return model.bound({**declared, **largest}) <= SHARED_MEMORY_LIMIT


def declared_overflow(kernel, settings, declared, model, estimate, order) -> Diagnostic:
    sized = [name for name in order if name in model.names and not isinstance(declared.get(name), str)]
    shown = sized + (["num_stages"] if model.loops else [])
    values = {"num_stages": DEFAULT_NUM_STAGES, **declared}
    span = settings.value_span("num_stages") if model.loops else None
    span = span or next((settings.value_span(n) for n in sized if settings.value_span(n)), None) or kernel.name_span
    message = (
        f"the declared configuration ({describe(values, shown)}) needs {kib(estimate.bytes)} of shared memory; "
        f"{limit_text()}"
    )
    config = {name: values[name] for name in shown if name in values}
    return make("AR410", span, message, related=related_parts(estimate), config=config, bytes=estimate.bytes,
                limit=SHARED_MEMORY_LIMIT)  # fmt: skip


@dataclass(slots=True)
class Search:
    """The configurations of the tuned settings that overflow, and the tune values to blame: a value is blamed
    through an overflowing configuration where putting it back to its declared value makes that configuration
    fit (a minimal one: every value it changes is needed for the overflow)."""

    model: SharedMemoryModel
    settings: Settings
    declared: Config
    space: dict[str, list]
    witnesses: dict[tuple[str, object], tuple[Config, Estimate]] = field(default_factory=dict)
    fits: dict[tuple[str, object], bool] = field(default_factory=dict)  # some configuration with the value fits
    walked: bool = True

    def estimate(self, chosen: Config) -> Estimate:
        return self.model.estimate(self.settings.values(self.declared, chosen))

    def run(self) -> None:
        if math.prod(len(v) for v in self.space.values()) > MAX_CONFIGS:
            self.walked = False
            configs = self.worst_cases()
        else:
            names = list(self.space)
            configs = (dict(zip(names, values, strict=True)) for values in itertools.product(*self.space.values()))
        for chosen in configs:
            if not self.settings.launchable(self.settings.values(self.declared, chosen)):
                continue
            estimate = self.estimate(chosen)
            ok = estimate.bytes <= SHARED_MEMORY_LIMIT
            for item in chosen.items():
                self.fits[item] = self.fits.get(item, False) or ok or not self.walked
            if not ok:
                self.blame(chosen, estimate)

    def worst_cases(self):
        """Too many configurations to walk: each tune value with every other tuned setting at the value that
        needs the most shared memory (chosen one setting at a time, twice over)."""
        for name, values in self.space.items():
            for value in values:
                chosen = {n: self.declared.get(n, v[0]) for n, v in self.space.items()}
                chosen[name] = value
                for _ in range(2):
                    for other, options in self.space.items():
                        if other != name:
                            chosen[other] = max(options, key=lambda v: self.estimate({**chosen, other: v}).bytes)
                yield dict(chosen)

    def blame(self, chosen: Config, estimate: Estimate) -> None:
        changed = changed_values(chosen, self.declared)
        needed = [
            name
            for name in changed
            if self.estimate({**chosen, name: self.declared[name]}).bytes <= SHARED_MEMORY_LIMIT
        ]
        if len(needed) != len(changed):
            return  # not minimal: a smaller configuration overflows too, and is blamed itself
        for item in changed.items():
            best = self.witnesses.get(item)
            if best is None or (len(changed), estimate.bytes) < (
                len(changed_values(best[0], self.declared)),
                best[1].bytes,
            ):
                self.witnesses[item] = (chosen, estimate)

    def diagnostics(self, order: list[str]) -> list[Diagnostic]:
        found = []
        rank = {name: i for i, name in enumerate(order)}
        for (name, value), (chosen, estimate) in sorted(
            self.witnesses.items(), key=lambda kv: (rank.get(kv[0][0], 99), str(kv[0][1]))
        ):
            span = self.settings.tune_span(name, value)
            if span is None:
                continue
            changed = changed_values(chosen, self.declared)
            others = [n for n in order if n in changed and n != name]
            with_ = f" with {describe(changed, others)}" if others else ""
            nowhere = "" if self.fits.get((name, value), True) else "; it fits in no configuration of the tune lists"
            message = f"{name} = {value}{with_} needs {kib(estimate.bytes)} of shared memory; {limit_text()}{nowhere}"
            related = [
                (self.settings.tune_span(n, changed[n]), f"{n} = {changed[n]}, from its tune list") for n in others
            ]
            related = [(s, m) for s, m in related if s is not None] + related_parts(estimate)
            config = {**{n: self.declared[n] for n in self.space if n in self.declared}, **chosen}
            found.append(make("AR410", span, message, related=related, config=config, bytes=estimate.bytes,
                              limit=SHARED_MEMORY_LIMIT))  # fmt: skip
        return found


def changed_values(chosen: Config, declared: Config) -> Config:
    return {n: v for n, v in chosen.items() if v != declared.get(n)}


# ---- for the gate -----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Group:
    """Configurations of the autotuner that differ only in settings no buffer depends on (GROUP_M): one
    compile stands for them all."""

    config: Config  # the first of them, as the tuned settings' values
    estimate: int
    size: int


def compile_groups(kernel: ast.Kernel, kernel_ir: ir.KernelIR) -> list[Group]:
    """The autotuner's configurations grouped by what the estimate depends on, largest estimate first; the
    declared configuration's group left out (the compile stage compiles it anyway)."""
    model = model_of(kernel_ir)
    settings = Settings.of(kernel)
    declared = declared_values(kernel_ir)
    relevant = settings.depends(model.names) | {"num_stages", "num_warps"}
    declared_key = tuple(sorted((n, str(declared.get(n))) for n in relevant if n in declared))
    groups: dict[tuple, list[Config]] = {}
    for config in autotune_configs(kernel_ir):
        values = {**declared, **config}
        if not settings.launchable(settings.values(declared, config)):
            continue
        key = tuple(sorted((n, str(values.get(n))) for n in relevant if n in values))
        if key != declared_key:
            groups.setdefault(key, []).append(config)
    found = [
        Group(members[0], model.bytes(settings.values(declared, members[0])), len(members))
        for members in groups.values()
    ]
    return sorted(found, key=lambda g: -g.estimate)


def tune_value_spans(kernel: ast.Kernel) -> dict[str, list[tuple[object, Span]]]:
    """Each tune list's values with their spans, by setting."""
    found: dict[str, list[tuple[object, Span]]] = {}
    for name, setting in Settings.of(kernel).nodes.items():
        if setting.tune is not None:
            found[name] = [(e.value, e.span) for e in setting.tune.elts if hasattr(e, "value")]
    return found


# ---- for the skills and the language server -------------------------------------------------------------


def shared_memory(kernel: ir.KernelIR, overrides: Config | None = None, source: ast.Kernel | None = None) -> int:
    """The estimate for the declared configuration, or for it with some settings changed (constants derived from
    a changed one are recomputed when the kernel's source is given)."""
    declared = declared_values(kernel)
    values = (
        Settings.of(source).values(declared, overrides or {})
        if source is not None
        else {**declared, **(overrides or {})}
    )
    return model_of(kernel).bytes(values)


def pipelined_bytes(kernel: ir.KernelIR) -> int | None:
    """Shared memory one pipeline stage needs at the declared values: the dot operands the largest loop keeps in
    flight (None when no loop feeds a dot tiles it loads, so there is nothing to pipeline)."""
    model = model_of(kernel)
    values = declared_values(kernel)
    sizes = [sum(b.tile.bytes(values) for b in loop.buffers) for loop in model.loops if loop.buffers]
    return max(sizes) if sizes else None


def num_stages(kernel: ir.KernelIR) -> int:
    setting = kernel.policy.get("num_stages")
    return int(setting.value) if setting is not None else DEFAULT_NUM_STAGES
