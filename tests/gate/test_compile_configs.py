"""The compile stage compiles each configuration the autotuner may pick, not only the declared one, and reports
its shared memory, registers and spills; one over an sm_90 program's 227 KiB is AR410 at the tune value that
brought it, where a launch would have died of Triton's OutOfResources. (Real sm_90 compiles, without a GPU: a
few seconds each.)"""

from __future__ import annotations

import json
from dataclasses import replace

from argus.codegen import generate, generate_problem
from argus.dsl.check import check_source
from argus.gate import Status, run_bundle
from argus.gate.bundle import write_files
from argus.gate.manifest import manifest

MM = """\
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 128, BN = 256, BK = 64 tune [64, 128]
    policy num_warps = 8, num_stages = 2
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))

reference mm(A, B):
    return (A.float() @ B.float()).half()

sizes mm:
    small: M = 40, N = 24, K = 136
"""


def bundle_without_the_check(text: str, folder):
    """A bundle of a kernel `argus check` would refuse for AR410, as if its estimate had let the configuration
    through (a Triton whose pipeliner takes more than the one the estimate was calibrated on): the runner finds
    out by compiling."""
    check = check_source(text)
    assert {d.code for d in check.diagnostics} == {"AR410"}
    check = replace(check, diagnostics=[d for d in check.diagnostics if d.code != "AR410"])
    generated = generate(check)
    facts = manifest(check, ["mm"], generated.line_map, "mm.argus")
    return write_files(folder, generated.source, {"mm": generate_problem(check, "mm")}, facts, text)


def test_each_autotuner_configuration_is_compiled_and_one_over_the_limit_is_ar410_at_its_tune_value(tmp_path):
    text = MM.replace("num_stages = 2", "num_stages = 3")  # BK = 64: 144 KiB; BK = 128: 288 KiB
    run_py = bundle_without_the_check(text, tmp_path / "bundle")
    resources = json.loads((tmp_path / "bundle" / "manifest.json").read_text())["kernels"]["mm"]["resources"]
    assert resources["autotune_configs"] == 2 and [c["config"] for c in resources["configs"]] == [{"BK": 128}]
    [result] = run_bundle(run_py, device="cpu", stages=["compile"], timeout_s=240)
    facts = result.compile.facts
    assert result.compile.status == Status.failed and not result.passed
    assert facts.config["BK"] == 64 and facts.shared_memory_bytes == 147456 == facts.estimated_shared_memory_bytes
    assert facts.registers > 0 and facts.autotune_configs == 2
    [other] = facts.configs
    assert other.config == {"BK": 128} and other.status == Status.failed
    assert other.shared_memory_bytes == 294912 == other.estimated_shared_memory_bytes and other.registers > 0
    [error] = result.errors
    assert error.code == "AR410" and error.stage == "compile"
    line = text.split("\n")[error.line - 1]
    assert line[error.column - 1 : error.end_column - 1] == "128" and "BK = 64 tune [64, 128]" in line
    assert error.message == (
        "BK = 128 needs 294912 bytes of shared memory when compiled for sm_90 (estimated 294912); sm_90 allows "
        "232448 per program"
    )


def test_configurations_that_fit_pass_with_their_facts_and_spills_are_a_warning(tmp_path):
    text = MM.replace("BK = 64 tune [64, 128]", "BK = 32 tune [32, 64]")  # 2 stages: 48 and 96 KiB
    check = check_source(text)
    assert not check.diagnostics
    generated = generate(check)
    facts = manifest(check, ["mm"], generated.line_map, "mm.argus")
    run_py = write_files(tmp_path / "bundle", generated.source, {"mm": generate_problem(check, "mm")}, facts, text)
    [result] = run_bundle(run_py, device="cpu", stages=["compile"], timeout_s=240)
    assert result.compile.status == Status.passed and result.passed, result.errors
    facts = result.compile.facts
    [other] = facts.configs
    assert other.config == {"BK": 64} and other.status == Status.passed and other.shared_memory_bytes == 98304
    spilled = [c for c in [facts, other] if (c.spill_stores_bytes or 0) + (c.spill_loads_bytes or 0)]
    assert len(facts.warnings) == len(spilled)  # a 128 x 256 f32 accumulator on 8 warps may spill: said, not failed
    assert all("spills registers" in w for w in facts.warnings)
