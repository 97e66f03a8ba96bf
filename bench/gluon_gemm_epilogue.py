"""Issue 18: a persistent GEMM whose bias + GELU epilogue runs in its own warps, written in Gluon.

The Triton experts (`skills/experts/gemm_persistent.argus`) run the epilogue after the K loop in the warps
that issue the MMAs, so the tensor cores idle while 128 x 256 exact GELUs are computed (docs/perf.md: 10 %
of the time). Triton 3.6 cannot give those warps a partner; Gluon can. Two partitions share each SM:

- the MMA partition (the kernel's 8 warps, two warpgroups on one 128 x 256 accumulator) issues the TMA loads
  of A and B into a ring of stages, running ahead across tiles, issues wgmma, hands each finished tile to the
  epilogue as f16 in shared memory, and goes straight on to its next tile's K loop;
- the epilogue partition (4 warps) reads the handed-off tile in row slices, adds the bias, applies the
  GELU and stores C, while the MMA partition computes the next tile.

Twelve warps, because ptxas caps every partition at 65536 / (32 x warps) registers: with 16 (a separate
1-warp load partition takes a fourth warpgroup) the cap is 128, under the 154 the 128 x 256 wgmma needs.

Numerics, both inside the f16 tolerance and measured by the checks below: the hand-off rounds A @ B to f16
before the bias is added (the expert adds the bias to the f32 accumulator), and the default GELU takes a
branch-free erf (|error| <= 1.5e-7; libdevice's, which branches per element, is the `bias_gelu` variant).
Measured on H100s (docs/perf.md, issue 18): bias + GELU 0.95-1.01x of cuBLAS, the Triton expert 0.90-0.97x.

On the device (torch and triton only):   python3 bench/gluon_gemm_epilogue.py --out "$OUT"
Here, the sm_90 compile report only, from a Python with Triton 3.6 and a CPU torch (Gluon's API moves
between Triton releases; the device has 3.6):
    python3 -m venv /tmp/v36 && /tmp/v36/bin/pip install triton==3.6.0 torch==2.13.0
    /tmp/v36/bin/python bench/gluon_gemm_epilogue.py --compile-only
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma, warpgroup_mma, warpgroup_mma_wait
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

ROOT = Path(__file__).resolve().parent.parent


@gluon.jit
def _tile_of(t, tiles_m, tiles_n, GROUP_M: gl.constexpr):
    """Triton's grouped order: GROUP_M row tiles walk the column tiles together, for L2 reuse of B."""
    per_group = GROUP_M * tiles_n
    first_m = (t // per_group) * GROUP_M
    rows = min(tiles_m - first_m, GROUP_M)
    pm = first_m + (t % per_group) % rows
    pn = (t % per_group) // rows
    return pm, pn


@gluon.jit
def _load_step(
    g,
    lk,
    lj,
    pm,
    pn,
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    ready,
    K,
    total,
    tiles_m,
    tiles_n,
    GROUP_M: gl.constexpr,
    NUM_SMS: gl.constexpr,
):
    """The TMA loads of this program's operand step g (K offset lk of its tile lj, at tile (pm, pn)) into ring
    slot g % STAGES, nothing past its last step; returns the cursor of step g + 1. The cursor moves by adds, and
    decodes a tile only when it crosses into the next one: no division in the K loop."""
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    s = g % STAGES
    live = g < total
    mbarrier.expect(ready.index(s), a_desc.block_type.nbytes + b_desc.block_type.nbytes, pred=live)
    tma.async_copy_global_to_shared(a_desc, [pm * BM, lk], ready.index(s), a_bufs.index(s), pred=live)
    tma.async_copy_global_to_shared(b_desc, [lk, pn * BN], ready.index(s), b_bufs.index(s), pred=live)
    lk += BK
    if lk >= K:
        lk = 0
        lj += 1
        pm, pn = _tile_of(gl.program_id(0) + lj * NUM_SMS, tiles_m, tiles_n, GROUP_M)
    return g + 1, lk, lj, pm, pn


@gluon.jit
def _mma_partition(
    a_desc,
    b_desc,
    a_bufs,
    b_bufs,
    c_buf,
    ready,
    c_ready,
    c_empty,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    stride_cm,
    GROUP_M: gl.constexpr,
    NUM_SMS: gl.constexpr,
    SUB_M: gl.constexpr,
    MODE: gl.constexpr,
    TAIL_CHUNKS: gl.constexpr,
    num_warps: gl.constexpr,
):
    STAGES: gl.constexpr = a_bufs.type.shape[0]
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[1]
    # one m64nBNk16 wgmma per warpgroup: the 8 warps split the 128 rows, each warp 16 of them
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(
        version=[3, 0], warps_per_cta=[num_warps, 1], instr_shape=[16, BN, 16]
    )
    tiles_m = gl.cdiv(M, BM)
    tiles_n = gl.cdiv(N, BN)
    k_steps = gl.cdiv(K, BK)
    my_tiles = gl.cdiv(tiles_m * tiles_n - gl.program_id(0), NUM_SMS)
    total = my_tiles * k_steps
    g, lk, lj = 0, 0, 0  # the load cursor: STAGES - 1 steps ahead of the MMAs
    lpm, lpn = _tile_of(gl.program_id(0), tiles_m, tiles_n, GROUP_M)
    for _p in gl.static_range(STAGES - 1):
        g, lk, lj, lpm, lpn = _load_step(
            g, lk, lj, lpm, lpn, a_desc, b_desc, a_bufs, b_bufs, ready, K, total, tiles_m, tiles_n, GROUP_M, NUM_SMS
        )
    it = 0  # operand steps consumed, over all tiles: the ring's slot and phase
    for j in range(my_tiles):
        acc = gl.zeros((BM, BN), gl.float32, acc_layout)
        for _k in range(k_steps):
            s = it % STAGES
            mbarrier.wait(ready.index(s), (it // STAGES) & 1)
            acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s), acc, is_async=True)
            # one wgmma left in flight: the one before it is done, so its slot takes step it + STAGES - 1,
            # which may be the next tile's (the loads run ahead across tiles, under the hand-off)
            acc, _a, _b = warpgroup_mma_wait(1, deps=(acc, a_bufs.index(s), b_bufs.index(s)))
            g, lk, lj, lpm, lpn = _load_step(
                g, lk, lj, lpm, lpn, a_desc, b_desc, a_bufs, b_bufs, ready, K, total, tiles_m, tiles_n, GROUP_M, NUM_SMS
            )
            it += 1
        acc = warpgroup_mma_wait(0, deps=(acc,))
        mbarrier.wait(c_empty, (j & 1) ^ 1)  # the epilogue has read the previous tile
        c_buf.store(acc.to(gl.float16))
        mbarrier.arrive(c_ready)
    if TAIL_CHUNKS > 0 and my_tiles > 0:
        # nothing overlaps the last tile's epilogue: these 8 warps take its first TAIL_CHUNKS row slices
        rows: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [num_warps, 1], [1, 0])
        pm, rn, bias = _tile_columns(my_tiles - 1, tiles_m, tiles_n, bias_ptr, N, BN, rows, GROUP_M, NUM_SMS)
        for r in gl.static_range(TAIL_CHUNKS):
            _epilogue_rows(c_buf, r, pm, rn, bias, c_ptr, M, N, stride_cm, rows, SUB_M, MODE)


