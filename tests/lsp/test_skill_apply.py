"""A library skill picked in the light bulb: `argus.applySkill` matches it again on the current text, sends the
smallest edit through workspace/applyEdit, and starts a gate run (on the CPU here); a skill whose precondition
no longer holds is refused by name and nothing is changed."""

from __future__ import annotations

import asyncio

from lsp_support import (
    EXAMPLES,
    actions_at,
    execute,
    needs_neovim,
    open_document,
    published,
    record_apply_edits,
    record_gate_results,
    replace_all,
    run_neovim,
)
from lsprotocol import types

VECTOR_ADD = (EXAMPLES / "vector_add.argus").read_text()
TITLE = "Skill: More warps: num_warps 4 → 8"


async def skill_action(client, uri: str, line: int, title: str) -> types.CodeAction:
    return next(a for a in await actions_at(client, uri, line) if a.title.startswith(title))


async def test_a_library_skill_is_applied_by_its_command_and_gated(client, uri):
    requests = record_apply_edits(client)
    client.versions = {uri: 1}
    open_document(client, uri, VECTOR_ADD)
    await published(client, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = await skill_action(client, uri, line, TITLE)
    assert action.kind == types.CodeActionKind.RefactorRewrite and action.edit is None
    assert action.command.command == "argus.applySkill"
    assert list(action.command.arguments[:4]) == [uri, 1, "num_warps.row", line]

    answer = await execute(client, action.command)
    assert answer["applied"] is True and answer["version"] == 2, answer
    (request,) = requests
    # a versioned edit: the editor refuses it if the text moved on (Neovim checks without advertising it)
    (change,) = request.edit.document_changes
    assert change.text_document.version == 1
    (edit,) = change.edits
    assert edit.new_text == "8" and edit.range.start == types.Position(line=line, character=23)
    assert edit.range.end == types.Position(line=line, character=24)
    assert answer["gate"] == {"kernels": ["vector_add"], "error": None}

    for _ in range(1200):  # the gate's compile and correct on the CPU
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        if lenses and "running" not in lenses[0].command.title:
            break
        await asyncio.sleep(0.1)
    assert lenses[0].command.title.startswith("✓ compile"), lenses[0].command.title
    assert "✓ correct" in lenses[0].command.title
    if client.kind == "vscode":  # the gate's work-done progress, begun and ended
        (reports,) = client.progress_reports.values()
        assert [type(r).__name__ for r in (reports[0], reports[-1])] == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]
        assert reports[0].title == "Argus gate"


async def test_a_skill_triggered_gate_run_ends_with_an_argus_gate_result_notification(vscode, uri):
    record_apply_edits(vscode)
    vscode.versions = {uri: 1}
    notifications = record_gate_results(vscode)
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = await skill_action(vscode, uri, line, TITLE)
    answer = await execute(vscode, action.command)
    assert answer["applied"] is True and answer["gate"]["kernels"] == ["vector_add"], answer
    assert notifications == []  # the run has only started

    for _ in range(1200):  # the gate's compile and correct on the CPU
        if notifications:
            break
        await asyncio.sleep(0.1)
    (result,) = notifications
    assert result.uri == uri and result.version == 2  # the edited text
    assert result.device == "cpu" and result.kernels == ["vector_add"]
    assert result.cancelled is False and result.error is None
    (kernel,) = result.results
    assert kernel.kernel == "vector_add"
    assert kernel.compile.status == "passed" and kernel.correct.status == "passed"
    assert kernel.profile.status == "skipped"  # no GPU here
    lenses = await vscode.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert lenses[0].command.title.startswith("✓ compile") and "✓ correct" in lenses[0].command.title


async def test_a_skill_whose_precondition_no_longer_holds_is_refused_by_name(vscode, uri):
    requests = record_apply_edits(vscode)
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = await skill_action(vscode, uri, line, TITLE)
    tuned = VECTOR_ADD.replace("num_warps = 4", "num_warps = 4 tune [2, 4]")
    replace_all(vscode, uri, 2, VECTOR_ADD, tuned)  # the user edits before picking the action
    await published(vscode, uri, 2)

    answer = await execute(vscode, action.command)
    assert answer["applied"] is False
    assert answer["refused"] == "in_tune_list: num_warps = 8 is not in its tune list [2, 4]"
    assert requests == []
    message = vscode.messages[-1]
    assert message.type == types.MessageType.Warning
    assert message.message.startswith(f"{TITLE} was not applied (matched again")
    assert "in_tune_list" in message.message and message.message.endswith("Nothing was changed.")
    assert vscode.progress_reports == {}  # no gate run


async def test_an_edit_the_editor_rejects_is_reported_and_not_gated(vscode, uri):
    requests = record_apply_edits(vscode, applied=False)
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    line = VECTOR_ADD.split("\n").index("    policy num_warps = 4")
    action = await skill_action(vscode, uri, line, TITLE)
    answer = await execute(vscode, action.command)
    assert answer["applied"] is False and len(requests) == 1
    assert vscode.messages[-1].message == f"{TITLE} was not applied: the editor refused the edit: the user said no"
    assert vscode.progress_reports == {}


@needs_neovim
def test_neovim_applies_a_library_skill_from_its_menu_and_gates_it(tmp_path):
    kernel = tmp_path / "vector_add.argus"
    kernel.write_text(VECTOR_ADD)
    out = run_neovim("nvim_skill.lua", kernel, tmp_path, timeout=300)
    assert f"picked: {TITLE}" in out
    assert "(command argus.applySkill)" in out
    assert "after the skill:     policy num_warps = 8" in out
    assert "gate: ✓ compile" in out and "✓ correct" in out
    assert "PASS" in out
