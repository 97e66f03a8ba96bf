"""The shared-memory estimate (argus.dsl.resources) against figures Triton 3.9 compiled for sm_90
(bench/shared_memory.py, docs/codegen.md), and AR410: every configuration a kernel may launch with fits, or
`argus check` says which tune value does not, at its span."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.resources import (
    SHARED_MEMORY_LIMIT,
    autotune_configs,
    check_resources,
    pipelined_bytes,
    shared_memory,
)

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION = "bench/variants/shared_memory_calibration.argus"

MATMUL = """\
kernel mm(A: {dtype}[M, K], B: {dtype}[K, N], C: out {dtype}[M, N]):
    tile BM = 128, BN = {bn}, BK = 64{bk_tune}
    policy num_warps = 8, num_stages = {stages}{stages_tune}
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc{precision})
    store(C[rm, rn], acc{cast}, mask=(rm < M, rn < N))

reference mm(A, B):
    return A @ B

sizes mm:
    small: M = 40, N = 24, K = 136
"""


def matmul(dtype="f16", bn=256, bk_tune="", stages=3, stages_tune="", precision="") -> str:
    cast = ".to(f16)" if dtype == "f16" else ""
    return MATMUL.format(
        dtype=dtype, bn=bn, bk_tune=bk_tune, stages=stages, stages_tune=stages_tune, precision=precision, cast=cast
    )


def only_kernel(text: str):
    check = check_source(text)
    (kernel,) = check.module.kernels
    return check, kernel, check.analysis.kernels[kernel.name]


def ar410(text: str):
    return [d for d in check_source(text).diagnostics if d.code == "AR410"]


def span_text(text: str, diagnostic) -> str:
    start, end = diagnostic.range.start, diagnostic.range.end
    assert start.line == end.line
    return text.split("\n")[start.line][start.character : end.character]


# ---- the estimate, against what Triton 3.9 compiled for sm_90 (bytes from bench/shared_memory.py) ----------


@pytest.mark.parametrize(
    ("path", "kernel", "overrides", "compiled"),
    [
        ("examples/matmul.argus", "matmul", {}, 147456),  # 3 stages of (128 x 64 + 64 x 256) f16
        ("examples/matmul.argus", "matmul", {"BN": 128}, 98304),
        ("examples/moe_gemm.argus", "moe_gemm", {"BM": 64}, 122880),  # the inner of two nested loops only
        ("examples/attention.argus", "attention", {}, 131072),  # q stays resident beside 3 stages of k and v
        ("examples/attention.argus", "attention", {"num_stages": 1}, 65536),
        ("skills/experts/gemm.argus", "gemm", {}, 147480),  # TMA: and an 8-byte barrier a buffer
        ("skills/experts/gemm.argus", "gemm", {"num_stages": 1}, 65536),  # the epilogue's TMA staging of C
        ("skills/experts/attention.argus", "attention_causal", {"tma": 0}, 229376),  # two loops, one at a time
        (
            "skills/heldout/batched_gemm.argus",
            "batched_gemm",
            {"BM": 128, "BN": 128, "BK": 64, "num_stages": 4},
            131072,
        ),
        ("examples/layernorm.argus", "layernorm", {}, 32),  # a reduction across 8 warps
        ("skills/experts/attention.argus", "attention", {}, 197112),  # warp-specialized: O's TMA staging on top
        ("skills/experts/attention.argus", "attention", {"num_warps": 8}, 163856),  # 8 warps: not specialized
        ("skills/experts/attention.argus", "attention_causal", {}, 230400),  # two TMA loops' barriers: 1 KiB
        (CALIBRATION, "mm_tf32x3", {"BM": 64, "BN": 128, "BK": 64, "num_warps": 4}, 163840),  # and a copy of a
        (CALIBRATION, "mm_bf16x3", {}, 81920),  # 2 f32 buffers of a and b, and b's two bf16 parts
        (CALIBRATION, "mm_bf16x6", {"BM": 64, "BN": 128, "num_warps": 4, "num_stages": 2}, 49152),
        (CALIBRATION, "mm8", {}, 65536),  # i8 on mma.sync: the i32 accumulator converted for its store
        (CALIBRATION, "chain", {"num_stages": 2}, 49152),  # W, loaded for the dot after the loop, reuses it
        (CALIBRATION, "rowsum_t", {"BM": 128, "BN": 128}, 65536),  # a transposed store through shared memory
        # Y's store keeps its expert mask, so it is a pointer store: nothing staged after the 2-stage loop
        ("skills/experts/grouped_gemm.argus", "grouped_gemm", {"BK": 32, "num_stages": 2}, 49168),
        # its store mask `rm < end` bounds by a loaded row, not a size: a pointer store there too, not staged
        ("skills/experts/grouped_gemm_exact.argus", "grouped_gemm_exact", {}, 147480),
        # persistent: C's staging (128 x 256 f16) on top of the K loop's 3 stages, which the next tile needs
        ("skills/experts/gemm_persistent.argus", "gemm_persistent", {}, 213016),
        # two 128 x 128 halves stored one after the other: one half's staging on top of 4 stages
        ("skills/experts/candidates/gemm_split.argus", "gemm_persistent_split", {"num_stages": 4}, 229408),
        # warp-specialized at 4 warps: the staging counted once (213,016 compiled; the estimate adds the 488
        # bytes of specialization's barriers, which this compile did not allocate)
        (
            "skills/experts/gemm_persistent.argus",
            "gemm_plain_persistent",
            {"num_warps": 4, "warp_specialize": 1},
            213016 + 488,
        ),
    ],
)
def test_the_estimate_matches_the_sm90_compile(path, kernel, overrides, compiled):
    check = check_source((ROOT / path).read_text(encoding="utf-8"))
    source = next(k for k in check.module.kernels if k.name == kernel)
    assert shared_memory(check.analysis.kernels[kernel], overrides, source) == compiled


def test_exact_f32_keeps_one_buffer_fewer_and_four_bytes_an_element():
    """f32 with input_precision="ieee" runs on the CUDA cores: Triton keeps num_stages - 1 buffers (3 stages of
    128 x 64 and 64 x 256 f32 tiles: 2 x 192 KiB would not fit; compiled: 2 x 96 KiB at BN = 128)."""
    _, source, kernel = only_kernel(matmul("f32", bn=128, precision=', input_precision="ieee"'))
    assert shared_memory(kernel, {}, source) == 2 * (128 * 64 + 64 * 128) * 4
    _, source, kernel = only_kernel(matmul("f32", bn=128, precision=', input_precision="tf32"'))
    assert shared_memory(kernel, {}, source) == 3 * (128 * 64 + 64 * 128) * 4  # tf32: wgmma, num_stages buffers


def test_fewer_than_four_warps_run_mma_sync_with_one_buffer_fewer():
    _, source, kernel = only_kernel(matmul(bn=64))
    per_stage = (128 * 64 + 64 * 64) * 2
    assert pipelined_bytes(kernel) == per_stage
    assert shared_memory(kernel, {}, source) == 3 * per_stage
    assert shared_memory(kernel, {"num_warps": 2}, source) == 2 * per_stage


def test_a_derived_tile_constant_follows_the_one_it_is_computed_from():
    text = (
        matmul(bn=128)
        .replace("BK = 64", "BK = 64, BN2 = 2 * BN")
        .replace("tile BM = 128, BN = 128", "tile BM = 128, BN = 64")
    )
    text = (
        text.replace("arange(BN)", "arange(BN2)")
        .replace("cdiv(N, BN)", "cdiv(N, BN2)")
        .replace("(BM, BN)", "(BM, BN2)")
    )
    _, source, kernel = only_kernel(text)
    assert shared_memory(kernel, {}, source) == 3 * (128 * 64 + 64 * 128) * 2
    assert shared_memory(kernel, {"BN": 128}, source) == 3 * (128 * 64 + 64 * 256) * 2


def test_the_autotuner_configurations_leave_out_the_settings_it_keeps_declared():
    _, _, kernel = only_kernel(matmul(bk_tune=" tune [32, 64]", stages_tune=" tune [2, 3]").replace(
        "num_stages = 3 tune [2, 3]", "num_stages = 3 tune [2, 3], tma = 0 tune [0, 1]"
    ))  # fmt: skip
    configs = autotune_configs(kernel)
    assert configs == [{"BK": b, "num_stages": s} for b in (32, 64) for s in (2, 3)]


# ---- AR410 --------------------------------------------------------------------------------------------------


def test_a_kernel_whose_every_configuration_fits_checks_clean():
    text = matmul(bk_tune=" tune [32, 64]", stages_tune=" tune [2, 3, 4]")  # the largest: 4 x 48 KiB
    assert [d.text_line("mm.argus") for d in check_source(text).diagnostics] == []


def test_a_tune_value_that_fits_in_no_configuration_is_an_error_at_that_value():
    text = matmul(bk_tune=" tune [32, 64, 128]")
    (error,) = ar410(text)
    assert error.severity.value == "error"
    assert (error.range.start.line, span_text(text, error)) == (1, "128")
    assert error.message == (
        "BK = 128 needs 288 KiB of shared memory; an sm_90 program has 227 KiB; it fits in no configuration of "
        "the tune lists"
    )
    assert error.data["config"] == {"BK": 128, "num_stages": 3, "num_warps": 8} or error.data["config"]["BK"] == 128
    assert error.data["bytes"] == 294912 and error.data["limit"] == SHARED_MEMORY_LIMIT
    assert any("loaded at line 11" in r.message for r in error.related)


def test_the_default_fits_and_a_combination_of_tune_values_does_not():
    """BK = 128 fits at 2 stages (192 KiB) but not at 3 (288 KiB): both values of the combination are blamed,
    each naming the other; num_stages = 4 only with BK = 128."""
    text = matmul(bk_tune=" tune [64, 128]", stages=2, stages_tune=" tune [2, 3, 4]")
    errors = ar410(text)
    assert [(span_text(text, e), e.message.split(" needs ")[0]) for e in errors] == [
        ("128", "BK = 128 with num_stages = 3"),
        ("3", "num_stages = 3 with BK = 128"),
        ("4", "num_stages = 4 with BK = 128"),
    ]
    assert errors[0].message.endswith("needs 288 KiB of shared memory; an sm_90 program has 227 KiB")
    assert [e.range.start.line for e in errors] == [1, 2, 2]
    assert "num_stages = 3, from its tune list" in [r.message for r in errors[0].related]


def test_a_declared_configuration_that_does_not_fit_is_an_error_at_num_stages():
    text = matmul().replace("BK = 64", "BK = 128")
    (error,) = ar410(text)
    assert span_text(text, error) == "3" and error.range.start.line == 2
    assert error.message == (
        "the declared configuration (BM = 128, BN = 256, BK = 128, num_stages = 3) needs 288 KiB of shared memory; "
        "an sm_90 program has 227 KiB"
    )


def test_tma_tune_lists_add_no_configuration_and_warps_alone_are_not_blamed():
    text = matmul(stages=4).replace("num_warps = 8,", "num_warps = 8 tune [4, 8], tma = 0 tune [0, 1],")
    assert ar410(text) == []  # 4 stages of 48 KiB fit at either warp count


def test_a_kernel_with_errors_gets_no_resource_check():
    text = matmul(bk_tune=" tune [32, 64, 128]").replace(
        "acc = zeros((BM, BN), f32)", "acc = zeros((BM, BN), f32)\n    x = undefined"
    )
    codes = [d.code for d in check_source(text).diagnostics]
    assert "AR101" in codes and "AR410" not in codes


def test_every_example_expert_and_heldout_kernel_fits():
    paths = [
        *ROOT.glob("examples/**/*.argus"),
        *ROOT.glob("skills/experts/*.argus"),
        *ROOT.glob("skills/heldout/*.argus"),
    ]
    found = []
    for path in paths:
        check = check_source(path.read_text(encoding="utf-8"))
        for source in check.module.kernels:
            kernel = check.analysis.kernels.get(source.name)
            if kernel is not None:
                found += [d.text_line(path.name) for d in check_resources(source, kernel)]
    assert found == []


def test_a_configuration_its_requires_refuses_never_launches_and_is_not_checked():
    """attention_causal's `requires BM % BN == 0`: BM = 64 with BN = 128 is pruned by the launcher at every
    size, so its shared memory does not matter."""
    text = (
        matmul(bn=128)
        .replace("tile BM = 128,", "tile BM = 128 tune [64, 128],")
        .replace("BN = 128,", "BN = 128 tune [128, 256],")
    )  # BM = 64 with BN = 256 at 3 stages of BK = 64: 3 x 40 KiB fits; BN = 256 with BM = 128: 144 KiB fits
    text = text.replace("BK = 64", "BK = 128")  # now BN = 256: 288 KiB at BM = 128, 240 KiB at BM = 64
    assert {span_text(text, e) for e in ar410(text)} == {"256"}
    refused = text.replace("    grid", "    requires BM % BN == 0\n    grid", 1)  # BN = 256 never launches
    assert ar410(refused) == []
