"""A `where` whose condition compares floats (`p > 0`) decides padding lanes from what they hold (issue 17):
padding that loaded 0 fails `p > 0`, so xlogy's `where(p > 0, p * log(p), 0)` is 0 there. Before, the
comparison was not modelled, and a correct KL divergence got AR312."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check
from argus.verify.padding import EITHER, FALSE, NINF, REAL, TRUE, VSet, compare, const

KL = """\
kernel kl_rows(logq: f32[B, C], p: f32[B, C], out: out f32[B]):
    tile BC = 256
    grid (B,)
    row = program_id(0)
    acc = zeros((BC,), f32)
    for c0 in range(0, C, BC):
        cols = c0 + arange(BC)
        live = cols < C
        pv = load(p[row, cols], mask=live, other=0)
        lq = load(logq[row, cols], mask=live, other=0)
        acc += where(pv COND, pv * (log(pv) - lq), 0.0)
    store(out[row], sum(acc, axis=0))
"""


def codes(cond: str) -> list[str]:
    check = check_source(KL.replace("COND", cond))
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return sorted(d.code for d in verify_check(check).diagnostics)


def test_padding_that_fails_the_comparison_takes_the_other_branch():
    assert codes("> 0") == []
    assert codes("!= 0") == []


def test_padding_that_passes_the_comparison_still_reaches_the_sum():
    # 0 >= 0 holds on the padding: 0 * (log 0 - 0) is NaN there, summed across the loop
    assert codes(">= 0") == ["AR313"]


@pytest.mark.parametrize(
    ("sign", "a", "b", "outcome"),
    [
        (">", const(0.0), const(0.0), FALSE),
        (">=", const(0.0), const(0.0), TRUE),
        ("<", NINF, const(0.0), TRUE),
        ("==", REAL, const(0.0), EITHER),
        ("!=", VSet(nan=True), const(1.0), TRUE),
        ("<", VSet(1.0, 2.0), VSet(3.0, 4.0), TRUE),
        ("<", VSet(1.0, 3.0), VSet(3.0, 4.0), EITHER),
    ],
)
def test_comparison_outcomes(sign, a, b, outcome):
    assert compare(sign, a, b) == outcome
