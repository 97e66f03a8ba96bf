"""Notifications leave nothing behind: pygls filed every notification's future under a fresh uuid and never
took it out, so the server grew by about 3 MB per 1,000 edits (issue 22; bench/lsp_fuzz.py measures RSS)."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from pygls.workspace import Workspace

from argus.lsp.server import create_server


async def test_a_thousand_edits_keep_no_future_each():
    server = create_server()
    protocol = server.protocol
    protocol._workspace = Workspace(None, types.TextDocumentSyncKind.Incremental)  # what initialize makes
    uri = "file:///memory.argus"
    item = types.TextDocumentItem(uri=uri, language_id="argus", version=1, text="x\n")
    protocol._handle_notification(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(text_document=item))
    start = types.Position(line=0, character=0)
    for version in range(2, 1002):
        change = types.TextDocumentContentChangePartial(range=types.Range(start, start), text="y")
        params = types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
        )
        protocol._handle_notification(types.TEXT_DOCUMENT_DID_CHANGE, params)
    await asyncio.sleep(0.1)
    assert server.documents.get(uri).version == 1001  # the edits were handled
    assert len(protocol._request_futures) == 0
    for state in server.documents:
        state.cancel_tasks()
