"""Specification of the semantic analysis: one behaviour per test, each on an inline kernel.

Types are read from what the analysis records for a name (the hover text: `f32[BM, BN]`, `i32 = 8` for a known
constant) and from the tile IR. Kernels here have no `reference` or `sizes` block unless the test is about
them, so the two warnings for their absence (AR107, AR108) are left out of every comparison.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from textwrap import dedent

import pytest

from argus.dsl import ir
from argus.dsl.check import CheckResult, check_source
from argus.dsl.diagnostics import Diagnostic

QUIET = {"AR107", "AR108"}


@dataclass
class Checked:
    text: str
    result: CheckResult

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d for d in self.result.diagnostics if d.code not in QUIET]

    @property
    def codes(self) -> list[str]:
        return [d.code for d in self.diagnostics]

    @property
    def errors(self) -> list[str]:
        return [d.text_line("k.argus") for d in self.diagnostics if d.severity.value == "error"]

    def one(self, code: str) -> Diagnostic:
        found = [d for d in self.result.diagnostics if d.code == code]
        assert len(found) == 1, f"expected one {code}, got {self.codes}"
        return found[0]

    def covered(self, diagnostic: Diagnostic) -> str:
        """The source text a diagnostic's range covers."""
        lines = self.text.split("\n")
        start, end = diagnostic.range.start, diagnostic.range.end
        if start.line == end.line:
            return lines[start.line][start.character : end.character]
        parts = [lines[start.line][start.character :], *lines[start.line + 1 : end.line]]
        return "\n".join([*parts, lines[end.line][: end.character]])

    def line_of(self, needle: str) -> int:
        """0-based line of the first line containing needle."""
        return next(n for n, line in enumerate(self.text.split("\n")) if needle in line)

    def type_of(self, name: str) -> str:
        """The type recorded for the last binding or use of a variable."""
        uses = [s for s in self.result.analysis.symbols if s.name == name and s.kind == "variable"]
        assert uses, f"`{name}` was never bound"
        return uses[-1].type

    @property
    def kernel(self) -> ir.KernelIR:
        return self.result.analysis.kernels["k"]

    def ops(self, kind: str) -> list[ir.Op]:
        return [op for op in ir.walk_ops(self.kernel.body) if op.kind == kind]


def check(source: str) -> Checked:
    text = dedent(source).lstrip("\n")
    return Checked(text, check_source(text))


# A kernel with one tensor of each kind the expression tests need, and tiles made from them.
PRELUDE = """\
kernel k(x: f32[N], h: f16[N], q: i8[N], A: f16[M, K], W: f16[K, N], s: f32 = 1.0):
    tile B = 128, BM = 64, BN = 32, BK = 16
    grid (cdiv(M, BM), cdiv(N, BN))
    i = program_id(0) * B + arange(B)
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    rk = arange(BK)
    v = load(x[i])
    hv = load(h[i])
    qv = load(q[i])
    a = load(A[rm, rk])
    b = load(W[rk, rn])
"""


def expression(expr: str) -> Checked:
    return check(PRELUDE + f"    r = {expr}\n")


def type_of(expr: str) -> str:
    checked = expression(expr)
    assert checked.errors == []
    return checked.type_of("r")


def error_for(expr: str) -> tuple[str, str]:
    """The one diagnostic `r = expr` gets: its code and the text its range covers."""
    checked = expression(expr)
    assert len(checked.diagnostics) == 1, checked.codes
    return checked.diagnostics[0].code, checked.covered(checked.diagnostics[0])


def test_the_prelude_checks_clean():
    assert expression("0").codes == []


# ---- builtins: result types ---------------------------------------------------------------------------------

