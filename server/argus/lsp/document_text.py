"""`argus.documentText [uri]`: the server's copy of an open document and its version.

For a user whose squiggles sit on the wrong line (rust-analyzer has the same command): it shows whether the
server's copy has drifted from the editor's. The edit-stress tests compare it with the client's text after
every edit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.state import ServerState

DOCUMENT_TEXT = "argus.documentText"


def register(server: ServerState) -> None:
    @server.client.command(DOCUMENT_TEXT)
    @guarded(empty=dict)
    async def document_text(*arguments: Any) -> dict[str, Any]:
        uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
        state = server.documents.get(uri) if uri is not None else None
        if state is None:
            return {"uri": uri, "open": False}
        return {"uri": uri, "open": True, "version": state.version, "text": state.text}
