"""Coverage (AR304) through the program orders expert kernels use: a grid axis split by `//` and `%` (grouped
order), an axis walked backwards (heaviest blocks first), and a loop over the parts of a partition whose store
keeps one part's rows. Each proves clean as written, and a version that misses elements is not proved."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

GROUPED = """
kernel grouped(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 16, G = 4
    grid (G * cdiv(N, BN){shrink}, cdiv(cdiv(M, BM), G))
    q, group = program_id(0), program_id(1)
    pm = group * G + q % G
    pn = q // G
    rm = pm * BM + arange(BM)
    rn = pn * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(y[rm, rn], v * 2.0, mask=(rm < M, rn < N))
"""

REVERSED = """
kernel backwards(x: f32[N], y: out f32[N]):
    tile B = 64
    grid (cdiv(N, B),)
    p = cdiv(N, B) - {last} - program_id(0)
    offs = p * B + arange(B)
    v = load(x[offs], mask=(offs < N) & (offs >= 0), other=0)
    store(y[offs], v + 1.0, mask=(offs < N) & (offs >= 0))
"""

PARTS = """
kernel parts(x: f32[M, N], offsets: i32[E + 1], y: out f32[M, N]):
    tile BM = 16, BN = 16
    requires partition(offsets, M)
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    for e in range(0, E{fewer}):
        start = load(offsets[e])
        end = load(offsets[e + 1])
        if (start < program_id(0) * BM + BM) and (end > program_id(0) * BM):
            v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
            store(y[rm, rn], v * e, mask=((rm >= start) & (rm < end), rn < N))
"""


def codes(text: str) -> list[str]:
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return sorted(d.code for d in verify_check(check, timeout_ms=5000).diagnostics)


def test_grouped_order_is_inverted_and_proved():
    assert codes(GROUPED.format(shrink="")) == []


def test_grouped_order_with_a_program_short_is_not_proved():
    assert "AR304" in codes(GROUPED.format(shrink=" - 1"))


def test_reversed_axis_is_proved():
    assert codes(REVERSED.format(last="1")) == []


def test_reversed_axis_off_by_one_is_not_proved():
    assert "AR304" in codes(REVERSED.format(last="2"))


def test_loop_over_partition_parts_is_proved():
    assert codes(PARTS.format(fewer="")) == []


def test_loop_that_skips_the_last_part_is_not_proved():
    assert "AR304" in codes(PARTS.format(fewer=" - 1"))
