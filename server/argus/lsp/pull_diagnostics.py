"""Pull diagnostics (`textDocument/diagnostic`, LSP 3.17) for clients that ask for them.

A client that can pull, and that can be told to pull again (`workspace/diagnostic/refresh`), gets its
diagnostics that way once it first pulls a document: from then on that document's diagnostics are no longer
pushed (a client shows pushed and pulled diagnostics side by side, so both would show each one twice), the
first pull clears what was pushed before, and each new publication (types, then the verifier's verdicts, then
a gate run's) becomes a refresh request. An answer is for the latest version: it waits briefly for that
version's check, and carries the previous version's verdicts moved with the edit until its own arrive, as
pushed diagnostics do. `resultId` is the document's publication count, so a pull with nothing new since gets
`unchanged`. Other clients keep getting pushed diagnostics.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)


def register(server: ServerState) -> None:
    @server.client.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(identifier="argus", inter_file_dependencies=False, workspace_diagnostics=False),
    )
    @guarded(empty=lambda: types.RelatedFullDocumentDiagnosticReport(items=[]))
    async def diagnostic(params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
        uri = params.text_document.uri
        state = server.documents.get(uri)
        if state is None:
            return types.RelatedFullDocumentDiagnosticReport(items=[])
        await server.snapshot(uri)  # the check of the latest version, briefly waited for
        if not state.pulled and server.client_supports("workspace", "diagnostics", "refresh_support"):
            state.pulled = True  # from now on, refresh instead of push; and nothing pushed stays beside it
            server.client.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        result_id = f"{state.version}:{state.publications}"
        if params.previous_result_id == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(items=server.current(state), result_id=result_id)
