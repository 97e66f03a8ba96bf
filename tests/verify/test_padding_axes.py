"""AR313 at a reduction along several axes (`sum(x, axis=(0, 1))`): a lane's row is every lane that differs from
it only along the reduced axes, so padding along any of them must hold the identity, and a row made of
padding only counts when another row of the same reduction is real. The witness is confirmed by the concrete
evaluator (tests/verify/verify_concrete.py): the padding lane it names is masked off, the real lane it names
is not, and with data the padding changes the sum."""

from __future__ import annotations

import numpy as np
import pytest
from verify_concrete import Concrete

from argus.dsl.check import check_source
from argus.verify import verify_check

TILE = """
kernel k(x: f32[M, N], y: out f32[1]):
    tile BM = 16, BN = 32
    {requires}
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    v = load(x[rm, rn], mask={mask}, other={other})
    atomic_add(y[0], {reduced})
"""


def verified(reduced: str, other: str = "0", mask: str = "(rm < M, rn < N)", requires: str = ""):
    check = check_source(TILE.format(reduced=reduced, other=other, mask=mask, requires=requires))
    assert not check.has_errors, [d.message for d in check.diagnostics]
    return check, verify_check(check).diagnostics


@pytest.mark.parametrize(
    ("reduced", "other"),
    [
        ("sum(v, axis=(0, 1))", "0"),
        ("max(v, axis=(0, 1))", "-inf"),
        ("min(v, axis=(1, 0))", "inf"),
        ("sum(sum(v, axis=(0, 1), keep_dims=True), axis=(0, 1))", "0"),
    ],
)
def test_identity_padding_proves(reduced, other):
    assert verified(reduced, other)[1] == []


@pytest.mark.parametrize(
    ("reduced", "other", "mask", "requires"),
    [
        ("sum(v, axis=(0, 1))", "1", "(rm < M, rn < N)", ""),
        ("max(v, axis=(0, 1))", "0", "(rm < M, rn < N)", ""),
        # padding along the rows only: with one axis at a time, the rows of padding were never asked about
        ("sum(v, axis=(0, 1))", "1", "(rm < M, None)", "requires N % BN == 0"),
    ],
)
def test_padding_along_any_reduced_axis_is_ar313(reduced, other, mask, requires):
    _, diagnostics = verified(reduced, other, mask, requires)
    assert [d.code for d in diagnostics] == ["AR313"]


def test_the_witness_names_a_real_lane_by_each_reduced_coordinate_and_is_confirmed():
    check, diagnostics = verified("sum(v, axis=(0, 1))", "1", "(rm < M, None)", "requires N % BN == 0")
    witness = diagnostics[0].data["counterexample"]
    reals = {k: v for k, v in witness["values"].items() if k.startswith("a real lane reduced with it")}
    assert sorted(reals) == ["a real lane reduced with it: i", "a real lane reduced with it: j"]
    kernel = next(iter(check.analysis.kernels.values()))
    events = Concrete(kernel, witness["sizes"], {}, "normal").run(tuple(witness["program"].values()))
    (reduce,) = [e for e in events if e.kind == "reduce"]
    assert reduce.detail["axis"] == (0, 1)
    valid = np.broadcast_to(reduce.detail["valid"], reduce.detail["floats"].shape)
    element = tuple(witness["element"].values())
    real = (reals["a real lane reduced with it: i"], reals["a real lane reduced with it: j"])
    assert not valid[element] and valid[real]
    floats = reduce.detail["floats"]
    assert floats[element] == 1.0  # the padding, other=1
    assert floats.sum() != floats[valid].sum()  # it changes the sum


def test_a_statistic_of_the_whole_tile_keeps_no_index():
    check = check_source("""
kernel k(x: f32[M, N], y: out f32[M, N]):
    tile BM = 16, BN = 32
    grid (cdiv(M, BM), cdiv(N, BN))
    rm = program_id(0) * BM + arange(BM)
    rn = program_id(1) * BN + arange(BN)
    v = load(x[rm, rn], mask=(rm < M, rn < N), other=0)
    store(y[rm, rn], v - sum(v, axis=(0, 1)), mask=(rm < M, rn < N))
""")
    assert [d.code for d in verify_check(check).diagnostics] == []
