"""Small kernels the skill tests rewrite, inline so each test shows its input."""

NAIVE_GEMM = """\
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 32 tune [32, 64], BN = 32 tune [32, 64], BK = 16 tune [16, 32]
    policy num_warps = 4 tune [4, 8], num_stages = 2 tune [2, 3], tma = 0 tune [0, 1]
    grid (cdiv(M, BM), cdiv(N, BN))
    pm, pn = program_id(0), program_id(1)
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)   # f16[BM, BK]
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc += dot(a, b)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))

reference mm(A, B):
    return (A.float() @ B.float()).half()

sizes mm:
    small: M = 48, N = 40, K = 32
"""

DIVISIBLE_GEMM = NAIVE_GEMM.replace(
    "    grid (cdiv(M, BM), cdiv(N, BN))\n",
    "    requires M % BM == 0, N % BN == 0, K % BK == 0\n    grid (cdiv(M, BM), cdiv(N, BN))\n",
).replace("small: M = 48, N = 40, K = 32", "small: M = 64, N = 64, K = 32")

F16_ACCUMULATOR = NAIVE_GEMM.replace("zeros((BM, BN), f32)", "zeros((BM, BN), f16)").replace(
    "acc += dot(a, b)", "acc = dot(a, b, acc)"
)

NAIVE_SOFTMAX = """\
kernel softmax(x: f16[M, N], y: out f16[M, N]):
    tile BN = 1024
    policy num_warps = 4 tune [4, 8]
    requires N <= BN
    grid (M,)
    row = program_id(0)
    cols = arange(BN)
    v = load(x[row, cols], mask=cols < N, other=-inf).to(f32)
    num = exp(v - max(v, axis=0))   # the row's max first: no overflow
    store(y[row, cols], (num / sum(num, axis=0)).to(f16), mask=cols < N)

reference softmax(x):
    return torch.softmax(x.float(), dim=1).half()

sizes softmax:
    small: M = 5, N = 300
"""

RELOADING_SOFTMAX = NAIVE_SOFTMAX.replace(
    "exp(v - max(v, axis=0))", "exp(v - max(load(x[row, cols], mask=cols < N, other=-inf).to(f32), axis=0))"
)

CAUSAL_ROWS = """\
kernel tri(x: f16[S, D], y: out f32[S]):
    tile BM = 16, D = 16
    requires S % BM == 0
    grid (cdiv(S, BM),)
    pid = program_id(0)
    rm = pid * BM + arange(BM)
    acc = zeros((BM,), f32)
    for n0 in range(0, pid * BM + BM, BM):
        acc += sum(load(x[rm, arange(D)]).to(f32), axis=1)
    store(y[rm], acc)

reference tri(x):
    return x.float().sum(1) * 0
"""
