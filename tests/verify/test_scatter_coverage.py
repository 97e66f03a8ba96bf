"""Coverage of an output written by scatters through loaded data (issue 17, class 1).

An output whose every write is an accumulating atomic (`atomic_add`, `atomic_max`, `atomic_min`) at an index
read from memory (`out[idx[i], d]`) starts at the accumulation's identity, and an element the data never names
keeps it: a scatter-add or a histogram means exactly that, so there is no coverage claim (AR304). Everything
else keeps it: a store through data (which also races), an exchange through data (not an accumulation), an
atomic_add at indices of program ids and lanes only (split-K, row groups), and an output written both ways.
"""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

SCATTER = """
kernel k(idx: i32[T], src: f32[T, D], out: out f32[R, D]):
    tile BT = 16, BD = 32
    requires in_range(idx, 0, R)
    grid (cdiv(T, BT), cdiv(D, BD))
    rt = program_id(0) * BT + arange(BT)
    rd = program_id(1) * BD + arange(BD)
    dst = load(idx[rt], mask=rt < T, other=0)
    v = load(src[rt, rd], mask=(rt < T, rd < D), other=0.0)
    {write}
"""


def verdicts(write: str) -> list[tuple[str, str]]:
    check = check_source(SCATTER.format(write=write))
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [(d.code, d.severity.value) for d in verify_check(check).diagnostics]


@pytest.mark.parametrize("kind", ["atomic_add", "atomic_max", "atomic_min"])
def test_an_accumulating_scatter_through_data_has_no_coverage_claim(kind):
    assert verdicts(f"{kind}(out[dst, rd], v, mask=(rt < T, rd < D))") == []


def test_a_store_through_data_keeps_its_coverage_claim():
    found = verdicts("store(out[dst, rd], v, mask=(rt < T, rd < D))")
    assert ("AR302", "error") in found and ("AR304", "warning") in found


def test_an_exchange_through_data_keeps_its_coverage_claim():
    found = verdicts("old = atomic_xchg(out[dst, rd], v, mask=(rt < T, rd < D))")
    assert "AR304" in [code for code, _ in found]


def test_an_atomic_add_without_data_in_its_index_keeps_its_coverage_claim():
    # the rows of out are the program's own block (R == T): a grid one block short leaves rows unwritten
    source = """
kernel k(src: f32[T, D], out: out f32[T, D]):
    tile BT = 16, BD = 32
    grid (T // BT, cdiv(D, BD))
    rt = program_id(0) * BT + arange(BT)
    rd = program_id(1) * BD + arange(BD)
    v = load(src[rt, rd], mask=(rt < T, rd < D), other=0.0)
    atomic_add(out[rt, rd], v, mask=(rt < T, rd < D))
"""
    check = check_source(source)
    assert [(d.code, d.severity.value) for d in verify_check(check).diagnostics] == [("AR304", "error")]


def test_an_output_also_written_at_program_indices_keeps_its_coverage_claim():
    write = "atomic_add(out[dst, rd], v, mask=(rt < T, rd < D))\n    atomic_add(out[rt, rd], v, mask=(rt < R, rd < D))"
    assert "AR304" in [code for code, _ in verdicts(write)]