BUILTIN_TYPES = [
    ("program_id(0)", "i32"),
    ("num_programs(1)", "i32"),
    ("arange(B)", "i32[B]"),
    ("arange(64)", "i32[64]"),
    ("zeros((BM, BN), f16)", "f16[BM, BN]"),
    ("zeros((B,))", "f32[B]"),
    ("full((BM, BN), 1.5, bf16)", "bf16[BM, BN]"),
    ("load(x[i])", "f32[B]"),
    ("load(x[0])", "f32"),
    ("dot(a, b)", "f32[BM, BN]"),
    ("dot(a, b, out_dtype=f16)", "f16[BM, BN]"),
    ("dot(a, b, zeros((BM, BN), f16))", "f16[BM, BN]"),
    ("dot(a.to(i8), b.to(i8))", "i32[BM, BN]"),
    ("exp(hv)", "f16[B]"),
    ("sqrt(v)", "f32[B]"),
    ("exp(2)", "f32"),
    ("abs(i)", "i32[B]"),
    ("maximum(hv, 0.0)", "f16[B]"),
    ("minimum(v, hv)", "f32[B]"),
    ("where(i < N, hv, 0.0)", "f16[B]"),
    ("where(rm[:, None] < M, a, 0.0)", "f16[BM, BK]"),
    ("cdiv(N, B)", "i32"),
    ("cdiv(1000, 128)", "i32 = 8"),
    ("sum(a, 1)", "f16[BM]"),
    ("sum(a, 1, keep_dims=True)", "f16[BM, 1]"),
    ("sum(v, 0)", "f32"),
    ("max(a, -1)", "f16[BM]"),
    ("min(a, 0)", "f16[BK]"),
    ("argmax(a, 0)", "i32[BK]"),
    ("argmin(v, 0)", "i32"),
    ("v.to(f16)", "f16[B]"),
    ("cast(v, bf16)", "bf16[B]"),
    ("reshape(a, (BK, BM))", "f16[BK, BM]"),
    ("broadcast_to(sum(a, 1, keep_dims=True), (BM, BK))", "f16[BM, BK]"),
    ("trans(a)", "f16[BK, BM]"),
    ("multiple_of(rm, 16)", "i32[BM]"),
    ("max_contiguous(rm, 16)", "i32[BM]"),
    ("tag(a, step=0)", "f16[BM, BK]"),
]


@pytest.mark.parametrize(("expr", "expected"), BUILTIN_TYPES, ids=[e for e, _ in BUILTIN_TYPES])
def test_builtin_result_type(expr, expected):
    assert type_of(expr) == expected


@pytest.mark.parametrize(
    ("expr", "kind"),
    [
        ("program_id(1)", "program_id"),
        ("arange(B)", "arange"),
        ("zeros((BM, BN), f16)", "zeros"),
        ("dot(a, b)", "dot"),
        ("exp(hv)", "math"),
        ("sum(a, 1)", "reduce"),
        ("trans(a)", "trans"),
        ("reshape(a, (BK, BM))", "reshape"),
        ("v.to(f16)", "cast"),
        ("where(i < N, hv, 0.0)", "where"),
    ],
)
def test_builtin_lowers_to_an_ir_op_of_the_same_type(expr, kind):
    checked = expression(expr)
    op = checked.ops(kind)[-1]
    assert str(op.results[0].type) == checked.type_of("r")


def test_program_id_records_its_axis():
    assert [op.attrs["axis"] for op in expression("program_id(1)").ops("program_id")][-1] == 1


def test_dot_records_its_precision_and_accumulator():
    checked = expression('dot(a, b, zeros((BM, BN), f32), input_precision="tf32")')
    op = checked.ops("dot")[0]
    assert op.attrs["input_precision"] == "tf32"
    assert len(op.operands) == 3


