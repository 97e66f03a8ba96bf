"""Random edits, exotic line breaks and astral characters included: after every batch the server's copy of the
document equals the client's, and every published diagnostic range lies inside the text of its version.

A bounded slice runs here; bench/lsp_fuzz.py runs the long version."""

from __future__ import annotations

import asyncio
import random

import pytest
import pytest_lsp
from edit_model import ClientDocument
from lsp_support import CONFIG, EXAMPLES, open_document
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from argus.lsp.document_text import DOCUMENT_TEXT

EDITS = 240
CHECK_EVERY = 12


@pytest_lsp.fixture(config=CONFIG)
async def bare(lsp_client: LanguageClient):
    """A server the test initializes itself, with the position encoding it wants."""
    yield
    await lsp_client.shutdown_session()


async def start(lsp_client: LanguageClient, encoding: str) -> None:
    capabilities = client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=[encoding])
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))


async def server_copy(client: LanguageClient, uri: str) -> dict:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=DOCUMENT_TEXT, arguments=[uri])
    )


async def drive(client: LanguageClient, uri: str, doc: ClientDocument, rng: random.Random, edits: int) -> dict:
    """Send `edits` random didChanges (some with several changes); compare the server's copy every few."""
    texts = {doc.version: doc.text}
    for n in range(edits):
        changes = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            change = doc.random_change(rng)
            doc.apply(change)
            changes.append(change)
        doc.version += 1
        texts[doc.version] = doc.text
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                content_changes=changes,
            )
        )
        if n % CHECK_EVERY == CHECK_EVERY - 1 or n == edits - 1:
            copy = await server_copy(client, uri)
            assert copy["version"] == doc.version
            assert copy["text"] == doc.text, f"the server's copy diverged at version {doc.version}"
    return texts


def outside(client: LanguageClient, uri: str, texts: dict[int, str], encoding: str) -> list:
    found = []
    for params in client.published:
        if params.uri != uri or params.version not in texts:
            continue
        doc = ClientDocument(texts[params.version], encoding)
        for d in params.diagnostics:
            ranges = [d.range, *(r.location.range for r in d.related_information or [])]
            found += [(params.version, d.code, r) for r in ranges if not doc.inside(r)]
    return found


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
async def test_random_edits_keep_the_servers_copy_equal_to_the_clients(bare, uri, encoding):
    lsp_client = bare
    await start(lsp_client, encoding)
    rng = random.Random(f"edit-stress-{encoding}")
    doc = ClientDocument((EXAMPLES / "softmax.argus").read_text(), encoding)
    open_document(lsp_client, uri, doc.text)
    texts = await drive(lsp_client, uri, doc, rng, EDITS)
    await asyncio.sleep(1.0)  # the publications of the last versions
    assert outside(lsp_client, uri, texts, encoding) == []
    assert any(p.uri == uri and p.version in texts for p in lsp_client.published)


async def test_a_form_feed_or_line_separator_in_a_comment_keeps_later_lines_in_place(vscode, uri):
    text = "# a comment with \f a form feed and \u2028 a line separator\n" + (EXAMPLES / "vector_add.argus").read_text()
    open_document(vscode, uri, text)
    doc = ClientDocument(text)
    # an edit on the last line: the server must find the same line the client means
    last = len(text.split("\n")) - 2
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(last, 0), types.Position(last, 0)), text="# end\n"
    )
    doc.apply(change)
    vscode.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2), content_changes=[change]
        )
    )
    copy = await server_copy(vscode, uri)
    assert copy["text"] == doc.text
