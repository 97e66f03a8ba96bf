"""fp32 matrix products the way GPU kernels compute them, emulated on the CPU with torch: the summation orders
of an fp32 GEMM (cuBLAS's per-element FMA chain, split-K, the CPU BLAS), and the tensor-core input precisions
Triton's `dot` offers for f32 operands (tf32, tf32x3, bf16x3, bf16x6, bf16). The gate's tolerance tests and
bench/fp32_accuracy.py (which prints the table in docs/gate.md) share it.

How each precision is emulated (Triton 3.x, lib/Dialect/TritonGPU/Transforms/F32DotTC.cpp and BF16DotTC.cpp):

- `ieee`: one fused multiply-add per k into an fp32 accumulator, the inner loop of cuBLAS's fp32 SGEMM and
  of Triton's fp32 `dot` without tensor cores: every partial sum is rounded once.
- `tf32`: the tensor core reads the f32 bits of each operand as tf32, dropping the low 13 mantissa bits
  (truncation, not rounding: Triton's docstring warns that it "may bias the result"); products of tf32
  numbers are exact in f32.
- `tf32_rn`: the same with the operands rounded to nearest first (`cvt.rna.tf32.f32`), for comparison.
- `tf32x3`: big = rna(x), small = x - big (exact), and three tf32 products accumulated in this order:
  small·big, big·small, big·big (small·small is dropped); small is truncated again when the tensor core reads it.
- `bf16x3`: hi = bf16(x), mid = bf16(x - hi) (round to nearest even), products mid·hi, hi·mid, hi·hi summed
  from zero and added to the accumulator; `bf16x6` adds a third part lo and the products lo·hi, mid·mid,
  hi·lo; `bf16`: hi only.

A tensor-core instruction (m16n8k8 for tf32, k16 for bf16) is modelled as exact products summed exactly and
rounded once into the fp32 accumulator: `acc = f32(acc + sum of its k products)`. Real hardware may lose a
little more inside the instruction; the H200 numbers in issue 16 (tf32: about 7e-4; tf32x3: 5e-6) match
these emulations (docs/gate.md).
"""

from __future__ import annotations

import itertools

import torch

PRECISIONS = ("ieee", "tf32", "tf32_rn", "tf32x3", "bf16x3", "bf16x6", "bf16")
MMA_K = {"tf32": 8, "tf32_rn": 8, "tf32x3": 8, "bf16x3": 16, "bf16x6": 16, "bf16": 16}


def tf32(x: torch.Tensor, rounding: str = "truncate") -> torch.Tensor:
    """x (f32) with its mantissa cut to tf32's 10 bits: truncated (what the tensor core does with raw f32
    bits) or rounded to nearest, ties away from zero (`cvt.rna.tf32.f32`)."""
    bits = x.contiguous().view(torch.int32)
    if rounding == "nearest":
        bits = bits + 0x1000  # half a tf32 ulp on the magnitude (sign-magnitude: ties go away from zero)
    return (bits & ~0x1FFF).view(torch.float32)


def bf16(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.bfloat16).to(torch.float32)


def parts(x: torch.Tensor, precision: str) -> list[torch.Tensor]:
    """The f32 tensors a precision multiplies in place of x, as the tensor core sees them."""
    if precision == "tf32":
        return [tf32(x)]
    if precision == "tf32_rn":
        return [tf32(x, "nearest")]
    if precision == "tf32x3":
        big = tf32(x, "nearest")
        return [big, tf32(x - big)]
    if precision in ("bf16", "bf16x3", "bf16x6"):
        count = {"bf16": 1, "bf16x3": 2, "bf16x6": 3}[precision]
        result, rest = [], x
        for _ in range(count):
            part = bf16(rest)
            result.append(part)
            rest = rest - part
        return result
    raise ValueError(f"no emulation for {precision!r}")