def test_store_is_a_statement_with_tensor_indices_value_and_mask():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], load(x[i], mask=i < N, other=0), mask=i < N)
    """)
    assert checked.codes == []
    (store,) = checked.ops("store")
    access = ir.memory_access(store)
    assert store.results == []
    assert access.tensor.name == "y"
    assert str(access.value.type) == "f32[B]"
    assert str(access.mask.type) == "bool[B]"


def test_atomic_add_writes_an_output():
    checked = check("""
        kernel k(x: f32[M, N], y: out f32[N]):
            tile BM = 32, BN = 64
            grid (cdiv(M, BM), cdiv(N, BN))
            rm = program_id(0) * BM + arange(BM)
            rn = program_id(1) * BN + arange(BN)
            part = sum(load(x[rm, rn], mask=(rm < M, rn < N), other=0), 0)
            atomic_add(y[rn], part, mask=rn < N)
    """)
    assert checked.codes == []
    (add,) = checked.ops("atomic_add")
    assert str(ir.memory_access(add).value.type) == "f32[BN]"


def test_float_math_on_an_integer_tile_is_a_dtype_error():
    assert error_for("exp(i)") == ("AR204", "exp(i)")


def test_a_reduction_of_a_scalar_suggests_the_two_value_builtin():
    checked = expression("max(s, 0.0)")
    diagnostic = checked.one("AR216")
    assert "maximum" in diagnostic.message
    assert checked.covered(diagnostic) == "s"


# ---- tensor accesses: the outer-product rule ------------------------------------------------------------------


def test_two_vector_indices_make_the_outer_product():
    assert type_of("load(A[rm, rk])") == "f16[BM, BK]"


def test_vector_indices_are_placed_on_their_own_axis_in_the_ir():
    checked = expression("load(A[rm, rk])")
    load = checked.ops("load")[-1]
    assert [str(i.type) for i in ir.memory_access(load).indices] == ["i32[BM, 1]", "i32[1, BK]"]


def test_a_scalar_index_drops_its_axis():
    assert type_of("load(A[rm, 0])") == "f16[BM]"
    assert type_of("load(A[0, rk])") == "f16[BK]"


def test_all_scalar_indices_load_a_scalar():
    assert type_of("load(A[0, program_id(0)])") == "f16"


def test_two_dimensional_indices_broadcast_together():
    assert type_of("load(A[rm[:, None], rk[None, :]])") == "f16[BM, BK]"


def test_two_dimensional_indices_that_do_not_broadcast_point_at_the_index():
    assert error_for("load(A[rm[:, None], rn[:, None]])") == ("AR201", "rn[:, None]")


def test_an_access_needs_one_index_per_axis():
    assert error_for("load(A[rm])") == ("AR208", "A[rm]")


def test_a_tensor_index_must_be_an_integer():
    assert error_for("load(x[v])") == ("AR204", "v")


def test_load_takes_an_access_not_a_bare_tensor():
    assert error_for("load(x)") == ("AR208", "x")


# ---- masks ----------------------------------------------------------------------------------------------------


def test_a_mask_tuple_has_one_vector_per_axis():
    checked = expression("load(A[rm, rk], mask=(rm < M, rk < K), other=0)")
    assert checked.codes == []
    load = checked.ops("load")[-1]
    assert str(ir.memory_access(load).mask.type) == "bool[BM, BK]"


def test_none_in_a_mask_tuple_leaves_that_axis_unmasked():
    checked = expression("load(A[rm, rk], mask=(rm < M, None), other=0)")
    assert checked.codes == []
    assert str(ir.memory_access(checked.ops("load")[-1]).mask.type) == "bool[BM, 1]"


def test_a_mask_tuple_of_nones_is_no_mask():
    load = expression("load(A[rm, rk], mask=(None, None))").ops("load")[-1]
    assert load.attrs["mask"] is False


def test_a_mask_tuple_with_the_wrong_number_of_entries():
    assert error_for("load(A[rm, rk], mask=(rm < M,))") == ("AR203", "(rm < M,)")


def test_a_mask_tuple_entry_must_match_its_axis():
    assert error_for("load(A[rm, rk], mask=(rm < M, rn < N))") == ("AR203", "rn < N")


def test_a_single_mask_must_broadcast_to_the_access():
    assert error_for("load(A[rm, rk], mask=rm < M)") == ("AR203", "rm < M")


def test_a_row_mask_broadcasts_over_a_two_dimensional_access():
    assert expression("load(A[rm, rk], mask=rk < K)").codes == []


def test_a_mask_must_be_boolean():
    assert error_for("load(x[i], mask=i)") == ("AR203", "i")


# ---- broadcasting ---------------------------------------------------------------------------------------------


def test_broadcasting_a_column_and_a_row():
    assert type_of("rm[:, None] + rn[None, :]") == "i32[BM, BN]"


def test_broadcast_error_spans_exactly_the_offending_expression():
    checked = check("""
        kernel k(x: f32[N]):
            tile BM = 64, BN = 32
            grid (1,)
            rm = arange(BM)
            rn = arange(BN)
            t = (rm + rn) * 2
    """)
    diagnostic = checked.one("AR201")
    assert checked.covered(diagnostic) == "(rm + rn)"
    assert diagnostic.range.model_dump() == {
        "start": {"line": 5, "character": 8},
        "end": {"line": 5, "character": 17},
    }
    assert diagnostic.data == {"left": [64], "right": [32]}


def test_a_broadcast_error_poisons_the_result_without_more_errors():
    checked = expression("(rm + rn) * 2 + rk")
    assert checked.codes == ["AR201"]


def test_broadcast_error_span_includes_a_parenthesized_operand():
    assert error_for("(rm + 1) * rn") == ("AR201", "(rm + 1) * rn")


# ---- dtypes ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("hv * 2.0", "f16[B]"),
        ("hv * 2", "f16[B]"),
        ("2.0 * hv", "f16[B]"),
        ("qv + 1", "i8[B]"),
        ("i * 0.5", "f32[B]"),
        ("hv * s", "f32[B]"),
        ("hv + v", "f32[B]"),
        ("hv < 0", "bool[B]"),
    ],
)
def test_literals_are_weakly_typed(expr, expected):
    assert type_of(expr) == expected


@pytest.mark.parametrize(
    ("expr", "expected"),
    [("i / 2", "f32[B]"), ("N / M", "f32"), ("B / 2", "f32 = 64.0"), ("i // 2", "i32[B]"), ("N // 2", "i32")],
)
def test_true_division_of_integers_is_float(expr, expected):
    assert type_of(expr) == expected


def test_bitwise_operators_need_integers():
    assert error_for("v & 1") == ("AR204", "v & 1")


def test_a_cast_to_the_same_dtype_emits_nothing():
    assert expression("v.to(f32)").ops("cast") == []


# ---- dot ------------------------------------------------------------------------------------------------------


def test_dot_shape_mismatch_spans_the_call():
    checked = expression("dot(a, a)")
    diagnostic = checked.one("AR202")
    assert checked.covered(diagnostic) == "dot(a, a)"
    assert diagnostic.data == {"a": [64, 16], "b": [64, 16]}


def test_dot_needs_sixteen_in_every_dimension():
    checked = expression("dot(load(A[rm, arange(8)]), load(W[arange(8), rn]))")
    diagnostic = checked.one("AR215")
    assert checked.covered(diagnostic) == "dot(load(A[rm, arange(8)]), load(W[arange(8), rn]))"


def test_dot_accumulator_must_have_the_product_shape():
    assert error_for("dot(a, b, zeros((BM, BM), f32))") == ("AR202", "zeros((BM, BM), f32)")


def test_dot_operands_share_a_dtype():
    assert error_for("dot(a, b.to(f32))")[0] == "AR204"


def test_dot_takes_tiles_of_rank_two():
    assert error_for("dot(v, b)") == ("AR202", "v")


def test_dot_input_precision_is_checked():
    assert error_for('dot(a, b, input_precision="fp32")') == ("AR218", '"fp32"')


def test_dot_too_small_message_gives_the_size():
    checked = check("""
        kernel k(A: f16[M, K], W: f16[K, N]):
            tile BM = 8, BN = 32, BK = 16
            grid (1,)
            a = load(A[arange(BM), arange(BK)])
            b = load(W[arange(BK), arange(BN)])
            c = dot(a, b)
    """)
    assert "8" in checked.one("AR215").message


# ---- reductions -----------------------------------------------------------------------------------------------


def test_a_negative_axis_counts_from_the_end():
    checked = expression("sum(a, -2)")
    assert checked.type_of("r") == "f16[BK]"
    assert checked.ops("reduce")[-1].attrs["axis"] == 0


def test_a_reduction_axis_beyond_the_rank():
    assert error_for("sum(a, 2)") == ("AR213", "2")
    assert error_for("sum(a, -3)") == ("AR213", "-3")


def test_a_reduction_axis_must_be_a_constant():
    assert error_for("sum(a, N)") == ("AR206", "N")


def test_reshape_keeps_the_number_of_elements():
    assert error_for("reshape(a, (BM, BM))") == ("AR214", "reshape(a, (BM, BM))")


def test_tile_dimensions_are_powers_of_two():
    assert error_for("arange(48)") == ("AR205", "48")


def test_tile_dimensions_are_compile_time_constants():
    assert error_for("zeros((N,), f32)") == ("AR206", "N")


# ---- loops ----------------------------------------------------------------------------------------------------

LOOP = """
    kernel k(x: f32[N], y: out f32[N]):
        tile B = 128
        grid (1,)
        i = arange(B)
        acc = zeros((B,), f32)
        for k in range(0, N, B):
            acc += load(x[k + i], mask=k + i < N, other=0)
        store(y[i], acc, mask=i < N)
