"""In/out tensors, 0-d tensors and declared views through the gate's correct stage on the CPU (the interpreter).

An in/out tensor's initial value comes from the inputs recipe; the reference receives a copy of it among the
inputs and returns the expected final value (the outputs in parameter order, in/out ones included); the kernel
runs on the original, which is compared after, and is never poisoned (it holds input data). A reference that
updates its argument in place (`x.mul_(s)`) passes only because it got a copy: had it been given the kernel's
tensor, it would scale the kernel's result once more. A 0-d output and a view go through unchanged."""

from __future__ import annotations

import pytest

from argus.gate import Status, run_gate_all

SOURCE = """\
kernel scale_(x: inout f32[N], s: f32[]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(x[i], load(x[i], mask=i < N, other=0) * load(s), mask=i < N)

reference scale_(x, s):
    return x.mul_(s)

sizes scale_:
    small: N = 300

kernel first_half_(x: inout f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, 2 * B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i], mask=i < N, other=0)
    store(x[i], v + 1, mask=i < N)
    store(y[i], v, mask=i < N)
    store(y[cdiv(N, 2 * B) * B + i], 0.0, mask=cdiv(N, 2 * B) * B + i < N)

reference first_half_(x):
    y = x.clone()
    half = -(-x.shape[0] // 256) * 128
    x[:half] += 1
    y[half:] = 0
    return x, y                     # the written tensors in parameter order, the in/out x first

sizes first_half_:
    small: N = 300

kernel wrong_(x: inout f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(x[i], load(x[i], mask=i < N, other=0) * 3, mask=i < N)

reference wrong_(x):
    return x * 2

sizes wrong_:
    small: N = 300

kernel sum_sq(x: f32[N], total: out f32[]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i], mask=i < N, other=0)
    atomic_add(total, sum(v * v, axis=0))

reference sum_sq(x):
    return (x * x).sum()

sizes sum_sq:
    small: N = 1000

kernel running_max_(x: f16[B, C, L] as [B, C * L], peak: inout f32[]):
    tile BN = 128
    grid (1,)
    for b in range(0, B):
        for c0 in range(0, C * L, BN):
            cols = c0 + arange(BN)
            v = load(x[b, cols], mask=cols < C * L, other=-inf).to(f32)
            store(peak, maximum(load(peak), max(v, axis=0)))

reference running_max_(x, peak):
    return torch.maximum(peak, x.float().max())

sizes running_max_:
    small: B = 2, C = 3, L = 50

kernel double_(x: inout f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(x[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)

kernel copy(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0), mask=i < N)

model copy_then_double(x: inout f32[N], y: out f32[N]):
    copy(x, y)
    double_(x)
    double_(x)

reference copy_then_double(x):
    return x * 4, x.clone()

sizes copy_then_double:
    small: N = 300
"""


@pytest.fixture(scope="module")
def results():
    found = run_gate_all(SOURCE, device="cpu", stages=("correct",), trials=2, timeout_s=300)
    return {result.kernel: result for result in found}


def test_an_inout_kernel_passes_against_a_reference_that_updates_its_own_copy(results):
    result = results["scale_"]
    assert result.correct.status == Status.passed, result.errors
    assert result.correct.facts.max_abs_error == 0


def test_elements_an_inout_kernel_leaves_alone_keep_their_input_value(results):
    result = results["first_half_"]  # x's second half is never written: poisoned, it would be NaN
    assert result.correct.status == Status.passed, result.errors
    assert list(result.correct.facts.tolerance) == ["x", "y"]


def test_the_reference_returns_the_written_tensors_in_parameter_order():
    swapped = SOURCE.replace("    return x, y ", "    return y, x ")
    found = run_gate_all(swapped, kernel="first_half_", device="cpu", stages=("correct",), trials=1)
    (error,) = found[0].errors
    assert error.code == "AR502" and "`x[0]`" in error.message  # y's values compared as x's


def test_a_wrong_inout_update_is_reported_at_its_store(results):
    result = results["wrong_"]
    assert result.correct.status == Status.failed
    (error,) = result.errors
    assert error.code == "AR502" and "`x[0]`" in error.message
    assert error.line == SOURCE.splitlines().index("kernel wrong_(x: inout f32[N]):") + 5


def test_a_0d_output_is_compared_as_a_0d_tensor(results):
    result = results["sum_sq"]
    assert result.correct.status == Status.passed, result.errors
    assert result.correct.facts.reduction_length == {"total": 1000}


def test_a_0d_inout_through_a_view_passes(results):
    result = results["running_max_"]
    assert result.correct.status == Status.passed, result.errors


def test_a_model_updates_its_inout_parameter_through_two_launches(results):
    result = results["copy_then_double"]
    assert result.correct.status == Status.passed, result.errors
