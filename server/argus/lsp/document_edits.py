"""Whole-document rewrites (a skill applied by command, a refined kernel) sent as the smallest edit, through
`workspace/applyEdit`, versioned where the client supports it so an edit made for an older text is refused."""

from __future__ import annotations

import asyncio
import bisect
import itertools
import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.dsl.lines import line_starts
from argus.dsl.spans import Span
from argus.skills.provider import Edit
from argus.skills.rebase import common_ends
from argus.skills.text import apply_edits

if TYPE_CHECKING:
    from argus.lsp.documents import DocumentState
    from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)


def minimal_change(before: str, after: str) -> Edit | None:
    """The one replacement that turns `before` into `after`: everything but the common head and tail."""
    if before == after:
        return None
    head, tail = common_ends(before, after)
    # never split a CRLF line break: a client cannot address the place between its two characters
    if head and before[head - 1] == "\r" and before[head : head + 1] == "\n":
        head -= 1
    end = len(before) - tail
    if tail and before[end] == "\n" and end and before[end - 1] == "\r":
        tail -= 1
        end += 1
    return Edit(Span(*point(before, head), *point(before, end)), after[head : len(after) - tail])


def point(text: str, offset: int) -> tuple[int, int]:
    """(line, column) of `offset`, lines counted as LSP counts them."""
    starts = line_starts(text)
    line = bisect.bisect_right(starts, offset) - 1
    return line, offset - starts[line]


# Clients that read a versioned document change and skip it when their buffer is newer, although their
# capabilities do not advertise `workspace.workspaceEdit.documentChanges`: Neovim (0.5 and later, checked in
# vim.lsp.util.apply_text_document_edit, "Buffer ... newer than edits").
CHECK_VERSIONS_UNADVERTISED = ("Neovim",)


def versioned_edit(server: ServerState, uri: str, version: int, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    """`edits` to document `uri` at `version`; versioned where the client checks versions, so the client
    refuses an edit made for an older text instead of misapplying it."""
    advertised = server.client_supports("workspace", "workspace_edit", "document_changes")
    if advertised or server.client_name in CHECK_VERSIONS_UNADVERTISED:
        document = types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(text_document=document, edits=edits)])
    return types.WorkspaceEdit(changes={uri: edits})


def workspace_edit(server: ServerState, uri: str, version: int, before: str, after: str) -> types.WorkspaceEdit:
    change = minimal_change(before, after)
    edits = []
    if change is not None:
        r = server.positions(before).range(change.span)
        edits.append(types.TextEdit(range=r, new_text=change.new_text))
    return versioned_edit(server, uri, version, edits)


async def apply(server: ServerState, uri: str, version: int, before: str, after: str, label: str) -> str | None:
    """Ask the client to turn version `version` (text `before`) into `after`; None when it did, else why not.

    A client's "applied" is not taken on trust: Neovim answers applied when it skipped a versioned edit for a
    newer buffer, and a client that applies by position puts the edit on whatever text it has by then. So the
    answer counts only once the client's own changes show the edit landing on `before`: the first version
    after `version` must be `after`. An edit that landed on a newer text is undone (`undo_misapplied`)."""
    state = server.documents.get(uri)
    if state is None:
        return "the document is not open"
    if state.version != version:
        return f"the document changed (version {state.version}, the edit was made for {version})"
    if before == after:
        return None
    edit = workspace_edit(server, uri, version, before, after)
    try:
        answer = await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
    except Exception as error:
        logger.exception("workspace/applyEdit failed")
        return f"the editor could not apply the edit: {error}"
    if answer is None or not answer.applied:
        reason = getattr(answer, "failure_reason", None)
        return "the editor refused the edit" + (f": {reason}" if reason else "")
    versioned = edit.document_changes is not None
    return await landed(server, state, version, before, after, versioned)


LANDING_WAIT_S = 5.0  # a client sends its didChange before or soon after its answer (Neovim: 150 ms debounce)


async def landed(
    server: ServerState, state: DocumentState, version: int, before: str, after: str, versioned: bool
) -> str | None:
    """None when the client's first change after `version` turned `before` into `after`; else why not, after
    undoing the edit where the client put it on a text the user had changed meanwhile. A client that checks
    versions has decided with its first change after `version`; one that does not may apply our edit after a
    keystroke, so its changes are watched until the edit shows up or the wait ends."""
    change = minimal_change(before, after)
    deadline = asyncio.get_running_loop().time() + LANDING_WAIT_S
    while True:
        later = [text for v, text in state.steps if v > version]
        if later and later[0] == after:
            return None
        if later and versioned:
            return "the document changed before the editor applied the edit, and the editor skipped it"
        misapplied = misapplied_in(later, change)
        if misapplied is not None:
            await undo_misapplied(server, state, misapplied, label="Undo an edit that landed on changed text")
            return "the document changed while the edit was on its way; it landed on the new text and was undone"
        if state.closed or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.02)
    if later:
        return "the document changed before the editor applied the edit, and the editor did not apply it"
    return "the editor answered that it applied the edit, but the document did not change"


def misapplied_in(texts: list[str], change: Edit | None) -> tuple[str, str] | None:
    """In `texts`, the client's texts after the one our change was made for: the (text before, text after) of
    a step that was our change, at our positions, put on a text other than the one it was made for, or None."""
    if change is None:
        return None
    for base, text in itertools.pairwise(texts):
        if apply_edits(base, [change]) == text:
            return base, text
    return None


async def undo_misapplied(server: ServerState, state: DocumentState, misapplied: tuple[str, str], label: str) -> None:
    """Put back the text the user had before a misapplied edit, if nothing came after it."""
    base, text = misapplied
    if state.text != text:
        logger.warning("an edit landed on changed text of %s and more edits followed; not undone", state.uri)
        return
    edit = workspace_edit(server, state.uri, state.version, text, base)
    try:
        await server.workspace_apply_edit_async(types.ApplyWorkspaceEditParams(edit=edit, label=label))
    except Exception:
        logger.exception("undoing a misapplied edit failed")
