"""docs/diagnostics.md, the verifier's codes: each AR3xx Wrong example reports its code through `verify_check`,
and each Right example checks and verifies without a single diagnostic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.codes import CODES
from argus.verify import verify_check

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
TEXT = DOC.read_text(encoding="utf-8")
FENCE = re.compile(r"```argus\n(.*?)```", re.DOTALL)
VERIFIER_CODES = sorted(code for code in CODES if code.startswith("AR3"))


def example(code: str, label: str) -> str:
    heading = re.search(rf"^## {code}: .*$", TEXT, re.MULTILINE)
    assert heading is not None, f"{code} is not documented"
    body = TEXT[heading.end() :].split("\n## ", 1)[0]
    marker = body.find(f"**{label}**")
    assert marker >= 0, f"{code} has no **{label}** example"
    return FENCE.search(body, marker).group(1)


def everything(text: str):
    check = check_source(text)
    return check, check.diagnostics + verify_check(check).diagnostics


@pytest.mark.parametrize("code", VERIFIER_CODES)
def test_wrong_example_reports_the_code(code):
    check, diagnostics = everything(example(code, "Wrong"))
    assert not check.has_errors, [d.text_line("wrong.argus") for d in check.diagnostics]
    assert code in [d.code for d in diagnostics]


@pytest.mark.parametrize("code", VERIFIER_CODES)
def test_right_example_verifies_clean(code):
    _, diagnostics = everything(example(code, "Right"))
    assert [d.text_line("right.argus") for d in diagnostics] == []


def test_unknown_verdict_names_the_obligation_it_could_not_decide():
    _, diagnostics = everything(example("AR312", "Wrong"))
    unknown = next(d for d in diagnostics if d.code == "AR312")
    assert unknown.data["verdict"] == "unknown"
    assert unknown.data["obligation"] == "AR301"
    assert "does not model" in unknown.data["reason"]
