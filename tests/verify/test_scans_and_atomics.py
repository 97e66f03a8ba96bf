"""The verifier on scans and on the atomics beyond atomic_add (issue 20 item 3).

Scans: padding lanes before a real lane along the scanned axis (after it, reversed) reach that lane's running
value and must hold the identity (AR313); padding at the end of a forward scan never does; a scan's padding
lanes hold running values, which a later reduction over the same axis sees; an integer cumsum of a constant is
modelled, one of data is an unconstrained integer (unknown, never proved).

Atomics: atomic_max (and min) from many programs into one element is no race and covers it; with a store, a
load or another kind of atomic by another program it is; atomic_xchg and atomic_cas are plain writes for races
(AR302 when two programs meet), with old values the verifier does not model; atomic_cas has no mask, so its
indices must be in bounds everywhere.
"""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

QUIET = {"AR107", "AR108"}


def verified(source: str):
    check = check_source(source)
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d for d in check.diagnostics if d.code not in QUIET] + list(verify_check(check).diagnostics)


def codes(source: str) -> list[str]:
    return [d.code for d in verified(source)]


ROWS = """
kernel k(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 64
    requires N <= BN
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    v = load(x[rm, rn], mask=(rm < M, {cols}), other={other})
    store(y[rm, rn], {scanned}, mask=(rm < M, rn < N))
"""


def rows(scanned: str, other: str, cols: str = "rn < N") -> list[str]:
    return codes(ROWS.format(scanned=scanned, other=other, cols=cols))


@pytest.mark.parametrize(
    ("scanned", "other", "expected"),
    [
        ("cummax(v, axis=1)", "0", []),  # the padding comes after every real lane: a forward scan never reads it
        ("cummax(v, axis=1, reverse=True)", "0", ["AR313"]),
        ("cummax(v, axis=1, reverse=True)", "-inf", []),
        ("cummin(v, axis=1, reverse=True)", "0", ["AR313"]),
        ("cummin(v, axis=1, reverse=True)", "inf", []),
        ("cumsum(v, axis=1, reverse=True)", "0", []),
        ("cumsum(v, axis=1, reverse=True)", "1", ["AR313"]),
        ("cumprod(v, axis=1, reverse=True)", "0", ["AR313"]),
        ("cumprod(v, axis=1, reverse=True)", "1", []),
        ("cumprod(v, axis=1)", "0", []),
        ("cumsum(v, axis=0, reverse=True)", "0", []),  # along the rows: the row padding is 0
        ("cummax(v, axis=0, reverse=True)", "0", ["AR313"]),
    ],
)
def test_padding_reaches_a_scan_only_before_a_real_lane(scanned, other, expected):
    assert rows(scanned, other) == expected


def test_padding_at_the_front_reaches_a_forward_scan():
    """A row masked at its start (`rn >= P`, the first P lanes padding): a forward scan reads them."""
    source = ROWS.replace("x: f32[M, N]", "x: f32[M, N], P: i32").format(
        scanned="cumsum(v, axis=1)", other="1", cols="rn >= P"
    )
    found = verified(source)
    [padding] = [d for d in found if d.code == "AR313"]
    witness = padding.data["counterexample"]
    real = next(v for k, v in witness["values"].items() if k.startswith("a real lane"))
    assert real > witness["element"]["j"]  # the real lane is after the padding one
    assert "reach `cumsum`" in padding.message and "not its identity 0" in padding.message


def test_a_reversed_scan_names_a_real_lane_before_the_padding():
    [padding] = [d for d in verified(ROWS.format(scanned="cummax(v, 1, reverse=True)", other="0", cols="rn < N"))]
    witness = padding.data["counterexample"]
    real = next(v for k, v in witness["values"].items() if k.startswith("a real lane of the same row, before it"))
    assert real < witness["element"]["j"]
    assert "hint: load with other=-inf, or re-mask with where(mask, x, -inf) before the cummax" in padding.message


SUM_OF_SCAN = """
kernel k(x: f32[M, N], y: out f32[M]):
    tile BM = 16, BN = 64
    requires N <= BN
    grid (cdiv(M, BM),)
    rm = program_id(0) * BM + arange(BM)
    rn = arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    c = cumsum(v, axis=1)
    store(y[rm], sum({summed}, axis=1), mask=rm < M)
"""


def test_a_scans_padding_lanes_hold_running_values_which_a_later_sum_sees():
    assert codes(SUM_OF_SCAN.format(summed="c")) == ["AR313"]
    assert codes(SUM_OF_SCAN.format(summed="where((rm[:, None] < M) & (rn[None, :] < N), c, 0)")) == []


CARRIED_SCAN = """
kernel k(x: f32[M, N], y: out f32[M, N]):
    tile BN = 64
    grid (M,)
    row = program_id(0)
    carry = 0.0
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        v = load(x[row, cols], mask=cols < N, other=0)
        c = cumsum(v, 0) + carry
        store(y[row, cols], c, mask=cols < N)
        carry {step}
"""


