"""What `input_precision` and `layout B: K` do to examples/fp32_gemm.argus at 4096^3 on one GPU, beside cuBLAS.

    python bench/fp32_operand_layout.py build DIR     here: the example's generated module, with and without its
                                                      `layout` line (argus build), into DIR
    python3 bench/fp32_operand_layout.py run DIR      on the GPU (torch and triton only): prints a JSON line per
                                                      measurement, then the markdown table

The run first asks Triton's JIT whether a stride argument equal to 1 becomes a compile-time constant (the
compiled kernel's constants, from a launch with contiguous tensors). Then, per input precision, it times the
full launcher (argument checks and the layout copy included; triton.testing.do_bench, median ms) with B stored
K-contiguous (a transposed view of [N, K] storage) and row-major ([K, N], N contiguous), each with and without
`layout B: K`, at the example's declared tiles; and a few other tile configurations at tf32x3. Errors are
max |got - ref| / (1 + |ref|) against an fp64 reference.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "fp32_gemm.argus"
PRECISIONS = ("ieee", "tf32x3", "tf32", "bf16x3", "bf16x6")
TILES = (
    dict(BM=128, BN=128, BK=32, num_warps=8, num_stages=3),
    dict(BM=128, BN=128, BK=64, num_warps=8, num_stages=2),
    dict(BM=128, BN=128, BK=64, num_warps=4, num_stages=3),
    dict(BM=64, BN=128, BK=64, num_warps=4, num_stages=4),
    dict(BM=128, BN=256, BK=64, num_warps=8, num_stages=2),
    dict(BM=256, BN=128, BK=64, num_warps=8, num_stages=2),
)


def build(out: Path) -> None:
    from argus.codegen import generate
    from argus.dsl.check import check_source

    out.mkdir(parents=True, exist_ok=True)
    text = EXAMPLE.read_text(encoding="utf-8")
    plain = re.sub(r"^[ \t]*layout .*\n", "", text, flags=re.MULTILINE)
    for variant, source in (("layout", text), ("plain", plain)):
        check = check_source(source)
        assert not check.has_errors, [d.message for d in check.diagnostics]
        (out / f"fp32_gemm_{variant}.py").write_text(generate(check, str(EXAMPLE)).source, encoding="utf-8")


def load(folder: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, folder / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Replay:
    """Stands in for the jit function: launches through it and keeps the compiled kernel."""

    def __init__(self, jit):
        self.jit, self.compiled = jit, None

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.compiled = self.jit[grid](*args, **kwargs)

        return launch


def run(folder: Path) -> None:
    import torch
    import triton
    from triton.testing import do_bench

    torch.backends.cuda.matmul.allow_tf32 = False
    rows = []

    def emit(**row):
        rows.append(row)
        print(json.dumps(row), flush=True)

    def error(got, want):
        return float(((got.double() - want).abs() / (1 + want.abs())).max())

    print(f"torch {torch.__version__}, triton {triton.__version__}, {torch.cuda.get_device_name()}", flush=True)
    modules = {variant: load(folder, f"fp32_gemm_{variant}") for variant in ("layout", "plain")}
    plain = modules["plain"]
    entry = plain.KERNELS["fp32_gemm"]
    replay = Replay(entry["jit"])
    entry["jit"] = replay
    small = [torch.randn(256, 256, device="cuda") for _ in range(3)]
    plain.fp32_gemm(*small)
    entry["jit"] = replay.jit
    names = replay.jit.arg_names
    constants = {names[key[0]]: value for key, value in replay.compiled.src.constants.items()}
    emit(what="specialized", strides_equal_to_1={k: v for k, v in constants.items() if "_stride" in k})

    M = N = K = 4096
    A, B = torch.randn(M, K, device="cuda"), torch.randn(K, N, device="cuda")
    K_major = B.t().contiguous().t()
    want = A.double() @ B.double()
    C = torch.empty(M, N, device="cuda")
    flops = 2 * M * N * K

    def measure(label, fn, out, **facts):
        try:
            ms = do_bench(fn, warmup=25, rep=200)
            emit(what=label, ms=ms, tflops=flops / ms / 1e9, err=error(out, want), **facts)
        except Exception as failure:  # a configuration Triton refuses: say so and go on
            emit(what=label, failed=f"{type(failure).__name__}: {str(failure)[:160]}", **facts)

    measure("cublas fp32", lambda: torch.matmul(A, B, out=C), C)
    for precision in PRECISIONS:
        for variant in ("layout", "plain"):
            for storage, b in (("K-contiguous", K_major), ("row-major", B)):
                launch = partial(modules[variant].fp32_gemm, A, b, C, PREC=precision)
                measure("argus", launch, C, precision=precision, layout=variant, B=storage)
    for tiles in TILES:
        launch = partial(modules["layout"].fp32_gemm, A, K_major, C, **tiles)
        measure("argus tiles", launch, C, precision="tf32x3", tiles=tiles)
    table(rows)


def table(rows: list[dict]) -> None:
    cublas = next(r["tflops"] for r in rows if r["what"] == "cublas fp32")
    print(f"\ncuBLAS fp32: {cublas:.1f} TFLOP/s\n")
    print("| precision | `layout B: K` | B stored | TFLOP/s | × cuBLAS fp32 | max err / (1 + abs(ref)) |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if r["what"] == "argus" and "ms" in r:
            declared = "yes" if r["layout"] == "layout" else "no"
            B = r["B"] + (", copied" if declared == "yes" and r["B"] == "row-major" else "")
            speed = f"{r['tflops']:.1f} | {r['tflops'] / cublas:.2f}"
            print(f"| {r['precision']} | {declared} | {B} | {speed} | {r['err']:.1e} |")
    print("\n| tf32x3 tiles (K-contiguous B) | TFLOP/s |\n| --- | --- |")
    for r in rows:
        if r["what"] == "argus tiles":
            shown = ", ".join(f"{k}={v}" for k, v in r["tiles"].items())
            print(f"| {shown} | {r['tflops']:.1f} |" if "ms" in r else f"| {shown} | {r['failed']} |")


if __name__ == "__main__":
    mode, folder = sys.argv[1], Path(sys.argv[2])
    build(folder) if mode == "build" else run(folder)
