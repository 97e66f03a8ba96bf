"""Whole-document rewrites (a skill applied by command, a refined kernel) sent as the smallest edit, through
`workspace/applyEdit`, versioned where the client supports it so an edit made for an older text is refused."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.dsl.spans import Span
from argus.skills.provider import Edit

if TYPE_CHECKING:
    from argus.lsp.server import ArgusServer

logger = logging.getLogger(__name__)


def minimal_change(before: str, after: str) -> Edit | None:
    """The one replacement that turns `before` into `after`: everything but the common head and tail."""
    if before == after:
        return None
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    if head and before[head - 1] == "\r":  # never split a CRLF line break
        head -= 1
    start, end = head, len(before) - tail
    return Edit(Span(*point(before, start), *point(before, end)), after[head : len(after) - tail])


def point(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def versioned_edit(server: ArgusServer, uri: str, version: int, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    """`edits` to document `uri` at `version`; versioned where the client supports document changes, so the
    client refuses an edit made for an older text instead of misapplying it."""
    if server.client_supports("workspace", "workspace_edit", "document_changes"):
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def workspace_edit(server: ArgusServer, uri: str, version: int, before: str, after: str) -> types.WorkspaceEdit:
    change = minimal_change(before, after)
    edits = []
    if change is not None:
        r = server.positions(before).range(change.span)
        edits.append(types.TextEdit(range=r, new_text=change.new_text))
    return versioned_edit(server, uri, version, edits)


async def apply(server: ArgusServer, uri: str, version: int, before: str, after: str, label: str) -> str | None:
    """Ask the client to turn version `version` (text `before`) into `after`; None when it did, else why not.
    On success, waits briefly for the client's didChange so the caller sees the new version."""
    state = server.documents.get(uri)
    if state is None:
        return "the document is not open"
    if state.version != version:
        return f"the document changed (version {state.version}, the edit was made for {version})"
    edit = workspace_edit(server, uri, version, before, after)
    try:
        answer = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
    except Exception as error:
        logger.exception("workspace/applyEdit failed")
        return f"the editor could not apply the edit: {error}"
    if answer is None or not answer.applied:
        reason = getattr(answer, "failure_reason", None)
        return "the editor refused the edit" + (f": {reason}" if reason else "")
    for _ in range(250):  # the client sends didChange before it answers; its handler may not have run yet
        if state.version != version or state.text == after:
            break
        await asyncio.sleep(0.02)
    return None
