"""`policy epilogue_warps = W`: a persistent GEMM whose epilogue runs in W warps of its own, through Gluon.

Triton's high-level language runs a GEMM's epilogue (bias, GELU, ...) after the K loop in the warps that issue
the MMAs, so the tensor cores idle while it runs; Triton 3.6 cannot give those warps a partner. Gluon, its
lower-level dialect, can name partitions (issue 18). For a kernel of one recognized shape, a persistent walk
of C's tiles with a K loop `acc = dot(load(A[rm, rk]), load(B[rk, rn]), acc)`, elementwise code on `acc` and
one `store(C[rm, rn], ...)`, this module writes the Gluon kernel of `bench/gluon_gemm_epilogue.py`:

- an MMA partition (the kernel's num_warps) issues the TMA loads into a ring of stages and the wgmma, and
  hands each finished tile to the epilogue in shared memory, rounded to C's dtype;
- an epilogue partition (W warps) runs the kernel's own epilogue code, translated from the Argus source, over
  row slices of that tile and stores C, while the MMA partition computes the next tile.

The Argus source stays what is checked: the verifier proves its walk covers C once, and the Triton lowering of
the same source is what the CPU interpreter runs and what the launcher falls back to (docs/codegen.md). The
Gluon kernel visits the tiles in Triton's grouped order with the kernel's GROUP_M; every tile's result is the
same in any order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from argus.codegen.errors import CodegenError
from argus.dsl import ir
from argus.dsl.types import ScalarT, TensorT

GLUON_DTYPES = {"f16": "gl.float16", "bf16": "gl.bfloat16", "f32": "gl.float32", "i32": "gl.int32"}
# Argus math functions the epilogue may use -> a Gluon expression format; erf is branch-free (see ERF_HELPER)
GLUON_MATH = {
    **{fn: f"gl.{fn}({{0}})" for fn in ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "abs", "sin", "cos")},
    **{fn: f"gl.{fn}({{0}})" for fn in ("floor", "ceil")},
    "maximum": "gl.maximum({0}, {1})",
    "minimum": "gl.minimum({0}, {1})",
    "erf": "_argus_erf({0})",
    "sigmoid": "(1.0 / (1.0 + gl.exp(-({0}))))",
    "tanh": "(2.0 / (1.0 + gl.exp(-2.0 * ({0}))) - 1.0)",
}
ELEMENTWISE = {"const", "binary", "compare", "unary", "math", "where", "cast", "expand_dims", "load"}


@dataclass(slots=True)
class GemmEpilogue:
    """What the Gluon kernel takes from the Argus source."""

    a: str
    b: str
    c: str
    bm: int
    bn: int
    bk: int
    group_m: str | None  # the tile constant of the grouped order, if the kernel has one
    tiles: tuple[str, str, str] = ("", "", "")  # the tile constants BM, BN, BK are written as ("" if literals)
    sizes: dict[str, str] = field(default_factory=dict)  # "M", "N", "K" -> the kernel's size symbols
    column_lines: list[str] = field(default_factory=list)  # values of the columns only: once a tile
    column_names: list[str] = field(default_factory=list)
    row_lines: list[str] = field(default_factory=list)  # per row slice, over z = the slice of A @ B
    result: str = ""
    tensors: list[str] = field(default_factory=list)  # 1-D tensors the epilogue loads
    scalars: list[str] = field(default_factory=list)  # scalar parameters it reads


def refuse(kernel: ir.KernelIR, why: str) -> CodegenError:
    return CodegenError(f"`policy epilogue_warps` lowers `{kernel.name}` through Gluon only for {why}", kernel.span)


def recognize(kernel: ir.KernelIR) -> GemmEpilogue:
    """The GEMM and its epilogue, or a CodegenError naming the first thing that does not fit the shape."""
    walk = next((op for op in kernel.body.ops if op.kind == "for"), None)
    if walk is None or len(kernel.grid) != 1 or not is_persistent(walk, kernel):
        raise refuse(kernel, "a persistent walk `for t in range(program_id(0), n, P)` over a grid (P,)")
    region = walk.regions[0]
    k_loops = [op for op in region.ops if op.kind == "for"]
    stores = [op for op in region.ops if op.kind == "store"]
    if len(k_loops) != 1 or len(stores) != 1 or any(op.kind.startswith("atomic") for op in ir.walk_ops(region)):
        raise refuse(kernel, "one K loop and one store in the walk, and no atomics")
    k_loop, store = k_loops[0], stores[0]
    dot = next((op for op in k_loop.regions[0].ops if op.kind == "dot"), None)
    if dot is None or len(k_loop.results) != 1 or k_loop.regions[0].yields != [dot.result]:
        raise refuse(kernel, "a K loop that carries one accumulator, `acc = dot(a, b, acc)`")
    a, b = (load_of(v) for v in dot.operands[:2])
    if a is None or b is None:
        raise refuse(kernel, "a dot of two loads")
    access_a, access_b = ir.memory_access(a), ir.memory_access(b)
    if not whole_k_loop(kernel, k_loop, dot, access_a, access_b):
        raise refuse(kernel, "a K loop `for k0 in range(0, K, BK)` from zeros over A[rm, k0 + arange(BK)], other=0")
    rm = row_index(access_a.indices[0])
    rn = row_index(access_b.indices[1])
    c_access = ir.memory_access(store)
    if rm is None or rn is None or row_index(c_access.indices[0]) is not rm or row_index(c_access.indices[1]) is not rn:
        raise refuse(kernel, "`store(C[rm, rn], ...)` with A's rows rm and B's columns rn")
    if not (tile_run(rm) and tile_run(rn)):
        raise refuse(kernel, "tiles `rm = pm * BM + arange(BM)` and `rn = pn * BN + arange(BN)`")
    names = {access_a.tensor.name, access_b.tensor.name, c_access.tensor.name}
    dtypes = {tensor_dtype(kernel, name) for name in names}
    if len(names) != 3 or dtypes != {"f16"}:
        raise refuse(kernel, "f16 tensors A, B and C")
    bm, bn = (arange_length(v) for v in (rm, rn))
    bk = dot.operands[0].type.shape[1].value
    shape = GemmEpilogue(
        access_a.tensor.name or "",
        access_b.tensor.name or "",
        c_access.tensor.name or "",
        bm,
        bn,
        bk,
        "GROUP_M" if "GROUP_M" in kernel.constants else None,
    )
    stored = c_access.value
    assert stored is not None
    shape.tiles = (arange_name(rm), arange_name(rn), dot.operands[0].type.shape[1].label)
    bound = {k_loop.result: "z", rm: "rm", rn: "rn", **size_names(kernel, shape)}
    Epilogue(kernel, shape, bound).translate(stored)
    return shape


def size_names(kernel: ir.KernelIR, shape: GemmEpilogue) -> dict[ir.Value, str]:
    """The size symbols of A's rows, B's columns and the contraction, under the Gluon kernel's names."""
    a, b = kernel.tensor(shape.a), kernel.tensor(shape.b)
    assert a is not None and b is not None and isinstance(a.type, TensorT) and isinstance(b.type, TensorT)
    symbols = {"M": a.type.shape[0].symbol, "K": a.type.shape[1].symbol, "N": b.type.shape[1].symbol}
    offsets = [d.offset for d in (*a.type.shape, *b.type.shape)]
    if any(s is None or s not in kernel.sizes for s in symbols.values()) or any(offsets):
        raise refuse(kernel, "A: [M, K] and B: [K, N] with size symbols")
    shape.sizes = {name: str(s) for name, s in symbols.items()}
    return {kernel.sizes[str(s)]: name for name, s in symbols.items()}


