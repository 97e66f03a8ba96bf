"""`textDocument/inlayHint`: tile shapes after assignment targets and the verifier's layouts at the end of their
statements (the snapshot's Analysis.inlay_hints, from argus.dsl.inlay_hints, decides which, where and what they
say; this module only speaks LSP).

A layout exists once the verifier has run on the version the editor shows, usually a moment after the hints
were first asked for. So an answer given without layouts, for a document the verifier is still working on,
asks the client to ask again (`workspace/inlayHint/refresh`) once they are there.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.dsl.inlay_hints import InlayHint
    from argus.dsl.spans import Span
    from argus.lsp.documents import Snapshot
    from argus.lsp.state import ServerState

# How long an answer waits for the solver thread to render layouts not rendered yet before answering without
# them (layouts are z3 terms, which only that thread may touch: argus.lsp.hover says why).
LAYOUT_WAIT_S = 0.3
# How long, at most, the server watches for a version's layouts to arrive before it gives up on a refresh.
REFRESH_WATCH_S = 30.0
REFRESH_POLL_S = 0.05


def register(server: ServerState) -> None:
    watching: dict[str, asyncio.Task] = {}

    @server.client.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    @guarded(empty=list)
    async def inlay_hint(params: types.InlayHintParams) -> list[types.InlayHint]:
        uri = params.text_document.uri
        settings = server.settings_for(uri)
        if not settings.inlay_hints_enable:
            return []
        snapshot = await server.snapshot(uri)
        if snapshot is None:
            return []
        layouts = server.layouts_for(snapshot)
        if not layouts and settings.verify_enabled:
            refresh_when_verified(server, snapshot, watching)
        hints = await hints_with_layouts(server, snapshot, snapshot.positions.span(params.range), layouts)
        return [lsp_hint(snapshot, hint) for hint in hints]


async def hints_with_layouts(server: ServerState, snapshot: Snapshot, within: Span, layouts: list) -> list[InlayHint]:
    """Hints with the layouts of the requested lines, those not rendered yet waited for briefly; the answer comes
    without the ones that are still not ready."""
    wanted = [layout for layout in layouts if within.line <= layout.span.line <= within.end_line]
    await server.render(wanted, LAYOUT_WAIT_S)
    return snapshot.analysis.inlay_hints(within, [layout for layout in wanted if layout.rendered is not None])


def lsp_hint(snapshot: Snapshot, hint: InlayHint) -> types.InlayHint:
    is_type = hint.kind == "type"
    return types.InlayHint(
        position=snapshot.positions.position(hint.line, hint.col),
        label=hint.label,
        kind=types.InlayHintKind.Type if is_type else None,
        tooltip=hint.tooltip or None,
        padding_left=None if is_type else True,
    )


def refresh_when_verified(server: ServerState, snapshot: Snapshot, watching: dict[str, asyncio.Task]) -> None:
    """One watcher per document: when this version's layouts arrive, ask the client for the hints again."""
    if not server.client_supports("workspace", "inlay_hint", "refresh_support"):
        return
    running = watching.get(snapshot.uri)
    if running is not None and not running.done():
        return
    watching[snapshot.uri] = asyncio.create_task(watch(server, snapshot, watching))


async def watch(server: ServerState, snapshot: Snapshot, watching: dict[str, asyncio.Task]) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + REFRESH_WATCH_S
    try:
        while loop.time() < deadline:
            await asyncio.sleep(REFRESH_POLL_S)
            state = server.documents.get(snapshot.uri)
            if state is None or state.version != snapshot.version:
                return  # closed, or edited: the client asks again for the new version by itself
            if server.layouts_for(snapshot):
                with contextlib.suppress(Exception):  # a client that fails the refresh keeps the hints it has
                    await server.client.workspace_inlay_hint_refresh_async(None)
                return
    finally:
        watching.pop(snapshot.uri, None)
