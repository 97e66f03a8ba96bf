"""Inlay hints over stdio (issue 22: users of rust-analyzer expect them): tile shapes after assignment targets,
the verifier's layouts at the end of their statements, only inside the requested range, a refresh once the
layouts exist, and none when `argus.inlayHints.enable` is off."""

from __future__ import annotations

import asyncio

import pytest_lsp
from lsp_support import CONFIG, EXAMPLES, open_document, published, replace_all
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

TEXT = (EXAMPLES / "matmul.argus").read_text()
LINES = TEXT.split("\n")


def line_of(needle: str) -> int:
    return next(n for n, line in enumerate(LINES) if needle in line)


async def hints(client, uri: str, first: int = 0, last: int = len(LINES) - 1) -> list[types.InlayHint]:
    params = types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(
            start=types.Position(line=first, character=0), end=types.Position(line=last, character=len(LINES[last]))
        ),
    )
    return list(await client.text_document_inlay_hint_async(params) or [])


def written(found: list[types.InlayHint]) -> list[str]:
    """Each hint written into its line where the editor draws it, trimmed to the code before it."""
    return [f"{LINES[h.position.line][: h.position.character].strip()}⟦{h.label}⟧" for h in found]


@pytest_lsp.fixture(config=CONFIG)
async def fresh(lsp_client: LanguageClient):
    """A server not yet initialized: the test initializes it and reads the answer."""
    yield
    await lsp_client.shutdown_session()


async def test_the_server_announces_inlay_hints(fresh):
    params = types.InitializeParams(capabilities=client_capabilities("visual-studio-code"))
    answer = await fresh.initialize_session(params)
    assert answer.capabilities.inlay_hint_provider is not None


async def test_tile_targets_get_their_shape_and_statements_their_layout(vscode, uri):
    open_document(vscode, uri, TEXT)
    await published(vscode, uri, 1, nth=2)  # the verifier's result, and with it the layouts
    found = await hints(vscode, uri, line_of("for k0 in"), line_of("acc = dot(") - 1)
    assert written(found) == [
        "rk⟦: i32[BK]⟧",
        "rk = k0 + arange(BK)⟦(i) → k0 + i⟧",
        "a⟦: f16[BM, BK]⟧",
        "a = load(A[rm, rk], mask=(rm < M, rk < K), other=0)⟦(i, j) → A[M: 128*pm + i, K: k0 + j]⟧",
        "b⟦: f16[BK, BN]⟧",
        "b = load(B[rk, rn], mask=(rk < K, rn < N), other=0)⟦(i, j) → B[K: k0 + i, N: 256*pn + j]⟧",
    ]
    types_, layouts = found[::2], found[1::2]
    assert {h.kind for h in types_} == {types.InlayHintKind.Type}
    assert all(h.padding_left for h in layouts)
    assert [h.tooltip.split(" (", 1)[0] for h in layouts] == ["rk: [64]", "a: [128x64]", "b: [64x256]"]
    assert "mask (M > 128*pm + i) & (K > k0 + j)" in layouts[1].tooltip  # the whole layout, mask and tags


async def test_a_range_elsewhere_gets_only_its_own_hints(vscode, uri):
    open_document(vscode, uri, TEXT)
    await published(vscode, uri, 1)
    line = line_of("rm = pm * BM")
    found = written(await hints(vscode, uri, line, line))
    # the type hint, and, once the verifier's layouts are in (it runs at once after an open), the layout's
    assert found in (["rm⟦: i32[BM]⟧"], ["rm⟦: i32[BM]⟧", "rm = pm * BM + arange(BM)⟦(i) → 128*pm + i⟧"])
    assert await hints(vscode, uri, 0, line_of("kernel matmul")) == []


def with_inlay_hints() -> types.ClientCapabilities:
    """VS Code's capabilities as pytest-lsp records them, plus the inlay hint support VS Code has had since 1.67."""
    capabilities = client_capabilities("visual-studio-code")
    capabilities.text_document.inlay_hint = types.InlayHintClientCapabilities()
    capabilities.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    return capabilities


async def test_the_client_is_asked_to_refresh_once_the_layouts_are_there(fresh, uri):
    refreshed = asyncio.Event()

    @fresh.feature(types.WORKSPACE_INLAY_HINT_REFRESH)
    def refresh(params) -> None:
        refreshed.set()

    # the verifier waits 1.5 s after an edit, so the first answer for the edited version has no layouts yet
    options = {"argus": {"debounceMs": 1500}}
    await fresh.initialize_session(
        types.InitializeParams(capabilities=with_inlay_hints(), initialization_options=options)
    )
    open_document(fresh, uri, "")
    replace_all(fresh, uri, 2, "", TEXT)
    await published(fresh, uri, 2)
    early = await hints(fresh, uri)
    assert [h.label for h in early if h.kind is None] == []
    await asyncio.wait_for(refreshed.wait(), timeout=30)
    late = await hints(fresh, uri)
    assert [h.label for h in late if h.kind == types.InlayHintKind.Type] == [h.label for h in early]
    assert "(i, j) → A[M: 128*pm + i, K: k0 + j]" in [h.label for h in late if h.kind is None]


async def test_the_setting_turns_them_off(vscode, uri):
    vscode.set_configuration({"inlayHints": {"enable": False}}, section="argus")
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    open_document(vscode, uri, TEXT)
    await published(vscode, uri, 1)
    for _ in range(100):
        if not await hints(vscode, uri):
            break
        await asyncio.sleep(0.02)
    assert await hints(vscode, uri) == []
