"""AR318 (verify/carried_tiles.py): a dot's accumulator carried from one tile of a loop into the next, and a
sum no dot feeds carried from one work item of a persistent walk into the next.

The buggy persistent GEMM and LayerNorm and their fixed twins are in the corpus
(carried_persistent_gemm_acc_not_reset, carried_persistent_layernorm_sums_not_reset); here, the kernels that
carry a sum across a loop on purpose, which must not be reported: a sum over a batch stored into one tile, a
linear-attention state whose chunks add to it and which is stored once a chunk, a per-program partial sum
stored after its walk, a running total over one row's column blocks, a row prefetched for the next iteration.
"""

from __future__ import annotations

from test_scans_and_atomics import CARRIED_SCAN

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


# ---- sums no dot feeds, across a persistent walk (the corpus: carried_persistent_layernorm_sums_not_reset) ----

ROW_WALK = """
kernel rms(x: f32[M, N], y: out f32[M, N], partial: out f32[P, BN]):
    tile BN = 64, P = 4
    grid (P,)
    {before}
    for row in range(program_id(0), M, P):
        {inside}
        for c0 in range(0, N, BN):
            cols = c0 + arange(BN)
            v = load(x[row, cols], mask=cols < N, other=0)
            acc += v * v
        rstd = rsqrt(sum(acc, axis=0) / N + 1e-6)
        for c0 in range(0, N, BN):
            cols = c0 + arange(BN)
            v = load(x[row, cols], mask=cols < N, other=0)
            store(y[row, cols], v * rstd, mask=cols < N)
    store(partial[program_id(0), arange(BN)], {after})
"""


def test_a_sum_zeroed_once_before_a_persistent_row_walk_is_reported_with_two_rows():
    found = [d for d in diagnostics(ROW_WALK.format(before="acc = zeros((BN,), f32)", inside="", after="acc"))]
    assert [(d.code, d.range.start.line + 1) for d in found] == [("AR318", 5)]
    values = found[0].data["counterexample"]["values"]
    assert values["the next iteration: row"] == values["x index 0 (M) now"] + 4
    assert values["x index 0 (M) at the next iteration"] == values["the next iteration: row"]
    assert "start `acc` inside the `row` loop" in found[0].message


def test_a_sum_reset_per_row_is_clean():
    source = ROW_WALK.format(before="", inside="acc = zeros((BN,), f32)", after="zeros((BN,), f32)")
    assert [d.code for d in diagnostics(source)] == []


PARTIAL_SUMS = """
kernel colsum(x: f32[M, N], partial: out f32[P, N]):
    tile BN = 64, P = 4
    requires N <= BN
    grid (P,)
    cols = arange(BN)
    acc = zeros((BN,), f32)
    for row in range(program_id(0), M, P):
        acc += load(x[row, cols], mask=cols < N, other=0)
    store(partial[program_id(0), cols], acc, mask=cols < N)
"""

PREFETCH = """
kernel scale(x: f32[M, N], y: out f32[M, N]):
    tile BN = 64, P = 4
    requires N <= BN, M >= P
    grid (P,)
    cols = arange(BN)
    v = load(x[program_id(0), cols], mask=cols < N, other=0)
    for row in range(program_id(0), M, P):
        nxt = load(x[row + P, cols], mask=(cols < N) & (row + P < M), other=0)
        store(y[row, cols], v * 2.0, mask=cols < N)
        v = nxt
"""


def test_sums_carried_on_purpose_are_not_reported():
    # a per-program partial sum over the walk, stored after it; a running total over one row's column blocks
    # (not a persistent walk: each iteration is the same row's next block)
    assert [d.code for d in diagnostics(PARTIAL_SUMS)] == []
    assert [d.code for d in diagnostics(CARRIED_SCAN.format(step="+= sum(v, axis=0)"))] == []
    # the next row loaded ahead and carried into the next iteration: replaced, not accumulated
    assert [d.code for d in diagnostics(PREFETCH)] == []