"""


def test_a_loop_carried_value_is_a_result_of_the_for_op():
    checked = check(LOOP)
    assert checked.codes == []
    (loop,) = checked.ops("for")
    assert loop.attrs["carried"] == ["acc"]
    assert [str(r.type) for r in loop.results] == ["f32[B]"]
    assert [a.name for a in loop.regions[0].args] == ["k", "acc"]
    assert len(loop.regions[0].yields) == 1


def test_code_after_a_loop_uses_the_for_op_result():
    checked = check(LOOP)
    (loop,) = checked.ops("for")
    (store,) = checked.ops("store")
    assert ir.memory_access(store).value is loop.results[0]


def test_nested_loops_carry_a_value_through_both():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (1,)
            i = arange(B)
            acc = zeros((B,), f32)
            for k in range(0, 4):
                for j in range(0, 2):
                    acc += load(x[i], mask=i < N, other=0)
            store(y[i], acc, mask=i < N)
    """)
    assert checked.codes == []
    outer, inner = checked.ops("for")
    assert outer.attrs["carried"] == inner.attrs["carried"] == ["acc"]
    assert inner.results[0] in outer.regions[0].yields


def test_a_loop_carried_value_keeps_its_type():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (1,)
            i = arange(B)
            acc = 0.0
            for k in range(0, N, B):
                acc += load(x[k + i], mask=k + i < N, other=0)
            store(y[i], acc, mask=i < N)
    """)
    diagnostic = checked.one("AR209")
    assert checked.covered(diagnostic) == "acc"
    assert diagnostic.range.start.line == checked.line_of("acc +=")


def test_a_name_defined_only_inside_a_loop_is_unavailable_after_it():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (1,)
            i = arange(B)
            for k in range(0, N, B):
                last = load(x[k + i], mask=k + i < N, other=0)
            store(y[i], last, mask=i < N)
    """)
    diagnostic = checked.one("AR110")
    assert checked.covered(diagnostic) == "last"
    assert diagnostic.range.start.line == checked.line_of("store(")
    assert "line 6" in diagnostic.message
    assert "AR101" not in checked.codes


