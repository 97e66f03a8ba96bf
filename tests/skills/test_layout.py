"""The operand-layout transform: an f32 dot operand loaded along a strided contraction axis (B: f32[K, N] read as
[BK, BN]) gets `layout B: K`, the rewritten kernel checks clean and is correct in the interpreter gate (the
launcher copies B), and the inverse removes the line text for text; a 16-bit dot is refused with the reason
(wgmma reads either major order), and an operand already contiguous along K has no site."""

from __future__ import annotations

from test_split_k import F32_GEMM
from test_transforms import checks_clean, forward, only

from argus.gate import run_gate
from argus.skills.document import Document
from argus.skills.transforms import TRANSFORMS

LAID_OUT = F32_GEMM.replace("    policy num_warps = 4\n", "    policy num_warps = 4\n    layout B: K\n")
TRANSPOSED = (
    F32_GEMM.replace("B: f32[K, N]", "B: f32[N, K]")
    .replace(
        "b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)",
        "b = trans(load(B[rn, rk], mask=(rn < N, rk < K), other=0))",
    )
    .replace("return (A @ B) * 0.5", "return (A @ B.T) * 0.5")
)


def test_a_strided_contraction_axis_gets_a_k_contiguous_layout_and_stays_correct():
    app = only(forward("layout", F32_GEMM))
    assert app.applicable, app.failed
    assert app.params == {"tensor": "B", "axis": "K"}
    after = app.result(F32_GEMM)
    assert after == LAID_OUT
    assert checks_clean(after)
    result = run_gate(after, device="cpu", stages=("compile", "correct"), trials=1)
    assert result.compile.status.value == "passed", result.compile.message
    assert result.correct.status.value == "passed", result.correct.message


def test_an_operand_already_contiguous_along_k_has_no_site():
    assert forward("layout", TRANSPOSED) == []  # B[N, K] read through trans: K is its last axis
    assert forward("layout", LAID_OUT) == []  # declared K-contiguous already


def test_a_16_bit_dot_is_refused_because_wgmma_reads_either_major_order():
    half = F32_GEMM.replace(
        "A: f32[M, K], B: f32[K, N], C: out f32[M, N]", "A: f16[M, K], B: f16[K, N], C: out f32[M, N]"
    )
    half = half.replace(', input_precision="ieee"', "")
    app = only(forward("layout", half))
    assert app.failed.name == "f32_operands"
    assert "either major order" in app.failed.found


def test_a_layout_naming_the_other_axis_is_rewritten_to_k():
    other = F32_GEMM.replace("    policy num_warps = 4\n", "    policy num_warps = 4\n    layout B: N\n")
    app = only(forward("layout", other))
    assert app.result(other) == LAID_OUT


def test_the_inverse_removes_the_layout_and_the_forward_puts_it_back():
    (inverse,) = TRANSFORMS["layout"].inverse(Document.parse(LAID_OUT))
    after = inverse.result(LAID_OUT)
    assert after == F32_GEMM
    (again,) = TRANSFORMS["layout"].forward(Document.parse(after), TRANSFORMS["layout"].restoring(inverse))
    assert again.result(after) == LAID_OUT


def test_an_operand_read_from_an_out_tensor_is_refused_as_input_tensor():
    written = F32_GEMM.replace("B: f32[K, N], C: out", "B: out f32[K, N], C: out")
    app = only(forward("layout", written))
    assert app.failed.name == "input_tensor"
    assert "`B` is an out tensor" in app.failed.found
