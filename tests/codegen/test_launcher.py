"""The launcher checks every argument before launching: each kind of bad argument raises ArgusLaunchError,
whose message names the parameter, what was expected and what came. A recorder stands in for the jit function
(conftest.py), so the launch the checks let through is inspected rather than run."""

from __future__ import annotations

import pytest
import torch
from codegen_support import EXAMPLES, KERNELS

EXAMPLE = {path.stem: path for path in EXAMPLES}


def matmul_args(M=100, N=72, K=80):
    return torch.randn(M, K).half(), torch.randn(K, N).half(), torch.randn(N).half(), torch.empty(M, N).half()


def launch_error(launcher, *args, **kwargs) -> str:
    error_type = launcher.__globals__["ArgusLaunchError"]
    with pytest.raises(error_type) as caught:
        launcher(*args, **kwargs)
    assert isinstance(caught.value, ValueError)
    return str(caught.value)


def test_good_arguments_launch_with_sizes_strides_and_declared_constants(build):
    module = build(EXAMPLE["matmul"])
    A, B, bias, C = matmul_args()
    module.matmul(A, B.t().contiguous().t(), bias, C)
    (launch,) = module.KERNELS["matmul"]["jit"].launches
    assert launch["grid"] == (1, 1)  # cdiv(100, 128), cdiv(72, 256)
    assert launch["args"][4:7] == (100, 80, 72)  # M, K, N in declaration order
    assert launch["args"][9:11] == (1, 80)  # B's strides: a column-major view
    assert launch["kwargs"] == {"BM": 128, "BN": 256, "BK": 64, "num_warps": 8, "num_stages": 3}


def test_overrides_change_tile_constants_policy_and_the_grid(build):
    module = build(EXAMPLE["matmul"])
    module.matmul(*matmul_args(M=300), BM=64, BN=128, num_warps=4)
    (launch,) = module.KERNELS["matmul"]["jit"].launches
    assert launch["grid"] == (5, 1)
    assert launch["kwargs"]["BM"] == 64 and launch["kwargs"]["num_warps"] == 4


def test_parameters_can_be_passed_by_name(build):
    module = build(EXAMPLE["matmul"])
    A, B, bias, C = matmul_args()
    module.matmul(A=A, B=B, bias=bias, C=C)
    assert len(module.KERNELS["matmul"]["jit"].launches) == 1


def test_wrong_dtype_names_the_parameter_and_both_dtypes(build):
    module = build(EXAMPLE["matmul"])
    A, B, bias, C = matmul_args()
    message = launch_error(module.matmul, A.float(), B, bias, C)
    assert "`A`" in message and "f16" in message and "f32 tensor" in message


def test_wrong_rank_is_reported(build):
    module = build(EXAMPLE["matmul"])
    A, B, bias, C = matmul_args()
    message = launch_error(module.matmul, A, B, bias.view(1, -1), C)
    assert "`bias`" in message and "rank 1" in message and "rank 2" in message


def test_inconsistent_size_names_where_the_size_came_from(build):
    module = build(EXAMPLE["matmul"])
    A, _, bias, C = matmul_args()
    message = launch_error(module.matmul, A, torch.randn(81, 72).half(), bias, C)
    assert "`B`" in message and "K = 80" in message and "`A`" in message and "[81, 72]" in message


def test_tensors_on_different_devices_are_rejected(build):
    module = build(EXAMPLE["vector_add"])
    x = torch.randn(10)
    message = launch_error(module.vector_add, x, torch.empty(10, device="meta"), torch.empty(10))
    assert "`y`" in message and "cpu" in message and "meta" in message


def test_cpu_tensors_need_a_gpu_or_the_interpreter(build):
    module = build(EXAMPLE["vector_add"], record=False)
    x = torch.randn(10)
    message = launch_error(module.vector_add, x, x.clone(), torch.empty(10))
    assert "`x`" in message and "CUDA" in message and "TRITON_INTERPRET" in message


def test_violated_requires_shows_the_condition_and_the_values(build):
    module = build(EXAMPLE["softmax"])
    message = launch_error(module.softmax, torch.randn(4, 5000).half(), torch.empty(4, 5000).half())
    assert "requires N <= BN" in message and "N=5000" in message and "BN=4096" in message


def test_requires_is_checked_with_overridden_constants(build):
    module = build(EXAMPLE["softmax"])
    x = torch.randn(4, 1000).half()
    message = launch_error(module.softmax, x, torch.empty_like(x), BN=512)
    assert "BN=512" in message


