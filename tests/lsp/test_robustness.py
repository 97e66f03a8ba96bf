"""Bad requests get empty answers and the server keeps serving."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from lsp_support import EXAMPLES, open_document, published
from lsprotocol import types

from argus.lsp.guard import guarded

NOWHERE = types.Position(line=10_000, character=10_000)


async def test_requests_for_a_document_that_was_never_opened_answer_empty(client):
    doc = types.TextDocumentIdentifier(uri="file:///never/opened.argus")
    assert await client.text_document_hover_async(types.HoverParams(doc, types.Position(line=0, character=0))) is None
    completion = await client.text_document_completion_async(types.CompletionParams(doc, types.Position(0, 0)))
    assert list(completion.items) == []
    assert list(await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))) == []
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            doc, types.Range(types.Position(0, 0), types.Position(0, 0)), types.CodeActionContext([])
        )
    )
    assert list(actions) == []
    assert list(await client.text_document_code_lens_async(types.CodeLensParams(doc))) == []
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="argus.runGate", arguments=[doc.uri])
    )
    assert "not open" in result["error"]


async def test_positions_out_of_range_are_clamped_not_fatal(client, uri):
    text = (EXAMPLES / "softmax.argus").read_text()
    open_document(client, uri, text)
    await published(client, uri, 1)
    doc = types.TextDocumentIdentifier(uri=uri)
    await client.text_document_hover_async(types.HoverParams(doc, NOWHERE))
    await client.text_document_definition_async(types.DefinitionParams(doc, NOWHERE))
    await client.text_document_signature_help_async(types.SignatureHelpParams(doc, NOWHERE))
    await client.text_document_completion_async(types.CompletionParams(doc, NOWHERE))
    await client.text_document_code_action_async(
        types.CodeActionParams(doc, types.Range(NOWHERE, NOWHERE), types.CodeActionContext([]))
    )
    # still alive and still right
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))
    assert symbols[0].name == "softmax"


async def test_a_change_to_an_unopened_document_is_ignored(client, uri):
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="kernel")],
        )
    )
    open_document(client, uri, (EXAMPLES / "vector_add.argus").read_text())
    params = await published(client, uri, 1)
    assert list(params.diagnostics) == []


async def test_a_failing_handler_answers_its_empty_result():
    @guarded(empty=list)
    async def broken(params):
        raise RuntimeError("a bug in a feature")

    assert await broken(None) == []


def test_the_server_process_imports_neither_torch_nor_triton():
    probe = (
        "import sys\n"
        "from argus.lsp.server import create_server\n"
        "from argus.lsp.diagnostics import load_verifier\n"
        "import argus.gate.api\n"
        "create_server(); load_verifier()\n"
        "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


async def test_the_server_also_speaks_over_tcp(tmp_path):
    import socket

    from pygls.lsp.client import LanguageClient

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "argus", "serve", "--tcp", f"127.0.0.1:{port}"])
    try:
        client = LanguageClient("tcp-test", "1")
        published = []

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: types.PublishDiagnosticsParams) -> None:
            published.append(params)

        for _ in range(200):  # the server takes a moment to listen; it serves the first connection
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        result = await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
        assert result.server_info.name == "argus"
        client.initialized(types.InitializedParams())
        uri = (tmp_path / "k.argus").as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="argus", version=1, text="kernel k(\n")
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        for _ in range(200):
            if published:
                break
            await asyncio.sleep(0.02)
        assert [d.code for d in published[0].diagnostics] == ["AR003"]
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
        assert server.wait(timeout=10) == 0
    finally:
        if server.poll() is None:
            server.kill()
