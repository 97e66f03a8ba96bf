"""How far fp32 matrix products computed different ways land from each other, by reduction length K. Prints a table.

    .venv/bin/python bench/fp32_accuracy.py [--k 256,1024,4096,8192] [--mn 256] [--seed 0] [--threads 1]
                                            [--methods fp32_fma,tf32,...] [--distributions randn,uniform]
    python3 bench/fp32_accuracy.py --device cuda --triton --mn 4096      # on a GPU: cuBLAS and Triton too
    .venv/bin/python bench/fp32_accuracy.py --spreads --k 256,4096 --mn 128   # the error model's constants

For each input distribution (randn: the gate's default inputs; uniform in [0, 1): all positive, no
cancellation) and each K, it makes A [MN, K] and B [K, MN] and computes A @ B with every method of
tests/gate/fp32_emulation.py: fp32 summation orders (torch's own, cuBLAS's per-element FMA chain, split-K,
f64 rounded once) and Triton's tensor-core input precisions emulated bit for bit on their operands
(tf32 truncated as the tensor core reads raw f32, tf32 rounded, tf32x3, bf16x3, bf16x6, bf16); with
`--triton` (a GPU) also a plain Triton GEMM at each input precision. Columns:

    vs f64      max over the elements of |got - exact| / (1 + |exact|), exact = the f64 product
    vs f32 ref  the same against torch's fp32 A @ B (on a GPU: cuBLAS, TF32 off): what the gate compares with
                (the reference computes in the output dtype)
    fail 1e-4   elements over the old rule, |d| > 1e-4 (1 + |ref|), against the f32 ref
    / tol       the new rule against the f32 ref: max of |d| / (atol + tol |ref|), tol = 1e-4 and
                atol = max(tol, 4 u K) (docs/gate.md); at most 1 passes
    model       argus.dsl.accuracy's expected worst error for the precision at K, near zero for randn (compare
                with `vs f32 ref`) and relative for uniform (empty where argus does not import)

and, last, three bugs in an fp32 FMA-chain GEMM, against the same reference: one k term dropped, one k term
counted twice, one element of the output taken from its neighbour. `--spreads` prints instead the spreads the
error model is built from (its docstring). `--threads` limits torch's CPU threads (the machines here are
shared).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "gate"))
sys.path.insert(0, str(ROOT / "server"))
sys.path.insert(0, str(ROOT / "server" / "argus" / "gate" / "runner"))
import fp32_emulation as emulation  # noqa: E402  (shared with the gate's tests on purpose)
from gate_correct import tolerance  # noqa: E402  (the runner's own rule)

try:
    from argus.dsl import accuracy
except ImportError:  # a GPU machine with torch and triton only: no model column
    accuracy = None

METHODS = ["fp32_torch", "fp32_fma", "fp32_splitk4", "fp64", *emulation.PRECISIONS[1:]]
TRITON_PRECISIONS = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
KERNELS: dict = {}


def triton_matmul(a: torch.Tensor, b: torch.Tensor, precision: str) -> torch.Tensor:
    """a @ b by a plain Triton GEMM (128 x 128 tiles, BK = 32) at one input precision: the real thing on a GPU."""
    import triton
    import triton.language as tl

    if "gemm" not in KERNELS:

        @triton.jit
        def gemm(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PREC: tl.constexpr):
            rm = tl.program_id(0) * BM + tl.arange(0, BM)
            rn = tl.program_id(1) * BN + tl.arange(0, BN)
            acc = tl.zeros((BM, BN), tl.float32)
            for k0 in range(0, K, BK):
                rk = k0 + tl.arange(0, BK)
                x = tl.load(a + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
                y = tl.load(b + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
                acc = tl.dot(x, y, acc, input_precision=PREC)
            tl.store(c + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

        KERNELS["gemm"] = gemm
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=torch.float32, device=a.device)
    grid = (triton.cdiv(m, 128), triton.cdiv(n, 128))
    gemm = KERNELS["gemm"]
    gemm[grid](a.contiguous(), b.contiguous(), c, m, n, k, BM=128, BN=128, BK=32, PREC=precision, num_warps=8)
    return c


BUGS = ("dropped k term", "doubled k term", "wrong element")


def bug(a: torch.Tensor, b: torch.Tensor, which: str) -> torch.Tensor:
    """An fp32 FMA-chain GEMM with one real bug: the last k term dropped (a loop bound off by one), the first
    counted twice, or element [0, 0] taken from [0, 1] (a wrong index)."""
    k = a.shape[1]
    if which == "dropped k term":
        return emulation.fma_chain(a, b, 0, k - 1)
    c = emulation.fma_chain(a, b)
    if which == "doubled k term":
        return (c.double() + a[:, :1].double() @ b[:1].double()).float()
    c[0, 0] = c[0, 1]
    return c


def model_error(method: str, distribution: str, k: int) -> str:
    """argus.dsl.accuracy's expected worst error: near zero for randn inputs, relative for positive ones."""
    name = {"fp32_fma": "ieee"}.get(method, method.removeprefix("triton_"))
    if accuracy is None or name not in accuracy.PRECISIONS:
        return ""
    expected = accuracy.expected_error(name, "f32", k)
    return f"{expected.absolute if distribution == 'randn' else expected.relative:.1e}"


