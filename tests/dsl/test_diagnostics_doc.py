"""docs/diagnostics.md is executable: each code's Wrong example reports it and its Right example checks clean.

The page's layout is machine-readable: a `## ARnnn: title` heading per code; the Wrong example is the first
```argus block after the text **Wrong**, the Right example the first ```argus block after **Right**.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from argus.dsl.check import check_source
from argus.dsl.codes import CODES

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
TEXT = DOC.read_text(encoding="utf-8")
HEADING = re.compile(r"^## (AR\d{3}): (.+)$", re.MULTILINE)
FENCE = re.compile(r"```argus\n(.*?)```", re.DOTALL)
DOCUMENTED = sorted(CODES)

# Analyzer bugs a documented example runs into; the lead removes an entry once the bug is fixed.
KNOWN_BUGS: dict[tuple[str, str], str] = {}


def split_sections(text: str) -> dict[str, str]:
    """Each `## ARnnn: title` heading's code mapped to the text up to the next `## ` heading."""
    found: dict[str, str] = {}
    headings = list(HEADING.finditer(text))
    for heading in headings:
        body = text[heading.end() :].split("\n## ", 1)[0]
        assert heading.group(1) not in found, f"{heading.group(1)} is documented twice"
        found[heading.group(1)] = body
    return found


SECTIONS = split_sections(TEXT)


def example(code: str, label: str) -> str:
    body = SECTIONS[code]
    marker = body.find(f"**{label}**")
    assert marker >= 0, f"{code} has no **{label}** example"
    block = FENCE.search(body, marker)
    assert block is not None, f"{code} has no ```argus block after **{label}**"
    return block.group(1)


# AR5xx come from running the gate, never from `check`: tests/gate/test_gate_codes_doc.py runs their examples.
FOUND_BY_THE_GATE = {code for code in CODES if code.startswith("AR5")}
# AR3xx come from the verifier (argus.verify), a layer above this one: tests/verify/test_verify_codes_doc.py
# runs their Wrong and Right examples through it; here their Right examples must still check clean.
FOUND_BY_THE_VERIFIER = {code for code in CODES if code.startswith("AR3")}
# AR010 comes from the language server's size limit: tests/lsp/test_large_files.py runs its Wrong example there.
FOUND_BY_THE_SERVER = {"AR010"}


def cases(label: str) -> list:
    return [
        pytest.param(code, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BUGS[(code, label)]))
        if (code, label) in KNOWN_BUGS
        else code
        for code in DOCUMENTED
        if not (label == "Wrong" and code in FOUND_BY_THE_GATE | FOUND_BY_THE_VERIFIER | FOUND_BY_THE_SERVER)
    ]


def test_every_code_is_documented():
    assert [code for code in DOCUMENTED if code not in SECTIONS] == []


def test_no_stale_codes_in_headings():
    assert sorted(code for code in SECTIONS if code not in CODES) == []


def test_headings_use_the_catalog_titles():
    for match in HEADING.finditer(TEXT):
        assert match.group(2).strip() == CODES[match.group(1)].title, match.group(1)


def test_sections_follow_the_catalog_order():
    assert list(SECTIONS) == DOCUMENTED


@pytest.mark.parametrize("code", cases("Wrong"))
def test_wrong_example_reports_the_code(code):
    reported = [d.code for d in check_source(example(code, "Wrong")).diagnostics]
    assert code in reported


@pytest.mark.parametrize("code", cases("Right"))
def test_right_example_checks_clean(code):
    diagnostics = check_source(example(code, "Right")).diagnostics
    assert [d.text_line("right.argus") for d in diagnostics] == []


def test_the_json_record_shown_in_the_intro_is_what_the_cli_prints():
    shown = json.loads(re.search(r"```json\n(.*?)```", TEXT, re.DOTALL).group(1))
    assert len(shown) == 1
    record = shown[0]
    produced = [d for d in check_source(example("AR201", "Wrong")).diagnostics if d.code == "AR201"]
    assert len(produced) == 1
    assert record == {"path": "bias.argus", **produced[0].model_dump(mode="json")}


def test_the_text_line_shown_in_the_intro_is_what_the_cli_prints():
    produced = next(d for d in check_source(example("AR201", "Wrong")).diagnostics if d.code == "AR201")
    assert produced.text_line("bias.argus") in TEXT
