"""Block accesses that can go through Hopper's tensor memory accelerator (TMA) under `policy tma = 1`.

A load or store is a *block access* when every index is either a scalar or a run `start + arange(n)` placed on
its own axis of the access, in the tensor's axis order (no transposed or gathered indices), and its mask only
bounds runs by their whole dimension (`rm < M`, the per-axis tuple form) with padding 0 (or no mask at all).
Such an access reads or writes exactly the box `[start, start + n)` of each run axis, clipped to the tensor,
which is what a TMA descriptor does: out-of-bounds elements of a load read 0, those of a store are dropped.

Code generation then emits both forms, chosen at compile time by the constexpr `ARGUS_TMA`: a descriptor made
once at the top of the kernel (`tl.make_tensor_descriptor`) and `desc.load([starts])` / `desc.store(...)`, or
the pointer access as before. The launcher sets ARGUS_TMA only when the policy asks for it and every tensor
with a descriptor qualifies (innermost stride 1, other strides and the base 16-byte aligned); otherwise the
pointer path runs, so `tma = 1` never changes what a kernel computes.

Leading scalar axes fold into the first run axis when that run is unmasked: `Q[z, h, rm, rd]` of a [Z, H, S, D]
tensor goes through a 2-D descriptor over rows `Z * H * S` (box [BM, D], start `(z * H + h) * S + start`)
instead of a 4-D one whose [1, 1, BM, D] box must be reshaped. The unmasked run stays inside its axis (the
verifier proves it), so the folded box reads and writes the same elements; the launcher also requires the folded
axes to be contiguous (stride[a] == shape[a + 1] * stride[a + 1]), else pointers run. Without the reshape,
Triton's Hopper warp specialization (`policy warp_specialize = 1`) can partition the loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ir
from argus.dsl.types import ScalarT, TensorT

FLAG = "ARGUS_TMA"


@dataclass(slots=True)
class BlockAccess:
    descriptor: str  # the descriptor variable's name
    starts: list[ir.Value | None]  # per tensor axis: the run's start (None: 0) or the scalar index
    shape: list[str]  # the access tile's shape, as constant expressions
    squeeze: bool  # whether scalar axes must be dropped (the descriptor's box has a 1 there)
    folded: int = 0  # leading scalar axes folded into the first run axis (module docstring)


@dataclass(slots=True)
class Descriptor:
    name: str
    tensor: str
    block: list[str]  # per tensor axis: constant expression of the box's extent
    folded: int = 0  # leading axes folded into the first run axis: the box is block[folded:]


@dataclass(slots=True)
class TmaPlan:
    accesses: dict[int, BlockAccess] = field(default_factory=dict)  # id(memory op) -> its block access
    descriptors: list[Descriptor] = field(default_factory=list)

    @property
    def tensors(self) -> list[str]:
        return sorted({d.tensor for d in self.descriptors})

    @property
    def folded(self) -> dict[str, int]:
        """Per tensor, the most leading axes any of its descriptors folds (the launcher checks contiguity)."""
        folded: dict[str, int] = {}
        for d in self.descriptors:
            if d.folded:
                folded[d.tensor] = max(folded.get(d.tensor, 0), d.folded)
        return folded


def plan_tma(kernel: ir.KernelIR, resolve) -> TmaPlan:
    """The kernel's block accesses, when its policy asks for TMA; an empty plan otherwise."""
    plan = TmaPlan()
    if "tma" not in kernel.policy:
        return plan
    params = {p.name: p for p in kernel.params}
    sizes = {v.id: name for name, v in kernel.sizes.items()}
    boxes: dict[tuple[str, tuple[str, ...]], str] = {}
    for op in ir.walk_ops(kernel.body):
        if op.kind not in ("load", "store"):
            continue
        access = ir.memory_access(op)
        param = params.get(op.attrs["tensor"])
        if param is None or not isinstance(param.type, TensorT):
            continue
        found = match_block(op, access, param.type, sizes, resolve)
        if found is None:
            continue
        starts, extents, shape, folded = found
        key = (param.name, tuple(extents), folded)
        if key not in boxes:
            boxes[key] = f"{param.name}_tma{len(boxes)}"
            plan.descriptors.append(Descriptor(boxes[key], param.name, extents, folded))
        squeeze = any(e == "1" for e in extents[folded:])
        plan.accesses[id(op)] = BlockAccess(boxes[key], starts, shape, squeeze, folded)
    return plan


