"""Every diagnostic links to its section of docs/diagnostics.md (issue 22: the editor showed no link to a
code's documentation). The anchor a link carries must be one the page has: GitHub's slug of a heading, which
is what a browser on the repository and VS Code's Markdown preview jump to."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from argus.dsl.codes import CODES, anchor, documentation_url

DOC = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
HEADINGS = re.findall(r"^#{1,6} (.+)$", DOC.read_text(encoding="utf-8"), re.MULTILINE)


def github_slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, markup and punctuation dropped, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


ANCHORS = [github_slug(h) for h in HEADINGS]


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_codes_anchor_is_a_heading_of_the_page(code):
    assert ANCHORS.count(anchor(code)) == 1, f"{code}: #{anchor(code)} is not one heading of docs/diagnostics.md"


def test_an_anchor_is_the_heading_not_just_the_code():
    assert anchor("AR106") == "ar106-reference-parameters-differ-from-the-kernels-inputs"


@pytest.mark.parametrize("code", sorted(CODES))
def test_the_default_link_opens_this_checkouts_page_at_the_code(code):
    url = urlparse(documentation_url(code))
    assert url.scheme == "file"
    assert Path(unquote(url.path)) == DOC
    assert url.fragment == anchor(code)


def test_a_base_url_replaces_the_page_and_keeps_the_anchor():
    base = "https://example.org/argus/docs/diagnostics.md"
    assert documentation_url("AR301", base) == f"{base}#ar301-access-out-of-bounds"


def test_an_unknown_code_has_no_link():
    assert documentation_url("AR999") is None
