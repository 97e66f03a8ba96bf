"""No edit the server sends lands on text it was not computed for: quick fixes and skills follow their lines
through the user's edits or are refused, and an edit that races a keystroke is caught, whatever the client
checks (issue 22's worst class: a skill re-matched at its old line number rewrote another kernel; a quick
fix picked after an edit rewrote the wrong line; a keystroke racing a skill edit gave `t8ne`)."""

from __future__ import annotations

import asyncio

import pytest_lsp
from edit_model import ClientDocument
from lsp_support import CONFIG, EXAMPLES, actions_at, execute, open_document, published
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from argus.dsl.check import check_source

VECTOR_ADD = (EXAMPLES / "vector_add.argus").read_text()
TYPO = VECTOR_ADD.replace("x: f32[N]", "x: f33[N]")
# the same kernel under another name, with as many lines above its policy as vector_add has: inserted above
# it, its `policy num_warps = 4` takes the line number vector_add's had
TWIN = VECTOR_ADD.split("\nreference")[0].replace("vector_add", "twin_add") + "\n\n"
SKILL = "Skill: More warps: num_warps 4 → 8"


class Editor:
    """The client's copy of one document, and the client's side of workspace/applyEdit in one of the ways
    editors behave: `checks` (VS Code, Neovim: a versioned edit for an older buffer is skipped, and Neovim
    still answers applied), `by-position` (an editor that applies any edit where its ranges say); `keystroke`
    types one line at the top just before the edit arrives, the race of the issue."""

    def __init__(self, client: LanguageClient, uri: str, text: str, behaviour: str = "checks"):
        self.client, self.uri, self.doc, self.behaviour = client, uri, ClientDocument(text), behaviour
        self.keystroke = False
        self.requests: list[types.ApplyWorkspaceEditParams] = []
        client.feature(types.WORKSPACE_APPLY_EDIT)(lambda params: self.apply_edit(params))
        open_document(client, uri, text)

    def change(self, changes: list[types.TextDocumentContentChangeEvent]) -> None:
        for change in changes:
            self.doc.apply(change)
        self.doc.version += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.doc.version),
                content_changes=changes,
            )
        )

    def insert_at_top(self, text: str) -> None:
        start = types.Position(0, 0)
        self.change([types.TextDocumentContentChangePartial(range=types.Range(start, start), text=text)])

    def apply_edit(self, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        self.requests.append(params)
        if self.keystroke:
            self.keystroke = False
            self.insert_at_top("# typed meanwhile\n")
        if params.edit.document_changes:
            (change,) = params.edit.document_changes
            version, edits = change.text_document.version, change.edits
        else:
            version, edits = None, params.edit.changes[self.uri]
        if self.behaviour == "checks" and version is not None and version < self.doc.version:
            return types.ApplyWorkspaceEditResult(applied=True)  # Neovim: "Buffer newer than edits", applied
        self.change([types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits])
        return types.ApplyWorkspaceEditResult(applied=True)


async def resolved(client: LanguageClient, action: types.CodeAction) -> types.CodeAction:
    return await client.code_action_resolve_async(action)


def typo_line() -> int:
    return next(i for i, line in enumerate(TYPO.split("\n")) if "f33" in line)


async def quick_fix(client: LanguageClient, uri: str) -> types.CodeAction:
    params = await published(client, uri, 1)
    (typo,) = [d for d in params.diagnostics if d.code == "AR104"]
    actions = await actions_at(client, uri, typo.range.start.line, diagnostics=[typo])
    return next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)


async def test_a_quick_fix_picked_after_lines_were_inserted_above_fixes_its_own_line(client, uri):
    editor = Editor(client, uri, TYPO)
    fix = await quick_fix(client, uri)
    editor.insert_at_top(TWIN)  # 21 lines above, after the light bulb and before the pick
    action = await resolved(client, fix)
    (change,) = action.edit.document_changes
    assert change.text_document.version == editor.doc.version == 2
    editor.change([types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in change.edits])
    (edit,) = change.edits
    assert edit.range.start.line == typo_line() + TWIN.count("\n")
    assert "f33" not in editor.doc.text and not check_source(editor.doc.text).has_errors


