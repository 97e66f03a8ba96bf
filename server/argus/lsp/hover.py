"""Hover: the snapshot's answer (argus.analysis.hover) as an LSP Hover, with the verifier's layouts rendered
first where they are not yet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.documents import Snapshot
    from argus.lsp.state import ServerState

# How long a hover waits for the solver thread to render a layout not rendered yet before answering without it.
LAYOUT_WAIT_S = 0.04


def register(server: ServerState) -> None:
    @server.client.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    async def hover(params: types.HoverParams) -> types.Hover | None:
        found = await server.snapshot_at(params.text_document.uri, params.position)
        if found is None:
            return None
        snapshot, position = found
        line, col = snapshot.positions.point(position)
        text = await hover_with_layouts(server, snapshot, line, col)
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))


async def hover_with_layouts(server: ServerState, snapshot: Snapshot, line: int, col: int) -> str | None:
    """Layouts are z3 terms, rendered on the solver thread, usually ahead of time once a version's verdicts are
    out; the symbol's layout, if not rendered yet, is waited for briefly: the answer comes without it rather
    than late."""
    layouts = server.layouts_for(snapshot)
    if layouts:
        await server.render(snapshot.analysis.layouts_at(line, col, layouts), LAYOUT_WAIT_S)
    return snapshot.analysis.hover(line, col, layouts)
