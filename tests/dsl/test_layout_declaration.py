"""`layout B: K` declares that tensor parameter B's axis named K is contiguous (stride 1). It parses as a
declaration, names an input tensor's axis (AR411 otherwise) and reaches the IR as `layouts`; the tile IR the
verifier reads is the same with or without it, since indices stay logical."""

from __future__ import annotations

from checked_text import reported

from argus.dsl import ast, ir
from argus.dsl.check import check_source
from argus.dsl.parser import parse

GEMM = """\
kernel k(A: f32[M, K], B: f32[K, N], C: out f32[M, N], bias: f32[N]):
    tile BM = 64, BN = 64, BK = 32
    layout B: K
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc, input_precision="tf32x3")
    acc += load(bias[rn], mask=rn < N, other=0)[None, :]
    store(C[rm, rn], acc, mask=(rm < M, rn < N))
"""


def with_layout(line: str) -> str:
    return GEMM.replace("    layout B: K\n", f"    {line}\n")


def test_layout_parses_as_a_declaration_with_exact_spans():
    parsed = parse(GEMM)
    assert parsed.diagnostics == []
    decl = parsed.module.kernels[0].body[1]
    assert isinstance(decl, ast.LayoutDecl)
    lines = GEMM.split("\n")
    for node, text in ((decl, "layout B: K"), (decl.tensor, "B"), (decl.axis, "K")):
        span = node.span
        assert lines[span.line][span.col : span.end_col] == text


def test_the_declared_axis_reaches_the_ir():
    result = check_source(GEMM)
    assert reported(GEMM) == []
    assert result.analysis.kernels["k"].layouts == {"B": 0}


def test_a_tile_constant_dimension_can_be_the_contiguous_axis():
    text = GEMM.replace("A: f32[M, K]", "A: f32[M, D]").replace("    tile BM = 64,", "    tile D = 64, BM = 64,")
    text = text.replace("layout B: K", "layout A: D").replace("A[rm, rk]", "A[rm, rk % D]")
    assert reported(text) == []
    assert check_source(text).analysis.kernels["k"].layouts == {"A": 1}


def test_the_ir_the_verifier_reads_is_the_same_with_or_without_a_layout():
    def shape(block: ir.Block) -> list:
        return [(op.kind, sorted(op.attrs.items(), key=str), [shape(r) for r in op.regions]) for op in block.ops]

    declared = check_source(GEMM).analysis.kernels["k"]
    plain = check_source(GEMM.replace("    layout B: K\n", "")).analysis.kernels["k"]
    assert shape(declared.body) == shape(plain.body)
    assert plain.layouts == {}


def test_a_layout_inside_a_loop_is_ar407():
    text = GEMM.replace("    layout B: K\n", "").replace("        rk = k0", "        layout B: K\n        rk = k0")
    assert reported(text) == [("AR407", "layout B: K")]


def test_an_unknown_tensor_is_ar411_at_its_name():
    assert reported(with_layout("layout Bt: K")) == [("AR411", "Bt")]


def test_a_scalar_is_not_a_tensor_for_layout():
    text = with_layout("layout eps: K").replace("bias: f32[N]):", "bias: f32[N], eps: f32 = 1e-5):")
    assert reported(text) == [("AR411", "eps")]


def test_an_output_cannot_have_a_layout():
    assert reported(with_layout("layout C: N")) == [("AR411", "C")]


def test_an_axis_not_in_the_tensors_shape_is_ar411_at_the_axis():
    assert reported(with_layout("layout B: M")) == [("AR411", "M")]


def test_a_second_layout_for_one_tensor_is_ar411():
    assert reported(with_layout("layout B: K\n    layout B: N")) == [("AR411", "layout B: N")]


def test_an_axis_named_twice_in_the_shape_is_ambiguous():
    text = with_layout("layout S: N").replace("bias: f32[N]):", "bias: f32[N], S: f32[N, N]):")
    assert reported(text) == [("AR411", "N")]


def test_layout_is_a_keyword_not_a_name():
    assert ("AR001", "=") in reported(GEMM.replace("    layout B: K\n", "    layout = 3\n"))
