"""How close the generated math helpers (argus.codegen.math_lowering) come to PyTorch's float64 answer, in units
in the last place of the result's dtype, under the Triton interpreter:

    TRITON_INTERPRET=1 python math_accuracy.py     # prints one JSON object: function -> max ulps, then checks

Each function runs as the kernel `argus build` makes of `y = fn(x)` (1-D, f32 and f64) over inputs that stress
it: values from 1e-30 to 1e30 of both signs, many of them near 0 (where log(1 + x) and exp(x) - 1 cancel), the
halves (round), integers, and for powers negative bases with integer exponents. Non-finite results must match
exactly (NaN where PyTorch gives NaN). Run by tests/codegen/test_math_accuracy.py.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

UNARY = ["log1p", "expm1", "log10", "tan", "sinh", "cosh", "floor", "ceil", "trunc", "round", "sign"]
DTYPES = {"f32": "float32", "f64": "float64"}


def source() -> str:
    kernels = []
    for dtype in DTYPES:
        for fn in UNARY:
            kernels.append(f"""
kernel {fn}_{dtype}(x: {dtype}[N], y: out {dtype}[N]):
    tile B = 1024
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    store(y[offs], {fn}(load(x[offs], mask=offs < N, other=0)), mask=offs < N)
""")
        kernels.append(f"""
kernel pow_{dtype}(x: {dtype}[N], p: {dtype}[N], y: out {dtype}[N], cube: out {dtype}[N]):
    tile B = 1024
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    v = load(x[offs], mask=offs < N, other=0)
    store(y[offs], v ** load(p[offs], mask=offs < N, other=0), mask=offs < N)
    store(cube[offs], v ** 3, mask=offs < N)
""")
    return "\n".join(kernels)


def inputs(fn: str, torch):
    g = torch.Generator().manual_seed(0)
    scales = (1e-30, 1e-8, 1e-5, 1e-3, 1e-2, 0.1, 0.5, 1.0, 3.0, 10.0, 30.0, 80.0)
    parts = [torch.randn(4000, generator=g, dtype=torch.float64) * s for s in scales]
    parts.append(torch.logspace(-30, 30, 20000, dtype=torch.float64) * torch.randn(20000, generator=g).sign())
    x = torch.cat(parts)
    if fn in ("floor", "ceil", "trunc", "round", "sign"):
        x = torch.cat([x, torch.arange(-4000, 4000, dtype=torch.float64) / 4, torch.tensor([8388607.5, -4194303.5])])
    if fn == "log1p":
        x = x.clamp(min=-1.0 + 1e-6)
    if fn == "log10":
        x = x.abs()
    if fn in ("expm1", "sinh", "cosh"):
        x = x.clamp(-700.0, 700.0)
    specials = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), -1.0], dtype=torch.float64)
    return torch.cat([x, specials])


def ulps(got, want64, dtype, torch) -> float:
    """The largest distance in ulps of the dtype where PyTorch's answer is finite in the dtype; inf if a
    non-finite answer is not matched exactly."""
    want = want64.to(dtype)
    nonfinite = ~torch.isfinite(want)
    same = (got == want) | (torch.isnan(got) & torch.isnan(want))
    if not bool(same[nonfinite].all()):
        return float("inf")
    info = torch.finfo(dtype)
    magnitude = want64.abs().clamp(min=info.tiny)
    spacing = 2.0 ** torch.floor(torch.log2(magnitude)) * info.eps
    error = ((got.double() - want64).abs() / spacing)[~nonfinite & ~same]
    return float(error.max()) if error.numel() else 0.0


def main() -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "server"))
    from argus.codegen import generate
    from argus.dsl.check import check_source

    check = check_source(source())
    assert not check.has_errors, [d.message for d in check.diagnostics]
    folder = Path(tempfile.mkdtemp(prefix="argus-math-"))
    path = folder / "math_kernels.py"
    path.write_text(generate(check).source, encoding="utf-8")
    sys.path.insert(0, str(folder))
    import math_kernels

    results: dict[str, float] = {}
    for dtype_name, torch_name in DTYPES.items():
        dtype = getattr(torch, torch_name)
        for fn in UNARY:
            x = inputs(fn, torch).to(dtype)
            y = torch.full_like(x, float("nan"))
            getattr(math_kernels, f"{fn}_{dtype_name}")(x, y)
            results[f"{fn}_{dtype_name}"] = ulps(y, getattr(torch, fn)(x.double()), dtype, torch)
        g = torch.Generator().manual_seed(1)
        bases = torch.cat([torch.rand(50000, generator=g, dtype=torch.float64) * 10, torch.randn(50000, generator=g)])
        exponents = torch.cat(
            [torch.randn(50000, generator=g, dtype=torch.float64) * 8, torch.randint(-6, 7, (50000,), generator=g)]
        )
        specials = [(-2.0, 3.0), (-2.0, 0.5), (-0.5, float("inf")), (0.0, -1.0), (0.0, 0.0), (1.0, float("nan"))]
        specials += [(-1.0, float("inf")), (float("nan"), 0.0), (float("-inf"), 0.5), (float("-inf"), 3.0)]
        bases = torch.cat([bases, torch.tensor([b for b, _ in specials], dtype=torch.float64)]).to(dtype)
        exponents = torch.cat([exponents, torch.tensor([e for _, e in specials], dtype=torch.float64)]).to(dtype)
        y, cube = torch.full_like(bases, float("nan")), torch.full_like(bases, float("nan"))
        getattr(math_kernels, f"pow_{dtype_name}")(bases, exponents, y, cube)
        results[f"pow_{dtype_name}"] = ulps(y, torch.pow(bases.double(), exponents.double()), dtype, torch)
        results[f"cube_{dtype_name}"] = ulps(cube, bases.double() ** 3, dtype, torch)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
