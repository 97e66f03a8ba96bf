"""Constant folding divides integers as the kernel does: toward zero (Triton, C), not down (Python)."""

from __future__ import annotations

import pytest

from argus.dsl.evaluate import binary


@pytest.mark.parametrize(
    ("a", "b", "quotient", "remainder"),
    [(7, 2, 3, 1), (-7, 2, -3, -1), (7, -2, -3, 1), (-7, -2, 3, -1), (-1, 2, 0, -1), (6, 3, 2, 0)],
)
def test_integer_division_truncates_toward_zero(a, b, quotient, remainder):
    assert binary("//", a, b) == quotient
    assert binary("%", a, b) == remainder
    assert quotient * b + remainder == a


def test_float_division_floors_as_in_python_and_triton():
    assert binary("//", -7.0, 2) == -4.0
    assert binary("%", -7.0, 2) == 1.0


def test_division_by_zero_has_no_value():
    assert binary("//", 1, 0) is None and binary("%", 1, 0) is None