def test_a_loop_step_of_zero():
    checked = check("""
        kernel k(x: f32[N]):
            grid (1,)
            for k in range(0, N, 0):
                pass
    """)
    assert checked.covered(checked.one("AR218")) == "0"


def test_static_range_needs_constant_bounds():
    checked = check("""
        kernel k(x: f32[N]):
            grid (1,)
            for k in static_range(N):
                pass
    """)
    assert checked.covered(checked.one("AR206")) == "N"


def test_a_loop_carried_scalar_is_not_a_constant():
    checked = check("""
        kernel k(x: f32[N]):
            grid (1,)
            s = 0
            for k in range(0, N):
                s = s + 1
    """)
    (loop,) = checked.ops("for")
    assert str(loop.results[0].type) == "i32"
    assert [op.kind for op in loop.regions[0].ops if op.kind == "binary"] == ["binary"]


# ---- if -------------------------------------------------------------------------------------------------------


def test_if_on_a_tile_is_an_error():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            if i < N:
                store(y[i], load(x[i]))
    """)
    assert checked.covered(checked.one("AR210")) == "i < N"


def test_and_on_tiles_is_an_error():
    assert error_for("i < N and i > 0") == ("AR210", "i < N")


def test_a_value_assigned_on_both_branches_is_a_result_of_the_if_op():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            v = load(x[i], mask=i < N, other=0)
            if program_id(0) == 0:
                w = v * 2
            else:
                w = v + 1
            store(y[i], w, mask=i < N)
    """)
    assert checked.codes == []
    (branch,) = checked.ops("if")
    assert branch.attrs["names"] == ["w"]
    assert ir.memory_access(checked.ops("store")[0]).value is branch.results[0]


def test_a_name_assigned_on_one_branch_is_unavailable_after_the_if():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            if program_id(0) == 0:
                w = load(x[i], mask=i < N, other=0)
            store(y[i], w, mask=i < N)
    """)
    diagnostic = checked.one("AR110")
    assert checked.covered(diagnostic) == "w"
    assert diagnostic.range.start.line == checked.line_of("store(")


def test_branches_that_disagree_on_a_type():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            v = load(x[i], mask=i < N, other=0)
            if program_id(0) == 0:
                w = v.to(f16)
            else:
                w = v * 2
            store(y[i], w, mask=i < N)
    """)
    diagnostic = checked.one("AR209")
    assert checked.covered(diagnostic) == "w"
    assert diagnostic.range.start.line == checked.line_of("w = v * 2")


def test_a_branch_that_changes_a_type_is_where_the_error_points():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            v = load(x[i], mask=i < N, other=0)
            if program_id(0) == 0:
                v = v.to(f16)
            store(y[i], v, mask=i < N)
    """)
    assert checked.one("AR209").range.start.line == checked.line_of("v = v.to(f16)")


def test_a_chained_comparison_means_what_python_means():
    checked = expression("0 <= i < N")
    assert checked.codes == []
    compares = checked.ops("compare")
    assert [op.attrs["op"] for op in compares] == ["<=", "<"]
    assert not any(str(o.type).startswith("bool") for op in compares for o in op.operands)
    (both,) = [op for op in checked.ops("binary") if op.attrs["op"] == "&"]
    assert both.operands == [compares[0].result, compares[1].result]


# ---- stores ---------------------------------------------------------------------------------------------------


def test_store_to_an_input_is_an_error():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(x[i], load(x[i], mask=i < N, other=0) * 2, mask=i < N)
    """)
    assert checked.covered(checked.one("AR211")) == "x[i]"