def test_rsqrt_and_sigmoid_in_requires_are_computed_at_launch(build):
    # Python's math has neither: the launcher once wrote math.rsqrt and failed with an AttributeError
    text = """
kernel scale(x: f32[N], z: out f32[N], eps: f32 = 0.25):
    tile BLOCK = 128
    requires rsqrt(eps) > 1.5 and sigmoid(eps) > 0.5
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    mask = offs < N
    store(z[offs], load(x[offs], mask=mask, other=0) * eps, mask=mask)
"""
    module = build(text)
    x = torch.randn(300)
    module.scale(x, torch.empty_like(x))  # rsqrt(0.25) = 2, sigmoid(0.25) = 0.56
    assert len(module.KERNELS["scale"]["jit"].launches) == 1
    message = launch_error(module.scale, x, torch.empty_like(x), 4.0)  # rsqrt(4) = 0.5
    assert "eps=4.0" in message


def test_integer_division_in_requires_truncates_as_the_kernel_does(build):
    # Triton (and the verifier) divide integers toward zero; Python floors. (3 - 4) // 2 is 0 here, so Lo = 1
    # satisfies the requirement at L = 3, as the verifier reads it, and Lo = 0 does not.
    text = """
kernel pool(x: f32[L], y: out f32[Lo]):
    tile BO = 64, KS = 4, ST = 2
    requires Lo == (L - KS) // ST + 1, (L - KS) % ST == L - KS
    grid (cdiv(Lo, BO),)
    o = program_id(0) * BO + arange(BO)
    store(y[o], load(x[o], mask=o < L, other=0), mask=o < Lo)
"""
    module = build(text)
    x = torch.randn(3)
    module.pool(x, torch.empty(1))  # (3 - 4) // 2 + 1 = 1, and (3 - 4) % 2 = -1, truncating
    assert len(module.KERNELS["pool"]["jit"].launches) == 1
    message = launch_error(module.pool, torch.randn(2), torch.empty(1))  # (2 - 4) // 2 + 1 = 0, not 1
    assert "requires Lo == (L - KS) // ST + 1" in message


def test_violated_data_fact_is_reported(build):
    module = build(EXAMPLE["moe_gemm"])
    X, W, Y = torch.randn(64, 32).half(), torch.randn(4, 32, 16).half(), torch.empty(64, 16).half()
    offsets = torch.tensor([0, 30, 20, 50, 64], dtype=torch.int32)  # not sorted
    message = launch_error(module.moe_gemm, X, W, offsets, Y)
    assert "partition(offsets, M)" in message
    module.moe_gemm(X, W, torch.tensor([0, 10, 20, 50, 64], dtype=torch.int32), Y)
    assert len(module.KERNELS["moe_gemm"]["jit"].launches) == 1


GATHER = """
kernel pick(x: f32[M, C], target: i64[M], out: out f32[M]):
    requires in_range(target, 0, C)
    grid (M,)
    row = program_id(0)
    t = load(target[row])
    store(out[row], load(x[row, t]))
"""


def test_a_range_data_fact_is_checked_at_launch(build):
    module = build(GATHER)
    x, out = torch.randn(6, 5), torch.empty(6)
    message = launch_error(module.pick, x, torch.tensor([0, 1, 4, 5, 2, 3]), out)  # 5 is not < C = 5
    assert "in_range(target, 0, C)" in message
    assert "in_range(target, 0, C)" in launch_error(module.pick, x, torch.tensor([0, -1, 4, 4, 2, 3]), out)
    module.pick(x, torch.tensor([0, 1, 4, 4, 2, 3]), out)
    assert len(module.KERNELS["pick"]["jit"].launches) == 1


def test_a_range_with_an_ignored_value_is_checked_at_launch(build):
    module = build(
        GATHER.replace("in_range(target, 0, C)", "in_range(target, 0, C, ignore=-100)").replace(
            "load(x[row, t])", "load(x[row, t], mask=t != -100, other=0)"
        )
    )
    x, out = torch.randn(6, 5), torch.empty(6)
    module.pick(x, torch.tensor([0, -100, 4, 4, -100, 3]), out)  # -100: ignored, allowed
    assert len(module.KERNELS["pick"]["jit"].launches) == 1
    message = launch_error(module.pick, x, torch.tensor([0, -1, 4, 4, 2, 3]), out)  # -1 is neither
    assert "in_range(target, 0, C, ignore=-100)" in message


SCATTER = """
kernel scatter(x: f32[S], ids: i64[S], out: out f32[R]):
    requires permutation(ids, R)
    grid (S,)
    p = program_id(0)
    t = load(ids[p])
    store(out[t], load(x[p]), mask=t < R)
"""


def test_a_permutation_data_fact_is_checked_at_launch(build):
    module = build(SCATTER)
    x, out = torch.randn(6), torch.empty(4)
    for ids in ([0, 1, 1, 3, 4, 4], [0, 1, 2, 4, 4, 4], [0, -1, 2, 3, 1, 4]):  # 1 twice; 3 missing; a negative
        assert "permutation(ids, R)" in launch_error(module.scatter, x, torch.tensor(ids), out)
    module.scatter(x, torch.tensor([3, 4, 1, 4, 0, 2]), out)  # 0..3 once each, 4 is padding (twice)
    assert len(module.KERNELS["scatter"]["jit"].launches) == 1


