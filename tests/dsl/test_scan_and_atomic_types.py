"""The type rules of the scans (cumsum, cumprod, cummax, cummin) and of the atomics beyond atomic_add
(atomic_max, atomic_min, atomic_xchg, atomic_cas), issue 20 item 3: result types, the IR they emit, and a clear
diagnostic for each misuse."""

from __future__ import annotations

from textwrap import dedent

import pytest

from argus.dsl import ir
from argus.dsl.check import check_source

QUIET = {"AR107", "AR108", "AR408"}  # no reference, no sizes, an output the case leaves alone

KERNEL = """
kernel k(x: f32[M, N], h: f16[M, N], b: i8[M, N], f: bool[M, N], y: out {out}[M, N], m: out {out}[1]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    vh = load(h[rm, rn], mask=(rm < M, rn < N), other=0)
    vb = load(b[rm, rn], mask=(rm < M, rn < N), other=0)
    vf = load(f[rm, rn], mask=(rm < M, rn < N), other=False)
    {body}
"""


def check(body: str, out: str = "f32"):
    text = dedent(KERNEL).lstrip("\n").format(body=body, out=out)
    result = check_source(text)
    diagnostics = [d for d in result.diagnostics if d.code not in QUIET]
    return result, diagnostics


def result_type(expression: str) -> str:
    result, diagnostics = check(f"r = {expression}\n    store(y[rm, rn], r.to(f32), mask=(rm < M, rn < N))")
    assert [d.text_line("k.argus") for d in diagnostics] == []
    return next(s.type for s in result.analysis.symbols if s.name == "r" and s.kind == "variable")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("cumsum(v, axis=1)", "f32[BM, BN]"),
        ("cumsum(v, 0, reverse=True)", "f32[BM, BN]"),
        ("cumprod(vh, 1)", "f16[BM, BN]"),
        ("cummax(vh, axis=-1)", "f16[BM, BN]"),
        ("cummin(v, axis=1, reverse=True)", "f32[BM, BN]"),
        ("cumsum(vb, 1)", "i32[BM, BN]"),  # narrow integers are summed in i32, as Triton does
        ("cumprod(vb, 1)", "i32[BM, BN]"),
        ("cummax(vb, 1)", "i8[BM, BN]"),  # a max needs no widening
        ("cumsum(vf, 1)", "i32[BM, BN]"),  # counting the true lanes
    ],
)
def test_a_scan_keeps_the_shape_and_widens_narrow_integer_sums(expression, expected):
    assert result_type(expression) == expected


def test_a_scan_lowers_to_one_scan_op_named_by_its_builtin():
    result, _ = check("store(y[rm, rn], cummax(v, 1, reverse=True), mask=(rm < M, rn < N))")
    [op] = [op for op in ir.walk_ops(result.analysis.kernels["k"].body) if op.kind == "scan"]
    assert op.attrs == {"fn": "cummax", "axis": 1, "reverse": True}


@pytest.mark.parametrize(
    ("body", "code", "words"),
    [
        ("r = cumsum(sum(sum(v, axis=1), axis=0), 0)", "AR216", "scans a tile along an axis"),
        ("r = cumsum(v, 2)", "AR213", "axis 2 is out of range"),
        ("r = cummax(vf, 1)", "AR204", "not a bool tile"),
        ("r = cumsum(v, 1, reverse=rn < N)", "AR206", "reverse must be a compile-time"),
        ("r = cumsum(v)", "AR207", "missing `axis`"),
        ("r = cumsum(v, 1, exclusive=True)", "AR207", "no argument `exclusive`"),
    ],
)
def test_scan_misuse_has_a_clear_diagnostic(body, code, words):
    _, diagnostics = check(body + "\n    store(y[rm, rn], v, mask=(rm < M, rn < N))")
    found = [d for d in diagnostics if d.code == code]
    assert found and words in found[0].message, [d.text_line("k.argus") for d in diagnostics]