@gluon.jit
def _tile_columns(
    j, tiles_m, tiles_n, bias_ptr, N, BN: gl.constexpr, rows: gl.constexpr, GROUP_M: gl.constexpr, NUM_SMS: gl.constexpr
):
    """This program's tile j of its walk, for an epilogue in the layout `rows`: its row tile, its columns and
    the bias over them (f32, 0 past N)."""
    pm, pn = _tile_of(gl.program_id(0) + j * NUM_SMS, tiles_m, tiles_n, GROUP_M)
    rn = pn * BN + gl.arange(0, BN, layout=gl.SliceLayout(0, rows))
    return pm, rn, gl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(gl.float32)


@gluon.jit
def _erf_branch_free(x):
    """erf by Abramowitz and Stegun 7.1.26 (|error| <= 1.5e-7): one reciprocal, one exp2, five FMAs and no
    branch. libdevice's erff branches on |x| for each element, so a warp computes its elements one after
    another; with 4 warps an SM for the whole epilogue, that serial latency is what a tile's GELU costs."""
    a = gl.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = 1.0 - poly * gl.exp2(-a * a * 1.4426950408889634)
    return gl.where(x < 0.0, -y, y)


@gluon.jit
def _epilogue_rows(
    c_buf,
    r: gl.constexpr,
    pm,
    rn,
    bias,
    c_ptr,
    M,
    N,
    stride_cm,
    rows: gl.constexpr,
    SUB_M: gl.constexpr,
    MODE: gl.constexpr,
):
    """Row slice r of the handed-off tile: + bias (MODE >= 1), exact GELU (MODE 2 with libdevice's erf, 3 with
    a branch-free one), stored to C; MODE 0 does nothing (timing only: the K loops with no epilogue at all)."""
    BM: gl.constexpr = c_buf.type.shape[0]
    if MODE > 0:
        z = c_buf.slice(r * SUB_M, SUB_M, dim=0).load(rows).to(gl.float32) + bias[None, :]
        if MODE == 2:
            z = 0.5 * z * (1.0 + gl.erf(z * 0.7071067811865476))
        if MODE == 3:
            z = 0.5 * z * (1.0 + _erf_branch_free(z * 0.7071067811865476))
        rm = pm * BM + r * SUB_M + gl.arange(0, SUB_M, layout=gl.SliceLayout(1, rows))
        mask = (rm[:, None] < M) & (rn[None, :] < N)
        gl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], z.to(gl.float16), mask=mask)