def whole_k_loop(
    kernel: ir.KernelIR, k_loop: ir.Op, dot: ir.Op, access_a: ir.MemoryAccess, access_b: ir.MemoryAccess
) -> bool:
    """The K loop the Gluon kernel runs: every K block from 0 (its TMA loads pad past K with 0), starting from
    zeros, A and B read at the same run `k0 + arange(BK)` of the loop variable, a plain f32 product."""
    start, stop, step, init = k_loop.operands[:4]
    k0 = k_loop.regions[0].args[0]
    a_k, b_k = access_a.indices[1], access_b.indices[0]
    runs = [run_of(v) for v in (a_k, b_k)]
    bk = dot.operands[0].type.shape[1].value
    return (
        constant_value(start) == 0
        and stop is contraction_size(kernel, access_a)
        and constant_value(step) == bk
        and init.op is not None
        and init.op.kind == "zeros"
        and all(r is not None and k0 in r.operands for r in runs)
        and all(padded_with_zero(a) for a in (access_a, access_b))
        and dot.attrs.get("input_precision") in (None, "ieee")
        and len(dot.operands) == 3
    )


def contraction_size(kernel: ir.KernelIR, access_a: ir.MemoryAccess) -> ir.Value | None:
    param = kernel.tensor(access_a.tensor.name or "")
    if param is None or not isinstance(param.type, TensorT):
        return None
    return kernel.sizes.get(str(param.type.shape[1].symbol))


