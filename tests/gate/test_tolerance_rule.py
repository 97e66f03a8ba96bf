"""The correct stage's tolerance (docs/gate.md, "Correctness: what passes"), run through the runner's own compare on
torch tensors: an fp32 GEMM summed the way cuBLAS sums it passes at large K where the old rule failed it, a real
bug (a K term dropped or doubled, a wrong element) still fails, emulated tf32 fails as argus.dsl.accuracy
predicts and tf32x3 passes as it predicts; the manifest carries each output's reduction and declared tolerance
to the runner, which uses them."""

from __future__ import annotations

import json
import sys

import fp32_emulation as emulation
import pytest
import torch
from gate_support import FIXTURES, ROOT, fixture_bundle

from argus.dsl import accuracy
from argus.dsl.check import check_source
from argus.gate import Status, run_bundle
from argus.gate.manifest import kernel_facts
from argus.gate.report import correct_line

sys.path.insert(0, str(ROOT / "server" / "argus" / "gate" / "runner"))
import gate_correct

M = N = 128  # 16,384 elements: enough for the old rule to fail an FMA chain at K = 8192, fast on the CPU


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machines are shared
    yield
    torch.set_num_threads(threads)


def judged(got, expected, length: int, declared: float | None = None) -> dict:
    tol, atol = gate_correct.tolerance(torch.float32, length, declared)
    return gate_correct.compare("C", got, expected, tol, atol)


@pytest.fixture(scope="module")
def long_k():
    """randn A [128, 8192] and B [8192, 128], torch's fp32 product (the reference: it computes in the output
    dtype) and the product as cuBLAS computes it (one FMA per k per element, the same on the H200)."""
    torch.set_num_threads(1)
    a, b = emulation.inputs(M, 8192, N, "randn", seed=16)
    return a, b, a @ b, emulation.matmul(a, b, "fp32_fma")


def test_cublas_like_fp32_passes_at_large_k_where_the_old_rule_failed_it(long_k):
    a, b, reference, cublas_like = long_k
    old = gate_correct.compare("C", cublas_like, reference, 1e-4)
    assert old["mismatch"] is not None and old["mismatch"]["count"] >= 5  # |d| > 1e-4 (1 + |ref|) somewhere
    new = judged(cublas_like, reference, 8192)
    assert new["mismatch"] is None
    assert new["max_rel_error"] <= 1e-4 / 2  # with a margin of two at least
    for other in ("fp32_splitk4", "fp64"):  # split-K, and the exact sum rounded once: also fp32 results
        record = judged(emulation.matmul(a, b, other), reference, 8192)
        assert record["mismatch"] is None and record["max_rel_error"] <= 1e-4 / 2, other
    against_exact = judged(cublas_like, (a.double() @ b.double()).float(), 8192)  # a reference computed in f64
    assert against_exact["mismatch"] is None


def test_an_off_by_one_in_k_or_a_wrong_element_still_fails(long_k):
    a, b, reference, cublas_like = long_k
    dropped = emulation.fma_chain(a, b, 0, a.shape[1] - 1)  # `range(0, K - 1)`
    doubled = (cublas_like.double() + a[:, :1].double() @ b[:1].double()).float()  # the first k counted twice
    wrong = cublas_like.clone()
    wrong[3, 5] = cublas_like[3, 6]
    for name, got in (("dropped", dropped), ("doubled", doubled), ("wrong element", wrong)):
        record = judged(got, reference, 8192)
        assert record["mismatch"] is not None, name
        assert record["max_rel_error"] > 10 * 1e-4, name  # not a near miss: ten times the tolerance and more
    assert judged(dropped, reference, 8192)["mismatch"]["count"] > M * N // 2
    assert judged(wrong, reference, 8192)["mismatch"]["index"] == [3, 5]


@pytest.mark.parametrize("distribution", ["randn", "uniform"])
def test_tf32_fails_and_tf32x3_passes_as_the_accuracy_rule_predicts(distribution):
    a, b = emulation.inputs(64, 4096, 64, distribution, seed=4096)
    reference = a @ b
    tf32 = judged(emulation.matmul(a, b, "tf32"), reference, 4096)
    assert tf32["mismatch"] is not None
    assert not accuracy.precision_keeps_accuracy("tf32", "f32", 4096)[0]
    tf32x3 = judged(emulation.matmul(a, b, "tf32x3"), reference, 4096)
    assert tf32x3["mismatch"] is None
    assert accuracy.precision_keeps_accuracy("tf32x3", "f32", 4096)[0]
    # a looser tolerance, declared, is what admits tf32; the rule says how loose
    needed = accuracy.tolerance_needed("tf32", "f32", 4096)
    assert judged(emulation.matmul(a, b, "tf32"), reference, 4096, declared=needed)["mismatch"] is None


