"""Correct kernels that Triton's CPU interpreter got wrong, or the gate's reference could not run, pass the
correct stage: a bf16 dot, fp8 conversions, a mask from a scalar comparison, a size only an output's shape has.
Where the gate corrected the interpreter (runner/gate_interpreter.py), the result says so."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from argus.gate import Status, run_gate
from argus.gate.report import render

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"
sys.path.insert(0, str(RUNNER))

import gate_correct  # noqa: E402
import gate_interpreter  # noqa: E402

BF16_GEMM = """
kernel mm(A: bf16[M, K], B: bf16[K, N], C: out f32[M, N]):
    tile BM = 16, BN = 16, BK = 16
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc)
    store(C[rm, rn], acc, mask=(rm < M, rn < N))

reference mm(A, B):
    return A.float() @ B.float()

sizes mm:
    small: M = 20, N = 18, K = 24
    large: M = 4096, N = 4096, K = 4096
"""

# 124 and 0.96875 carry a full mantissa into the exponent (the interpreter gave 64 and 0.5); 17, 19 and 23 are
# ties in f8e4m3 (to 16, 20, 24), 1.5 * 2**-16 one between two f8e5m2 subnormals (to 2**-15).
FP8_ROUND_TRIP = """
kernel q(x: f32[N], z4: out f32[N], z5: out f32[N]):
    tile BLOCK = 32
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    a = load(x[offs], mask=offs < N, other=0)
    store(z4[offs], a.to(f8e4m3).to(f32), mask=offs < N)
    store(z5[offs], a.to(f8e5m2).to(f32), mask=offs < N)

reference q(x):
    return x.to(torch.float8_e4m3fn).float(), x.to(torch.float8_e5m2).float()

inputs q(x):
    tricky = torch.tensor([124.0, -124.0, 0.96875, 17.0, 19.0, 23.0, -19.0, 1.5 * 2**-16, 0.0, 448.0])
    return torch.cat([tricky, torch.randn(N - tricky.numel())])

sizes q:
    small: N = 40
    large: N = 1_000_000
"""

# `row < M` compares two scalars; the interpreter made its splat into the tile an int32 one.
SCALAR_MASK = """
kernel rows(x: f32[M, N], z: out f32[M, N]):
    tile BLOCK = 32
    grid (M, cdiv(N, BLOCK))
    row = program_id(0)
    offs = program_id(1) * BLOCK + arange(BLOCK)
    mask = (offs < N) & (row < M)
    a = load(x[row, offs], mask=mask, other=0)
    store(z[row, offs], a * 2.0, mask=mask)

reference rows(x):
    return x * 2.0

sizes rows:
    small: M = 3, N = 40
    large: M = 4096, N = 4096
"""

# The same with loaded int32 data: `n > 0` of a scalar `n = load(lens[row])`.
SCALAR_DATA_MASK = """
kernel rows(x: f32[M, N], lens: i32[M], z: out f32[M, N]):
    tile BLOCK = 32
    grid (M, cdiv(N, BLOCK))
    row = program_id(0)
    n = load(lens[row])
    offs = program_id(1) * BLOCK + arange(BLOCK)
    keep = (offs < N) & (n > 0)
    a = load(x[row, offs], mask=keep, other=0)
    store(z[row, offs], a * 2.0, mask=offs < N)

reference rows(x, lens):
    return torch.where((lens > 0)[:, None], x * 2.0, torch.zeros_like(x))

inputs rows(lens):
    return torch.tensor([0, 3, 1])

sizes rows:
    small: M = 3, N = 40
    large: M = 3, N = 4096
"""

# M is in no input's shape: only the output says what it is.
OUTPUT_ONLY_SIZE = """
kernel rep(x: f32[N], z: out f32[M, N]):
    tile BLOCK = 64
    grid (M, cdiv(N, BLOCK))
    row = program_id(0)
    offs = program_id(1) * BLOCK + arange(BLOCK)
    a = load(x[offs], mask=offs < N, other=0)
    store(z[row, offs], a, mask=offs < N)

reference rep(x):
    return x[None, :].expand(M, N).clone()

sizes rep:
    small: M = 3, N = 70
    large: M = 4096, N = 4096
