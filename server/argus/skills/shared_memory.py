"""The shared memory Triton's pipeliner allocates for a loop: every tile the loop loads and feeds to a `dot`,
kept in `num_stages` buffers.

The gate's sm_90 compile of examples/buggy/matmul_next_k.argus (fixed) measured exactly these figures: 144 KiB
at 3 stages and BK = 64, 192 KiB at 4 stages, and 288 KiB at BK = 128, which it refused (sm_90 allows 232,448
bytes per program). Buffers outside loops (an epilogue's) are not counted, so a skill this estimate allows can
still be refused by the compile gate, which stays the judge.
"""

from __future__ import annotations

import math

from argus.dsl import ir
from argus.dsl.types import TileT

# sm_90: at most 227 KiB of shared memory per program (232,448 bytes), the H200's and H100's limit.
SHARED_MEMORY_LIMIT = 227 * 1024
DEFAULT_NUM_STAGES = 3  # Triton's default when `policy` does not say
PASS_THROUGH = {"cast", "trans", "expand_dims", "reshape", "broadcast_to", "tag", "hint"}


def pipelined_bytes(kernel: ir.KernelIR) -> int | None:
    """Shared memory one pipeline stage needs: the bytes of every tile a loop loads and feeds to a `dot`
    (None when no loop has such a dot, so there is nothing to pipeline)."""
    found = False
    total = 0
    for op in ir.walk_ops(kernel.body):
        if op.kind != "for":
            continue
        inside = {id(o) for region in op.regions for o in ir.walk_ops(region)}
        for dot in (o for region in op.regions for o in ir.walk_ops(region) if o.kind == "dot"):
            for operand in dot.operands[:2]:
                if loaded_in(operand, inside) and isinstance(operand.type, TileT):
                    found = True
                    total += math.prod(d.value for d in operand.type.shape) * max(operand.type.dtype.bits, 8) // 8
    return total if found else None


def loaded_in(value: ir.Value, ops: set[int]) -> bool:
    while value.op is not None and value.op.kind in PASS_THROUGH and value.op.operands:
        value = value.op.operands[0]
    return value.op is not None and value.op.kind == "load" and id(value.op) in ops


def num_stages(kernel: ir.KernelIR) -> int:
    setting = kernel.policy.get("num_stages")
    return int(setting.value) if setting is not None else DEFAULT_NUM_STAGES


def kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB"
