"""Split-K on an f32 GEMM whose output tiles are few and whose K is long: the split kernel checks clean, the
verifier proves it race-free and covered, the interpreter gate finds it correct, and its inverse folds it back
text for text; where the sum is not linear after the loop, or the output is 16-bit, it is refused with the
precondition that says why."""

from __future__ import annotations

from test_transforms import checks_clean, forward, only

from argus.gate import run_gate
from argus.skills.document import Document
from argus.skills.transforms import TRANSFORMS

# 64 x 64 outputs in 32 x 32 tiles are 4 programs at the large sizes; K = 16384 is 1024 steps of BK
F32_GEMM = """\
kernel mm(A: f32[M, K], B: f32[K, N], C: out f32[M, N]):
    tile BM = 32, BN = 32, BK = 16
    policy num_warps = 4
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)   # one program per output tile
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc, input_precision="ieee")
    store(C[rm, rn], acc * 0.5, mask=(rm < M, rn < N))

reference mm(A, B):
    return (A @ B) * 0.5

sizes mm:
    small: M = 40, N = 24, K = 200
    large: M = 64, N = 64, K = 16384
"""

SPLIT = """\
kernel mm(A: f32[M, K], B: f32[K, N], C: out f32[M, N]):
    tile BM = 32, BN = 32, BK = 16, SPLIT_K = 4 tune [1, 2, 4, 8]
    policy num_warps = 4
    grid (cdiv(M, BM), cdiv(N, BN), SPLIT_K)
    pm, pn = program_id(0), program_id(1)   # one program per output tile
    pk = program_id(2)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(pk * BK, K, SPLIT_K * BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc, input_precision="ieee")
    atomic_add(C[rm, rn], acc * 0.5, mask=(rm < M, rn < N))
"""
SPLIT_FILE = SPLIT + F32_GEMM[F32_GEMM.index("\nreference") :]

BIAS_GELU = F32_GEMM.replace(
    "    store(C[rm, rn], acc * 0.5, mask=(rm < M, rn < N))\n",
    "    acc += load(bias[rn], mask=rn < N, other=0)[None, :]\n"
    "    c = 0.5 * acc * (1.0 + erf(acc * 0.7071067811865476))\n"
    "    store(C[rm, rn], c, mask=(rm < M, rn < N))\n",
).replace("C: out f32[M, N]):", "bias: f32[N], C: out f32[M, N]):")


def test_split_k_adds_a_grid_axis_over_the_k_loop_and_combines_with_atomic_add():
    app = only(forward("split_k", F32_GEMM, splits=4, tune="[1, 2, 4, 8]"))
    assert app.applicable, app.failed
    assert [c.name for c in app.checks] == list(TRANSFORMS["split_k"].preconditions)
    after = app.result(F32_GEMM)
    assert after == SPLIT_FILE
    assert checks_clean(after)


def test_split_k_chooses_enough_splits_to_fill_the_gpu_and_a_tune_list_around_them():
    app = only(forward("split_k", F32_GEMM))
    assert app.applicable, app.failed
    # 4 programs: 64 splits make 256 programs (32 would leave some of the 132 SMs idle); 1024 steps of BK
    # leave 16 to each split
    assert (app.params["splits"], app.params["tune"]) == (64, "[1, 32, 64, 128]")


def test_the_split_kernel_is_correct_in_the_interpreter_gate():
    result = run_gate(SPLIT_FILE, device="cpu", stages=("compile", "correct"), trials=2)
    assert result.compile.status.value == "passed", result.compile.message
    assert result.correct.status.value == "passed", result.correct.message


def test_split_k_is_undone_exactly_by_its_inverse():
    (inverse,) = TRANSFORMS["split_k"].inverse(Document.parse(SPLIT_FILE))
    assert inverse.result(SPLIT_FILE) == F32_GEMM
    params = TRANSFORMS["split_k"].restoring(inverse)
    (again,) = TRANSFORMS["split_k"].forward(Document.parse(F32_GEMM), params)
    assert again.result(F32_GEMM) == SPLIT_FILE