@gluon.jit
def _epilogue_partition(
    c_buf,
    c_ready,
    c_empty,
    c_ptr,
    bias_ptr,
    M,
    N,
    stride_cm,
    GROUP_M: gl.constexpr,
    NUM_SMS: gl.constexpr,
    SUB_M: gl.constexpr,
    MODE: gl.constexpr,
    TAIL_CHUNKS: gl.constexpr,
):
    BM: gl.constexpr = c_buf.type.shape[0]
    BN: gl.constexpr = c_buf.type.shape[1]
    # 4 warps, 8 f16 (16 bytes) a thread along a row: coalesced stores of whole 512-byte rows
    rows: gl.constexpr = gl.BlockedLayout([1, 8], [1, 32], [4, 1], [1, 0])
    tiles_m = gl.cdiv(M, BM)
    tiles_n = gl.cdiv(N, BN)
    my_tiles = gl.cdiv(tiles_m * tiles_n - gl.program_id(0), NUM_SMS)
    for j in range(my_tiles):
        pm, rn, bias = _tile_columns(j, tiles_m, tiles_n, bias_ptr, N, BN, rows, GROUP_M, NUM_SMS)
        mbarrier.wait(c_ready, j & 1)
        last = j == my_tiles - 1
        for r in gl.static_range(BM // SUB_M):
            if not last or r >= TAIL_CHUNKS:
                _epilogue_rows(c_buf, r, pm, rn, bias, c_ptr, M, N, stride_cm, rows, SUB_M, MODE)
        mbarrier.arrive(c_empty)


@gluon.jit
def gemm_epilogue_ws_kernel(
    a_desc,
    b_desc,
    c_ptr,
    bias_ptr,
    M,
    N,
    K,
    stride_cm,
    GROUP_M: gl.constexpr,
    NUM_SMS: gl.constexpr,
    STAGES: gl.constexpr,
    SUB_M: gl.constexpr,
    MODE: gl.constexpr,
    TAIL_CHUNKS: gl.constexpr,
    EPILOGUE_REGS: gl.constexpr,
    num_warps: gl.constexpr,
):
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
    # 12 warps in all: ptxas caps every partition at 65536 / 384 = 168 registers, enough for the 128 x 256
    # accumulator over 8 warps; a fourth warpgroup (a separate load partition) would cap it at 128, too few
    gl.warp_specialize(
        [
            (
                _mma_partition,
                (
                    a_desc,
                    b_desc,
                    a_bufs,
                    b_bufs,
                    c_buf,
                    ready,
                    c_ready,
                    c_empty,
                    c_ptr,
                    bias_ptr,
                    M,
                    N,
                    K,
                    stride_cm,
                    GROUP_M,
                    NUM_SMS,
                    SUB_M,
                    MODE,
                    TAIL_CHUNKS,
                    num_warps,
                ),
            ),
            (
                _epilogue_partition,
                (c_buf, c_ready, c_empty, c_ptr, bias_ptr, M, N, stride_cm, GROUP_M, NUM_SMS, SUB_M, MODE, TAIL_CHUNKS),
            ),
        ],
        [4],
        [EPILOGUE_REGS],
    )


# TAIL_CHUNKS: of the last tile's 8 row slices, how many the MMA partition's 8 warps take (the rest go to the
# epilogue's 4): 5 of 8 splits that tile's epilogue about as 8 : 4 warps
CONFIG = {
    "BM": 128,
    "BN": 256,
    "BK": 64,
    "STAGES": 3,
    "GROUP_M": 8,
    "SUB_M": 16,
    "EPILOGUE_REGS": 120,
    "TAIL_CHUNKS": 5,
}
MODES = {"none": 0, "bias": 1, "bias_gelu": 2, "bias_gelu_poly": 3}


def descriptors(A: torch.Tensor, B: torch.Tensor, config: dict) -> tuple:
    BM, BN, BK = config["BM"], config["BN"], config["BK"]
    a_layout = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.float16)
    b_layout = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.float16)
    return (TensorDescriptor.from_tensor(A, [BM, BK], a_layout), TensorDescriptor.from_tensor(B, [BK, BN], b_layout))


