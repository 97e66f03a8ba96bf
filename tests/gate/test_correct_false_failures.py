"""Correct kernels that Triton's CPU interpreter got wrong, or the gate's reference could not run, pass the
correct stage: a bf16 dot, a size only an output's shape has. Where the gate corrected the interpreter
(runner/gate_interpreter.py), the result says so."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from argus.gate import Status, run_gate
from argus.gate.report import render

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"
sys.path.insert(0, str(RUNNER))

import gate_correct  # noqa: E402

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


def test_a_size_only_an_outputs_shape_has_reaches_the_reference():
    result = gate(OUTPUT_ONLY_SIZE)
    assert result.correct.status == Status.passed, result.errors
    assert corrections(result) == []


def test_the_reference_gets_outputs_as_shape_only_stand_ins():
    inputs = {"x": torch.ones(4), "z": torch.empty(3, 4, dtype=torch.float16)}
    given = gate_correct.reference_arguments(lambda **kwargs: None, inputs, ["z"])
    assert given["z"].is_meta and tuple(given["z"].shape) == (3, 4) and given["z"].dtype == torch.float16
    assert torch.equal(given["x"], inputs["x"]) and given["x"] is not inputs["x"]
