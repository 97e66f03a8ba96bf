"""The context of a site: the facts that decide what a skill does where it could apply, computed without a GPU
from the checker's IR, the kernel's `large` sizes and, when one is at hand, a gate compile for sm_90.

One `SiteContext` a site: the kernel itself (skills anchored at `tile` / `policy` lines), every `for` loop and
every `dot`. Each is flat: the kernel's facts (policy, shared memory, FLOPs and bytes at `large`, the bound
against the H200's ceilings, the grid's waves, row length against tile) and, for a dot site, that dot's own
(operand dtypes, input precision, which axis of each operand's tensor is contiguous, whether the contraction
reads along it, `trans`, the accumulator and its registers). A loop or kernel site carries the facts of its
principal dot (the one inside it with the most FLOPs at `large`, the first on ties), so a card's scope can be
matched at any anchor. A fact that does not apply or is unknown is None, never a guess. docs/skills.md,
"Context of a site", lists the fields.

FLOPs, bytes and the grid reuse code generation's own counts (argus.codegen.host: CountsWriter, bytes_moved and
the launch's grid expressions, the code behind the generated module's `_NAME_counts`), evaluated here in Python
at the sizes, so the numbers are the ones the gate's profile divides by. Pure Python over the IR: cheap enough for
the light bulb.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from argus.codegen.errors import CodegenError
from argus.codegen.host import CountsWriter, HostExpressions, TileSizes, bytes_moved
from argus.codegen.plan import Plan, make_plan
from argus.dsl import ast, ir
from argus.dsl.resources import DEFAULT_NUM_STAGES, DEFAULT_NUM_WARPS, ELEMENTWISE, model_of, shared_memory
from argus.dsl.types import ScalarT, TensorT, TileT
from argus.gate.result import CompileFacts, GateResult
from argus.skills.document import Document

# ---- H200 ceilings ----------------------------------------------------------------------------------------
# Measured where docs/perf.md has a measurement, the datasheet (dense, no sparsity) otherwise.
SMS = 132  # streaming multiprocessors of an H200 (SXM)
COPY_GB_PER_S = 4245.0  # measured: 2 GiB device-to-device copy, read + written (docs/perf.md, the examples table)
FP16_TFLOPS = 677.0  # measured: cuBLAS 8192³ fp16 GEMM (docs/perf.md, same run; datasheet ~990)
BF16_TFLOPS = 730.0  # measured: cuBLAS 8192³ bf16 GEMM (docs/perf.md, same run; datasheet ~990)
TF32_TFLOPS = 495.0  # datasheet, dense tf32 tensor cores (Triton's own tf32 GEMM measured 243, docs/perf.md)
TF32X3_TFLOPS = TF32_TFLOPS / 3  # three tf32 products a term: the 165 TFLOP/s ceiling docs/perf.md names
FP32_DOT_TFLOPS = 51.4  # measured: cuBLAS exact fp32 GEMM, tf32 off (docs/perf.md, the fp32 table)
FP32_TFLOPS = 67.0  # datasheet, fp32 CUDA cores (FMA as 2): elementwise work and what no ceiling above covers
FP8_TFLOPS = 1979.0  # datasheet, dense fp8 / int8 tensor cores
FP64_TFLOPS = 67.0  # datasheet, fp64 tensor cores
SPLIT_DOT_PARTS = {"bf16x3": 3, "bf16x6": 6}  # bf16 products a term


def dot_ceiling_tflops(dtype: str, precision: str | None) -> float:
    """The H200 ceiling of a dot with operands of `dtype` at an input precision (f32 operands only)."""
    if dtype == "f16":
        return FP16_TFLOPS
    if dtype == "bf16":
        return BF16_TFLOPS
    if dtype in ("i8", "u8") or dtype.startswith("f8"):
        return FP8_TFLOPS
    if dtype == "f64":
        return FP64_TFLOPS
    if precision == "tf32":
        return TF32_TFLOPS
    if precision == "tf32x3":
        return TF32X3_TFLOPS
    if precision in SPLIT_DOT_PARTS:
        return BF16_TFLOPS / SPLIT_DOT_PARTS[precision]
    return FP32_DOT_TFLOPS


# ---- the model ----------------------------------------------------------------------------------------------


class SiteContext(BaseModel):
    """The facts at one site of a kernel that decide a skill's effect there. Flat and JSON-friendly; None where a
    fact does not apply (no dot, not row-wise) or is unknown (no compile at hand, a count that needs the
    launch's tensors)."""

    model_config = ConfigDict(extra="forbid")

    # the site
    kernel: str = Field(description="the kernel's name")
    site: Literal["kernel", "loop", "dot"] = Field(description="what the site is: the kernel, a `for` loop, a `dot`")
    line: int = Field(description="1-based line of the site: the kernel's header, the `for`, the dot's call")
    # the kernel's configuration
    num_warps: int = Field(description="declared `policy num_warps` (Triton's default 4 when not declared)")
    num_stages: int = Field(description="declared `policy num_stages` (Triton's default 3 when not declared)")
    constants: dict[str, int | float | str] = Field(
        default_factory=dict, description="the tile constants at their declared values"
    )
    shared_memory_estimate_bytes: int | None = Field(
        None, description="argus.dsl.resources' shared-memory estimate at the declared configuration"
    )
    # from an sm_90 compile, when one is at hand
    registers: int | None = Field(None, description="registers per thread, from the compile (ptxas)")
    spill_stores_bytes: int | None = Field(None, description="spill stores, from the compile")
    spill_loads_bytes: int | None = Field(None, description="spill loads, from the compile")
    shared_memory_bytes: int | None = Field(None, description="shared memory Triton allocated, from the compile")
    # work at the `large` sizes
    size_set: str | None = Field(None, description="the size set the work is counted at: `large`, else the largest")
    sizes: dict[str, int | float] = Field(default_factory=dict, description="that set's sizes")
    flops: int | None = Field(None, description="FLOPs of one launch (dot and elementwise, over whole tiles)")
    dot_flops: int | None = Field(None, description="of those, the FLOPs of every dot")
    bytes: int | None = Field(None, description="the fewest bytes a launch moves: each input read, each output "
                              "written once")  # fmt: skip
    arithmetic_intensity: float | None = Field(None, description="flops / bytes")
    compute_ms: float | None = Field(
        None,
        description="time at the H200's compute ceilings: each dot at its dtype's and precision's, the rest "
        "at the fp32 CUDA cores'",
    )
    memory_ms: float | None = Field(None, description="time to move `bytes` at the measured copy bandwidth")
    bound: Literal["compute", "memory"] | None = Field(
        None, description="compute when compute_ms exceeds memory_ms, memory otherwise"
    )
    programs: int | None = Field(None, description="programs in the grid at those sizes")
    waves: float | None = Field(None, description="programs over the H200's 132 SMs, one program an SM")
    tail_programs: int | None = Field(
        None, description="programs in the last, partial wave (0 when the grid fills whole waves)"
    )
    # row-wise kernels: a reduction over a loaded row
    row_tensor: str | None = Field(None, description="the tensor whose rows the first reduction over a load reads")
    row_length: int | None = Field(None, description="the reduced axis' size at those sizes (N of x[M, N])")
    row_tile: int | None = Field(None, description="the tile's extent along that axis (BN)")
    row_wider_than_tile: bool | None = Field(None, description="row_length > row_tile: a row takes several tiles")
    # a loop site
    loop_trips: int | None = Field(None, description="a loop site: its iterations at those sizes, per program")
    # the site's dot (a dot site: itself; a loop or kernel site: its principal dot)
    dot_line: int | None = Field(None, description="1-based line of the dot these fields describe")
    dots: int = Field(0, description="dots inside the site (the kernel's, the loop's, or 1)")
    a_dtype: str | None = Field(None, description="the first operand's dtype")
    b_dtype: str | None = Field(None, description="the second operand's dtype")
    input_precision: str | None = Field(
        None, description="f32 operands only: the input precision, a PREC tile constant resolved to its value"
    )
    precision_constant: str | None = Field(None, description="the tile constant that names the precision, if one")
    engine: str | None = Field(
        None, description="what runs the dot on sm_90: wgmma, mma (mma.sync), split (bf16 parts) or fma (CUDA cores)"
    )
    a_tensor: str | None = Field(None, description="the tensor the first operand is loaded from")
    b_tensor: str | None = Field(None, description="the tensor the second operand is loaded from")
    a_contiguous: str | None = Field(
        None,
        description="the axis of a_tensor with stride 1, as its shape names it: a `layout` declaration's, "
        "else the innermost (row-major)",
    )
    b_contiguous: str | None = Field(None, description="the same for b_tensor")
    a_layout_declared: bool | None = Field(None, description="a_contiguous comes from a `layout` declaration")
    b_layout_declared: bool | None = Field(None, description="b_contiguous comes from a `layout` declaration")
    a_k_major: bool | None = Field(
        None, description="the contraction (K) axis of the first operand reads along a_tensor's contiguous axis"
    )
    b_k_major: bool | None = Field(
        None, description="the contraction (K) axis of the second operand reads along b_tensor's contiguous axis"
    )
    a_trans: bool | None = Field(None, description="the first operand passes through `trans` on its way from the load")
    b_trans: bool | None = Field(None, description="the second operand passes through `trans` on its way")
    accumulator_shape: list[int] | None = Field(None, description="the dot's result tile, e.g. [128, 128]")
    accumulator_dtype: str | None = Field(None, description="the result's dtype (f32 unless out_dtype says)")
    accumulator_registers: float | None = Field(
        None,
        description="32-bit registers per thread the result tile takes: elements × max(4, element bytes) / 4 "
        "/ (num_warps × 32)",
    )


def site_at(sites: list[SiteContext], line: int) -> SiteContext | None:
    """The site at a 1-based line: a dot's or a loop's there, else the kernel's (the first entry)."""
    return next((s for s in sites if s.site != "kernel" and s.line == line), sites[0] if sites else None)


# ---- computing it ---------------------------------------------------------------------------------------


def compile_facts(found: GateResult | CompileFacts | None) -> CompileFacts | None:
    """The compile facts of a gate result (None when its compile did not report any)."""
    if isinstance(found, GateResult):
        return found.compile.facts
    return found


def site_contexts(doc: Document, kernel: str, compiled: GateResult | CompileFacts | None = None) -> list[SiteContext]:
    """Every site of `kernel` in `doc`: the kernel first, then its loops and dots in program order. Empty when the
    kernel does not check (no IR, or checker errors inside it: its IR may be partial, and its facts guesses). A
    configuration over the shared-memory limit (AR410, often a tune value only) leaves the IR whole: it counts."""
    kernel_ir = doc.check.analysis.kernels.get(kernel)
    source = next((k for k in doc.kernels() if k.name == kernel), None)
    facts = doc.facts.get(kernel)
    if kernel_ir is None or source is None or facts is None or facts.check_errors > facts.resource_errors:
        return []
    return Sites(doc, source, kernel_ir, compile_facts(compiled)).all()


def kernel_context(doc: Document, kernel: str, compiled: GateResult | CompileFacts | None = None):
    """The kernel's own site (None when it has no IR)."""
    sites = site_contexts(doc, kernel, compiled)
    return sites[0] if sites else None


def with_compile(sites: list[SiteContext] | None, compiled: GateResult | CompileFacts | None):
    """The sites with a compile's registers, spills and shared memory put in (a gate result that came later, as a
    bundle's run on the GPU); unchanged without compile facts."""
    facts = compile_facts(compiled)
    if sites is None or facts is None:
        return sites
    return [site.model_copy(update=compiled_fields(facts)) for site in sites]


def compiled_fields(facts: CompileFacts) -> dict:
    return {
        "registers": facts.registers,
        "spill_stores_bytes": facts.spill_stores_bytes,
        "spill_loads_bytes": facts.spill_loads_bytes,
        "shared_memory_bytes": facts.shared_memory_bytes,
    }


class Sites:
    def __init__(self, doc: Document, source: ast.Kernel, kernel: ir.KernelIR, compiled: CompileFacts | None):
        self.doc, self.source, self.kernel = doc, source, kernel
        self.plan: Plan = make_plan(kernel.body)
        self.host = HostExpressions(kernel)
        self.constants = {n: c.value for n, c in kernel.constants.items()}
        self.warps = int(kernel.policy["num_warps"].value) if "num_warps" in kernel.policy else DEFAULT_NUM_WARPS
        self.stages = int(kernel.policy["num_stages"].value) if "num_stages" in kernel.policy else DEFAULT_NUM_STAGES
        self.size_set, self.sizes = profiled(doc, source)
        self.env = self.environment()
        self.compiled = compiled
        self.dot_ops = [op for op in ir.walk_ops(kernel.body) if op.kind == "dot" and is_tile_dot(op)]
        self.engines = {id(op): d for op, d in zip(self.dot_ops, model_of(kernel).dots, strict=False)}

    def environment(self) -> dict | None:
        """Names the host expressions read: scalars at their defaults, the tile constants, then the sizes."""
        if self.sizes is None:
            return None
        env: dict = {p.name: p.default for p in self.kernel.params if isinstance(p.type, ScalarT)}
        env.update(self.constants)
        env.update({"num_warps": self.warps, "num_stages": self.stages})
        env.update(self.sizes)
        return env

    def evaluate(self, text: str):
        if self.env is None:
            return None
        try:
            return eval(text, {"__builtins__": {}, **HELPERS}, dict(self.env))  # codegen's own expressions, no builtins
        except Exception:  # a size the set does not bind, a division by zero: the fact is unknown
            return None

    def count(self, tiles: TileSizes) -> int | None:
        """FLOPs of a launch as code generation counts them, with `tiles` deciding which ops count."""
        writer = CountsWriter(self.kernel, self.plan)
        writer.tiles = tiles
        try:
            per_program = writer.block(self.kernel.body)
        except CodegenError:
            return None
        if writer.dynamic:
            return None  # loop bounds read from memory: counted only with the launch's tensors
        programs = self.programs()
        value = self.evaluate(str(per_program))
        return None if programs is None or value is None else int(programs * value)

    def programs(self) -> int | None:
        dims = []
        for value in self.kernel.grid:
            try:
                found = self.evaluate(str(self.host.of(value)))
            except CodegenError:
                return None
            if not isinstance(found, int | float):
                return None
            dims.append(int(found))
        return math.prod(dims) if dims else None

    def all(self) -> list[SiteContext]:
        base = self.kernel_facts()
        dot_flops = {id(op): self.count(OneDot(self.kernel, op)) for op in self.dot_ops}
        self.add_work(base, dot_flops)
        sites = [SiteContext(site="kernel", line=self.kernel.span.line + 1, **base)]
        sites[0] = self.with_dot(sites[0], self.principal(self.dot_ops, dot_flops), len(self.dot_ops))
        for op in ir.walk_ops(self.kernel.body):
            if op.kind == "for":
                inside = [d for d in ir.walk_ops(op.regions[0]) if id(d) in dot_flops]
                site = SiteContext(site="loop", line=op.span.line + 1, loop_trips=self.trips(op), **base)
                sites.append(self.with_dot(site, self.principal(inside, dot_flops), len(inside)))
            elif id(op) in dot_flops:
                sites.append(self.with_dot(SiteContext(site="dot", line=op.span.line + 1, **base), op, 1))
        return sites

    def principal(self, dots: list[ir.Op], flops: dict[int, int | None]) -> ir.Op | None:
        if not dots:
            return None
        return max(dots, key=lambda op: (flops.get(id(op)) or 0, -dots.index(op)))

    def kernel_facts(self) -> dict:
        try:
            smem = shared_memory(self.kernel, None, self.source)
        except Exception:  # the estimate is advisory here; the checker reports what it cannot size
            smem = None
        facts = {
            "kernel": self.kernel.name,
            "num_warps": self.warps,
            "num_stages": self.stages,
            "constants": dict(self.constants),
            "shared_memory_estimate_bytes": smem,
            "size_set": self.size_set,
            "sizes": dict(self.sizes or {}),
        }
        if self.compiled is not None:
            facts.update(compiled_fields(self.compiled))
        facts.update(self.row_facts())
        return facts

    def add_work(self, facts: dict, dot_flops: dict[int, int | None]) -> None:
        flops = self.count(TileSizes(self.kernel))
        moved = self.evaluate(bytes_moved(self.kernel))
        moved = int(moved) if isinstance(moved, int | float) else None
        programs = self.programs()
        facts.update(flops=flops, bytes=moved, programs=programs)
        if programs is not None:
            facts.update(waves=round(programs / SMS, 3), tail_programs=programs % SMS)
        known = all(v is not None for v in dot_flops.values())
        if known:
            facts["dot_flops"] = sum(dot_flops.values())
        if flops is None or moved is None or not known:
            return
        seconds = sum(
            f / (dot_ceiling_tflops(*self.dtype_precision(op)) * 1e12) for op in self.dot_ops
            if (f := dot_flops[id(op)])
        )  # fmt: skip
        seconds += max(0, flops - facts["dot_flops"]) / (FP32_TFLOPS * 1e12)
        memory = moved / (COPY_GB_PER_S * 1e9)
        facts.update(
            arithmetic_intensity=round(flops / moved, 3) if moved else None,
            compute_ms=round(seconds * 1e3, 6),
            memory_ms=round(memory * 1e3, 6),
            bound="compute" if seconds > memory else "memory",
        )

    def trips(self, op: ir.Op) -> int | None:
        writer = CountsWriter(self.kernel, self.plan)
        try:
            text = f"_trips({', '.join(str(writer.bound(v)) for v in op.operands[:3])})"
        except CodegenError:
            return None
        found = None if writer.dynamic else self.evaluate(text)
        return int(found) if isinstance(found, int | float) else None

    def dtype_precision(self, op: ir.Op) -> tuple[str, str | None]:
        dtype = str(op.operands[0].type.dtype)
        if dtype != "f32":
            return dtype, None
        constant = op.attrs.get("precision_constant")
        if constant:
            return dtype, str(self.constants.get(constant, op.attrs.get("input_precision") or "ieee"))
        return dtype, str(op.attrs.get("input_precision") or "ieee")

    def with_dot(self, site: SiteContext, op: ir.Op | None, count: int) -> SiteContext:
        site.dots = count
        if op is None:
            return site
        a, b = op.operands[0], op.operands[1]
        dtype, precision = self.dtype_precision(op)
        result = op.result.type
        elements = math.prod(d.value for d in result.shape)
        per_element = max(4, max(result.dtype.bits, 8) // 8) / 4
        model = self.engines.get(id(op))
        values = {**self.constants, "num_warps": self.warps, "num_stages": self.stages}
        site.dot_line = op.span.line + 1
        site.a_dtype, site.b_dtype = str(a.type.dtype), str(b.type.dtype)
        site.input_precision = precision
        site.precision_constant = op.attrs.get("precision_constant") if dtype == "f32" else None
        site.engine = model.engine(values) if model is not None else None
        site.accumulator_shape = [d.value for d in result.shape]
        site.accumulator_dtype = str(result.dtype)
        site.accumulator_registers = round(elements * per_element / (self.warps * 32), 2)
        for prefix, operand, axis in (("a", a, -1), ("b", b, -2)):
            found = self.operand(operand, len(operand.type.shape) + axis)
            if found is None:
                continue
            tensor, contiguous, declared, k_major, transposed = found
            setattr(site, f"{prefix}_tensor", tensor)
            setattr(site, f"{prefix}_contiguous", contiguous)
            setattr(site, f"{prefix}_layout_declared", declared)
            setattr(site, f"{prefix}_k_major", k_major)
            setattr(site, f"{prefix}_trans", transposed)
        return site

    def operand(self, value: ir.Value, axis: int):
        """(tensor, its contiguous axis' name, declared by `layout`, the contraction reads along it, through
        `trans`) for a dot operand traced to its load; None when it comes from no single load."""
        traced = trace(self.plan.resolve(value), axis, self.plan)
        if traced is None:
            return None
        load, load_axis, transposed = traced
        tensor = self.kernel.tensor(load.attrs["tensor"])
        if tensor is None or not isinstance(tensor.type, TensorT):
            return None
        rank = len(tensor.type.shape)
        contiguous = self.kernel.layouts.get(tensor.name, rank - 1)
        read = tensor_axes(load).get(load_axis)
        k_major = None if read is None else read == contiguous
        return tensor.name, str(tensor.type.shape[contiguous]), tensor.name in self.kernel.layouts, k_major, transposed

    def row_facts(self) -> dict:
        """A row-wise kernel's row: the first reduction whose operand traces to a load."""
        for op in ir.walk_ops(self.kernel.body):
            if op.kind != "reduce" or not op.operands or not isinstance(op.operands[0].type, TileT):
                continue
            operand = self.plan.resolve(op.operands[0])
            axis = op.attrs.get("axis")
            if not isinstance(axis, int):
                continue
            axis = axis % len(operand.type.shape)
            traced = trace(operand, axis, self.plan)
            if traced is None:
                continue
            load, load_axis, _ = traced
            tensor = self.kernel.tensor(load.attrs["tensor"])
            read = tensor_axes(load).get(load_axis)
            if tensor is None or read is None:
                continue
            dim = tensor.type.shape[read]
            length = dim.value(self.sizes or {})
            tile = operand.type.shape[axis].value
            return {
                "row_tensor": tensor.name,
                "row_length": length,
                "row_tile": tile,
                "row_wider_than_tile": None if length is None else length > tile,
            }
        return {}


def is_tile_dot(op: ir.Op) -> bool:
    return len(op.operands) >= 2 and all(isinstance(o.type, TileT) for o in op.operands[:2])


class OneDot(TileSizes):
    """Counts the FLOPs of one dot op and nothing else."""

    def __init__(self, kernel: ir.KernelIR, dot: ir.Op):
        super().__init__(kernel)
        self.dot = dot

    def op_flops(self, op: ir.Op, plan: Plan):
        return super().op_flops(op, plan) if op is self.dot else {}


FOLLOW = {"cast", "tag", "hint"}


def trace(value: ir.Value, axis: int, plan: Plan, transposed: bool = False):
    """Follow tile `value`'s axis back to the load it comes from, through casts, `trans`, same-shape elementwise
    ops and a loop's carried value (to what its body yields): (the load, the load tile's axis, whether a `trans`
    was passed); None otherwise."""
    value = plan.resolve(value)
    op = value.op
    if op is None or not isinstance(value.type, TileT):
        return None
    if op.kind == "load":
        return op, axis, transposed
    if op.kind in FOLLOW and op.operands:
        return trace(op.operands[0], axis, plan, transposed)
    if op.kind == "trans" and op.operands and len(value.type.shape) == 2:
        return trace(op.operands[0], 1 - axis, plan, True)
    if op.kind == "for" and value in op.results and op.regions:  # a loop-carried sum: what each iteration adds
        yields = op.regions[0].yields
        index = next(i for i, r in enumerate(op.results) if r is value)
        return trace(yields[index], axis, plan, transposed) if index < len(yields) else None
    if op.kind in ELEMENTWISE:
        shape = value.type.shape
        for operand in op.operands:
            if isinstance(operand.type, TileT) and [d.value for d in operand.type.shape] == [d.value for d in shape]:
                found = trace(operand, axis, plan, transposed)
                if found is not None:
                    return found
    return None


def tensor_axes(load: ir.Op) -> dict[int, int]:
    """The load tile's axes -> the tensor axis whose index varies along each (an axis two indices vary along, or
    none does, is left out)."""
    rank = len(load.result.type.shape)
    found: dict[int, list[int]] = {}
    for tensor_axis, index in enumerate(ir.memory_access(load).indices):
        if not isinstance(index.type, TileT):
            continue
        offset = rank - len(index.type.shape)
        for i, dim in enumerate(index.type.shape):
            if dim.value != 1:
                found.setdefault(offset + i, []).append(tensor_axis)
    return {tile_axis: axes[0] for tile_axis, axes in found.items() if len(axes) == 1}


def profiled(doc: Document, kernel: ast.Kernel) -> tuple[str | None, dict | None]:
    from argus.skills.transforms.problem import profiled_sizes

    found = profiled_sizes(doc, kernel)
    return (None, None) if found is None else found


def _cdiv(a, b):
    return -(-a // b)


def _trips(start, stop, step):
    return max(0, _cdiv(stop - start, step)) if step > 0 else max(0, _cdiv(start - stop, -step))


# What the host expressions call (argus/codegen/runtime.py defines the generated module's own).
HELPERS = {
    "_cdiv": _cdiv,
    "_trips": _trips,
    "_partition": lambda *_, **__: True,
    "_in_range": lambda *_, **__: True,  # `ignore=` is a keyword
    "_permutation": lambda *_, **__: True,
    "math": math,
    "max": max,
    "min": min,
    "abs": abs,
    "int": int,
    "float": float,
    "bool": bool,
}


def describe(site: SiteContext) -> str:
    """One line a person reads: what the site is and the facts that decide most."""
    parts = [f"{site.site} at line {site.line}"]
    if site.dot_line is not None:
        precision = f" {site.input_precision}" if site.input_precision else ""
        parts.append(f"{site.a_dtype}{precision} dot ({site.engine})")
        for name in ("a", "b"):
            tensor = getattr(site, f"{name}_tensor")
            if tensor is not None:
                major = {True: "K-major", False: "not K-major", None: "?"}[getattr(site, f"{name}_k_major")]
                trans = " via trans" if getattr(site, f"{name}_trans") else ""
                parts.append(f"{name}: {tensor} {getattr(site, f'{name}_contiguous')}-contiguous, {major}{trans}")
        parts.append(f"acc {site.accumulator_shape} {site.accumulator_registers} regs/thread")
    return "; ".join(parts)