def test_implicit_narrowing_on_store_is_a_warning():
    checked = check("""
        kernel k(x: f32[N], y: out f16[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], load(x[i], mask=i < N, other=0), mask=i < N)
    """)
    diagnostic = checked.one("AR212")
    assert diagnostic.severity.value == "warning"
    assert checked.covered(diagnostic) == "load(x[i], mask=i < N, other=0)"
    assert checked.errors == []


def test_an_explicit_conversion_silences_the_narrowing_warning():
    checked = check("""
        kernel k(x: f32[N], y: out f16[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], load(x[i], mask=i < N, other=0).to(f16), mask=i < N)
    """)
    assert checked.codes == []


def test_a_literal_stores_without_a_warning():
    checked = check("""
        kernel k(y: out f16[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], 1.5, mask=i < N)
    """)
    assert checked.codes == []


def test_a_widening_store_is_not_narrowing():
    checked = check("""
        kernel k(h: f16[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], load(h[i], mask=i < N, other=0), mask=i < N)
    """)
    assert checked.codes == []


def test_a_stored_value_must_fit_the_access():
    checked = check("""
        kernel k(y: out f32[N]):
            tile B = 128
            grid (1,)
            store(y[arange(B)], zeros((64,), f32))
    """)
    assert checked.covered(checked.one("AR201")) == "zeros((64,), f32)"


def test_an_output_never_written_is_a_warning():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            grid (1,)
            v = load(x[arange(16)])
    """)
    diagnostic = checked.one("AR408")
    assert diagnostic.severity.value == "warning"
    assert checked.covered(diagnostic).startswith("y: out f32[N")


def test_an_output_never_written_spans_the_whole_parameter():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            grid (1,)
            v = load(x[arange(16)])
    """)
    assert checked.covered(checked.one("AR408")) == "y: out f32[N]"


def test_an_error_in_a_stored_value_gives_no_follow_on_warning():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            store(y[i], undefined_name * 2, mask=i < N)
    """)
    assert checked.codes == ["AR101"]


# ---- the grid and program ids ---------------------------------------------------------------------------------


def test_program_id_beyond_the_grid():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            p = program_id(1)
    """)
    assert checked.covered(checked.one("AR402")) == "program_id(1)"


def test_program_id_axis_beyond_three():
    assert error_for("program_id(3)") == ("AR218", "3")


def test_a_missing_grid_is_reported_at_the_kernel_name():
    checked = check("""
        kernel k(x: f32[N]):
            p = program_id(0)
    """)
    diagnostic = checked.one("AR401")
    assert checked.covered(diagnostic) == "k"
    assert diagnostic.range.start.line == 0


def test_a_second_grid_is_reported():
    checked = check("""
        kernel k(x: f32[N]):
            grid (1,)
            grid (2,)
    """)
    assert checked.covered(checked.one("AR401")) == "grid (2,)"


def test_the_grid_lowers_to_launch_values():
    checked = check("""
        kernel k(x: f32[M, N]):
            tile BM = 64, BN = 32
            grid (cdiv(M, BM), cdiv(N, BN))
    """)
    assert [str(v.type) for v in checked.kernel.grid] == ["i32", "i32"]
    assert [op.kind for op in checked.kernel.launch.ops if op.kind == "cdiv"] == ["cdiv", "cdiv"]


def test_a_grid_axis_must_be_an_integer():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            grid (N / B,)
    """)
    assert checked.covered(checked.one("AR204")) == "N / B"


# ---- tile constants, policy, tune -----------------------------------------------------------------------------


def test_tile_constants_fold():
    checked = check("""
        kernel k(x: f32[N]):
            tile BM = 64 * 2, BK = BM // 4
            grid (1,)
            t = zeros((BM, BK), f32)
    """)
    assert checked.codes == []
    assert checked.kernel.constants["BM"].value == 128
    assert checked.kernel.constants["BK"].value == 32
    assert checked.type_of("t") == "f32[BM, BK]"
    (zeros,) = checked.ops("zeros")
    assert [d.value for d in zeros.results[0].type.shape] == [128, 32]


def test_a_tile_constant_needs_a_constant_value():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = N
            grid (1,)
    """)
    assert checked.covered(checked.one("AR206")) == "N"