def test_size_from_an_offset_dimension(build):
    module = build(EXAMPLE["moe_gemm"])
    X, W, Y = torch.randn(64, 32).half(), torch.randn(4, 32, 16).half(), torch.empty(64, 16).half()
    message = launch_error(module.moe_gemm, X, W, torch.zeros(4, dtype=torch.int32), Y)
    assert "`offsets`" in message and "E = 4" in message


def test_too_few_arguments(build):
    module = build(EXAMPLE["matmul"])
    A, B, bias, _ = matmul_args()
    message = launch_error(module.matmul, A, B, bias)
    assert "`C`" in message and "4 arguments" in message


def test_too_many_arguments(build):
    module = build(EXAMPLE["vector_add"])
    x = torch.randn(10)
    message = launch_error(module.vector_add, x, x, x, x)
    assert "at most 3 arguments" in message and "(x, y, z)" in message


def test_unknown_keyword_lists_what_is_accepted(build):
    module = build(EXAMPLE["vector_add"])
    x = torch.randn(10)
    message = launch_error(module.vector_add, x, x, x, BLOKC=512)
    assert "`BLOKC`" in message and "BLOCK" in message and "num_warps" in message


def test_scalar_parameter_must_be_a_number(build):
    module = build(EXAMPLE["layernorm"])
    x, w = torch.randn(3, 8).half(), torch.randn(8).half()
    message = launch_error(module.layernorm, x, w, w, torch.empty_like(x), torch.tensor(1e-5))
    assert "`eps`" in message and "f32 scalar" in message


def test_scalar_default_is_used_when_omitted(build):
    module = build(EXAMPLE["layernorm"])
    x, w = torch.randn(3, 8).half(), torch.randn(8).half()
    module.layernorm(x, w, w, torch.empty_like(x))
    (launch,) = module.KERNELS["layernorm"]["jit"].launches
    assert launch["args"][4] == pytest.approx(1e-5)


def test_tensor_where_a_scalar_dimension_is_fixed_by_a_tile_constant(build):
    module = build(EXAMPLE["attention"])
    q = torch.randn(1, 2, 256, 64).half()
    message = launch_error(module.attention, q, q, q, torch.empty_like(q))
    assert "`Q`" in message and "D = 128" in message


def test_autotuned_launcher_refuses_to_override_a_tuned_constant(build):
    module = build(EXAMPLE["matmul"])
    message = launch_error(module.matmul.autotuned, *matmul_args(), BN=128)
    assert message.startswith("matmul: ") and "`BN`" in message and "tuned" in message


def test_autotuned_launcher_needs_a_configuration_that_satisfies_requires(build):
    text = """
kernel rows(x: f32[N], y: out f32[N]):
    tile B = 32 tune [32, 64]
    requires N % B == 0
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    store(y[offs], load(x[offs]))
"""
    module = build(text)
    x = torch.randn(48)
    message = launch_error(module.rows.autotuned, x, torch.empty_like(x))
    assert message.startswith("rows: ") and "requires N % B == 0" in message and "N=48" in message
    assert module.rows_autotuned is module.rows.autotuned


def test_outputs_written_by_atomic_add_start_from_zero(build):
    module = build(next(p for p in KERNELS if p.stem == "colsum"))
    x = torch.randn(20, 40)
    total, count = torch.full((40,), float("nan")), torch.full((40,), 7, dtype=torch.int32)
    module.colsum(x, total, count)
    assert torch.all(total == 0) and torch.all(count == 0)
    assert len(module.KERNELS["colsum"]["jit"].launches) == 1


def test_outputs_written_by_atomic_max_and_min_start_at_their_dtypes_lowest_and_highest(build):
    module = build(next(p for p in KERNELS if p.stem == "extrema"))
    x, k = torch.randn(20, 40), torch.zeros(20, 40, dtype=torch.int32)
    colmax, colmin, rowmin = torch.zeros(40), torch.zeros(40, dtype=torch.int32), torch.zeros(20, dtype=torch.float64)
    module.extrema(x, k, colmax, colmin, rowmin)
    assert torch.all(colmax == float("-inf")) and torch.all(rowmin == float("inf"))
    assert torch.all(colmin == torch.iinfo(torch.int32).max)
    assert module.KERNELS["extrema"]["accumulated"] == {"colmax": "lowest", "colmin": "highest", "rowmin": "highest"}


def test_tensor_whose_offsets_overflow_32_bits_is_refused(build):
    module = build(EXAMPLE["vector_add"])
    x = torch.empty_strided((3,), (2**30,), device="meta")  # its last element sits 2**31 elements in
    message = launch_error(module.vector_add, x, x, x)
    assert "`x`" in message and "2**31" in message
