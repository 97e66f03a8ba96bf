"""docs/diagnostics.md is executable: each code's Wrong example reports it and its Right example checks clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.codes import CODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
HEADING = re.compile(r"^## (AR\d{3}): (.+)$", re.MULTILINE)
FENCE = re.compile(r"```argus\n(.*?)```", re.DOTALL)
DOCUMENTED = sorted(code for code in CODES if not code.startswith("AR3"))


def sections() -> dict[str, str]:
    """Each `## ARnnn: title` heading's code mapped to the text up to the next `## ` heading."""
    text = DOC.read_text(encoding="utf-8")
    found: dict[str, str] = {}
    headings = list(HEADING.finditer(text))
    for heading, following in zip(headings, [*headings[1:], None], strict=True):
        end = following.start() if following else len(text)
        body = text[heading.end() : end]
        body = body.split("\n## ", 1)[0]
        assert heading.group(1) not in found, f"{heading.group(1)} is documented twice"
        found[heading.group(1)] = body
    return found


SECTIONS = sections()


def example(code: str, label: str) -> str:
    body = SECTIONS[code]
    marker = body.find(f"**{label}**")
    assert marker >= 0, f"{code} has no **{label}** example"
    block = FENCE.search(body, marker)
    assert block is not None, f"{code} has no ```argus block after **{label}**"
    return block.group(1)


def test_every_code_is_documented():
    missing = [code for code in DOCUMENTED if code not in SECTIONS]
    assert missing == []


def test_no_stale_codes_in_headings():
    assert sorted(code for code in SECTIONS if code not in CODES) == []


def test_headings_use_the_catalog_titles():
    for code in SECTIONS:
        title = HEADING.search(f"## {code}: " + "x").group(2)  # keeps the regex honest
        assert title == "x"
    text = DOC.read_text(encoding="utf-8")
    for match in HEADING.finditer(text):
        assert match.group(2).strip() == CODES[match.group(1)].title, match.group(1)


@pytest.mark.parametrize("code", DOCUMENTED)
def test_wrong_example_reports_the_code(code):
    reported = [d.code for d in check_source(example(code, "Wrong")).diagnostics]
    assert code in reported


@pytest.mark.parametrize("code", DOCUMENTED)
def test_right_example_checks_clean(code):
    diagnostics = check_source(example(code, "Right")).diagnostics
    assert [d.text_line("right") for d in diagnostics] == []