def test_the_runner_and_argus_agree_on_the_rule():
    names = {"float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3"}
    names |= {"float8_e5m2": "f8e5m2", "int32": "i32", "bool": "bool"}
    for torch_name, argus_name in names.items():
        for length in (1, 80, 419, 420, 4096, 65536, 10**9):
            assert gate_correct.tolerance(getattr(torch, torch_name), length) == accuracy.tolerance_at(
                argus_name, length
            ), (torch_name, length)
    assert gate_correct.tolerance(torch.float32, 4096, 2e-3) == accuracy.tolerance_at("f32", 4096, 2e-3)
    assert gate_correct.reduction_length(["K", 2], {"K": 80, "M": 3}) == accuracy.reduction_length(["K", 2], {"K": 80})


def test_the_relative_error_reported_is_at_most_tol_exactly_when_every_element_passes():
    expected = torch.tensor([0.0, 100.0], dtype=torch.float64)
    tol, atol = gate_correct.tolerance(torch.float32, 4096)
    edge = torch.tensor([atol, 100.0 + atol + tol * 100.0], dtype=torch.float64) * (1 - 1e-12)  # on the boundary
    record = gate_correct.compare("C", edge, expected, tol, atol)
    assert record["mismatch"] is None and record["max_rel_error"] == pytest.approx(tol)
    over = gate_correct.compare("C", edge * torch.tensor([1.01, 1.0]), expected, tol, atol)
    assert over["mismatch"] is not None and over["max_rel_error"] > tol
    exact = gate_correct.compare("n", torch.tensor([1, 2]), torch.tensor([1, 3]), 0.0, 0.0)  # integers
    assert exact["mismatch"]["count"] == 1


GEMM = (ROOT / "tests" / "dsl" / "test_accuracy.py").read_text(encoding="utf-8").split('GEMM = """', 1)[1]
GEMM = GEMM.split('"""', 1)[0]


def test_the_manifest_carries_each_outputs_reduction_and_declared_tolerance():
    facts = kernel_facts(check_source(GEMM), "gemm")
    assert facts["reductions"] == {"C": ["K"]} and facts["tolerances"] == {}
    assert "tf32" not in facts  # the silent tf32 relaxation is gone: a file declares a looser tolerance
    declared = GEMM.replace("reference gemm(A, B):", "reference gemm(A, B) tolerance C = 2e-3:")
    assert kernel_facts(check_source(declared), "gemm")["tolerances"] == {"C": 2e-3}


def test_the_runner_judges_an_output_at_its_declared_tolerance_and_reports_the_rule(tmp_path):
    """The vector_add fixture with z = x + y + 1e-3: over f32's 1e-4, within a declared 1e-2."""
    off = [("tl.store(z + offs, a + b, mask=mask)", "tl.store(z + offs, a + b + 1e-3, mask=mask)")]
    kernel = (FIXTURES / "vector_add_kernel.py").read_text(encoding="utf-8")
    assert off[0][0] in kernel, "the fixture's store line moved"
    run_py = fixture_bundle(tmp_path / "strict", kernel_edits=off)
    [strict] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    assert strict.correct.status == Status.failed
    assert "by more than 0.0001 + 0.0001·|reference|" in strict.correct.message
    assert strict.correct.facts.tolerance == {"z": 1e-4} and strict.correct.facts.reduction_length == {"z": 1}

    run_py = fixture_bundle(tmp_path / "declared", kernel_edits=off)
    manifest = json.loads((run_py.parent / "manifest.json").read_text())
    manifest["kernels"]["vector_add"]["tolerances"] = {"z": 1e-2}
    (run_py.parent / "manifest.json").write_text(json.dumps(manifest))
    [declared] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    assert declared.correct.status == Status.passed, declared.correct.message
    assert declared.correct.facts.tolerance == {"z": 1e-2}


def test_a_long_reduction_reaches_the_runner_as_a_larger_absolute_tolerance(tmp_path):
    """The fixture's manifest says z sums over N (it does not, but the runner only multiplies): at N = 4099 the
    absolute part is 4 u N, and the report says so."""
    run_py = fixture_bundle(tmp_path / "long")
    manifest = json.loads((run_py.parent / "manifest.json").read_text())
    manifest["kernels"]["vector_add"]["reductions"] = {"z": ["N"]}
    (run_py.parent / "manifest.json").write_text(json.dumps(manifest))
    [result] = run_bundle(run_py, device="cpu", stages=("correct",), trials=1)
    assert result.correct.status == Status.passed
    facts = result.correct.facts
    assert facts.reduction_length == {"z": 4099}
    assert facts.absolute_tolerance["z"] == pytest.approx(4 * 2**-24 * 4099)
    assert "tolerance z 0.0001 (absolute 0.00098 at R = 4099)" in correct_line(result)
