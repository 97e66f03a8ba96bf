"""A skill's light bulb names the situation its effect was measured in, and once the gate has compiled this very
text the claim follows what the compile found. `num_warps.dot` on an f16 GEMM with a 128 x 128 tile at 4 warps
(128 accumulator registers a thread, where its measurements are): before a compile (spills unknown) the f16
measurements that agree on the rest, all on kernels whose 4 warps spilled; after a gate run that found no spills
(and put the compile's registers a thread into the situation), no f16 measurement matches, so it claims no
number."""

from __future__ import annotations

from lsp_support import actions_at, open_document, published
from lsprotocol import types

F16_GEMM = """\
kernel mm(A: f16[M, K], B: f16[K, N], C: out f16[M, N]):
    tile BM = 128, BN = 128, BK = 16
    policy num_warps = 4
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc += dot(a, b)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))

reference mm(A, B):
    return (A.float() @ B.float()).half()

sizes mm:
    small: M = 48, N = 40, K = 32
    large: M = 4096, N = 4096, K = 4096
"""
LINE = F16_GEMM.split("\n").index("    policy num_warps = 4")


async def more_warps_title(client, uri: str) -> str:
    return next(a.title for a in await actions_at(client, uri, LINE) if a.title.startswith("Skill: More warps"))


async def test_a_skill_measured_only_on_spilling_f16_kernels_claims_nothing_once_a_gate_finds_no_spills(vscode, uri):
    open_document(vscode, uri, F16_GEMM)
    await published(vscode, uri, 1)
    before = await more_warps_title(vscode, uri)
    # spills unknown before a compile: the measurements that agree on the rest, all of them on spilling kernels
    assert "× on f16 dots" in before and "compute-bound, spilling registers" in before, before

    params = types.ExecuteCommandParams(command="argus.runGate", arguments=[uri, "mm"])
    summary = await vscode.workspace_execute_command_async(params)
    (result,) = summary["results"]
    assert result["compile"]["facts"]["spill_stores_bytes"] == 0, result["compile"]

    after = await more_warps_title(vscode, uri)
    # the compile's facts (no spills, and its registers a thread, whose band is the Triton version's) leave no
    # f16 measurement that agrees: the reason names the compile's facts, and no number is claimed
    assert "(not measured for " in after and "registers a thread" in after, after
    assert "spilling registers" not in after and "×" not in after, after