def test_a_tune_list_is_recorded():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128 tune [64, 128, 256]
            grid (cdiv(N, B),)
    """)
    assert checked.codes == []
    assert checked.kernel.constants["B"].tune == [64, 128, 256]


def test_a_tune_list_must_contain_the_default():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128 tune [256, 512]
            grid (cdiv(N, B),)
    """)
    diagnostic = checked.one("AR409")
    assert checked.covered(diagnostic) == "[256, 512]"
    assert "128" in diagnostic.message


def test_policy_tune_values_are_checked():
    checked = check("""
        kernel k(x: f32[N]):
            policy num_warps = 4 tune [4, 6]
            grid (1,)
    """)
    assert "6" in checked.one("AR403").message


def test_policy_tma_takes_zero_or_one():
    accepted = check("""
        kernel k(x: f32[N]):
            policy tma = 1 tune [0, 1]
            grid (1,)
    """)
    assert "AR403" not in accepted.codes
    refused = check("""
        kernel k(x: f32[N]):
            policy tma = 2
            grid (1,)
    """)
    assert "tma must be 0 or 1" in refused.one("AR403").message


def test_assigning_to_a_tile_constant():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            grid (1,)
            B = 64
    """)
    assert checked.covered(checked.one("AR109")) == "B"


# ---- requires and sizes ---------------------------------------------------------------------------------------

SIZED = """
    kernel k(A: f16[M, K], C: out f16[M, K]):
        tile BM = 64, BK = 64
        requires K % BK == 0
        grid (cdiv(M, BM),)
        rm = program_id(0) * BM + arange(BM)
        rk = arange(BK)
        for k in range(0, K, BK):
            store(C[rm, k + rk], load(A[rm, k + rk], mask=(rm < M, None), other=0), mask=(rm < M, None))

    reference k(A):
        return A.clone()

    sizes k:
"""


def test_a_kernel_with_reference_and_sizes_checks_clean():
    checked = check(SIZED + "        small: M = 100, K = 128\n")
    assert checked.result.diagnostics == []


def test_a_size_set_must_bind_every_size():
    checked = check(SIZED + "        small: M = 100\n")
    diagnostic = checked.one("AR405")
    assert checked.covered(diagnostic) == "small"
    assert diagnostic.data == {"missing": ["K"]}


def test_a_size_set_binds_only_sizes_and_scalars():
    checked = check(SIZED + "        small: M = 100, K = 128, BM = 32\n")
    assert checked.covered(checked.one("AR405")) == "BM"


def test_a_size_must_be_a_positive_integer():
    checked = check(SIZED + "        small: M = 0, K = 128\n")
    assert checked.covered(checked.one("AR405")) == "0"


def test_a_size_set_that_violates_requires():
    checked = check(SIZED + "        small: M = 100, K = 100\n")
    diagnostic = checked.one("AR406")
    assert checked.covered(diagnostic) == "small"
    assert "K % BK == 0" in diagnostic.message
    (related,) = diagnostic.related
    assert related.range.start.line == checked.line_of("requires")
    lines = checked.text.split("\n")
    start, end = related.range.start, related.range.end
    assert lines[start.line][start.character : end.character] == "K % BK == 0"


def test_a_size_set_without_small_is_a_warning():
    checked = check(SIZED + "        large: M = 4096, K = 4096\n")
    assert checked.covered(checked.one("AR108")) == "k"


def test_requires_uses_no_program_ids():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            requires program_id(0) * B < N
            grid (cdiv(N, B),)
    """)
    assert checked.covered(checked.one("AR404")) == "program_id(0) * B < N"


def test_a_requirement_false_for_every_size():
    checked = check("""
        kernel k(x: f32[N]):
            tile B = 128
            requires B > 256
            grid (cdiv(N, B),)
    """)
    assert checked.covered(checked.one("AR404")) == "B > 256"


def test_a_requirement_must_be_a_condition():
    checked = check("""
        kernel k(x: f32[N]):
            requires N
            grid (1,)
    """)
    assert checked.covered(checked.one("AR404")) == "N"


# ---- the reference block --------------------------------------------------------------------------------------