def match_block(op: ir.Op, access: ir.MemoryAccess, tensor: TensorT, sizes: dict[int, str], resolve):
    """(starts, box extents, access shape, folded leading axes) when the access is a block access; None
    otherwise."""
    if op.kind == "store":
        value_type = resolve(access.value).type
        if getattr(value_type, "dtype", None) != tensor.dtype or isinstance(value_type, ScalarT):
            return None  # a conversion or a broadcast scalar: leave it to the pointer store
    if access.other is not None and not is_zero(resolve(access.other)):
        return None
    starts: list[ir.Value | None] = []
    extents: list[str] = []
    shape: list[str] = []
    runs: dict[tuple, int] = {}  # the run (start, length) -> its tensor axis
    last_axis = -1
    for axis, index in enumerate(access.indices):
        index = resolve(index)
        if isinstance(index.type, ScalarT):
            starts.append(index)
            extents.append("1")
            continue
        placed = placed_vector(index, resolve)
        if placed is None:
            return None
        vector, result_axis = placed
        if result_axis <= last_axis:
            return None  # transposed: TMA boxes keep the tensor's axis order
        last_axis = result_axis
        run = run_of(vector, resolve)
        if run is None:
            return None
        start, length = run
        starts.append(start)
        extents.append(length)
        shape.append(length)
        runs[run_key(start, length)] = axis
    if not shape:
        return None  # a scalar access
    bounded: set[int] = set()
    if access.mask is not None and not bounds_only(resolve(access.mask), runs, tensor, sizes, resolve, bounded):
        return None
    axes = sorted(runs.values())
    first = axes[0]
    # fold the leading scalar axes into the first run when it is unmasked and no scalar axis follows it
    folded = first if first > 0 and first not in bounded and axes == list(range(first, len(extents))) else 0
    return starts, extents, shape, folded


def run_key(start: ir.Value | None, length: str) -> tuple:
    """Runs written twice (`arange(32)` in the index and again in the mask) are the same run."""
    return (None if start is None else start.id, length)


def is_zero(value: ir.Value) -> bool:
    return value.op is not None and value.op.kind == "const" and value.op.attrs.get("value") == 0


def placed_vector(index: ir.Value, resolve) -> tuple[ir.Value, int] | None:
    """`v[:, None]`-style placement of a 1-D vector: (the vector, the access axis it lies on)."""
    shape = index.type.shape
    if len(shape) == 1:
        return index, 0
    op = index.op
    if op is None or op.kind != "expand_dims":
        return None
    inner = resolve(op.operands[0])
    if len(getattr(inner.type, "shape", ())) != 1:
        return None
    kept = [a for a in range(len(shape)) if a not in op.attrs["axes"]]
    return (inner, kept[0]) if len(kept) == 1 else None


def run_of(vector: ir.Value, resolve) -> tuple[ir.Value | None, str] | None:
    """`start + arange(n)`, `arange(n) + start` or `arange(n)`: (start or None, n as a constant expression)."""
    op = vector.op
    if op is None:
        return None
    if op.kind == "arange":
        return None, op.attrs.get("n_expr") or str(op.attrs["n"])
    if op.kind == "binary" and op.attrs["op"] == "+":
        a, b = (resolve(v) for v in op.operands)
        for start, ramp in ((a, b), (b, a)):
            if isinstance(start.type, ScalarT) and ramp.op is not None and ramp.op.kind == "arange":
                return start, ramp.op.attrs.get("n_expr") or str(ramp.op.attrs["n"])
    return None


def bounds_only(
    mask: ir.Value, runs: dict[tuple, int], tensor: TensorT, sizes: dict[int, str], resolve, bounded: set[int]
) -> bool:
    """Whether the mask is an AND of `run < dimension` terms, each bounding a run by its whole tensor axis
    (the axes it bounds are added to `bounded`)."""
    op = mask.op
    if op is None:
        return False
    if op.kind == "binary" and op.attrs["op"] == "&":
        return all(bounds_only(resolve(v), runs, tensor, sizes, resolve, bounded) for v in op.operands)
    if op.kind == "expand_dims":
        return bounds_only(resolve(op.operands[0]), runs, tensor, sizes, resolve, bounded)
    if op.kind != "compare" or op.attrs["op"] != "<":
        return False
    run, bound = (resolve(v) for v in op.operands)
    found = run_of(run, resolve) if len(getattr(run.type, "shape", ())) == 1 else None
    axis = None if found is None else runs.get(run_key(*found))
    if axis is None:
        return False
    dim = tensor.shape[axis]
    bounded.add(axis)
    return dim.symbol is not None and dim.offset == 0 and sizes.get(bound.id) == dim.symbol