def test_a_one_axis_grid_and_a_two_argument_range_round_trip_too():
    rows = F32_GEMM.replace("grid (cdiv(M, BM), cdiv(N, BN))", "grid (cdiv(M, BM),)").replace(
        "pm, pn = program_id(0), program_id(1)", "pm, pn = program_id(0), 0"
    )
    rows = rows.replace("M = 64, N = 64", "M = 64, N = 32").replace("range(0, K, BK)", "range(0, cdiv(K, BK))")
    rows = rows.replace("rk = k0 + arange(BK)", "rk = k0 * BK + arange(BK)")
    app = only(forward("split_k", rows))
    after = app.result(rows)
    assert "    grid (cdiv(M, BM), SPLIT_K)\n" in after and "    pk = program_id(1)\n" in after
    assert "for k0 in range(pk, cdiv(K, BK), SPLIT_K):" in after
    (inverse,) = TRANSFORMS["split_k"].inverse(Document.parse(after))
    assert inverse.result(after) == rows


def test_bias_and_gelu_after_the_loop_cannot_be_split_and_the_refusal_names_the_bias():
    app = only(forward("split_k", BIAS_GELU))
    assert app.failed.name == "linear_epilogue"
    assert "line 14" in app.failed.found and "load(bias[rn]" in app.failed.found
    assert "each split would add it" in app.failed.found


def test_an_activation_after_the_loop_cannot_be_split():
    gelu = BIAS_GELU.replace("    acc += load(bias[rn], mask=rn < N, other=0)[None, :]\n", "")
    app = only(forward("split_k", gelu))
    assert app.failed.name == "linear_epilogue"
    assert "erf of a partial sum is not a part of erf of the sum" in app.failed.found


def test_a_16_bit_output_is_refused_as_f32_output():
    half = F32_GEMM.replace("C: out f32[M, N]", "C: out f16[M, N]").replace("acc * 0.5,", "(acc * 0.5).to(f16),")
    app = only(forward("split_k", half))
    assert app.failed.name == "f32_output"
    assert "`C` is f16" in app.failed.found


def test_a_grid_that_already_fills_the_gpu_is_refused_as_small_output_grid():
    big = F32_GEMM.replace("large: M = 64, N = 64, K = 16384", "large: M = 4096, N = 4096, K = 4096")
    app = only(forward("split_k", big))
    assert app.failed.name == "small_output_grid"
    assert "16384 programs at the large sizes" in app.failed.found


def test_a_short_k_loop_is_refused_as_small_output_grid():
    short = F32_GEMM.replace("K = 16384", "K = 64")
    app = only(forward("split_k", short))
    assert app.failed.name == "small_output_grid"
    assert "runs 4 iterations" in app.failed.found


def test_an_accumulator_that_does_not_start_at_zero_is_refused_as_reduction_loop():
    started = BIAS_GELU.replace(
        "    acc = zeros((BM, BN), f32)\n",
        "    acc = zeros((BM, BN), f32) + load(bias[rn], mask=rn < N, other=0)[None, :]\n",
    )
    app = only(forward("split_k", started))
    assert app.failed.name == "reduction_loop"
    assert "each split would add its start value" in app.failed.found


def test_a_taken_name_is_refused_as_name_free():
    taken = F32_GEMM.replace("rm = pm * BM", "pk = pm\n    rm = pk * BM")
    app = only(forward("split_k", taken))
    assert app.failed.name == "name_free"


def test_a_split_that_the_verifier_finds_racy_is_not_offered():
    # the loop reads C, which the other splits' atomic adds write: a read/write race across programs
    racy = F32_GEMM.replace(
        '        acc = dot(a, b, acc, input_precision="ieee")\n',
        '        acc = dot(a, b, acc, input_precision="ieee")\n'
        "        acc += load(C[rm, rn], mask=(rm < M, rn < N), other=0)\n",
    )
    app = only(forward("split_k", racy))
    assert app.failed.name == "verifies"
    assert "AR303" in app.failed.found