def run_of(index: ir.Value) -> ir.Op | None:
    run = row_index(index)
    return run.op if run is not None else None


def constant_value(value: ir.Value) -> int | float | None:
    return value.op.attrs.get("value") if value.op is not None and value.op.kind == "const" else None


def padded_with_zero(access: ir.MemoryAccess) -> bool:
    return access.other is None or constant_value(access.other) == 0


def tile_run(run: ir.Value) -> bool:
    """`x * B + arange(B)`: whole tiles, as the Gluon kernel's TMA boxes are."""
    assert run.op is not None
    op = next(o for o in run.op.operands if o.op is not arange_of(run)).op
    width = arange_length(run)
    return (
        op is not None
        and op.kind == "binary"
        and op.attrs["op"] == "*"
        and any(constant_value(o) == width for o in op.operands)
    )


def is_persistent(walk: ir.Op, kernel: ir.KernelIR) -> bool:
    start, _, step = walk.operands[:3]
    first = start.op is not None and start.op.kind == "program_id" and start.op.attrs["axis"] == 0
    return first and same_constant(step, kernel.grid[0])


def same_constant(a: ir.Value, b: ir.Value) -> bool:
    if a is b:
        return True
    return a.op is not None and b.op is not None and a.op.kind == b.op.kind == "const" and a.op.attrs == b.op.attrs


def load_of(value: ir.Value) -> ir.Op | None:
    op = value.op
    return op if op is not None and op.kind == "load" and op.attrs["rank"] == 2 else None


def row_index(value: ir.Value) -> ir.Value | None:
    """The 1-D run `x * B + arange(B)` an index broadcasts (an expand_dims of it), or None."""
    while value.op is not None and value.op.kind == "expand_dims":
        value = value.op.operands[0]
    op = value.op
    if op is None or op.kind != "binary" or op.attrs["op"] != "+":
        return None
    if not any(o.op is not None and o.op.kind == "arange" for o in op.operands):
        return None
    return value


def arange_of(run: ir.Value) -> ir.Op:
    """The `arange` of a run `x + arange(B)` (row_index found one)."""
    assert run.op is not None
    return next(o.op for o in run.op.operands if o.op is not None and o.op.kind == "arange")


def arange_length(run: ir.Value) -> int:
    return int(arange_of(run).attrs["n"])


def arange_name(run: ir.Value) -> str:
    return str(arange_of(run).attrs.get("n_expr") or "")


def tensor_dtype(kernel: ir.KernelIR, name: str | None) -> str | None:
    param = kernel.tensor(name or "")
    return param.type.dtype.name if param is not None and isinstance(param.type, TensorT) else None


