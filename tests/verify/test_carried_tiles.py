"""AR318 (verify/carried_tiles.py): a dot's accumulator carried from one tile of a loop into the next.

The buggy persistent GEMM and its fixed twin are in the corpus (carried_persistent_gemm_acc_not_reset); here,
the kernels that carry a sum across a loop on purpose, which must not be reported: a sum over a batch stored
into one tile, and a linear-attention state whose chunks add to it and which is stored once a chunk.
"""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

PERSISTENT = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 64, BN = 64, BK = 32, NUM_SMS = 8
    grid (NUM_SMS,)
    npn = cdiv(N, BN)
    {before}
    for t in range(program_id(0), cdiv(M, BM) * npn, NUM_SMS):
        rm = (t // npn) * BM + arange(BM)
        rn = (t % npn) * BN + arange(BN)
        {inside}
        for k0 in range(0, K, BK):
            rk = k0 + arange(BK)
            a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
            b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
            acc = dot(a, b, acc)
        store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""

BATCH_SUM = """
kernel bsum(A: f16[Z, M, K], B: f16[Z, K, N], C: out f32[M, N]):
    tile BM = 64, BN = 64, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for z in range(0, Z):
        for k0 in range(0, K, BK):
            rk = k0 + arange(BK)
            a = load(A[z, rm, rk], mask=(rm < M, rk < K), other=0)
            b = load(B[z, rk, rn], mask=(rk < K, rn < N), other=0)
            acc = dot(a, b, acc)
        store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""

CHUNK_STATES = """
kernel states(k: f32[T, D], v: f32[T, D], S: out f32[NC, D, D]):
    tile BT = 16, D = 32
    requires T == NC * BT
    grid (1,)
    d = arange(D)
    state = zeros((D, D), f32)
    for c in range(0, NC):
        rt = c * BT + arange(BT)
        kc = load(k[rt, d])
        vc = load(v[rt, d])
        state = dot(trans(kc), vc, state, input_precision="ieee")
        store(S[c, d, d], state)
"""


def diagnostics(source: str) -> list:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


def test_an_accumulator_zeroed_before_the_tile_walk_is_reported_with_two_tiles():
    found = [
        d for d in diagnostics(PERSISTENT.format(before="acc = zeros((BM, BN), f32)", inside="")) if d.code == "AR318"
    ]
    assert len(found) == 1 and found[0].severity.name.lower() == "error"
    values = found[0].data["counterexample"]["values"]
    assert "the next iteration: t" in values
    now, then = values["A index 0 (M) now"], values["A index 0 (M) at the next iteration"]
    cols_now, cols_then = values["B index 1 (N) now"], values["B index 1 (N) at the next iteration"]
    assert (now, cols_now) != (then, cols_then)


def test_an_accumulator_reset_inside_the_walk_is_clean():
    result = diagnostics(PERSISTENT.format(before="", inside="acc = zeros((BM, BN), f32)"))
    assert [d.code for d in result if d.code.startswith("AR3")] == []


def test_a_sum_over_a_batch_into_one_tile_is_not_reported():
    assert "AR318" not in [d.code for d in diagnostics(BATCH_SUM)]


def test_a_state_carried_across_chunks_and_stored_each_chunk_is_not_reported():
    assert "AR318" not in [d.code for d in diagnostics(CHUNK_STATES)]
