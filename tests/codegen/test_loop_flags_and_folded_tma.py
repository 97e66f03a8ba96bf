"""`policy warp_specialize` and `policy flatten` (options of the outermost `range` loops, as constexpr flags),
and TMA descriptors that fold leading scalar axes into rows (codegen/tma.py). The attention experts run both
under the interpreter in tests/experts; the H200 numbers are in docs/perf.md."""

from __future__ import annotations

import pytest
import torch
from codegen_support import generated

from argus.dsl.check import check_source

ATTENTION = """
kernel attn(Q: f16[Z, H, S, D], K: f16[Z, H, S, D], O: out f16[Z, H, S, D]):
    tile D = 32, BM = 32, BN = 32
    policy num_warps = 4, tma = 1{policy}
    requires S % BM == 0, S % BN == 0
    grid (cdiv(S, BM), Z * H)
    zh = program_id(1)
    z, h = zh // H, zh % H
    rm = program_id(0) * BM + arange(BM)
    rd = arange(D)
    q = load(Q[z, h, rm, rd])
    acc = zeros((BM, D), f32)
    for n0 in range(0, S, BN):
        k = load(K[z, h, n0 + arange(BN), rd])
        for i in range(0, 2):
            acc += dot(q, trans(k)).to(f16).to(f32)
    store(O[z, h, rm, rd], acc.to(f16))
"""

MASKED_RUN = """
kernel per_expert(X: f16[M, K], W: f16[E, K, N], Y: out f16[M, N]):
    tile BM = 32, BN = 32, BK = 16
    policy num_warps = 4, tma = 1
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(X[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(W[0, rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc)
    store(Y[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""


def test_unmasked_leading_scalar_axes_fold_into_rows():
    text = generated(ATTENTION.format(policy=""))
    made = [line for line in text.splitlines() if "tl.make_tensor_descriptor(Q," in line]
    assert len(made) == 1
    assert "shape=[Z * H * S, D]" in made[0] and "strides=[Q_stride2, Q_stride3]" in made[0], made
    assert "block_shape=[BM, D]" in made[0]
    assert "Q_tma0.load([(z * H + h) * S + " in text and ".reshape(" not in text
    assert "\"tma_folded\": {'Q': 2, 'K': 2, 'O': 2}" in text


def test_a_masked_first_run_keeps_every_axis():
    text = generated(MASKED_RUN)
    made = [line for line in text.splitlines() if "tl.make_tensor_descriptor(W," in line]
    assert len(made) == 1 and "shape=[E, K, N]" in made[0] and "block_shape=[1, BK, BN]" in made[0], made
    assert '"tma_folded": {}' in text


def test_loop_flags_go_to_the_outermost_runtime_loops_only():
    text = generated(ATTENTION.format(policy=", warp_specialize = 1, flatten = 0"))
    assert "ARGUS_WS: tl.constexpr = 0" in text and "ARGUS_FLATTEN: tl.constexpr = 0" in text
    assert "for n0 in tl.range(0, S, BN, warp_specialize=ARGUS_WS, flatten=ARGUS_FLATTEN):" in text
    assert "for i in range(2):" in text  # the nested loop stays a plain range
    plain = generated(ATTENTION.format(policy=""))
    assert "tl.range(" not in plain and "ARGUS_WS: tl.constexpr" not in plain


@pytest.mark.parametrize("setting", ["warp_specialize", "flatten"])
def test_loop_flags_are_zero_or_one(setting):
    check = check_source(ATTENTION.format(policy=f", {setting} = 2"))
    assert any(d.code == "AR403" and f"{setting} must be 0 or 1" in d.message for d in check.diagnostics)


def launched(build, text: str, tensors: dict, **overrides) -> dict:
    module = build(text)
    entry = module.KERNELS["attn"]
    entry["launcher"](**tensors, **overrides)
    return entry["jit"].launches[-1]["kwargs"]


def test_launcher_passes_the_flags_and_turns_specialization_off_with_pointers(build):
    text = ATTENTION.format(policy=", warp_specialize = 1")
    q, k, o = (torch.zeros(2, 3, 64, 32, dtype=torch.float16) for _ in range(3))
    on = launched(build, text, {"Q": q, "K": k, "O": o})
    assert on["ARGUS_TMA"] == 1 and on["ARGUS_WS"] == 1
    off = launched(build, text, {"Q": q, "K": k, "O": o}, warp_specialize=0)
    assert off["ARGUS_TMA"] == 1 and off["ARGUS_WS"] == 0
    # the pointer form (asked for, or the fallback) runs unspecialized
    pointers = launched(build, text, {"Q": q, "K": k, "O": o}, tma=0)
    assert pointers["ARGUS_TMA"] == 0 and pointers["ARGUS_WS"] == 0


def test_folded_axes_must_be_contiguous_for_the_descriptors(build):
    text = ATTENTION.format(policy="")
    q, k, o = (torch.zeros(2, 3, 64, 32, dtype=torch.float16) for _ in range(3))
    assert launched(build, text, {"Q": q, "K": k, "O": o})["ARGUS_TMA"] == 1
    # heads interleaved with rows ([Z, S, H, D] memory seen as [Z, H, S, D]): each row is aligned and its
    # innermost stride is 1, but Z * H * S rows are not one strided axis, so the pointers run
    interleaved = torch.zeros(2, 64, 3, 32, dtype=torch.float16).permute(0, 2, 1, 3)
    assert launched(build, text, {"Q": interleaved, "K": k, "O": o})["ARGUS_TMA"] == 0


def test_the_launcher_and_the_kernel_name_the_same_loop_flags(build):
    # the runtime is copied into each module as text, so it keeps its own copy of codegen's table
    from argus.codegen.body import LOOP_FLAG_NAMES

    assert build(ATTENTION.format(policy=""))._LOOP_FLAGS == LOOP_FLAG_NAMES
