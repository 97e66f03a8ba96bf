"""Outputs written by atomics start where their accumulation does (issue 20 item 3): the manifest says where
(`accumulated_starts`), the correct stage and the launcher start them there (0 for atomic_add, atomic_xchg and
atomic_cas; the dtype's lowest value for atomic_max, -inf for floats; its highest for atomic_min), and the
reference sees the same start: a tensor-wide absmax by atomic_max compares against torch.amax of its input.
Under the CPU interpreter, which refuses float atomic max, min and exchange, the gate's correction says so."""

from __future__ import annotations

import sys
from pathlib import Path

from argus.dsl.check import check_source
from argus.gate import Status, run_gate
from argus.gate.manifest import kernel_facts

RUNNER = Path(__file__).resolve().parents[2] / "server" / "argus" / "gate" / "runner"
sys.path.insert(0, str(RUNNER))

import gate_correct  # noqa: E402

# All data negative: a start of 0 would be the max of every element, and the kernel would fail.
NEGATIVE_MAX = """
kernel peak(x: f32[N], m: out f32[1], lo: out i32[1], k: i32[N]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i], mask=i < N, other=-inf)
    atomic_max(m[0], max(v, axis=0))
    w = load(k[i], mask=i < N, other=2147483647)
    atomic_min(lo[0], min(w, axis=0))

inputs peak(x, k):
    return -1 - torch.rand(N), torch.randint(5, 1000, (N,), dtype=torch.int32)

reference peak(x, k):
    return x.amax().reshape(1), k.amin().reshape(1)

sizes peak:
    small: N = 1000
    large: N = 1_000_000
"""


def gate(source: str):
    return run_gate(source, device="cpu", stages=("compile", "correct"), trials=1, timeout_s=300, seed=5)


def test_the_manifest_says_where_each_accumulated_output_starts():
    facts = kernel_facts(check_source(NEGATIVE_MAX), "peak")
    assert facts["accumulated_outputs"] == ["m", "lo"]
    assert facts["accumulated_starts"] == {"m": "lowest", "lo": "highest"}


def test_the_correct_stage_starts_each_output_at_its_identity():
    import torch

    f, i = torch.zeros(2), torch.zeros(2, dtype=torch.int32)
    gate_correct.start(f, "lowest")
    gate_correct.start(i, "highest")
    assert f.tolist() == [float("-inf")] * 2 and i.tolist() == [2**31 - 1] * 2
    gate_correct.start(f, "zero")
    assert f.tolist() == [0.0, 0.0]


def test_a_max_of_negative_data_passes_compile_and_correct_with_the_float_atomics_corrected():
    result = gate(NEGATIVE_MAX)
    assert (result.compile.status, result.correct.status) == (Status.passed, Status.passed), result.errors
    assert result.correct.facts.max_abs_error == 0.0
    assert [note.split(":")[0] for note in result.correct.facts.interpreter_corrections] == [
        "float atomic_max/atomic_min/atomic_xchg"
    ]


MODEL_MAX = """
kernel absmax(x: f32[N], m: out f32[1]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i], mask=i < N, other=0)
    atomic_max(m[0], max(abs(v), axis=0))

kernel scale(x: f32[N], m: f32[1], y: out f32[N]):
    tile B = 256
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    s = load(m[0])
    store(y[i], load(x[i], mask=i < N, other=0) / s, mask=i < N)

model normalized(x: f32[N], peak: out f32[1], y: out f32[N]):
    absmax(x, peak)
    scale(x, peak, y)

reference normalized(x):
    peak = x.abs().amax().reshape(1)
    return peak, x / peak

sizes normalized:
    small: N = 1000
    large: N = 1_000_000
"""


def test_a_model_output_an_atomic_max_writes_starts_at_its_lowest_value():
    from argus.gate.manifest import model_facts

    facts = model_facts(check_source(MODEL_MAX), "normalized")
    assert facts["accumulated_outputs"] == ["peak"]
    assert facts["accumulated_starts"] == {"peak": "lowest"}