def test_reference_takes_the_inputs_in_order_scalars_included_outputs_excluded():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N], alpha: f32, n: i32 = 3):
            grid (1,)
            store(y[arange(16)], load(x[arange(16)]))

        reference k(x, n, alpha):
            return x
    """)
    diagnostic = checked.one("AR106")
    assert checked.covered(diagnostic) == "x, n, alpha"
    assert diagnostic.data == {"expected": ["x", "alpha", "n"], "given": ["x", "n", "alpha"]}


def test_reference_with_the_outputs_among_its_parameters():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            grid (1,)
            store(y[arange(16)], load(x[arange(16)]))

        reference k(x, y):
            return x
    """)
    assert checked.one("AR106").data["expected"] == ["x"]


def test_a_broken_output_parameter_gives_no_follow_on_reference_error():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N * 2]):
            grid (1,)

        reference k(x):
            return x
    """)
    assert checked.codes == ["AR217"]


def test_an_unknown_dtype_is_reported():
    checked = check("""
        kernel k(x: float32[N]):
            grid (1,)
    """)
    diagnostic = checked.one("AR104")
    assert checked.covered(diagnostic) == "float32"
    assert "f32" in diagnostic.message


# ---- error recovery -------------------------------------------------------------------------------------------


def test_a_broken_statement_does_not_make_its_names_undefined():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (cdiv(N, B),)
            i = program_id(0) * B + arange(B)
            v = load(x[i] mask=i < N)
            w = v * 2
            store(y[i], v + w, mask=i < N)
    """)
    assert checked.codes.count("AR001") == 1
    assert "AR101" not in checked.codes


def test_a_broken_loop_header_does_not_make_its_names_undefined():
    checked = check("""
        kernel k(x: f32[N], y: out f32[N]):
            tile B = 128
            grid (1,)
            acc = zeros((B,), f32)
            for k in range(0, N, B)
                acc += load(x[k + arange(B)])
            store(y[arange(B)], acc)
    """)
    assert checked.codes == ["AR001"]


def test_an_undefined_name_suggests_a_close_one():
    checked = expression("load(x[ii])")
    assert "did you mean `i`" in checked.one("AR101").message


# ---- the command line -----------------------------------------------------------------------------------------

SHAPE_ERROR = """\
kernel k(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    v = load(x[i], mask=i < N, other=0)
    t = v + arange(64)
    store(y[i], v, mask=i < N)

reference k(x):
    return x

sizes k:
    small: N = 1000
"""


def argus(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "argus", *args], capture_output=True, text=True, timeout=60)


def test_check_json_reports_code_and_exact_range(tmp_path):
    path = tmp_path / "k.argus"
    path.write_text(SHAPE_ERROR)
    run = argus("check", "--json", str(path))
    assert run.returncode == 1
    (record,) = json.loads(run.stdout)
    assert record["code"] == "AR201"
    assert record["path"] == str(path)
    assert record["severity"] == "error"
    assert record["range"] == {"start": {"line": 5, "character": 8}, "end": {"line": 5, "character": 22}}
    assert record["data"] == {"left": [128], "right": [64]}
    assert record["related"] == []


def test_check_exits_zero_on_a_clean_file(tmp_path):
    path = tmp_path / "k.argus"
    path.write_text(SHAPE_ERROR.replace("arange(64)", "1"))
    run = argus("check", str(path))
    assert (run.returncode, run.stdout) == (0, "")


def test_check_exits_zero_with_only_warnings(tmp_path):
    path = tmp_path / "k.argus"
    path.write_text(SHAPE_ERROR.replace("arange(64)", "1").split("reference")[0])
    run = argus("check", str(path))
    assert run.returncode == 0
    assert "warning[AR107]" in run.stdout


def test_check_prints_one_based_positions(tmp_path):
    path = tmp_path / "k.argus"
    path.write_text(SHAPE_ERROR)
    run = argus("check", str(path))
    assert run.returncode == 1
    assert run.stdout == f"{path}:6:9: error[AR201]: operands of `+`: shapes [B] and [64] do not broadcast\n"


def test_check_exits_two_on_a_missing_file(tmp_path):
    run = argus("check", str(tmp_path / "missing.argus"))
    assert run.returncode == 2
    assert "missing.argus" in run.stderr


def test_check_exits_two_without_arguments():
    assert argus("check").returncode == 2
    assert argus().returncode == 2


def test_a_failed_augmented_assignment_in_a_branch_is_reported_once():
    checked = check("""
        kernel k(x: f32[N]):
            grid (1,)
            if program_id(0) == 0:
                missing += 1
    """)
    assert checked.codes == ["AR101"]
