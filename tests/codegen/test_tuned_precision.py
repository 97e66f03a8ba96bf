"""A string tile constant that names dot's input precision becomes a `tl.constexpr` of the jit function: the
launcher passes it (declared or overridden), its tune list reaches the autotuner's configurations, and under the
Triton interpreter every value runs (bf16x3 and bf16x6, which the interpreter refuses, run as "ieee" there: it
computes every precision in fp32)."""

from __future__ import annotations

import pytest
import torch
from codegen_support import generated, run_harness

from argus.codegen import generate
from argus.dsl.check import check_source

# An f16 output: its tolerance (1e-2) is one every precision keeps at K = 40 (AR219 would refuse tf32 in the
# tune list of an f32 output held to 1e-4), so the kernel checks clean with all of them.
GEMM = """\
kernel mm(A: f32[M, K], B: f32[K, N], C: out f16[M, N]):
    tile BM = 32, BN = 32, BK = 16, PREC = "tf32x3" tune ["ieee", "tf32x3", "tf32", "bf16x3"]
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc, input_precision=PREC)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))

reference mm(A, B):
    return (A @ B).half()

sizes mm:
    small: M = 40, N = 36, K = 40
"""
WITHOUT_BF16 = GEMM.replace(', "bf16x3"]', "]")


def test_the_string_constant_is_a_constexpr_passed_to_dot():
    source = generated(WITHOUT_BF16)
    assert "    PREC: tl.constexpr,\n" in source
    assert "tl.dot(a, b, acc, input_precision=PREC)" in source


def test_a_choice_the_interpreter_refuses_passes_ieee_there():
    source = generated(GEMM)
    assert 'tl.dot(a, b, acc, input_precision=("ieee" if _ARGUS_INTERPRETED else PREC))' in source
    assert "_ARGUS_INTERPRETED = tl.constexpr(" in source


def test_a_literal_precision_stays_a_literal():
    source = generated(WITHOUT_BF16.replace("input_precision=PREC", 'input_precision="tf32"'))
    assert 'tl.dot(a, b, acc, input_precision="tf32")' in source


def test_the_tune_list_becomes_one_configuration_per_precision():
    info = generate(check_source(GEMM)).kernels["mm"]
    assert info.constants["PREC"] == "tf32x3"
    assert info.configs == [{"PREC": "ieee"}, {"PREC": "tf32x3"}, {"PREC": "tf32"}, {"PREC": "bf16x3"}]


def test_the_launcher_passes_the_declared_precision_or_an_override(build):
    module = build(GEMM)
    A, B, C = torch.randn(40, 40), torch.randn(40, 36), torch.empty(40, 36).half()
    module.mm(A, B, C)
    module.mm(A, B, C, PREC="tf32")
    declared, overridden = module.KERNELS["mm"]["jit"].launches
    assert declared["kwargs"]["PREC"] == "tf32x3" and overridden["kwargs"]["PREC"] == "tf32"


def test_the_launcher_refuses_a_precision_triton_does_not_know(build):
    module = build(GEMM)
    with pytest.raises(module.ArgusLaunchError, match="`PREC`: expected an input precision"):
        module.mm(torch.randn(40, 40), torch.randn(40, 36), torch.empty(40, 36).half(), PREC="fp32")


def test_the_autotuner_gets_one_config_per_precision(build):
    module = build(GEMM, record=False)  # triton.autotune wraps the real jit function; nothing is launched
    entry = module.KERNELS["mm"]
    tuner = module._autotuned(entry, {"BM": 32, "BN": 32, "BK": 16}, {})
    assert [config.kwargs for config in tuner.configs] == entry["configs"]


@pytest.mark.parametrize("precision", ["ieee", "tf32x3", "tf32", "bf16x3"])
def test_every_precision_runs_under_the_interpreter(tmp_path, precision):
    path = tmp_path / "mm.argus"
    path.write_text(GEMM, encoding="utf-8")
    [record] = run_harness("interpret", [path], "--override", f"PREC={precision}")
    assert record["overrides"] == {"PREC": precision}
    assert record["close"] and record["nan"] == 0, record