def kernel_arguments(A, B, bias, C, mode: str, config: dict, num_sms: int) -> dict:
    """The kernel's arguments by name, for a launch and for the compile report alike."""
    a_desc, b_desc = descriptors(A, B, config)
    return {
        "a_desc": a_desc,
        "b_desc": b_desc,
        "c_ptr": C,
        "bias_ptr": bias,
        "M": A.shape[0],
        "N": B.shape[1],
        "K": A.shape[1],
        "stride_cm": C.stride(0),
        "GROUP_M": config["GROUP_M"],
        "NUM_SMS": num_sms,
        "STAGES": config["STAGES"],
        "SUB_M": config["SUB_M"],
        "MODE": MODES[mode],
        "TAIL_CHUNKS": config["TAIL_CHUNKS"],
        "EPILOGUE_REGS": config["EPILOGUE_REGS"],
        "num_warps": 8,
    }


def launch(A, B, bias, C, mode: str, config: dict, num_sms: int) -> None:
    gemm_epilogue_ws_kernel[(num_sms,)](**kernel_arguments(A, B, bias, C, mode, config, num_sms))


# ---- here: the sm_90 compile report ------------------------------------------------------------------------------


def compile_only(config: dict) -> dict:
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource
    from triton.runtime.jit import mangle_type

    A = torch.empty(4096, 4096, dtype=torch.float16)
    values = kernel_arguments(A, A, A[0], A, "bias_gelu_poly", config, 132)
    fn = gemm_epilogue_ws_kernel
    signature, constexprs = {}, {}
    for index, param in enumerate(fn.params):
        if param.is_constexpr:
            signature[param.name] = "constexpr"
            constexprs[(index,)] = values[param.name]
        else:
            signature[param.name] = mangle_type(values[param.name])
    attrs = {(i,): [["tt.divisibility", 16]] for i, p in enumerate(fn.params) if p.name in ("c_ptr", "bias_ptr")}
    compiled = triton.compile(
        GluonASTSource(fn, signature, constexprs, attrs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": values["num_warps"]},
    )
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "kernel.ptx"
        ptx.write_text(compiled.asm["ptx"])
        ptxas = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "ptxas"
        done = subprocess.run(
            [str(ptxas), "-v", "--gpu-name=sm_90a", str(ptx), "-o", str(ptx) + ".o"],
            capture_output=True,
            text=True,
            check=True,
        )
    report = {
        key: [int(n) for n in re.findall(pattern, done.stderr)]
        for key, pattern in (("registers", r"Used (\d+) registers"), ("spill_stores", r"(\d+) bytes spill stores"))
    }
    return {
        **report,
        "shared_bytes": compiled.metadata.shared,
        "setmaxnreg": re.findall(r"setmaxnreg\.(\w+)\.sync\.aligned\.u32\s+(\d+)", compiled.asm["ptx"]),
    }


# ---- there: check and time ---------------------------------------------------------------------------------------


def check(mode: str, config: dict, num_sms: int, sizes: tuple[int, int, int], seed: int) -> float:
    """Relative error against the f32 reference on fresh random inputs, C poisoned with NaN first."""
    M, N, K = sizes
    g = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.randn(M, K, device="cuda", dtype=torch.float16, generator=g)
    B = torch.randn(K, N, device="cuda", dtype=torch.float16, generator=g)
    bias = torch.randn(N, device="cuda", dtype=torch.float16, generator=g)
    C = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    launch(A, B, bias, C, mode, config, num_sms)
    torch.cuda.synchronize()
    z = A.float() @ B.float() + bias.float()
    ref = torch.nn.functional.gelu(z) if mode.startswith("bias_gelu") else z
    if torch.isnan(C).any():
        return float("nan")
    return float((C.float() - ref).norm() / ref.norm())


def inputs(size: int) -> tuple:
    g = torch.Generator(device="cuda").manual_seed(size)
    A = torch.randn(size, size, device="cuda", dtype=torch.float16, generator=g)
    B = torch.randn(size, size, device="cuda", dtype=torch.float16, generator=g)
    bias = torch.randn(size, device="cuda", dtype=torch.float16, generator=g)
    return A, B, bias, torch.empty(size, size, device="cuda", dtype=torch.float16)


def time_size(size: int, variants: list, timer, num_sms: int, trials: int) -> list[dict]:
    """cuBLAS's plain GEMM before and after the variants (the card's drift within the size), each variant
    between, at size^3 on random inputs, with one timer."""
    A, B, bias, C = inputs(size)
    rows = [{"kernel": "torch.matmul (cuBLAS)", "size": size, **timer.time(lambda: torch.matmul(A, B), trials)}]
    for name, mode, config in variants:
        timed = timer.time(lambda mode=mode, config=config: launch(A, B, bias, C, mode, config, num_sms), trials)
        rows.append({"kernel": name, "size": size, **timed})
    rows.append(
        {"kernel": "torch.matmul (cuBLAS), again", "size": size, **timer.time(lambda: torch.matmul(A, B), trials)}
    )
    peer = min(rows[0]["ms_median"], rows[-1]["ms_median"])
    for row in rows:
        row["tflops"] = 2 * size**3 / (row["ms_median"] * 1e-3) / 1e12
        row["vs_cublas"] = peer / row["ms_median"]
    return rows


VARIANTS = [
    ("gluon_ws bias_gelu, poly erf", "bias_gelu_poly", dict(CONFIG)),
    ("gluon_ws bias_gelu, poly erf GROUP_M=16", "bias_gelu_poly", {**CONFIG, "GROUP_M": 16}),
    ("gluon_ws bias_gelu", "bias_gelu", dict(CONFIG)),
    ("gluon_ws bias_gelu, no tail split", "bias_gelu", {**CONFIG, "TAIL_CHUNKS": 0}),
    ("gluon_ws bias", "bias", dict(CONFIG)),
    ("gluon_ws no epilogue (timing only)", "none", dict(CONFIG)),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write results.json here")
    parser.add_argument("--compile-only", action="store_true", help="sm_90 registers, spills and shared memory")
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--one", help="launch this variant twice and stop (for ncu)")
    parser.add_argument("--size", type=int, default=4096, help="with --one: M = N = K")
    args = parser.parse_args()
    if args.compile_only:
        for sub_m, regs in ((32, 120), (16, 120), (16, 152)):
            config = {**CONFIG, "SUB_M": sub_m, "EPILOGUE_REGS": regs}
            print(f"SUB_M={sub_m} EPILOGUE_REGS={regs}", json.dumps(compile_only(config)))
        return

    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    if args.one:  # one variant at one size, launched twice: for ncu (--launch-skip 1 --launch-count 1)
        _, mode, config = next(v for v in VARIANTS if v[0] == args.one)
        A, B, bias, C = inputs(args.size)
        for _ in range(2):
            launch(A, B, bias, C, mode, config, num_sms)
        torch.cuda.synchronize()
        return
    sys.path.insert(0, str(ROOT / "server" / "argus" / "gate" / "runner"))
    from gate_profile import Timer  # the gate's timer: events, L2 flushed before each launch, median

    timer = Timer()
    rows, failures = [], []
    for mode in ("bias_gelu_poly", "bias_gelu", "bias"):
        for tail in (CONFIG["TAIL_CHUNKS"], 0):
            for sizes, seed in (((200, 136, 96), 1), ((1000, 520, 4000), 2), ((4000, 4000, 4000), 3)):
                err = check(mode, {**CONFIG, "TAIL_CHUNKS": tail}, num_sms, sizes, seed)
                ok = err == err and err < 2e-3
                print(f"check {mode} tail={tail} {sizes}: rel err {err:.2e} {'ok' if ok else 'FAILED'}", flush=True)
                if not ok:
                    failures.append((mode, tail, sizes, err))
    if failures:  # nothing is timed that computed a wrong result
        print(f"wrong results: {failures}")
    for size in (4096, 8192, 4000) if not failures else ():
        rows += time_size(size, VARIANTS, timer, num_sms, args.trials)
    print(f"\n{'kernel':34} {'size':>5} {'ms':>8} {'TFLOP/s':>8} {'vs cuBLAS':>9}")
    for row in rows:
        ratio = f"{row['vs_cublas']:.3f}x"
        print(f"{row['kernel']:34} {row['size']:>5} {row['ms_median']:8.4f} {row['tflops']:8.1f} {ratio:>9}")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        meta = {
            "device": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "triton": triton.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "config": CONFIG,
            "check_failures": failures,
        }
        (args.out / "gluon_gemm_epilogue.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
