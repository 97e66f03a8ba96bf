"""The generated math helpers (argus.codegen.math_lowering) against PyTorch in float64, under the Triton
interpreter (tests/codegen/math_accuracy.py, in a process of its own: TRITON_INTERPRET must be set before triton
is imported). The bounds are a little above what was measured (docs/codegen.md): near 0, where log(1 + x) and
exp(x) - 1 lose every digit, log1p and expm1 stay within a few ulps; the rounding functions and sign are
exact; a float power (f64 inside) is correctly rounded to f32; non-finite answers (inf, NaN) match exactly."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from codegen_support import HERE, ROOT

BOUNDS = {
    "log1p": 6,
    "expm1": 6,
    "log10": 6,
    "tan": 4,
    "sinh": 6,
    "cosh": 4,
    "floor": 0,
    "ceil": 0,
    "trunc": 0,
    "round": 0,
    "sign": 0,
    "pow": 1,  # f32; f64 loses about |y log2 x| ulps of f64 (measured: 71, 1.6e-14 relative)
    "cube": 2,  # v * v * v: two roundings
}


@pytest.fixture(scope="module")
def measured() -> dict[str, float]:
    environment = {**os.environ, "TRITON_INTERPRET": "1"}
    command = [sys.executable, str(HERE / "math_accuracy.py")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, cwd=ROOT, env=environment)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("fn", sorted(BOUNDS))
def test_f32_result_is_within_its_bound_of_pytorch(measured, fn):
    assert measured[f"{fn}_f32"] <= BOUNDS[fn], (fn, measured[f"{fn}_f32"])


@pytest.mark.parametrize("fn", sorted(set(BOUNDS) - {"pow"}))
def test_f64_result_is_within_its_bound_of_pytorch(measured, fn):
    assert measured[f"{fn}_f64"] <= max(BOUNDS[fn], 3), (fn, measured[f"{fn}_f64"])


def test_f64_power_keeps_thirteen_digits(measured):
    assert measured["pow_f64"] <= 1000  # 1000 ulps of f64 is 2.2e-13 relative