# (part of a, part of b) in the order the decomposition accumulates them; 0 is the big part
PAIRS = {
    "tf32": [(0, 0)],
    "tf32_rn": [(0, 0)],
    "tf32x3": [(1, 0), (0, 1), (0, 0)],
    "bf16": [(0, 0)],
    "bf16x3": [(1, 0), (0, 1), (0, 0)],
    "bf16x6": [(2, 0), (1, 1), (0, 2), (1, 0), (0, 1), (0, 0)],
}
FROM_ZERO = ("bf16", "bf16x3", "bf16x6")  # BF16DotTC sums the products from zero, then adds the accumulator


def fma_chain(a: torch.Tensor, b: torch.Tensor, start: int = 0, stop: int | None = None) -> torch.Tensor:
    """sum_k a[:, k] b[k, :] for k in start..stop, one FMA per k into an fp32 accumulator (the product of two
    f32 numbers is exact in f64, so f32(acc + a*b) computed in f64 is a fused multiply-add)."""
    stop = a.shape[1] if stop is None else stop
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float32, device=a.device)
    a64, b64 = a.double(), b.double()
    for k in range(start, stop):
        acc = torch.addr(acc.double(), a64[:, k], b64[k]).float()
    return acc


def matmul(a: torch.Tensor, b: torch.Tensor, method: str) -> torch.Tensor:
    """a @ b for f32 a [M, K] and b [K, N], computed the way `method` names:

    fp32_torch   torch's own fp32 matmul (on the CPU: the BLAS's blocked kernels)
    fp32_fma     one FMA per k into a per-element accumulator (cuBLAS's SGEMM inner loop; Triton `ieee`)
    fp32_splitk4 four FMA chains over quarters of K, added at the end (cuBLAS's split-K)
    fp64         the exact sum in f64, rounded to f32 once (the best an fp32 output can be)
    ieee, tf32, tf32_rn, tf32x3, bf16x3, bf16x6, bf16: Triton's input precisions (module docstring)
    """
    if method == "fp32_torch":
        return a @ b
    if method == "fp64":
        return (a.double() @ b.double()).float()
    if method in ("fp32_fma", "ieee"):
        return fma_chain(a, b)
    if method == "fp32_splitk4":
        k = a.shape[1]
        cuts = [k * i // 4 for i in range(5)]
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float32, device=a.device)
        for lo, hi in itertools.pairwise(cuts):
            acc = acc + fma_chain(a, b, lo, hi)
        return acc
    return tensor_core(a, b, method)


def tensor_core(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    pa, pb = parts(a, precision), parts(b.t(), precision)
    pa = [p.double() for p in pa]
    pb = [p.t().double() for p in pb]
    step = MMA_K[precision]
    acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float32, device=a.device)
    for k0 in range(0, a.shape[1], step):
        k1 = min(k0 + step, a.shape[1])
        block = torch.zeros_like(acc) if precision in FROM_ZERO else acc
        for i, j in PAIRS[precision]:
            block = (block.double() + pa[i][:, k0:k1] @ pb[j][k0:k1]).float()
        acc = (acc + block) if precision in FROM_ZERO else block
    return acc


def inputs(
    m: int, k: int, n: int, distribution: str, seed: int, device: str = "cpu"
) -> tuple[torch.Tensor, torch.Tensor]:
    """randn (the gate's default inputs) or uniform in [0, 1) (all positive: no cancellation, errors add up),
    made on the CPU's generator so that every device gets the same numbers."""
    generator = torch.Generator().manual_seed(seed)
    if distribution == "randn":
        a, b = torch.randn(m, k, generator=generator), torch.randn(k, n, generator=generator)
    elif distribution == "uniform":
        a, b = torch.rand(m, k, generator=generator), torch.rand(k, n, generator=generator)
    else:
        raise ValueError(distribution)
    return a.to(device), b.to(device)


def relative_error(got: torch.Tensor, expected: torch.Tensor) -> torch.Tensor:
    """|got - expected| / (1 + |expected|), the measure the gate's tolerance bounds."""
    e = expected.double()
    return (got.double() - e).abs() / (1 + e.abs())
