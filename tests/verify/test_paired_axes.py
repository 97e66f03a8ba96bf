"""AR319 (verify/paired_axes.py): an operand broadcast along the wrong axis, or a tile stored at indices of
another dimension than its own (a transposed store).

Three buggy kernels and their twins are in the corpus (paired_*); here, the kernels that pair indices on one
axis on purpose and must not be reported: a filter beside a sliding chunk, a matrix plus another's transpose,
a gather's rows beside the tile's, and a statistic; and the wrong broadcast reported whatever tile sizes.
"""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

SCALED = """
kernel scaled(x: f32[M, N], s: f32[N], y: out f32[M, N]):
    tile BM = 32, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    w = load(s[rn], mask=rn < N, other=0)
    store(y[rm, rn], v * {broadcast}, mask=(rm < M, rn < N))
"""

FILTER = """
kernel fir(x: f32[N], w: f32[TAPS], y: out f32[C]):
    tile TAPS = 16
    requires N == C * TAPS
    grid (C,)
    c = program_id(0)
    taps = arange(TAPS)
    chunk = load(x[c * TAPS + taps])
    h = load(w[taps])
    store(y[c], sum(chunk * h, axis=0))
"""

PLUS_TRANSPOSE = """
kernel sym(a: f32[N, N], b: f32[N, N], y: out f32[N, N]):
    tile B = 32
    grid (cdiv(N, B), cdiv(N, B))
    rm = program_id(0) * B + arange(B)
    rn = program_id(1) * B + arange(B)
    u = load(a[rm, rn], mask=(rm < N, rn < N), other=0)
    v = load(b[rn[None, :], rm[:, None]], mask=(rn[None, :] < N) & (rm[:, None] < N), other=0)
    store(y[rm, rn], u + v, mask=(rm < N, rn < N))
"""

GATHER = """
kernel embed(ids: i32[T], table: f32[V, D], pos: f32[T, D], y: out f32[T, D]):
    tile BT = 32, D = 32
    requires in_range(ids, 0, V)
    grid (cdiv(T, BT),)
    rt = program_id(0) * BT + arange(BT)
    d = arange(D)
    tok = load(ids[rt], mask=rt < T, other=0)
    e = load(table[tok, d], mask=(rt < T, None), other=0)
    p = load(pos[rt, d], mask=(rt < T, None), other=0)
    store(y[rt, d], e + p, mask=(rt < T, None))
"""


TRANSPOSE = """
kernel transpose(x: f32[M, N], y: out f32[N, M]):
    tile B = 32
    grid (cdiv(M, B), cdiv(N, B))
    rm = program_id(0) * B + arange(B)
    rn = program_id(1) * B + arange(B)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(y[rn, rm], {stored}, mask=(rn < N, rm < M))
"""


def diagnostics(source: str) -> list:
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return verify_check(check).diagnostics


@pytest.mark.parametrize("tiles", ["BM = 32, BN = 32", "BM = 64, BN = 64"])
def test_a_column_vector_broadcast_down_the_rows_is_an_error(tiles):
    # square tiles: the only ones where the shape check lets the wrong broadcast through
    found = [
        d
        for d in diagnostics(SCALED.format(broadcast="w[:, None]").replace("BM = 32, BN = 32", tiles))
        if d.code == "AR319"
    ]
    assert len(found) == 1 and found[0].severity.name.lower() == "error"
    values = found[0].data["counterexample"]["values"]
    assert values["s's N index"] != values["x's N index"]


def test_the_vector_broadcast_along_the_rows_is_clean():
    assert [d.code for d in diagnostics(SCALED.format(broadcast="w[None, :]")) if d.code.startswith("AR3")] == []


@pytest.mark.parametrize("source", [FILTER, PLUS_TRANSPOSE, GATHER], ids=["filter", "transpose", "gather"])
def test_indices_paired_on_purpose_are_not_reported(source):
    assert "AR319" not in [d.code for d in diagnostics(source)]


def test_a_tile_stored_without_its_transpose_is_an_error():
    found = [d for d in diagnostics(TRANSPOSE.format(stored="v")) if d.code == "AR319"]
    assert len(found) == 1 and "stored transposed" in found[0].message


def test_a_transpose_stored_transposed_is_clean():
    assert [d.code for d in diagnostics(TRANSPOSE.format(stored="trans(v)")) if d.code.startswith("AR3")] == []
