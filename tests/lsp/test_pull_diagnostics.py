"""Pull diagnostics for a client that asks for them: textDocument/diagnostic answers for the latest version,
`unchanged` when nothing is new, and new verdicts become a refresh request instead of a push."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsp_support import CONFIG, EXAMPLES, open_document, published
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

NEXT_K = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()


@pytest_lsp.fixture(config=CONFIG)
async def puller(lsp_client: LanguageClient):
    """VS Code's capabilities with pull diagnostics and their refresh (VS Code has both since 1.73); pytest-lsp
    counts the refresh requests in diagnostic_refresh_count."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.text_document.diagnostic = types.DiagnosticClientCapabilities(related_document_support=False)
    capabilities.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    result = await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    lsp_client.server_capabilities = result.capabilities
    yield
    await lsp_client.shutdown_session()


def pull(client: LanguageClient, uri: str, previous: str | None = None):
    params = types.DocumentDiagnosticParams(
        text_document=types.TextDocumentIdentifier(uri), previous_result_id=previous
    )
    return client.text_document_diagnostic_async(params)


async def test_the_server_announces_pull_diagnostics(puller):
    provider = puller.server_capabilities.diagnostic_provider
    assert provider is not None and provider.inter_file_dependencies is False


async def test_a_pull_answers_the_latest_version_and_new_verdicts_come_as_a_refresh(puller, uri):
    open_document(puller, uri, NEXT_K)
    first = await pull(puller, uri)  # answered once version 1 is checked, before the verifier is done
    assert first.kind == "full"
    pushed_before = len([p for p in puller.published if p.uri == uri])
    for _ in range(400):  # the verifier's verdict: a refresh, then the pull has it
        if puller.diagnostic_refresh_count:
            report = await pull(puller, uri, first.result_id)
            if report.kind == "full" and [d.code for d in report.items] == ["AR310"]:
                break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the verifier's verdict never came through a pull")
    assert puller.diagnostic_refresh_count >= 1
    unchanged = await pull(puller, uri, report.result_id)
    assert unchanged.kind == "unchanged" and unchanged.result_id == report.result_id
    # after its first pull, the document's diagnostics are no longer pushed (nor shown twice): one empty push
    # cleared what was pushed before
    pushed = [p for p in puller.published if p.uri == uri]
    assert len(pushed) == pushed_before and list(pushed[-1].diagnostics) == []


async def test_a_client_that_does_not_pull_keeps_getting_pushes(vscode, uri):
    open_document(vscode, uri, NEXT_K)
    merged = await published(vscode, uri, 1, nth=2)
    assert [d.code for d in merged.diagnostics] == ["AR310"]