class Epilogue:
    """The epilogue's Argus ops as Gluon lines: those that read only the tile's columns once a tile, the rest
    once a row slice (z: the slice of A @ B, f32; rm, rn: its rows and the tile's columns)."""

    def __init__(self, kernel: ir.KernelIR, shape: GemmEpilogue, bound: dict[ir.Value, str]):
        self.kernel, self.shape = kernel, shape
        self.names: dict[ir.Value, str] = dict(bound)
        self.row_dependent = {v for v, name in bound.items() if name in ("z", "rm")}
        self.params = {p.value: p for p in kernel.params}

    def translate(self, stored: ir.Value) -> None:
        source = stored.op
        if source is None or source.kind != "cast" or source.attrs["dtype"].name != "f16":
            raise refuse(self.kernel, "a stored value cast to f16 (`c.to(f16)`)")
        self.shape.result = self.value(source.operands[0])
        # the row slices take, of the values computed once a tile, those they read
        read = set(re.findall(r"\bv\d+\b", " ".join([*self.shape.row_lines, self.shape.result])))
        self.shape.column_names = [n for n in self.shape.column_names if n in read]

    def value(self, value: ir.Value) -> str:
        if value in self.names:
            return self.names[value]
        if value in self.kernel.sizes.values():
            raise refuse(self.kernel, "epilogues that read the sizes of A and B only")
        param = self.params.get(value)
        if param is not None:
            if not isinstance(param.type, ScalarT):
                raise refuse(self.kernel, f"epilogues that read tensors through loads, not `{param.name}` itself")
            if param.name not in self.shape.scalars:
                self.shape.scalars.append(param.name)
            return f"s_{param.name}"
        op = value.op
        if op is not None and op.kind == "const":
            return repr(op.attrs["value"])  # inline, as the Triton lowering writes constants
        if op is None or op.kind not in ELEMENTWISE:
            what = op.kind if op is not None else "a loop variable"
            raise refuse(self.kernel, f"elementwise epilogues, not one with `{what}`")
        text = self.expression(op)
        name = f"v{value.id}"
        rows = any(o in self.row_dependent for o in op.operands)
        if rows:
            self.row_dependent.add(value)
        lines = self.shape.row_lines if rows else self.shape.column_lines
        lines.append(f"{name} = {text}")
        if not rows:
            self.shape.column_names.append(name)
        self.names[value] = name
        return name

    def expression(self, op: ir.Op) -> str:
        if op.kind == "load":
            return self.load(op)
        args = [self.value(o) for o in op.operands]
        kind = op.kind
        if kind in ("binary", "compare"):
            if op.attrs["op"] == "**":
                raise refuse(self.kernel, "epilogues without `**`")
            return f"({args[0]} {op.attrs['op']} {args[1]})"
        if kind == "unary":
            symbol = {"-": "-", "~": "~", "not": "~"}.get(op.attrs["op"])
            if symbol is None:
                raise refuse(self.kernel, f"epilogues without unary `{op.attrs['op']}`")
            return f"({symbol}{args[0]})"
        if kind == "math":
            pattern = GLUON_MATH.get(op.attrs["fn"])
            if pattern is None:
                raise refuse(self.kernel, f"epilogues without `{op.attrs['fn']}`")
            if op.result.type.dtype.bits < 32:  # Gluon's math takes f32, as Triton's (codegen/body.py)
                wide = [f"{a}.to(gl.float32)" for a in args]
                return f"{pattern.format(*wide)}.to({gluon_dtype(self.kernel, op.result.type.dtype.name)})"
            return pattern.format(*args)
        if kind == "where":
            return f"gl.where({args[0]}, {args[1]}, {args[2]})"
        if kind == "cast":
            target = op.attrs["dtype"].name
            return f"({args[0]} != 0)" if target == "bool" else f"{args[0]}.to({gluon_dtype(self.kernel, target)})"
        rank = len(op.result.type.shape)
        index = ", ".join("None" if axis in op.attrs["axes"] else ":" for axis in range(rank))
        return f"{args[0]}[{index}]"

    def load(self, op: ir.Op) -> str:
        access = ir.memory_access(op)
        index = access.indices[0]
        if op.attrs["rank"] != 1 or self.names.get(index) not in ("rm", "rn"):
            raise refuse(self.kernel, "epilogue loads of 1-D tensors at the tile's rows `[rm]` or columns `[rn]`")
        tensor = access.tensor.name or ""
        if tensor not in self.shape.tensors:
            self.shape.tensors.append(tensor)
        text = f"p_{tensor} + {self.value(index)} * p_{tensor}_stride"
        if access.mask is not None:
            text += f", mask={self.value(access.mask)}"
        if access.other is not None:
            text += f", other={self.value(access.other)}"
        return f"gl.load({text})"


def gluon_dtype(kernel: ir.KernelIR, name: str) -> str:
    if name not in GLUON_DTYPES:
        raise refuse(kernel, f"epilogues in f16, bf16, f32 and i32, not {name}")
    return GLUON_DTYPES[name]