# ---- atomics --------------------------------------------------------------------------------------------
def test_atomic_max_and_min_are_statements_and_xchg_and_cas_return_the_old_values():
    body = """atomic_max(m[0], max(max(v, axis=1), axis=0))
    old = atomic_xchg(y[rm, rn], v, mask=(rm < M, rn < N))
    was = atomic_cas(y[rm, rn], v, old)"""
    result, diagnostics = check(body)
    assert [d.text_line("k.argus") for d in diagnostics] == []
    types = {s.name: s.type for s in result.analysis.symbols if s.kind == "variable"}
    assert types["old"] == "f32[BM, BN]" and types["was"] == "f32[BM, BN]"
    kinds = [op.kind for op in ir.walk_ops(result.analysis.kernels["k"].body) if op.kind.startswith("atomic")]
    assert kinds == ["atomic_max", "atomic_xchg", "atomic_cas"]
    cas = next(op for op in ir.walk_ops(result.analysis.kernels["k"].body) if op.kind == "atomic_cas")
    parts = ir.memory_access(cas)
    assert parts.compare is not None and parts.value is not None and parts.mask is None


@pytest.mark.parametrize(
    ("body", "out", "code", "words"),
    [
        ("atomic_max(m[0], max(max(vh, axis=1), axis=0))", "f16", "AR204", "i32, i64, f32 or f64"),
        ("atomic_xchg(y[rm, rn], vb.to(i16), mask=(rm < M, rn < N))", "i16", "AR204", "atomic_xchg takes"),
        ("atomic_cas(y[rm, rn], vb, vb)", "i8", "AR204", "atomic_cas takes i16"),
        ("atomic_min(x[rm, rn], v)", "f32", "AR211", "is an input"),
        ("atomic_cas(y[rm, rn], v)", "f32", "AR207", "missing `value`"),
        ("atomic_cas(y[rm, rn], v, v, mask=rm < M)", "f32", "AR207", "no argument `mask`"),
        ("atomic_max(y[rm, rn], v[:, :, None])", "f32", "AR201", "does not fit the access"),
        ("atomic_max(m[0], v)", "f32", "AR201", "does not fit the access"),
    ],
)
def test_atomic_misuse_has_a_clear_diagnostic(body, out, code, words):
    _, diagnostics = check(body, out)
    found = [d for d in diagnostics if d.code == code]
    assert found and words in found[0].message, [d.text_line("k.argus") for d in diagnostics]


def test_an_atomic_that_narrows_its_value_warns_as_a_store_does():
    _, diagnostics = check("atomic_max(m[0], max(max(v, axis=1), axis=0).to(f64))")
    assert [d.code for d in diagnostics] == ["AR212"]


@pytest.mark.parametrize(
    ("first", "second"),
    [("atomic_add", "atomic_max"), ("atomic_max", "atomic_min"), ("atomic_min", "atomic_xchg")],
)
def test_one_output_accumulated_by_atomics_of_different_starts_is_ar220(first, second):
    body = f"""{first}(y[rm, rn], v, mask=(rm < M, rn < N))
    {second}(y[rm, rn], v, mask=(rm < M, rn < N))"""
    _, diagnostics = check(body)
    [found] = [d for d in diagnostics if d.code == "AR220"]
    assert found.range.start.line == 10 and f"by {first} (line 10)" in found.message
    assert found.related and found.related[0].range.start.line == 9


def test_atomics_of_one_start_may_share_an_output():
    body = """atomic_add(y[rm, rn], v, mask=(rm < M, rn < N))
    old = atomic_xchg(y[rm, rn], v, mask=(rm < M, rn < N))"""
    _, diagnostics = check(body)
    assert [d.code for d in diagnostics] == []


def test_a_dot_written_by_atomic_max_is_held_to_the_outputs_tolerance():
    """AR219 follows a dot's value into the outputs it reaches through any write, atomics included."""
    text = dedent(
        """
        kernel mm(A: f32[M, K], B: f32[K, N], C: out f32[M, N]):
            tile BM = 64, BN = 64, BK = 32
            requires K % BK == 0
            grid (cdiv(M, BM), cdiv(N, BN))
            rm = program_id(0) * BM + arange(BM)
            rn = program_id(1) * BN + arange(BN)
            acc = zeros((BM, BN), f32)
            for k in range(0, K, BK):
                rk = k + arange(BK)
                a = load(A[rm, rk], mask=(rm < M, None), other=0)
                b = load(B[rk, rn], mask=(None, rn < N), other=0)
                acc = dot(a, b, acc, input_precision="tf32")
            atomic_max(C[rm, rn], acc, mask=(rm < M, rn < N))

        reference mm(A, B):
            return A @ B

        sizes mm:
            small: M = 100, N = 100, K = 64
        """
    ).lstrip("\n")
    assert "AR219" in [d.code for d in check_source(text).diagnostics]
