"""AR316 without a dot (verify/walked_axes.py): a loop that accumulates what it loads reads every index of the
axis it walks; loops that mean to read less (split rows, windows, dots) make no claim."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify import walked_axes as module

ROW_SUM = """
kernel row_sum(x: f32[M, N], y: out f32[M]):
    tile BN = 128
    grid (M,)
    row = program_id(0)
    c = arange(BN)
    acc = zeros((BN,), f32)
    for c0 in range(START, STOP, STEP):
        v = load(x[row, c0 + c], mask=c0 + c < N, other=0.0)
        acc = ACCUMULATE
    store(y[row], sum(acc, axis=0))
"""


def kernel(start: str = "0", stop: str = "N", step: str = "BN", accumulate: str = "acc + v") -> str:
    return ROW_SUM.replace("START", start).replace("STOP", stop).replace("STEP", step).replace("ACCUMULATE", accumulate)


def claims(text: str) -> tuple[int, list]:
    """The walk obligations the kernel gets, and the verifier's AR316 diagnostics."""
    made = []
    original = module.walked_axis_obligations

    def counted(first):
        found = original(first)
        made.extend(found)
        return found

    from argus.verify import kernel as verify_kernel

    verify_kernel.walked_axis_obligations = counted
    try:
        check = check_source(text)
        assert not check.has_errors, [d.message for d in check.diagnostics]
        result = verify_check(check)
    finally:
        verify_kernel.walked_axis_obligations = original
    return len(made), [d for d in result.diagnostics if d.data.get("obligation", d.code) == "AR316"]


def test_a_loop_over_the_whole_row_is_proved():
    made, found = claims(kernel())
    assert made == 1 and found == []


def test_a_max_accumulation_is_claimed_too():
    made, found = claims(kernel(accumulate="maximum(acc, v)"))
    assert made == 1 and found == []


def test_a_loop_stopping_one_block_early_is_an_error_with_a_witness():
    made, [d] = claims(kernel(stop="N - BN"))
    assert made == 1
    assert d.severity.value == "error" and d.range.start.line + 1 == 8
    witness = d.data["counterexample"]
    n, missed = witness["sizes"]["N"], witness["values"]["x index 1 (N)"]
    assert 0 <= missed < n and not any(c0 <= missed < c0 + 128 for c0 in range(0, n - 128, 128))


def test_a_stride_of_two_blocks_is_an_error():
    _, [d] = claims(kernel(step="2 * BN"))
    assert d.severity.value == "error"


def test_a_loop_starting_one_block_late_is_an_error():
    _, [d] = claims(kernel(start="BN"))
    assert d.severity.value == "error" and d.data["counterexample"]["values"]["x index 1 (N)"] < 128


def test_a_range_that_depends_on_the_program_is_not_claimed():
    # a split row (each program sums a slice and adds it atomically) means to read part of the row
    made, found = claims(kernel(start="row * BN", stop="minimum(row * BN + BN, N)"))
    assert made == 0 and found == []


def test_a_window_whose_stop_does_not_name_the_extent_is_not_claimed_but_its_filter_is():
    text = """
kernel taps(x: f32[N], w: f32[T], y: out f32[N]):
    tile BLOCK = 128
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    acc = zeros((BLOCK,), f32)
    for t in range(0, T):
        v = load(x[offs + t], mask=offs + t < N, other=0.0)
        acc += v * load(w[t])
    store(y[offs], acc, mask=offs < N)
"""
    made, found = claims(text)
    # x's window is not claimed; the filter's taps `w[t]` are, one index an iteration, and proved
    assert made == 1 and found == []
    made, [d] = claims(text.replace("range(0, T)", "range(0, T - 1)"))
    assert made == 1 and d.severity.value == "error" and "`w` along T" in d.message


def test_a_filter_of_a_numeral_length_read_one_tap_short_is_an_error():
    text = """
kernel taps(x: f32[N], w: f32[4], y: out f32[N]):
    tile BLOCK = 128
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    acc = zeros((BLOCK,), f32)
    for t in static_range(STOP):
        acc += load(x[offs + t], mask=offs + t < N, other=0.0) * load(w[t])
    store(y[offs], acc, mask=offs < N)
"""
    assert claims(text.replace("STOP", "4")) == (1, [])
    _, [d] = claims(text.replace("STOP", "3"))
    assert d.severity.value == "error" and d.data["counterexample"]["values"]["w index 0 (4)"] == 3
    assert "`w` along axis 0 (of 4)" in d.message and "range(4)" in d.message


def test_an_accumulation_through_a_dot_is_left_to_the_contraction_claim():
    text = """
kernel mm(A: f16[M, K], B: f16[K, N], C: out f32[M, N]):
    tile BM = 32, BN = 32, BK = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K - BK, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc += dot(a, b)
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""
    made, found = claims(text)
    assert made == 0 and [d.data["kind"] for d in found] == ["contraction_coverage"]


def test_the_planes_of_a_workspace_summed_one_per_iteration_are_walked():
    text = """
kernel reduce_planes(P: f32[S, M, N], C: out f32[M, N]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for s in range(START, S):
        acc += load(P[s, rm, rn], mask=(rm < M, rn < N), other=0)
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""
    # every lane of the tile reads plane s: the index along S moves with the loop only
    assert claims(text.replace("START", "0")) == (1, [])
    _, [d] = claims(text.replace("START", "1"))
    assert d.severity.value == "error" and d.data["counterexample"]["values"]["P index 0 (S)"] == 0
