"""A named per-axis mask (`mask = (rm < M, rn < N)`) in the generated Triton: its entries are values named after
it (`mask_0`, `mask_1`), computed once where the tuple is named, and each access that takes it ANDs them on
their axes as it does a tuple written in place. Run under the interpreter: kernels/elementwise_math.argus."""

from __future__ import annotations

from codegen_support import generated

KERNEL = """
kernel k(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    {mask}
    v = load(x[rm, rn], mask={use}, other=0)
    store(y[rm, rn], v * 2.0, mask={use})
"""


def kernel_lines(mask: str, use: str) -> list[str]:
    source = generated(KERNEL.format(mask=mask, use=use))
    return [line.split("  # argus:")[0].strip() for line in source[source.index("def k_kernel(") :].splitlines()]


def test_the_entries_are_named_after_the_mask_and_anded_at_each_access():
    lines = kernel_lines("mask = (rm < M, rn < N)", "mask")
    assert "mask_0 = rm < M" in lines and "mask_1 = rn < N" in lines
    accesses = [line for line in lines if line.startswith(("v = tl.load", "tl.store"))]
    assert len(accesses) == 2 and all("mask=mask_0[:, None] & mask_1[None, :]" in line for line in accesses)


def test_a_none_entry_drops_out_as_in_place():
    named = kernel_lines("mask = (None, rn < N)", "mask")
    inline = kernel_lines("pass", "(None, rn < N)")
    assert "mask=mask_1[None, :]" in next(line for line in named if line.startswith("v = tl.load"))
    assert "mask=(rn < N)[None, :]" in next(line for line in inline if line.startswith("v = tl.load"))
