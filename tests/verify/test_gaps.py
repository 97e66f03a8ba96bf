"""Known gaps of the verifier (tests/verify/gaps/README.md): each is a strict expected failure, so that the
change that closes one is told to move its kernel into the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.verify import verify_check

GAPS = Path(__file__).parent / "gaps"


def verifier_findings(name: str) -> list[tuple[str, str, int]]:
    check = check_source((GAPS / name).read_text(encoding="utf-8"))
    assert not check.has_errors, [d.message for d in check.diagnostics]
    result = verify_check(check)
    return [(d.code, d.severity.value, d.range.start.line + 1) for d in result.diagnostics if d.code.startswith("AR3")]


CORRECT = [
    ("bounds_fused_moe_padding_token_unmasked.fixed.argus", "fused MoE on a 1-D grid: three AR312 out of budget"),
]


@pytest.mark.parametrize(("name", "gap"), CORRECT)
@pytest.mark.xfail(strict=True, reason="a known gap: tests/verify/gaps/README.md")
def test_correct_kernel_verifies_with_no_finding(name: str, gap: str):
    assert verifier_findings(name) == [], gap


def test_the_kernels_that_verify_clean_still_do():
    """The 2-D grid form of the fused MoE of the second gap: the contrast the README draws."""
    assert verifier_findings("fused_moe_2d_grid_clean.argus") == []
