"""Coverage (AR304) and races (AR302) under the program orders real kernels use (issue 17, class 3): persistent
tile loops, Triton's 1-D grouped order, grid-stride loops and atomics into a many-to-one row map. Each correct
form proves clean with every obligation proved within the default budget; each broken twin is an AR304 error
whose witness the numpy evaluator confirms; an element the construction of writers misses is AR312 (undecided),
never an AR304 naming an element some program writes; and a budget that runs out says so."""

from __future__ import annotations

from pathlib import Path

import pytest
import z3
from test_corpus import confirm

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.divisions import abstracted, has_symbolic_division
from argus.verify.solve import out_of_budget_reason

ROOT = Path(__file__).resolve().parents[2]

PERSISTENT = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 64, BN = 64, BK = 32, GROUP_M = 4, SMS = 8
    grid (SMS,)
    tiles_n = cdiv(N, BN)
    per_group = GROUP_M * tiles_n
    num_tiles = per_group * cdiv(cdiv(M, BM), GROUP_M)
    for t in range(program_id(0), STOP, STEP):
        group = t // per_group
        q = t % per_group
        pm = group * GROUP_M + q % GROUP_M
        pn = q // GROUP_M
        rm = pm * BM + arange(BM)
        rn = pn * BN + arange(BN)
        acc = zeros((BM, BN), f32)
        for k0 in range(0, K, BK):
            rk = k0 + arange(BK)
            a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
            b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
            acc = dot(a, b, acc)
        store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""

GROUPED_1D = """
kernel mm(x: f16[M, N], C: out f16[M, N]):
    tile BM = 32, BN = 32, GROUP_M = 4
    grid (GROUP_M * cdiv(N, BN) * cdiv(cdiv(M, BM), GROUP_M),)
    pid = program_id(0)
    per_group = GROUP_M * cdiv(N, BN)
    group = pid // per_group
    q = pid % PLACE
    pm = group * GROUP_M + q % GROUP_M
    pn = q // GROUP_M
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(C[rm, rn], v, mask=(rm < M, rn < N))
"""

# Triton's tutorial decode, whose last group is narrower (minimum): race-free and covering, but the number
# of rows of the group is not a constant, so the construction of writers cannot invert `% group_size_m`
TRITON_MIN = """
kernel mm(x: f16[M, N], C: out f16[M, N]):
    tile BM = 32, BN = 32, GROUP_M = 4
    grid (cdiv(M, BM) * cdiv(N, BN),)
    pid = program_id(0)
    num_pid_in_group = GROUP_M * cdiv(N, BN)
    first_pid_m = (pid // num_pid_in_group) * GROUP_M
    group_size_m = minimum(cdiv(M, BM) - first_pid_m, GROUP_M)
    pm = first_pid_m + (pid % num_pid_in_group) % group_size_m
    pn = (pid % num_pid_in_group) // group_size_m
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(C[rm, rn], v, mask=(rm < M, rn < N))
"""

STRIDED = """
kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 128, PROGRAMS = 16
    grid (PROGRAMS,)
    for off in range(program_id(0) * BLOCK, N, STEP):
        offs = off + arange(BLOCK)
        v = load(x[offs], mask=offs < N, other=0)
        store(y[offs], v * 2.0, mask=offs < N)
"""

ATOMIC_ROWS = """
kernel group_sums(x: f32[M, N], out: out f32[G, N]):
    tile ROWS = 4, BN = 64
    requires M == G * ROWS
    grid (M, cdiv(N, BN))
    row = program_id(0)
    cols = program_id(1) * BN + arange(BN)
    v = load(x[row, cols], mask=cols < N, other=0)
    atomic_add(out[TARGET_ROW, cols], v, mask=cols < N)
"""


def verified(text: str, **budget):
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return check, verify_check(check, **budget)


def clean(text: str) -> bool:
    _, result = verified(text)
    assert [d.message for d in result.diagnostics] == []
    return result.stats.obligations == result.stats.proved > 0


def hole(text: str) -> dict:
    """The AR304 of a kernel that leaves part of its output unwritten: an error (the verifier confirmed that
    no program writes the element at the witness's sizes), confirmed again by the numpy evaluator."""
    check, result = verified(text)
    found = [d for d in result.diagnostics if d.code == "AR304"]
    assert found, [d.message for d in result.diagnostics]
    d = found[0]
    assert d.severity.value == "error" and d.data["verdict"] == "refuted", d.message
    assert d.message.startswith("an element of output")
    kernel = next(iter(check.analysis.kernels.values()))
    assert confirm(kernel, d.data["counterexample"]) == "confirmed"
    return d.data["counterexample"]


@pytest.mark.parametrize("step", ["SMS", "num_programs(0)"])
def test_a_persistent_grouped_gemm_proves_clean(step):
    assert clean(PERSISTENT.replace("STOP", "num_tiles").replace("STEP", step))


def test_a_persistent_gemm_that_skips_its_last_tile_is_an_error():
    witness = hole(PERSISTENT.replace("STOP", "num_tiles - 1").replace("STEP", "SMS"))
    # the last tile of a group of 4 row tiles of 64 holds real rows only when M passes 3 * 64
    assert witness["sizes"]["M"] > 3 * 64


def test_the_persistent_candidate_proves_clean_within_the_default_budget():
    path = ROOT / "skills/experts/gemm_persistent.argus"
    assert clean(path.read_text())