async def test_a_quick_fix_whose_line_changed_since_is_refused_with_a_message(client, uri):
    editor = Editor(client, uri, TYPO)
    fix = await quick_fix(client, uri)
    line = typo_line()
    end = types.Position(line, len(TYPO.split("\n")[line]))
    editor.change(
        [types.TextDocumentContentChangePartial(range=types.Range(types.Position(line, 0), end), text="# gone")]
    )
    action = await resolved(client, fix)
    assert action.edit is None
    for _ in range(100):
        if client.messages:
            break
        await asyncio.sleep(0.02)
    assert any("not applied" in m.message and "changed" in m.message for m in client.messages)


async def test_a_library_skill_picked_after_a_kernel_was_inserted_above_rewrites_its_own_kernel(vscode, uri):
    editor = Editor(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = next(a for a in await actions_at(vscode, uri, line) if a.title.startswith(SKILL))
    editor.insert_at_top(TWIN)
    assert editor.doc.text.split("\n")[line] == "    policy num_warps = 4"  # twin_add's, at the old number
    answer = await execute(vscode, action.command)
    assert answer["applied"] is True, answer
    lines = editor.doc.text.split("\n")
    assert lines[line] == "    policy num_warps = 4"  # the twin kept its warps
    assert lines[line + TWIN.count("\n")] == "    policy num_warps = 8"


async def test_a_library_skill_whose_line_is_gone_is_refused_and_nothing_is_sent(vscode, uri):
    editor = Editor(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = next(a for a in await actions_at(vscode, uri, line) if a.title.startswith(SKILL))
    whole = types.Range(types.Position(line, 0), types.Position(line + 1, 0))
    editor.change([types.TextDocumentContentChangePartial(range=whole, text="")])
    answer = await execute(vscode, action.command)
    assert answer["applied"] is False and "is gone" in answer["error"], answer
    assert editor.requests == []


async def test_a_keystroke_racing_a_skill_edit_in_neovim_is_reported_not_applied(client, uri):
    editor = Editor(client, uri, VECTOR_ADD)
    await published(client, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = next(a for a in await actions_at(client, uri, line) if a.title.startswith(SKILL))
    editor.keystroke = True
    answer = await execute(client, action.command)
    assert answer["applied"] is False and "skipped" in answer["error"], answer
    assert editor.doc.text == "# typed meanwhile\n" + VECTOR_ADD  # and nothing corrupted


@pytest_lsp.fixture(config=CONFIG)
async def positional(lsp_client: LanguageClient):
    """A client that advertises no versioned edits and is not known to check them: it applies by position."""
    capabilities = client_capabilities("neovim@v0.7.0")
    params = types.InitializeParams(capabilities=capabilities, client_info=types.ClientInfo(name="Some Editor"))
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_a_skill_edit_that_landed_on_text_typed_meanwhile_is_undone(positional, uri):
    client = positional
    editor = Editor(client, uri, VECTOR_ADD, behaviour="by-position")
    await published(client, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = next(a for a in await actions_at(client, uri, line) if a.title.startswith(SKILL))
    editor.keystroke = True
    answer = await execute(client, action.command)
    assert answer["applied"] is False and "undone" in answer["error"], answer
    assert len(editor.requests) == 2  # the edit, then its undo
    assert editor.doc.text == "# typed meanwhile\n" + VECTOR_ADD


async def test_every_resolved_edit_replaces_the_text_it_was_computed_on(client, uri):
    """Random edits between the light bulb and the pick: a resolved edit is either refused or replaces, in the
    client's current text, exactly the text its fix replaced in the version it was computed for."""
    import random

    rng = random.Random(22)
    editor = Editor(client, uri, TYPO)
    fix = await quick_fix(client, uri)
    (original,) = fix.data["edits"]
    line, col, _, end_col, _ = original
    meant = TYPO.split("\n")[line][col:end_col]
    landed = refused = 0
    for _ in range(12):
        change = editor.doc.random_change(rng)
        editor.change([change])
        action = await resolved(client, fix)
        if action.edit is None:
            refused += 1
            continue
        (doc_change,) = action.edit.document_changes
        assert doc_change.text_document.version == editor.doc.version
        (edit,) = doc_change.edits
        r = edit.range
        assert r.start.line == r.end.line
        text_line = editor.doc.text_lines_with_breaks()[r.start.line]
        assert text_line[r.start.character : r.end.character] == meant
        landed += 1
    assert landed + refused == 12 and landed > 0
