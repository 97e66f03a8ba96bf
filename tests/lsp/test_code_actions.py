"""Code actions: quick fixes from diagnostics, skills enabled or disabled with the failed precondition, and
versioned edits made when the action is resolved."""

from __future__ import annotations

from lsp_support import EXAMPLES, actions_at, open_document, published, replace_all
from lsprotocol import types

from argus.dsl.check import check_source

NEXT_K = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
TYPO = (EXAMPLES / "vector_add.argus").read_text().replace("x: f32[N]", "x: f33[N]")


def line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.split("\n")) if needle in line)


async def edits_of(client, action, uri, version):
    """The text edits of an action once the client resolves it (both clients resolve edits lazily), checking
    that the edit names the version it was made for: VS Code advertises versioned edits, Neovim checks them
    without advertising them (argus.lsp.document_edits)."""
    assert action.edit is None and action.data["version"] == version
    resolved = await client.code_action_resolve_async(action)
    (change,) = resolved.edit.document_changes
    assert change.text_document.uri == uri and change.text_document.version == version
    return change.edits


def apply(text: str, edits) -> str:
    lines = text.split("\n")
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start, end = edit.range.start, edit.range.end
        head = "\n".join([*lines[: start.line], lines[start.line][: start.character]])
        tail = "\n".join([lines[end.line][end.character :], *lines[end.line + 1 :]])
        lines = (head + edit.new_text + tail).split("\n")
    return "\n".join(lines)


async def test_an_unknown_dtype_gets_the_did_you_mean_fix(client, uri):
    open_document(client, uri, TYPO)
    params = await published(client, uri, 1)
    (typo,) = [d for d in params.diagnostics if d.code == "AR104"]
    actions = await actions_at(client, uri, typo.range.start.line, diagnostics=[typo])
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
    assert fix.title == "Replace with `f32`" and fix.diagnostics[0].code == "AR104"
    fixed = apply(TYPO, await edits_of(client, fix, uri, 1))
    assert not check_source(fixed).diagnostics


async def test_an_implicit_narrowing_store_gets_an_explicit_cast(client, uri):
    text = NEXT_K.replace("acc.to(f16), mask", "acc, mask")
    open_document(client, uri, text)
    params = await published(client, uri, 1)
    (narrowing,) = [d for d in params.diagnostics if d.code == "AR212"]
    actions = await actions_at(client, uri, narrowing.range.start.line, character=narrowing.range.start.character)
    (fix,) = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert "acc.to(f16)" in apply(text, await edits_of(client, fix, uri, 1))


async def test_skills_at_a_loop_with_a_dot_are_enabled_or_say_which_precondition_failed(client, uri):
    open_document(client, uri, NEXT_K)
    await published(client, uri, 1)
    actions = await actions_at(client, uri, line_of(NEXT_K, "b = load"))
    titles = {a.title.split("  (")[0]: a for a in actions if a.kind == types.CodeActionKind.RefactorRewrite}
    pipelining = titles["Software pipelining: num_stages 3 → 4"]
    assert pipelining.disabled is None
    assert "num_stages = 4" in apply(NEXT_K, await edits_of(client, pipelining, uri, 1))
    assert titles["Retune BK = 64 → 32"].disabled is None
    # one stage deeper than the kernel's tune lists would not fit (a tune value that does not is AR410 itself)
    deeper = NEXT_K.replace("num_stages = 3", "num_stages = 4")
    replace_all(client, uri, 2, NEXT_K, deeper)
    await published(client, uri, 2)
    actions = await actions_at(client, uri, line_of(deeper, "b = load"))
    titles = {a.title.split("  (")[0]: a for a in actions if a.kind == types.CodeActionKind.RefactorRewrite}
    too_big = titles.get("Software pipelining: num_stages 4 → 5")
    if client.kind == "vscode":  # disabledSupport, and the user invoked the menu: shown with the reason
        assert "240 KiB of shared memory" in too_big.disabled.reason
        assert too_big.edit is None
    else:  # Neovim 0.7 cannot show disabled actions: left out
        assert too_big is None


async def test_disabled_actions_are_left_out_when_the_menu_opens_by_itself(client, uri):
    open_document(client, uri, NEXT_K)
    await published(client, uri, 1)
    actions = await actions_at(client, uri, line_of(NEXT_K, "b = load"), trigger=types.CodeActionTriggerKind.Automatic)
    assert actions and all(a.disabled is None for a in actions)


async def test_pipelining_needs_a_loop_with_a_dot(client, uri):
    text = (EXAMPLES / "vector_add.argus").read_text()
    open_document(client, uri, text)
    await published(client, uri, 1)
    actions = await actions_at(client, uri, line_of(text, "store("))
    pipelining = [a for a in actions if a.title.startswith("Software pipelining")]
    if client.kind == "vscode":
        assert "needs a `for` loop whose `dot` reads tiles loaded in the loop" in pipelining[0].disabled.reason
    else:
        assert pipelining == []


async def test_edits_carry_the_version_they_were_computed_for(client, uri):
    open_document(client, uri, TYPO)
    await published(client, uri, 1)
    replace_all(client, uri, 2, TYPO, "\n" + TYPO)  # one line down, version 2
    params = await published(client, uri, 2)
    (typo,) = [d for d in params.diagnostics if d.code == "AR104"]
    actions = await actions_at(client, uri, typo.range.start.line, diagnostics=[typo])
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
    (edit,) = await edits_of(client, fix, uri, 2)
    assert edit.range.start.line == typo.range.start.line


async def test_library_skills_replace_the_same_builtin_edit_and_carry_the_command_that_applies_and_gates(client, uri):
    from argus.skills.apply import plan
    from argus.skills.library import card_by_id, load_cards

    if not any(card.id.endswith(".dot") for card in load_cards()):
        raise AssertionError("skills/library holds no card for kernels whose loop feeds a dot (argus skills extract)")
    open_document(client, uri, NEXT_K)
    await published(client, uri, 1)
    found = await actions_at(client, uri, line_of(NEXT_K, "for k0"))
    actions = [a for a in found if isinstance(a, types.CodeAction)]
    titles = [a.title for a in actions if a.kind == types.CodeActionKind.RefactorRewrite]
    # the built-in pipelining step and the library's card make the same edit: one entry, the library's
    assert [t for t in titles if "num_stages 3 → 4" in t] == [
        next(t for t in titles if t.startswith("Skill: Software pipelining: num_stages 3 → 4"))
    ]
    assert any(t.startswith("Retune ") for t in titles)  # the built-in retune steps stay beside the library
    library = [a for a in actions if a.title.startswith("Skill: ") and a.disabled is None]
    assert library, titles
    assert all(a.data["gate_after"] and a.data["skill"].endswith(".dot") for a in library)
    # no edit: the command matches again when picked, applies the skill and gates it (tests/lsp/test_skill_apply.py)
    assert all(a.edit is None and a.command.command == "argus.applySkill" for a in library)
    grouped = next(a for a in library if a.title.startswith("Skill: Grouped program order"))
    uri_, version, skill, line, _ = grouped.command.arguments
    assert (uri_, version, skill) == (uri, 1, grouped.data["skill"])
    outcome = plan(NEXT_K, card_by_id(skill), line)
    assert "q, group = program_id(0), program_id(1)" in outcome.text_after
