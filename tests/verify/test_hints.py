"""Compiler hints as Triton reads them (issue 17, class 5): `multiple_of(x, n)` promises that each run of
consecutive values of x starts at a multiple of n (Triton's divisibility of a contiguous group's first element),
so the idiom `max_contiguous(multiple_of(pid * B + arange(B), B), B)` is established, while a run that starts
off the multiple, or spaced values that are not multiples, are AR309 with the element that breaks it."""

from __future__ import annotations

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

KERNEL = """
kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 256
    grid (cdiv(N, BLOCK),)
    offs = OFFS
    v = load(x[offs], mask=offs < N, other=0)
    store(y[offs], v * 2.0, mask=offs < N)
"""


def hint_errors(offs: str) -> list:
    result = verify_check(check_source(KERNEL.replace("OFFS", offs)))
    return [d for d in result.diagnostics if d.code == "AR309"]


@pytest.mark.parametrize(
    "offs",
    [
        "max_contiguous(multiple_of(program_id(0) * BLOCK + arange(BLOCK), BLOCK), BLOCK)",  # Triton's idiom
        "multiple_of(program_id(0) * BLOCK + arange(BLOCK), 16)",
        "multiple_of(program_id(0) * BLOCK, BLOCK) + arange(BLOCK)",  # the start alone, a scalar
    ],
)
def test_a_run_that_starts_at_the_multiple_establishes_the_hint(offs):
    assert hint_errors(offs) == []


def test_a_run_that_starts_off_the_multiple_is_reported_with_its_first_element():
    (error,) = hint_errors("multiple_of(program_id(0) * 100 + arange(BLOCK), 256)")
    assert "each run of consecutive values starts at a multiple of 256" in error.message
    witness = error.data["counterexample"]
    assert witness["element"] == {"i": 0} and witness["values"]["x"] % 256 != 0


def test_spaced_values_are_each_a_run_of_one_and_must_each_be_a_multiple():
    (error,) = hint_errors("multiple_of(arange(BLOCK) * 3, 4)")
    assert "multiple of 4" in error.message
    assert hint_errors("multiple_of(arange(BLOCK) * 4, 4)") == []