def test_a_budget_that_runs_out_is_not_a_hole():
    path = ROOT / "skills/experts/gemm_persistent.argus"
    _, result = verified(path.read_text(), rlimit=10_000)
    assert not [d for d in result.diagnostics if d.code == "AR304"]
    undecided = [d for d in result.diagnostics if d.code == "AR312" and d.data["obligation"] in ("AR302", "AR304")]
    assert undecided
    for d in undecided:
        assert d.severity.value == "warning" and d.data["limit"] == "rlimit"
        assert d.data["reason"] == out_of_budget_reason(10_000)


def test_the_1d_grouped_order_proves_clean():
    assert clean(GROUPED_1D.replace("PLACE", "per_group"))


def test_a_1d_grouped_order_with_a_wrong_decode_is_an_error():
    hole(GROUPED_1D.replace("PLACE", "cdiv(N, BN)"))


def test_triton_grouped_order_with_a_narrower_last_group_proves_clean():
    assert clean(TRITON_MIN)


SWAP_HALVES = """
kernel swap_halves(x: f32[N], y: out f32[N]):
    tile BLOCK = 128
    requires N % 2 == 0
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    v = load(x[offs], mask=offs < N, other=0)
    dest = where(offs < N // 2, offs + N // 2, offs - N // 2)
    store(y[dest], v, mask=offs < N)
"""


def test_a_writer_the_construction_misses_is_undecided_not_a_hole():
    # correct (each half lands on the other), but the guess does not invert an index chosen by `where`
    _, result = verified(SWAP_HALVES)
    assert [d.code for d in result.diagnostics] == ["AR312"]
    d = result.diagnostics[0]
    assert d.data["obligation"] == "AR304" and "could not construct the writer" in d.data["reason"]
    assert "which is written (" in d.data["reason"] and "limit" not in d.data


def test_a_grid_stride_loop_proves_clean():
    assert clean(STRIDED.replace("STEP", "num_programs(0) * BLOCK"))


def test_a_grid_stride_loop_with_the_wrong_stride_is_an_error():
    hole(STRIDED.replace("STEP", "num_programs(0) * BLOCK * 2"))


def test_atomics_into_a_many_to_one_row_map_prove_clean():
    assert clean(ATOMIC_ROWS.replace("TARGET_ROW", "row // ROWS"))


def test_atomics_into_a_wrong_row_map_leave_a_hole():
    hole(ATOMIC_ROWS.replace("TARGET_ROW", "row // (ROWS * 2)"))


# ---- the linear form of a division by a symbolic divisor (divisions.py) ----------------------------
def test_only_a_non_constant_divisor_is_abstracted():
    t, p = z3.Ints("t p")
    assert has_symbolic_division(t % p == 0) and not has_symbolic_division(t % 8 == 0)
    assert abstracted(t / 8 > 1) is None


def test_the_abstraction_proves_what_the_division_identifies():
    # equal quotients and remainders by one positive divisor mean equal dividends
    t, u, p = z3.Ints("t u p")
    claim = z3.And(p > 0, t / p == u / p, t % p == u % p, t != u)
    solver = z3.Solver()
    solver.add(abstracted(claim))
    assert solver.check() == z3.unsat


def test_the_abstraction_keeps_what_does_not_follow():
    # a remainder below the divisor says nothing about which dividend it came from
    t, u, p = z3.Ints("t u p")
    claim = z3.And(p > 0, t % p == u % p, t != u)
    solver = z3.Solver()
    solver.add(abstracted(claim))
    assert solver.check() == z3.sat


# ---- exact per-expert tiles: a schedule that depends on the data (issue 18, item 4) ----------------
EXACT_TILES = """
kernel grouped(X: f16[M, K], W: f16[E, K, N], offsets: i32[E + 1], Y: out f16[M, N]):
    tile BM = 32, BN = 32, BK = 32, GROUP_M = 4, SMS = 8
    requires partition(offsets, M)
    grid (SMS,)
    per_group = GROUP_M * cdiv(N, BN)
    for t in range(program_id(0), per_group * cdiv(SLOTS, GROUP_M), SMS):
        v = (t // per_group) * GROUP_M + (t % per_group) % GROUP_M
        rn = ((t % per_group) // GROUP_M) * BN + arange(BN)
        for e in range(0, E):
            start = load(offsets[e])
            end = load(offsets[e + 1])
            base = start // BM + e
            if (v >= base) and (start + (v - base) * BM < end):
                rm = start + (v - base) * BM + arange(BM)
                acc = zeros((BM, BN), f32)
                for k0 in range(0, K, BK):
                    rk = k0 + arange(BK)
                    a = load(X[rm, rk], mask=(rm < M, rk < K), other=0)
                    b = load(W[e, rk, rn], mask=(rk < K, rn < N), other=0)
                    acc = dot(a, b, acc)
                store(Y[rm, rn], acc.to(f16), mask=(rm < end, rn < N))
"""


def test_exact_per_expert_tiles_in_a_persistent_walk_prove_clean():
    # the row's expert is the partition's owner of the row; its first row's `offsets[e] // BM` is then known,
    # and the slot follows (coverage.settle_known_splits)
    assert clean(EXACT_TILES.replace("SLOTS", "M // BM + E"))


def test_exact_tiles_with_too_few_slots_leave_a_hole_that_is_an_error():
    # a hole that depends on the data: with the witness's cut points pinned (Prover.pinned_partitions), no
    # program of any data that completes them writes the element, so it is an error, not "may never"
    witness = hole(EXACT_TILES.replace("SLOTS", "cdiv(M, BM)"))
    assert any(name.startswith("offsets[") for name in witness["data"])