def row(method, distribution, k, got, exact, ref) -> list[str]:
    vs64 = float(emulation.relative_error(got, exact).max())
    d = emulation.relative_error(got, ref)
    tol, atol = tolerance("float32", k)
    error = (got.double() - ref.double()).abs()
    used = float((error / (atol + tol * ref.double().abs())).max())
    return [
        method,
        distribution,
        str(k),
        f"{vs64:.1e}",
        f"{float(d.max()):.1e}",
        str(int((d > 1e-4).sum())),
        f"{used:.2f}",
        model_error(method, distribution, k),
    ]


def spreads(ks: list[int], mn: int, seed: int, device: str) -> list[list[str]]:
    """The error model's constants (argus.dsl.accuracy), per method and K: the spread (standard deviation over
    the elements) of the error for randn inputs, over u K (accumulation: 0.30 for an FMA chain) and over sqrt(K)
    with the parts' products summed exactly (input rounding alone: `rho`), and for uniform inputs the mean
    relative error (`bias`) and its spread times sqrt(K) (`rho` again)."""
    u = 2.0**-24
    rows = []
    for k in ks:
        a, b = emulation.inputs(mn, k, mn, "randn", seed + k, device)
        p, q = emulation.inputs(mn, k, mn, "uniform", seed + k, device)
        exact, exact_pq = a.double() @ b.double(), p.double() @ q.double()
        for method in ("fp32_fma", "fp32_torch", *emulation.PRECISIONS[1:]):
            spread = float((emulation.matmul(a, b, method).double() - exact).std()) / (u * k)
            rho = bias = rho_positive = ""
            if method in emulation.PAIRS:
                parts_a = [x.double() for x in emulation.parts(a, method)]
                parts_b = [x.t().double() for x in emulation.parts(b.t(), method)]
                rounded = sum(parts_a[i] @ parts_b[j] for i, j in emulation.PAIRS[method])
                rho = f"{float((rounded - exact).std()) / k**0.5:.2e}"
                parts_p = [x.double() for x in emulation.parts(p, method)]
                parts_q = [x.t().double() for x in emulation.parts(q.t(), method)]
                relative = sum(parts_p[i] @ parts_q[j] for i, j in emulation.PAIRS[method]) / exact_pq - 1
                bias, rho_positive = f"{float(relative.mean()):.1e}", f"{float(relative.std()) * k**0.5:.2e}"
            rows.append([method, str(k), f"{spread:.3f}", rho, bias, rho_positive])
    return rows


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k", default="256,1024,4096,8192")
    parser.add_argument("--mn", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--distributions", default="randn,uniform")
    parser.add_argument("--no-bugs", action="store_true")
    parser.add_argument("--device", default="cpu", help="cpu, or cuda: emulations there too, fp32_torch is cuBLAS")
    parser.add_argument("--triton", action="store_true", help="also Triton's own dot at each precision (a GPU)")
    parser.add_argument("--spreads", action="store_true", help="print the error model's constants instead")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32_torch is fp32
    ks = [int(k) for k in args.k.split(",")]
    methods = args.methods.split(",")
    if args.spreads:
        print(f"error spreads, A [{args.mn}, K], B [K, {args.mn}], seed {args.seed}; torch {torch.__version__}")
        header = ["method", "K", "spread / uK", "rho (randn)", "bias (uniform)", "rho (uniform)"]
        print_table(header, spreads(ks, args.mn, args.seed, args.device))
        return 0
    header = ["method", "inputs", "K", "vs f64", "vs f32 ref", "fail 1e-4", "/ tol", "model"]
    rows = []
    started = time.perf_counter()
    for distribution in args.distributions.split(","):
        for k in ks:
            a, b = emulation.inputs(args.mn, k, args.mn, distribution, args.seed + k, args.device)
            exact = a.double() @ b.double()
            ref = a @ b
            for method in methods:
                rows.append(row(method, distribution, k, emulation.matmul(a, b, method), exact, ref))
            for precision in TRITON_PRECISIONS if args.triton else ():
                rows.append(row(f"triton_{precision}", distribution, k, triton_matmul(a, b, precision), exact, ref))
            if not args.no_bugs:
                for which in BUGS:
                    rows.append(row(which, distribution, k, bug(a, b, which), exact, ref))
            print(f"[fp32_accuracy] {distribution} K={k} done ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    where = torch.cuda.get_device_name() if args.device == "cuda" else platform.processor() or platform.machine()
    print(
        f"fp32 A @ B, A [{args.mn}, K], B [K, {args.mn}], seed {args.seed}; torch {torch.__version__}, {where}, "
        f"{args.threads} thread(s)"
    )
    print_table(header, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
