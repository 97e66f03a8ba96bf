"""Invariant diagnostics do not blink off while someone types: until the new version's verdicts arrive, the
previous version's are published moved with the edit; one on an edited line goes at once."""

from __future__ import annotations

from lsp_support import EXAMPLES, open_document, published
from lsprotocol import types

NEXT_K = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
BUG_LINE = 17  # b's load with row index rk + BK: AR310 (tests/lsp/test_diagnostics.py)


def insert(client, uri: str, version: int, line: int, text: str) -> None:
    at = types.Position(line=line, character=0)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(at, at), text=text)],
        )
    )


async def test_an_edit_above_moves_the_verdict_with_its_line_until_the_new_one_arrives(client, uri):
    open_document(client, uri, NEXT_K)
    (bug,) = (await published(client, uri, 1, nth=2)).diagnostics
    assert (bug.code, bug.range.start.line) == ("AR310", BUG_LINE)
    insert(client, uri, 2, 0, "# a comment typed above\n")
    first = await published(client, uri, 2)  # syntax and types of version 2, before its verification
    assert [(d.code, d.range.start.line) for d in first.diagnostics] == [("AR310", BUG_LINE + 1)]
    assert first.diagnostics[0].message == bug.message
    verified = await published(client, uri, 2, nth=2)
    assert [(d.code, d.range.start.line) for d in verified.diagnostics] == [("AR310", BUG_LINE + 1)]


async def test_an_edit_on_the_verdicts_line_drops_it_at_once(client, uri):
    open_document(client, uri, NEXT_K)
    await published(client, uri, 1, nth=2)
    insert(client, uri, 2, BUG_LINE, "    # typed into the line of the bug\n")  # the bug moves down...
    moved = await published(client, uri, 2)
    assert [(d.code, d.range.start.line) for d in moved.diagnostics] == [("AR310", BUG_LINE + 1)]
    line = NEXT_K.split("\n")[BUG_LINE]
    at = types.Position(line=BUG_LINE + 1, character=len(line))
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(at, at), text="  # edited")],
        )
    )
    edited = await published(client, uri, 3)  # ...and an edit of its own line takes it away until re-verified
    assert [d.code for d in edited.diagnostics] == []
    # a verification never published still fails; 60 s only spares a loaded 2-core CI machine (once over 20 s)
    reverified = await published(client, uri, 3, nth=2, timeout=60.0)
    assert [(d.code, d.range.start.line) for d in reverified.diagnostics] == [("AR310", BUG_LINE + 1)]
