"""`policy tma = 1`: which accesses become TMA descriptor loads and stores, the two forms the generated code
keeps, and when the launcher turns the descriptors on (codegen/tma.py). Numerical agreement of both forms
under the interpreter is in tests/experts."""

from __future__ import annotations

import pytest
import torch
from codegen_support import generated, module_from

GEMM = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 32, BN = 32, BK = 16
    policy num_warps = 4{policy}
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
"""

NOT_BLOCKS = """
kernel odd(Q: f16[H, S, D], O: out f16[H, S, D], x: f16[M, N], y: out f16[M, N]):
    tile D = 64, BM = 32
    policy tma = 1
    grid (cdiv(S, BM), H)
    h = program_id(1)
    rm = program_id(0) * BM + arange(BM)
    rd = arange(D)
    kt = load(Q[h, rm[None, :], rd[:, None]], mask=rm[None, :] < S, other=0)      # transposed: pointers
    padded = load(Q[h, rm, rd], mask=(rm < S, None), other=-inf)                 # padding -inf: pointers
    store(O[h, rm, rd], trans(kt) + padded, mask=((rm < S) & (rm >= 1), None))    # not a whole-axis bound
    r = program_id(0) * BM + arange(BM)
    store(y[r, arange(32)], load(x[r, arange(32)], mask=(r < M, arange(32) < N), other=0), mask=(r < M, None))
"""


def test_without_the_policy_nothing_changes():
    text = generated(GEMM.format(policy=""))
    assert "ARGUS_TMA: tl.constexpr" not in text and "tl.make_tensor_descriptor(" not in text
    assert '"tma_tensors": []' in text


def test_block_loads_and_the_store_get_descriptors_made_once():
    text = generated(GEMM.format(policy=", tma = 1"))
    assert "ARGUS_TMA: tl.constexpr = 0" in text
    for tensor, box in (("A", "[BM, BK]"), ("B", "[BK, BN]"), ("C", "[BM, BN]")):
        made = [line for line in text.splitlines() if f"tl.make_tensor_descriptor({tensor}," in line]
        assert len(made) == 1 and f"block_shape={box}" in made[0], made
    assert "A_tma0.load([" in text and "B_tma1.load([k0, " in text and "C_tma2.store([" in text
    # the pointer form stays, for launches where the tensors do not qualify
    assert text.count("tl.load(A +") == 1 and text.count("tl.store(C +") == 1


def test_transposed_padded_and_partly_masked_accesses_stay_pointers():
    text = generated(NOT_BLOCKS)
    made = [line.strip().split(" = ")[0] for line in text.splitlines() if "tl.make_tensor_descriptor(" in line]
    # only x's load and y's store (row bound plus an unmasked whole axis) are block accesses
    assert sorted(made) == ["x_tma0", "y_tma1"] or sorted(made) == ["x_tma1", "y_tma0"], made
    assert "Q_tma" not in text and "O_tma" not in text


@pytest.fixture
def flag(tmp_path):
    module = module_from(generated(GEMM.format(policy=", tma = 1")), "kernels_tma", tmp_path)
    entry = module.KERNELS["mm"]

    def compute(wanted: int, **tensors) -> dict:
        return module._tma_flag(entry, tensors, wanted)

    return compute


def test_launcher_turns_tma_on_only_when_asked_and_every_tensor_qualifies(flag):
    a, b, c = torch.zeros(64, 48, dtype=torch.float16), torch.zeros(48, 64, dtype=torch.float16), None
    c = torch.zeros(64, 64, dtype=torch.float16)
    assert flag(1, A=a, B=b, C=c) == {"ARGUS_TMA": 1}
    assert flag(0, A=a, B=b, C=c) == {"ARGUS_TMA": 0}
    column_major = b.t().contiguous().t()  # innermost stride is not 1
    assert flag(1, A=a, B=column_major, C=c) == {"ARGUS_TMA": 0}
    narrow = torch.zeros(64, 52, dtype=torch.float16)[:, :48]  # row stride 104 bytes: not 16-byte aligned
    assert flag(1, A=narrow, B=b, C=c) == {"ARGUS_TMA": 0}