# The kernel of bench/gluon_gemm_epilogue.py (measured there on H100s: docs/perf.md, issue 18), with the Argus
# epilogue in place of its fixed bias + GELU. Names: {name} the kernel's, {ex} the epilogue's tensors and scalars
# as parameters, {cols} its per-tile column values; {column_lines}, {row_lines} its code, {result} C's value.
TEMPLATE = '''
@gluon.jit
def _{name}_g_tile_of(t, tiles_m, tiles_n, GROUP_M: gl.constexpr):
    """Triton's grouped order: GROUP_M row tiles walk the column tiles together, for L2 reuse of B."""
    per_group = GROUP_M * tiles_n
    first_m = (t // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pm = first_m + (t % per_group) % rows
    pn = (t % per_group) // rows
    return pm, pn


@gluon.jit
def _{name}_g_load_step(g, lk, lj, pm, pn, a_desc, b_desc, a_bufs, b_bufs, ready, K, total, tiles_m, tiles_n,
                        GROUP_M: gl.constexpr, NUM_SMS: gl.constexpr):
    """The TMA loads of operand step g (K offset lk of this program's tile lj, at (pm, pn)) into ring slot
    g % STAGES, nothing past the last step; returns the cursor of step g + 1, moved by additions (no division
    in the K loop)."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    s = g % STAGES
    live = g < total
    mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes, pred=live)
    _argus_tma_load(a_desc, [pm * BM, lk], ready.index(s), a_bufs.index(s), pred=live)
    _argus_tma_load(b_desc, [lk, pn * BN], ready.index(s), b_bufs.index(s), pred=live)
    lk += BK
    if lk >= K:
        lk = 0
        lj += 1
        pm, pn = _{name}_g_tile_of(gl.program_id(0) + lj * NUM_SMS, tiles_m, tiles_n, GROUP_M)
    return g + 1, lk, lj, pm, pn


@gluon.jit
def _{name}_g_columns(j, tiles_m, tiles_n, M, N, K, {ex}BN: gl.constexpr, rows: gl.constexpr,
                      GROUP_M: gl.constexpr, NUM_SMS: gl.constexpr):
    """Tile j of this program's walk in the layout `rows`: its row tile, its columns, and the epilogue's
    values that depend on the columns only (computed once a tile)."""
    pm, pn = _{name}_g_tile_of(gl.program_id(0) + j * NUM_SMS, tiles_m, tiles_n, GROUP_M)
    rn = pn * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, rows))
{column_lines}
    return pm, rn, {cols}


@gluon.jit
def _{name}_g_rows(c_buf, r: gl.constexpr, pm, rn, {cols}c_ptr, M, N, K, stride_cm, {ex}rows: gl.constexpr,
                   SUB_M: gl.constexpr):
    """Row slice r of the handed-off tile through the Argus epilogue, stored to C."""
    BM: gl.constexpr = c_buf.type.shape[0]
    z = c_buf.slice(r * SUB_M, SUB_M, dim=0).load(rows).to(gl.float32)
    rm = pm * BM + r * SUB_M + gl.arange(0, SUB_M, layout=gl.SliceLayout(1, rows))
{row_lines}
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    gl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], ({result}).to(gl.float16), mask=mask)


@gluon.jit
def _{name}_g_mma(a_desc, b_desc, a_bufs, b_bufs, c_buf, ready, c_ready, c_empty, c_ptr, M, N, K, stride_cm,
                  {ex}GROUP_M: gl.constexpr, NUM_SMS: gl.constexpr, SUB_M: gl.constexpr,
                  TAIL_CHUNKS: gl.constexpr, num_warps: gl.constexpr):
    """TMA loads running STAGES - 1 steps ahead across tiles, wgmma, each finished tile handed over as f16."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BN, 16]
    )
    tiles_m = gl.cdiv(M, BM)
    tiles_n = gl.cdiv(N, BN)
    k_steps = gl.cdiv(K, BK)
    my_tiles = gl.cdiv(tiles_m * tiles_n - gl.program_id(0), NUM_SMS)
    total = my_tiles * k_steps
    g, lk, lj = 0, 0, 0
    lpm, lpn = _{name}_g_tile_of(gl.program_id(0), tiles_m, tiles_n, GROUP_M)
    for _p in gl.static_range(STAGES - 1):
        g, lk, lj, lpm, lpn = _{name}_g_load_step(g, lk, lj, lpm, lpn, a_desc, b_desc, a_bufs, b_bufs, ready, K,
                                                  total, tiles_m, tiles_n, GROUP_M, NUM_SMS)
    it = 0
    for j in range(my_tiles):
        acc = gl.zeros((BM, BN), gl.float32, acc_layout)
        for _k in range(k_steps):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # one wgmma left in flight: the one before it is done, so its slot takes the next load
            acc, _a, _b = warpgroup_mma_wait(1, deps=(acc, a_bufs.index(s), b_bufs.index(s)))
            g, lk, lj, lpm, lpn = _{name}_g_load_step(g, lk, lj, lpm, lpn, a_desc, b_desc, a_bufs, b_bufs, ready,
                                                      K, total, tiles_m, tiles_n, GROUP_M, NUM_SMS)
            it += 1
        acc = warpgroup_mma_wait(0, deps=(acc,))
        mbarrier.wait(c_empty, (j & 1) ^ 1)
        c_buf.store(acc.to(gl.float16))
        mbarrier.arrive(c_ready)
    if TAIL_CHUNKS > 0 and my_tiles > 0:
        # nothing overlaps the last tile's epilogue: these warps take its first TAIL_CHUNKS row slices
        rows: gl.constexpr = gl.BlockedLayout([1, {vector}], [1, 32], [num_warps, 1], [1, 0])
        pm, rn, {cols}= _{name}_g_columns(my_tiles - 1, tiles_m, tiles_n, M, N, K, {ex}BN, rows, GROUP_M, NUM_SMS)
        for r in gl.static_range(TAIL_CHUNKS):
            _{name}_g_rows(c_buf, r, pm, rn, {cols}c_ptr, M, N, K, stride_cm, {ex}rows, SUB_M)


@gluon.jit
def _{name}_g_epilogue(c_buf, c_ready, c_empty, c_ptr, M, N, K, stride_cm, {ex}GROUP_M: gl.constexpr,
                       NUM_SMS: gl.constexpr, SUB_M: gl.constexpr, TAIL_CHUNKS: gl.constexpr,
                       EPILOGUE_WARPS: gl.constexpr):
    BM: gl.constexpr = c_buf.type.shape[0]
    BN: gl.constexpr = c_buf.type.shape[1]
    rows: gl.constexpr = gl.BlockedLayout([1, {vector}], [1, 32], [EPILOGUE_WARPS, 1], [1, 0])
    tiles_m = gl.cdiv(M, BM)
    tiles_n = gl.cdiv(N, BN)
    my_tiles = gl.cdiv(tiles_m * tiles_n - gl.program_id(0), NUM_SMS)
    for j in range(my_tiles):
        pm, rn, {cols}= _{name}_g_columns(j, tiles_m, tiles_n, M, N, K, {ex}BN, rows, GROUP_M, NUM_SMS)
        mbarrier.wait(c_ready, j & 1)
        last = j == my_tiles - 1
        for r in gl.static_range(BM // SUB_M):
            if not last or r >= TAIL_CHUNKS:
                _{name}_g_rows(c_buf, r, pm, rn, {cols}c_ptr, M, N, K, stride_cm, {ex}rows, SUB_M)
        mbarrier.arrive(c_empty)


@gluon.jit
def {name}_gluon(a_desc, b_desc, c_ptr, M, N, K, stride_cm, {ex}GROUP_M: gl.constexpr, NUM_SMS: gl.constexpr,
                 STAGES: gl.constexpr, SUB_M: gl.constexpr, TAIL_CHUNKS: gl.constexpr,
                 EPILOGUE_WARPS: gl.constexpr, EPILOGUE_REGS: gl.constexpr, num_warps: gl.constexpr):
    """`{name}` through Gluon (policy epilogue_warps): the MMA partition and an epilogue partition."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    a_bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BM, BK], a_desc.layout)
    b_bufs = gl.allocate_shared_memory(gl.float16, [STAGES, BK, BN], b_desc.layout)
    c_layout: gl.constexpr = gl.NVMMASharedLayout(swizzle_byte_width=128, element_bitwidth=16, rank=2)
    c_buf = gl.allocate_shared_memory(gl.float16, [BM, BN], c_layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    c_ready = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    c_empty = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    mbarrier.init(c_ready, count=1)
    mbarrier.init(c_empty, count=1)
    gl.warp_specialize(
        [
            (_{name}_g_mma, (a_desc, b_desc, a_bufs, b_bufs, c_buf, ready, c_ready, c_empty, c_ptr, M, N, K,
                             stride_cm, {ex}GROUP_M, NUM_SMS, SUB_M, TAIL_CHUNKS, num_warps)),
            (_{name}_g_epilogue, (c_buf, c_ready, c_empty, c_ptr, M, N, K, stride_cm, {ex}GROUP_M, NUM_SMS,
                                  SUB_M, TAIL_CHUNKS, EPILOGUE_WARPS)),
        ],
        [EPILOGUE_WARPS],
        [EPILOGUE_REGS],
    )
'''
# The Gluon names the template uses, imported once by a module that has such a kernel.
IMPORTS = """
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait

# Triton 3.9 names it async_load; 3.6 (the device's) has only the old name
_argus_tma_load = getattr(tma, "async_load", None) or tma.async_copy_global_to_shared


@gluon.jit
def _argus_erf(x):
    \"\"\"erf by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7, far below f16's resolution): one reciprocal,
    one exp2, five FMAs and no branch. libdevice's erff branches on |x| per element, and an epilogue
    partition of 4 warps pays that serial latency for every element of a tile (docs/perf.md, issue 18).\"\"\"
    a = gl.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * gl.exp2(-a * a * 1.4426950408889634)
    return gl.where(x < 0.0, -y, y)
"""


