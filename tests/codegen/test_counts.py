"""Work counts from the IR: dot and elementwise FLOPs over whole tiles, and the fewest bytes moved (each input
read once, each output written once)."""

from __future__ import annotations

import pytest
import torch
from codegen_support import EXAMPLES

EXAMPLE = {path.stem: path for path in EXAMPLES}


def test_vector_add_counts_one_add_per_element_and_three_arrays(build):
    counts = build(EXAMPLE["vector_add"]).KERNELS["vector_add"]["counts"]
    assert counts(N=4096) == {"flops": 4096, "bytes": 3 * 4096 * 4}


def test_matmul_counts_its_dots_and_epilogue(build):
    counts = build(EXAMPLE["matmul"]).KERNELS["matmul"]["counts"]
    M = N = K = 512
    epilogue = 6 * M * N  # bias add, 0.5 *, *, 1 +, * 0.707, erf
    assert counts(M=M, N=N, K=K) == {"flops": 2 * M * N * K + epilogue, "bytes": 2 * (M * K + K * N + N + M * N)}


def test_counts_follow_overridden_tile_constants(build):
    counts = build(EXAMPLE["matmul"]).KERNELS["matmul"]["counts"]
    exact = counts(M=512, N=512, K=512)["flops"]
    assert counts(M=512, N=512, K=512, BM=64, BN=128)["flops"] == exact
    padded = counts(M=100, N=100, K=100, BM=64, BN=64, BK=64)["flops"]
    assert padded == 2 * 128 * 128 * 128 + 6 * 128 * 128  # whole tiles, padding included


def test_data_dependent_loops_are_counted_from_the_inputs(build):
    counts = build(EXAMPLE["moe_gemm"]).KERNELS["moe_gemm"]["counts"]
    offsets = torch.tensor([0, 128, 128, 384, 512], dtype=torch.int32)  # experts of 128, 0, 256, 128 rows
    sizes = {"E": 4, "M": 512, "K": 256, "N": 256}
    result = counts(**sizes, inputs={"offsets": offsets})
    assert result["flops"] == 2 * 512 * 256 * 256
    assert result["bytes"] == 2 * (512 * 256 + 4 * 256 * 256 + 512 * 256) + 5 * 4
    with pytest.raises(ValueError, match="inputs="):
        counts(**sizes)