"""


def gate(source: str, stages=("correct",)):
    return run_gate(source, device="cpu", stages=stages, trials=1, timeout_s=120, seed=11)


def corrections(result) -> list[str]:
    return result.correct.facts.interpreter_corrections


def test_a_bf16_gemm_passes_with_the_interpreters_dot_corrected_and_says_so():
    result = gate(BF16_GEMM)
    assert result.correct.status == Status.passed, result.errors
    assert result.correct.facts.max_abs_error < 1e-4
    [note] = corrections(result)
    assert note.startswith("bf16 dot:")
    assert "interpreter corrected: bf16 dot" in render(result)


def test_fp8_round_trips_pass_with_the_interpreters_conversion_corrected():
    result = gate(FP8_ROUND_TRIP)
    assert result.correct.status == Status.passed, result.errors
    assert result.correct.facts.max_abs_error == 0.0  # a conversion is exact or wrong
    assert [note.split(":")[0] for note in corrections(result)] == ["fp8 conversion"]


def fp8_neighbourhoods(values: np.ndarray, dtype) -> torch.Tensor:
    """Every finite value of a format, the midpoints between neighbours (the ties), and the closest numbers of
    `dtype` on either side of each."""
    finite = np.unique(values[np.isfinite(values)])
    points = torch.from_numpy(np.concatenate([finite, (finite[1:] + finite[:-1]) / 2])).to(dtype)
    return torch.cat([points, torch.nextafter(points, points + 1), torch.nextafter(points, points - 1)])


@pytest.mark.parametrize("name, torch_dtype", [("fp8e4nv", torch.float8_e4m3fn), ("fp8e5", torch.float8_e5m2)])
@pytest.mark.parametrize("source", [torch.float32, torch.float16, torch.bfloat16])
def test_the_fp8_conversion_matches_torch_around_every_representable_value(name, torch_dtype, source):
    values, largest = gate_interpreter.fp8_table(name)
    codes = torch.arange(256, dtype=torch.uint8)
    expected = codes.view(torch_dtype).double().numpy()
    assert np.array_equal(values, expected, equal_nan=True)
    x = fp8_neighbourhoods(values, source)
    x = x[x.abs() <= float(values[largest])]  # past the largest: torch gives NaN, the GPU saturates (below)
    got = gate_interpreter.fp8_encode(x.double().numpy(), name)
    assert np.array_equal(got, x.to(torch_dtype).view(torch.uint8).numpy())
    assert np.array_equal(gate_interpreter.fp8_decode(got, name), x.to(torch_dtype).double().numpy())


@pytest.mark.parametrize("name", ["fp8e4nv", "fp8e5"])
def test_the_fp8_conversion_saturates_and_keeps_nan_like_the_gpu(name):
    values, largest = gate_interpreter.fp8_table(name)
    top = float(values[largest])
    codes = gate_interpreter.fp8_encode(np.array([top * 2, np.inf, -np.inf, np.nan]), name)
    got = gate_interpreter.fp8_decode(codes, name)
    assert list(got[:3]) == [top, top, -top] and np.isnan(got[3])


@pytest.mark.parametrize("source", [SCALAR_MASK, SCALAR_DATA_MASK], ids=["program_id", "loaded"])
def test_a_mask_from_a_scalar_comparison_compiles_and_passes_with_the_splat_corrected(source):
    result = gate(source, stages=("compile", "correct"))
    assert result.compile.status == Status.passed, result.errors  # Triton types `row < M` i1: our code is right
    assert result.correct.status == Status.passed, result.errors
    assert [note.split(":")[0] for note in corrections(result)] == ["boolean splat"]


def test_a_size_only_an_outputs_shape_has_reaches_the_reference():
    result = gate(OUTPUT_ONLY_SIZE)
    assert result.correct.status == Status.passed, result.errors
    assert corrections(result) == []


def test_the_reference_gets_outputs_as_shape_only_stand_ins():
    inputs = {"x": torch.ones(4), "z": torch.empty(3, 4, dtype=torch.float16)}
    given = gate_correct.reference_arguments(lambda **kwargs: None, inputs, ["z"])
    assert given["z"].is_meta and tuple(given["z"].shape) == (3, 4) and given["z"].dtype == torch.float16
    assert torch.equal(given["x"], inputs["x"]) and given["x"] is not inputs["x"]