def extras(shape: GemmEpilogue) -> list[str]:
    """The Gluon kernel's parameters for what the epilogue reads, in order."""
    return [n for t in shape.tensors for n in (f"p_{t}", f"p_{t}_stride")] + [f"s_{s}" for s in shape.scalars]


def gluon_source(name: str, shape: GemmEpilogue) -> str:
    """The Gluon functions of kernel `name`: `{name}_gluon` and its partitions."""
    ex = "".join(f"{p}, " for p in extras(shape))
    cols = "".join(f"{c}, " for c in shape.column_names)
    indent = "    "
    return TEMPLATE.format(
        name=name,
        ex=ex,
        cols=cols,
        vector=max(1, min(8, shape.bn // 32)),
        column_lines="\n".join(indent + line for line in shape.column_lines) or f"{indent}pass",
        row_lines="\n".join(indent + line for line in shape.row_lines) or f"{indent}pass",
        result=shape.result,
    )


def launcher_source(kernel: ir.KernelIR, shape: GemmEpilogue, strides: dict[str, str | None]) -> str:
    """`_{name}_gluon_launch(values, settings, warps)`: the Gluon kernel's launch from the Triton kernel's
    arguments by name (values) and keyword arguments (settings); False where it cannot run."""
    name = kernel.name

    def setting(constant: str, default: int) -> str:
        return f"settings.get({constant!r}, {default})" if constant else str(default)

    arguments = []
    for tensor in shape.tensors:
        stride = strides.get(tensor)
        arguments += [f'values["{tensor}"]', f'values["{stride}"]' if stride else "1"]
    arguments += [f'values["{scalar}"]' for scalar in shape.scalars]
    extra = "".join(f"{a}, " for a in arguments)
    bm, bn, bk = shape.tiles
    group = setting(shape.group_m or "", 1)
    return f'''
def _{name}_gluon_launch(values, settings, warps):
    """Launch `{name}_gluon` (policy epilogue_warps) and return True; False where it cannot run."""
    A, B, C = values["{shape.a}"], values["{shape.b}"], values["{shape.c}"]
    BM, BN, BK = {setting(bm, shape.bm)}, {setting(bn, shape.bn)}, {setting(bk, shape.bk)}
    num_warps = settings.get("num_warps", 4)
    if not _gluon_ready((A, B, C), BM, BN, num_warps):
        return False
    from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

    a_layout = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    b_layout = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    a_desc = TensorDescriptor.from_tensor(A, [BM, BK], a_layout)
    b_desc = TensorDescriptor.from_tensor(B, [BK, BN], b_layout)
    sms = torch.cuda.get_device_properties(A.device).multi_processor_count
    M, N, K = values["{shape.sizes["M"]}"], values["{shape.sizes["N"]}"], values["{shape.sizes["K"]}"]
    # row slices of 16; the MMA warps take 5 of the last tile's 8 (nothing overlaps that tile's epilogue)
    {name}_gluon[(sms,)](
        a_desc, b_desc, C, M, N, K, C.stride(0), {extra}GROUP_M={group}, NUM_SMS=sms,
        STAGES=settings.get("num_stages", 3), SUB_M=16, TAIL_CHUNKS=BM // 16 * 5 // 8, EPILOGUE_WARPS=warps,
        EPILOGUE_REGS=120, num_warps=num_warps,
    )
    return True
'''
