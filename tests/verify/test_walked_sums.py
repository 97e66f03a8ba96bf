"""AR323 (verify/walked_sums.py): partial sums whose lanes walk the loop's axis are reduced along it before they
are stored at another dimension's indices. The column sums, the transposed GEMV and the channel means of the
corpus are the errors; here, each form the check must leave alone."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

COLUMNS = """
kernel column_sums(x: f32[M, N], out: out f32[N]):
    tile BM = 32, BN = 32
    grid (cdiv(N, BN),)
    rn = program_id(0) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for m0 in range(0, M, BM):
        rm = m0 + arange(BM)
        acc ACCUMULATE load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(out[rn], AFTER, mask=rn < N)
"""


def diagnostics(text: str) -> list:
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return [d for d in verify_check(check).diagnostics if d.severity.value == "error"]


def columns(after: str, accumulate: str = "+=") -> list:
    return diagnostics(COLUMNS.replace("AFTER", after).replace("ACCUMULATE", accumulate))


def test_the_other_axis_reduced_is_an_error_at_the_reduction():
    found = columns("sum(acc, axis=1)")
    assert [d.code for d in found] == ["AR323"]
    assert found[0].line + 1 == 10  # the store's line, where the reduction that keeps the rows is
    assert "walk `x`'s M with the `m0` loop" in found[0].message and "along its N axis" in found[0].message
    witness = found[0].data["counterexample"]
    assert witness["kind"] == "walked_sum" and witness["iteration"]["m0"] == 32


@pytest.mark.parametrize("after", ["sum(acc, axis=0)", "max(acc, axis=0) * 2.0", "sum(acc * acc, axis=0) / M"])
def test_the_walked_axis_reduced_is_clean(after):
    assert columns(after) == []


def test_a_running_max_reduced_over_the_walked_axis_is_clean():
    text = COLUMNS.replace("acc ACCUMULATE load", "acc = maximum(acc, load").replace("other=0)\n", "other=-inf))\n")
    assert (
        diagnostics(
            text.replace("zeros((BM, BN), f32)", "full((BM, BN), -inf, f32)").replace("AFTER", "max(acc, axis=0)")
        )
        == []
    )


def test_lanes_stored_as_lanes_into_a_workspace_are_clean():
    text = """
kernel partials(x: f32[M, N], ws: out f32[BM, N]):
    tile BM = 32, BN = 32
    grid (cdiv(N, BN),)
    rn = program_id(0) * BN + arange(BN)
    acc = zeros((BM, BN), f32)
    for m0 in range(0, M, BM):
        rm = m0 + arange(BM)
        acc += load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(ws[arange(BM), rn], acc, mask=(None, rn < N))
"""
    assert diagnostics(text) == []


def test_rows_summed_per_row_block_are_clean():
    # the lanes walk the columns, and the row sums are stored at the rows' own indices
    text = """
kernel row_sums(x: f32[M, N], out: out f32[M]):
    tile BM = 32, BN = 32
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    acc = zeros((BM, BN), f32)
    for n0 in range(0, N, BN):
        rn = n0 + arange(BN)
        acc += load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(out[rm], sum(acc, axis=1), mask=rm < M)
"""
    assert diagnostics(text) == []
