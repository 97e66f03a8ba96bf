"""A reduction along several axes (`sum(x, axis=(0, 1))`) is one Triton call per axis, the last axis first (so
the others keep their numbers), each with keep_dims and the widened dtype where the one-axis form has them.
Compiled and run: kernels/reduce_axes.argus (test_compile.py, test_interpreter.py)."""

from __future__ import annotations

import pytest
from codegen_support import generated

KERNEL = """
kernel k(x: {dtype}[M, N], y: out {out}[1]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    r = {reduced}
    store(y[{index}], {stored})
"""


@pytest.mark.parametrize(
    ("dtype", "out", "reduced", "text"),
    [
        ("f32", "f32", "sum(v, axis=(0, 1))", "tl.sum(tl.sum(v, axis=1), axis=0)"),
        ("f32", "f32", "max(v, axis=(1, 0))", "tl.max(tl.max(v, axis=1), axis=0)"),
        (
            "f32",
            "f32",
            "min(v, axis=(0, 1), keep_dims=True)",
            "tl.min(tl.min(v, axis=1, keep_dims=True), axis=0, keep_dims=True)",
        ),
        ("i8", "i32", "sum(v, axis=(0, 1))", "tl.sum(tl.sum(v, axis=1, dtype=tl.int32), axis=0, dtype=tl.int32)"),
        ("f16", "f16", "max(v, axis=(0, 1))", "tl.max(tl.max(v, axis=1), axis=0).to(tl.float16)"),
    ],
)
def test_one_call_per_axis_last_axis_first(dtype, out, reduced, text):
    keep = "keep_dims" in reduced
    stored = "reshape(r, (1,))" if keep else "r"
    source = generated(
        KERNEL.format(dtype=dtype, out=out, reduced=reduced, index="arange(1)" if keep else 0, stored=stored)
    )
    body = source[source.index("def k_kernel(") :]
    line = next(line for line in body.splitlines() if line.strip().startswith("r = "))
    assert line.split(" = ", 1)[1].split("  # argus:")[0] == text
