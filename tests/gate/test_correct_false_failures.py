"""Correct kernels that the gate's reference could not run pass the correct stage: a size only an output's shape
has."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from argus.gate import Status, run_gate

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"
sys.path.insert(0, str(RUNNER))

import gate_correct  # noqa: E402

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


def test_a_size_only_an_outputs_shape_has_reaches_the_reference():
    result = gate(OUTPUT_ONLY_SIZE)
    assert result.correct.status == Status.passed, result.errors


def test_the_reference_gets_outputs_as_shape_only_stand_ins():
    inputs = {"x": torch.ones(4), "z": torch.empty(3, 4, dtype=torch.float16)}
    given = gate_correct.reference_arguments(lambda **kwargs: None, inputs, ["z"])
    assert given["z"].is_meta and tuple(given["z"].shape) == (3, 4) and given["z"].dtype == torch.float16
    assert torch.equal(given["x"], inputs["x"]) and given["x"] is not inputs["x"]
