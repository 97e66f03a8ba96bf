"""Data facts about loaded integers (issue 17, class 4): `requires in_range(T, lo, hi)` states that every
element of T lies in lo <= T[...] < hi; the verifier assumes it for the values loaded from T (a gather whose
index comes from T is in bounds), the checker keeps it in `requires`, and the launcher checks it (tests/codegen)."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

GATHER = """
kernel pick(x: f32[M, C], target: i64[M], out: out f32[M]):
    FACT
    grid (M,)
    row = program_id(0)
    t = load(target[row])
    store(out[row], load(x[row, t]))
"""


def codes(fact: str) -> list[str]:
    check = check_source(GATHER.replace("FACT", fact))
    if check.has_errors:
        return [d.code for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics if d.severity.value == "error"]


def test_a_gather_through_a_stated_range_is_in_bounds():
    assert codes("requires in_range(target, 0, C)") == []


def test_without_the_fact_the_gather_may_be_out_of_bounds():
    assert codes("requires M > 0") == ["AR301"]


@pytest.mark.parametrize(
    ("fact", "expected"),
    [("requires in_range(target, 1, C)", []), ("requires in_range(target, 0, C + 1)", ["AR301"])],
)
def test_the_stated_range_is_what_is_assumed(fact, expected):
    # 1 <= t < C is inside x's columns; 0 <= t < C + 1 lets t reach C, one past the last column
    assert codes(fact) == expected


def test_the_fact_belongs_in_requires_and_takes_an_integer_tensor():
    outside = GATHER.replace("FACT", "tile B = 1").replace("store(", "ok = in_range(target, 0, C)\n    store(")
    assert "AR216" in [d.code for d in check_source(outside).diagnostics]
    wrong = check_source(GATHER.replace("FACT", "requires in_range(x, 0, C)"))
    assert any(d.code == "AR204" and "integer tensor" in d.message for d in wrong.diagnostics)
