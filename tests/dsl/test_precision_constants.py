"""A tile constant may be a string naming dot's input precision, with a tune list of strings: the checker types
it as a string (never a number), checks each value, and records it in the IR for code generation."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ir
from argus.dsl.check import CheckResult, check_source

QUIET = {"AR107", "AR108"}

# An f16 output: every precision keeps its tolerance at this K, so the accuracy rule (AR219) has nothing to say
# about the tune lists these tests write.
GEMM = """\
kernel k(A: f32[M, K], B: f32[K, N], C: out f16[M, N]):
    tile BM = 64, BN = 64, BK = 32, PREC = "tf32x3" tune ["ieee", "tf32x3", "tf32"]
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for k0 in range(0, K, BK):
        rk = k0 + arange(BK)
        a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)
        b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)
        acc = dot(a, b, acc, input_precision=PREC)
    store(C[rm, rn], acc.to(f16), mask=(rm < M, rn < N))
"""


@dataclass
class Checked:
    text: str
    result: CheckResult

    @property
    def reported(self) -> list[tuple[str, str]]:
        """(code, the source text its range covers) of each diagnostic (one-line ranges)."""
        lines = self.text.split("\n")
        found = []
        for d in self.result.diagnostics:
            if d.code in QUIET:
                continue
            start, end = d.range.start, d.range.end
            assert start.line == end.line, d
            found.append((d.code, lines[start.line][start.character : end.character]))
        return found

    @property
    def messages(self) -> list[str]:
        return [d.message for d in self.result.diagnostics if d.code not in QUIET]


def checked(text: str) -> Checked:
    return Checked(text, check_source(text))


def with_tile(line: str, body: str = "") -> str:
    """GEMM with its `tile` line replaced, and optionally a line added before its store."""
    text = GEMM.replace(GEMM.splitlines()[1], "    " + line)
    if body:
        text = text.replace("    store(C", f"    {body}\n    store(C")
    return text


def test_a_string_tile_constant_with_a_tune_list_checks_clean_and_reaches_the_ir():
    result = checked(GEMM)
    assert result.reported == []
    kernel = result.result.analysis.kernels["k"]
    constant = kernel.constants["PREC"]
    assert (constant.value, constant.tune) == ("tf32x3", ["ieee", "tf32x3", "tf32"])
    [dot] = [op for op in ir.walk_ops(kernel.body) if op.kind == "dot"]
    assert (dot.attrs["input_precision"], dot.attrs["precision_constant"]) == ("tf32x3", "PREC")


def test_a_literal_precision_has_no_constant():
    result = checked(GEMM.replace("input_precision=PREC", 'input_precision="tf32"'))
    assert result.reported == []
    [dot] = [op for op in ir.walk_ops(result.result.analysis.kernels["k"].body) if op.kind == "dot"]
    assert (dot.attrs["input_precision"], dot.attrs["precision_constant"]) == ("tf32", None)


def test_the_string_constant_is_typed_as_a_string_where_it_is_declared_and_used():
    result = checked(GEMM)
    types = {s.type for s in result.result.analysis.symbols if s.name == "PREC"}
    assert types == {'= "tf32x3"', 'str = "tf32x3"'}


def test_every_triton_36_precision_is_a_valid_value():
    line = 'tile BM = 64, BN = 64, BK = 32, PREC = "bf16x3" tune ["ieee", "tf32x3", "tf32", "bf16x3", "bf16x6"]'
    assert checked(with_tile(line)).reported == []


def test_a_bad_default_is_ar218_at_the_string_and_its_uses_report_nothing_more():
    result = checked(with_tile('tile BM = 64, BN = 64, BK = 32, PREC = "fp32"'))
    assert result.reported == [("AR218", '"fp32"')]
    assert '"ieee", "tf32x3", "tf32", "bf16x3", "bf16x6"' in result.messages[0]


def test_a_bad_tune_value_is_ar218_at_that_entry():
    result = checked(with_tile('tile BM = 64, BN = 64, BK = 32, PREC = "tf32" tune ["tf32", "tf16"]'))
    assert result.reported == [("AR218", '"tf16"')]


def test_a_number_in_a_string_tune_list_is_ar409_at_the_number():
    result = checked(with_tile('tile BM = 64, BN = 64, BK = 32, PREC = "tf32" tune ["tf32", 3]'))
    assert result.reported == [("AR409", "3")]


def test_a_string_in_a_number_tune_list_is_ar409_at_the_string():
    result = checked(with_tile('tile BM = 64 tune [64, "128"], BN = 64, BK = 32, PREC = "tf32"'))
    assert result.reported == [("AR409", '"128"')]


def test_a_string_tune_list_must_contain_the_default():
    result = checked(with_tile('tile BM = 64, BN = 64, BK = 32, PREC = "tf32x3" tune ["ieee", "tf32"]'))
    assert result.reported == [("AR409", '["ieee", "tf32"]')]


def test_arithmetic_on_the_string_constant_is_a_type_error_at_its_name():
    result = checked(with_tile(GEMM.splitlines()[1].strip(), "x = rm * PREC"))
    assert result.reported == [("AR204", "PREC")]
    assert "string tile constant `PREC`" in result.messages[0]


def test_the_string_constant_as_a_tile_shape_is_a_type_error():
    result = checked(with_tile(GEMM.splitlines()[1].strip(), "z = zeros((PREC, BN), f32)"))
    assert result.reported == [("AR204", "PREC")]


def test_the_string_constant_in_another_tile_constant_is_a_type_error():
    result = checked(with_tile('tile BM = 64, BN = 64, BK = 32, PREC = "tf32", BX = PREC * 2'))
    assert result.reported == [("AR204", "PREC")]


def test_the_string_constant_as_a_tensor_dimension_is_a_type_error():
    text = GEMM.replace("C: out f16[M, N]", "C: out f16[M, N], D: f32[PREC]")
    assert ("AR204", "PREC") in checked(text).reported


def test_a_policy_setting_cannot_be_a_string():
    result = checked(GEMM.replace("    grid", '    policy num_warps = "4"\n    grid'))
    assert result.reported == [("AR206", '"4"')]
