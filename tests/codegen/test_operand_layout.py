"""`layout B: K` in generated code: the jit function takes no stride for B's K axis and uses the constant 1
there; the launcher passes B unchanged when that stride already is 1 and otherwise copies it once, K innermost;
results match torch for both; and compiled for sm_90, B's global-to-shared copies run along K with the
declaration and along N without it (Triton 3.6 and 3.9 alike, docs/codegen.md)."""

from __future__ import annotations

import pytest
import torch
from codegen_support import EXAMPLES, generated, run_harness

GEMM = next(path for path in EXAMPLES if path.stem == "fp32_gemm")


def gemm_args(M=72, N=40, K=64):
    return torch.randn(M, K), torch.randn(K, N), torch.empty(M, N)


def test_the_contiguous_axis_has_no_stride_argument_and_a_unit_stride():
    source = generated(GEMM.read_text(encoding="utf-8"))
    assert "    B_stride0,\n" not in source and "    B_stride1,\n" in source
    assert "B + rk[:, None] + rn[None, :] * B_stride1" in source
    assert "\"layouts\": {'B': 0}" in source


def test_a_tensor_whose_axis_already_has_stride_one_is_passed_as_it_is(build):
    module = build(GEMM)
    A, B, C = gemm_args()
    K_major = B.t().contiguous().t()  # same values, K contiguous: strides (1, 64)
    module.fp32_gemm(A, K_major, C)
    [launch] = module.KERNELS["fp32_gemm"]["jit"].launches
    args = launch["args"]
    assert args[1] is K_major
    assert args[6:11] == (64, 1, 64, 40, 1)  # A's strides, B's K-axis stride (64, its N axis), C's strides


def test_a_tensor_stored_the_other_way_is_copied_once_with_that_axis_innermost(build):
    module = build(GEMM)
    A, B, C = gemm_args()
    module.fp32_gemm(A, B, C)  # B row-major: N contiguous
    [launch] = module.KERNELS["fp32_gemm"]["jit"].launches
    passed = launch["args"][1]
    assert passed is not B and passed.stride() == (1, 64) and torch.equal(passed, B)
    assert launch["args"][8] == 64  # the stride of B's N axis in the copy
    assert B.stride() == (40, 1)  # the caller's tensor is untouched


ROWSUM = """\
kernel rowsum(x: f32[M, N], y: out f32[M]):
    tile BN = 16
    layout x: N
    grid (M,)
    m = program_id(0)
    cols = arange(BN)
    store(y[m], sum(load(x[m, cols], mask=cols < N, other=0), 0))
"""


def test_an_axis_of_length_one_needs_no_copy(build):
    module = build(ROWSUM)
    column = torch.randn(8, 3)[:, 1:2]  # N = 1 with stride 1 only by accident of slicing: (3, 1)
    spaced = torch.randn(8, 6)[:, ::6]  # N = 1 with stride 6: no index moves along N, so no copy either
    module.rowsum(column, torch.empty(8))
    module.rowsum(spaced, torch.empty(8))
    first, second = module.KERNELS["rowsum"]["jit"].launches
    assert first["args"][0] is column and second["args"][0] is spaced
    assert second["args"][2:] == (8, 1, 6, 1)  # M, N, x's row stride (no N stride: the constant 1), y's stride


@pytest.mark.parametrize("transpose", [False, True], ids=["row-major B, copied", "K-contiguous view of B"])
def test_results_match_torch_for_both_storage_orders_under_the_interpreter(transpose):
    extra = ["--transpose-inputs"] if transpose else []
    [record] = run_harness("interpret", [GEMM], *extra)
    assert record["close"] and record["nan"] == 0, record
    B_strides = record["strides"][1]
    assert B_strides == ([1, 64] if transpose else [40, 1])


def copies(precision: str, *extra: str) -> dict:
    [record] = run_harness("copies", [GEMM], "--sizes", "M=256,N=256,K=256", "--override", f"PREC={precision}", *extra)
    return record


@pytest.mark.parametrize("precision", ["tf32x3", "tf32"])
def test_on_sm90_the_b_operand_is_read_along_k_with_the_layout_and_along_n_without(precision):
    declared, plain = copies(precision), copies(precision, "--drop-layouts")
    b_tile = [64, 128]  # [BK, BN]

    def b_copies(record):
        found = [c for c in record["copies"] if c["shape"] == b_tile]
        assert found, record["copies"]
        return found

    assert {(tuple(c["order"]), tuple(c["per_thread"])) for c in b_copies(declared)} == {((0, 1), (4, 1))}
    assert {(tuple(c["order"]), tuple(c["per_thread"])) for c in b_copies(plain)} == {((1, 0), (1, 4))}
    assert set(declared["cp_async_bytes"]) == {"16"}  # every copy moves 4 floats at once
    if precision == "tf32":
        # the wgmma reads B from shared memory K-major; a row-major B reaches it one float at a time
        assert all("transposed = true" in c["shared"] for c in b_copies(plain))
        assert plain["cp_async_bytes"].get("4", 0) > 0


def test_a_copy_past_32_bit_offsets_is_refused_before_it_is_made(build):
    module = build(ROWSUM)
    broadcast = torch.empty(2**16, 1, device="meta").expand(2**16, 2**15 + 1)  # small in memory, not as a copy
    with pytest.raises(module.ArgusLaunchError, match="`x`: expected element offsets below 2\\*\\*31"):
        module.rowsum(broadcast, torch.empty(2**16, device="meta"))


INNERMOST_COPY = """\
import sys, torch
namespace = {}
exec(compile(sys.stdin.read(), "kernels", "exec"), namespace)
copy = namespace["_innermost_copy"]
checked = 0
for shape, axis in (((37, 70), 0), ((3, 65, 40), 1), ((2, 5, 129), 2), ((64, 64), 1)):
    x = torch.randn(*shape)
    y = copy(x, axis, through_triton=True)
    assert y.shape == x.shape and torch.equal(y, x), (shape, axis)
    assert y.stride(axis) == 1, (shape, axis, y.stride())
    checked += 1
print(checked)
"""


def test_the_gpu_copy_kernel_puts_the_axis_innermost_with_the_same_values_under_the_interpreter():
    """On a GPU the launcher copies through a tiled Triton kernel (torch's strided copy ran at a third of the
    bandwidth); here the interpreter runs the same kernel on tensors whose sizes are not multiples of a tile."""
    import os
    import subprocess
    import sys

    source = generated(GEMM.read_text(encoding="utf-8"))
    done = subprocess.run(
        [sys.executable, "-c", INNERMOST_COPY],
        input=source,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TRITON_INTERPRET": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["4"]
