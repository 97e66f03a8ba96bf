"""A file over argus.check.maxFileKiB is not checked in the editor: one AR010 on its first line says so, and the
server stays responsive; docs/diagnostics.md's AR010 Wrong example is the file, under a 1 KiB limit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_lsp
from lsp_support import CONFIG, initialize, open_document, published
from lsprotocol import types
from pytest_lsp import LanguageClient

DOC = (Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md").read_text(encoding="utf-8")


def documented(label: str) -> str:
    section = DOC[DOC.index("## AR010") :].split("\n## ", 1)[0]
    after = section[section.index(f"**{label}**") :]
    return re.search(r"```argus\n(.*?)```", after, re.DOTALL).group(1)


@pytest_lsp.fixture(config=CONFIG)
async def small_limit(lsp_client: LanguageClient):
    await initialize(lsp_client, "vscode", {"argus": {"check": {"maxFileKiB": 1}}})
    yield
    await lsp_client.shutdown_session()


async def test_a_file_over_the_limit_gets_one_ar010_and_nothing_else(small_limit, uri):
    text = documented("Wrong")
    assert len(text) > 1024
    open_document(small_limit, uri, text)
    params = await published(small_limit, uri, 1)
    (only,) = params.diagnostics
    assert only.code == "AR010" and only.range.start.line == 0
    assert "over argus.check.maxFileKiB (1 KiB)" in only.message and "argus check" in only.message
    hover = await small_limit.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line=1, character=8))
    )
    assert hover is None  # not checked: nothing to say, and an answer all the same


async def test_the_right_example_under_the_limit_is_checked(small_limit, uri):
    text = documented("Right")
    assert len(text) <= 1024
    open_document(small_limit, uri, text)
    params = await published(small_limit, uri, 1)
    assert [d.code for d in params.diagnostics] == []