def test_a_scan_plus_the_carry_is_an_accumulation_only_where_the_next_iteration_takes_it_in():
    # the row's running total carried over column blocks: `cumsum(v) + carry` goes to a masked store, and its
    # padding lanes (the block's total, not 0) never reach the next block
    assert codes(CARRIED_SCAN.format(step="+= sum(v, axis=0)")) == []
    # the scanned block summed into the carry: its padding lanes hold running totals, which the sum takes in
    # (line 11) and the carry takes on to the next block (line 9)
    found = verified(CARRIED_SCAN.format(step="= sum(c, axis=0)"))
    assert [(d.code, d.range.start.line) for d in found] == [("AR313", 9), ("AR313", 11)]
    assert "accumulated across the iterations of the `c0` loop" in found[0].message


POSITIONS = """
kernel k(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    v = load(x[offs], mask=offs < N, other=0)
    pos = program_id(0) * B + {positions}
    store(y[pos], v, mask={mask})
"""


def test_an_integer_cumsum_of_a_constant_is_modelled_and_proves_an_index():
    assert codes(POSITIONS.format(positions="cumsum(full((B,), 1, i32), 0) - 1", mask="offs < N")) == []
    reversed_ = "B - cumsum(full((B,), 1, i32), 0, reverse=True)"  # B - (B - j) = j
    assert codes(POSITIONS.format(positions=reversed_, mask="offs < N")) == []


def test_an_integer_cumsum_of_data_is_an_unconstrained_value_never_proved():
    """The positions of kept elements (stream compaction): its values are not modelled, so what depends on them
    is unknown (AR312), not proved and not refuted."""
    source = POSITIONS.format(positions="cumsum((v > 0).to(i32), 0) - 1", mask="(offs < N) & (v > 0)")
    found = verified(source)
    assert found and {d.code for d in found} == {"AR312"}


# ---- atomics --------------------------------------------------------------------------------------------
ABSMAX = """
kernel k(x: f32[N], m: out f32[1]{extra}):
    tile B = 1024
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    v = load(x[offs], mask=offs < N, other=0)
    {write}
"""


def absmax(write: str, extra: str = "") -> list:
    return verified(ABSMAX.format(write=write, extra=extra))


def test_atomic_max_from_every_program_into_one_element_verifies_clean():
    assert absmax("atomic_max(m[0], max(abs(v), axis=0))") == []
    assert absmax("atomic_min(m[0], min(v, axis=0))") != []  # padding 0 under a min (AR313), not a race
    assert [d.code for d in absmax("atomic_min(m[0], min(v, axis=0))")] == ["AR313"]


def test_atomic_max_with_a_store_of_another_program_is_a_race():
    found = absmax("atomic_max(m[0], max(abs(v), axis=0))\n    store(m[0], 0.0)")
    messages = [d.message for d in found if d.code == "AR302"]
    assert "one with a store and one with atomic_max: the result depends on their order" in messages[0]


def test_two_kinds_of_atomics_from_two_programs_into_one_element_are_a_race():
    found = absmax("atomic_add(m[0], sum(v, axis=0))\n    old = atomic_xchg(m[0], 1.0)")
    assert {d.code for d in found} == {"AR302"}
    assert any("atomic_add and atomic_xchg" in d.message for d in found)


def test_atomic_max_read_back_by_another_program_is_a_read_race():
    found = absmax(
        "atomic_max(m[0], max(abs(v), axis=0))\n    store(y[offs], v / load(m[0]), mask=offs < N)",
        extra=", y: out f32[N]",
    )
    assert "AR303" in [d.code for d in found]


def test_atomic_xchg_by_two_programs_on_one_element_is_a_race_and_one_program_an_element_is_clean():
    found = absmax("old = atomic_xchg(m[0], max(v, axis=0))")
    assert [d.code for d in found if d.code != "AR313"] == ["AR302"]
    assert "the value left, and the old value each returns, depend on their order" in found[0].message
    own = "old = atomic_xchg(s[offs], v, mask=offs < N)\n    store(o[offs], old, mask=offs < N)\n"
    own += "    atomic_max(m[0], 0.0)"
    assert absmax(own, extra=", s: out f32[N], o: out f32[N]") == []


CAS = """
kernel k(x: i32[N], flags: out i32[N], seen: out i32[N]):
    tile B = 128
    {requires}
    grid (cdiv(N, B),)
    offs = program_id(0) * B + arange(B)
    w = load(x[offs], mask=offs < N, other=0)
    prior = atomic_cas(flags[offs], 0, w)
    store(seen[offs], prior, mask=offs < N)
"""


def test_atomic_cas_has_no_mask_so_its_indices_must_be_in_bounds():
    assert codes(CAS.format(requires="")) == ["AR301"]
    assert codes(CAS.format(requires="requires N % B == 0")) == []


COLUMNS = """
kernel k(x: f32[M, N], colmax: out f32[N]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), {columns})
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=-inf)
    atomic_max(colmax[rn], max(v, axis=0), mask=rn < N)
"""


def test_coverage_counts_atomic_max_as_a_write():
    assert codes(COLUMNS.format(columns="cdiv(N, BN)")) == []
    found = verified(COLUMNS.format(columns="N // BN"))
    assert [d.code for d in found] == ["AR304"] and found[0].severity.value == "error"
