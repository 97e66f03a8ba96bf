"""AR314 (issue 17, gap 4 of tests/verify/gaps): a float division whose divisor is exactly 0 in a lane the kernel
keeps: a running sum after a loop that may run no iteration, an integer count that may be 0. Guards and loops
that always run stay clean."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

ROW_SUM = """kernel rowdiv(x: f32[M, N], y: out f32[M, N]):
    tile BN = 64
    requires N <= BN
    grid (M,)
    row = program_id(0)
    acc = zeros((BN,), f32)
    for c0 in range(START, STOP, BN):
        cols = c0 + arange(BN)
        acc += load(x[row, cols], mask=cols < N, other=0)
    l = sum(acc, axis=0)
    cols = arange(BN)
    v = load(x[row, cols], mask=cols < N, other=0)
    store(y[row, cols], DIVIDED, mask=cols < N)
"""


def codes(source: str) -> list[str]:
    check = check_source(source)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return [d.code for d in verify_check(check).diagnostics]


def row_sum(start: str = "0", stop: str = "N", divided: str = "v / l") -> list[str]:
    return codes(ROW_SUM.replace("START", start).replace("STOP", stop).replace("DIVIDED", divided))


def test_a_loop_that_always_runs_divides_clean():
    assert row_sum() == []


@pytest.mark.parametrize("stop", ["N - BN", "row * BN"])
def test_a_loop_that_may_run_no_iteration_leaves_its_sum_at_zero(stop):
    assert "AR314" in row_sum(stop=stop)


def test_the_message_names_the_loop_and_the_divisor():
    check = check_source(ROW_SUM.replace("START", "0").replace("STOP", "N - BN").replace("DIVIDED", "v / l"))
    (d,) = [d for d in verify_check(check).diagnostics if d.code == "AR314"]
    assert "`l` is still its initial 0 where the `c0` loop at line 7 runs no iteration" in d.message
    assert d.data["counterexample"]["values"]["c0 first value"] >= d.data["counterexample"]["values"]["c0 stop"]
    assert next(r.message for r in d.related).startswith("the `c0` loop runs no iteration here")


@pytest.mark.parametrize("guarded", ["v / maximum(l, 1e-6)", "v / where(l == 0.0, 1.0, l)", "v / (l + 1.0)"])
def test_a_guarded_divisor_is_clean(guarded):
    assert row_sum(stop="row * BN", divided=guarded) == []  # program 0 runs no iteration


def test_a_literal_zero_divisor_is_found():
    assert "AR314" in row_sum(divided="v / 0.0")


BAG = """kernel bag_mean(x: f32[M, D], offsets: i32[B + 1], y: out f32[B, D]):
    tile BD = 64
    requires partition(offsets, M), D <= BD
    grid (B,)
    b = program_id(0)
    d = arange(BD)
    start = load(offsets[b])
    end = load(offsets[b + 1])
    acc = zeros((BD,), f32)
    for r in range(start, end):
        acc += load(x[r, d], mask=d < D, other=0)
    store(y[b, d], acc / DIVISOR, mask=d < D)
"""


def test_an_integer_count_that_may_be_zero_is_found_and_a_guarded_one_is_not():
    assert "AR314" in codes(BAG.replace("DIVISOR", "(end - start).to(f32)"))
    assert codes(BAG.replace("DIVISOR", "maximum(end - start, 1).to(f32)")) == []
    assert codes(BAG.replace("DIVISOR", "D")) == []
