"""Correct but tricky kernels (tests/verify/corpus/tricky/): program orders and write patterns real kernels use
(persistent tile loops, Triton's 1-D grouped order, grid-stride loops, atomics into a many-to-one row map),
each of which once got an AR304 or AR312. Each verifies with no diagnostic at all: every obligation proved."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

TRICKY = sorted((Path(__file__).parent / "corpus" / "tricky").glob("*.argus"))


def test_the_tricky_corpus_is_there():
    assert len(TRICKY) >= 5


@pytest.mark.parametrize("path", TRICKY, ids=lambda p: p.stem)
def test_tricky_kernel_verifies_with_no_diagnostic(path):
    check = check_source(path.read_text())
    assert not check.has_errors, [d.text_line(path.name) for d in check.diagnostics]
    result = verify_check(check)
    assert [d.text_line(path.name) for d in result.diagnostics] == []
    assert result.stats.obligations == result.stats.proved > 0
