"""AR313 across iterations (padding_checks.accumulation): a per-lane accumulator updated as
`where(mask, acc + x, acc)` keeps its value in the lanes the mask leaves out, so x's padding there is never
accumulated (Welford's per-lane mean and M2 past the row's end); an update the mask does not guard is."""

from __future__ import annotations

from argus.dsl.check import check_source
from argus.verify import verify_check

LANES = """
kernel k(x: f32[M, N], y: out f32[M]):
    tile BN = 16
    grid (M,)
    row = program_id(0)
    cnt = zeros((BN,), f32)
    mu = zeros((BN,), f32)
    for c0 in range(0, N, BN):
        cols = c0 + arange(BN)
        m = cols < N
        v = load(x[row, cols], mask=m, other=0)
        cnt = cnt + where(m, 1.0, 0.0)
        mu = {update}
    store(y[row], sum(cnt * mu, axis=0) / N)
"""


def codes(update: str) -> list[str]:
    check = check_source(LANES.format(update=update))
    assert not check.has_errors, [d.text_line("k.argus") for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def test_an_update_kept_by_the_loads_mask_accumulates_no_padding():
    assert codes("where(m, mu + (v - mu) / maximum(cnt, 1.0), mu)") == []


def test_the_same_update_unguarded_accumulates_the_padding():
    # past the row's end v is 0, so mu moves toward 0 in lanes that hold real means from earlier blocks
    assert codes("mu + (v - mu) / maximum(cnt, 1.0)") == ["AR313"]


def test_a_guard_that_does_not_leave_out_the_padding_accumulates_it():
    assert codes("where(c0 >= 0, mu + (v - mu) / maximum(cnt, 1.0), mu)") == ["AR313"]
    assert codes("where(m, mu + (v - mu) / maximum(cnt, 1.0), cnt)") == ["AR313"]
