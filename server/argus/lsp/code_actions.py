"""Code actions: quick fixes for the diagnostics under the cursor, and the skill providers' actions.

A skill that does not apply is sent as a disabled action with the failed precondition as its reason, but only
when the client can show disabled actions and the user asked for the menu (CodeActionTriggerKind.Invoked);
otherwise it is left out, as the protocol asks. A library skill (one followed by a gate run) carries the
command `argus.applySkill` instead of an edit (argus.lsp.skill_commands).

An edit is never applied to text it was not computed for. The user may type between the light bulb and the
pick, and clients differ in what they check: VS Code's language client drops the version of a code action's
edit, Neovim advertises no versioned edits. So an action carries its edit in `data`, made for the version it
was computed on, and the edit itself is made at `codeAction/resolve`, when the user picks the action: moved
onto the text as it is then through the lines the user left alone (argus.skills.rebase), or refused, with a
message, when those lines changed. A client that cannot resolve gets the edit in the action, moved onto the
latest text the same way. Either way the edit is versioned for the text it was moved onto
(argus.lsp.document_edits.versioned_edit).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.analysis.spans import overlaps
from argus.dsl.spans import Span
from argus.lsp.document_edits import versioned_edit
from argus.lsp.guard import guarded
from argus.lsp.skill_commands import SkillTarget, skill_command
from argus.lsp.state import STAGES
from argus.skills.provider import Edit
from argus.skills.rebase import rebase_edits

if TYPE_CHECKING:
    from argus.analysis.quick_fixes import QuickFix
    from argus.lsp.documents import DocumentState, Snapshot
    from argus.lsp.state import ServerState
    from argus.skills.situation import Compiled

SKILL_KIND = types.CodeActionKind.RefactorRewrite
Edits = tuple[Edit, ...]


def register(server: ServerState) -> None:
    # the built-in providers need the language core, which loads after the initialize answer
    def register_builtin_skills() -> None:
        from argus.analysis.skill_actions import default_providers

        for provider in default_providers():
            server.skills.register(provider)

    server.on_first_code_action = register_builtin_skills

    @server.client.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, SKILL_KIND], resolve_provider=True),
    )
    @guarded(empty=list)
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        if server.on_first_code_action is not None:
            first, server.on_first_code_action = server.on_first_code_action, None
            first()
        snapshot = await server.snapshot(params.text_document.uri)
        if snapshot is None:
            return []
        wanted = params.context.only
        actions: list[types.CodeAction] = []
        if wanted is None or any(types.CodeActionKind.QuickFix.value.startswith(k) for k in wanted):
            actions += await fixes(server, snapshot, params.range, params.context.diagnostics)
        if wanted is None or any(SKILL_KIND.value.startswith(k) for k in wanted):
            show_disabled = (
                server.client_supports("text_document", "code_action", "disabled_support")
                and params.context.trigger_kind == types.CodeActionTriggerKind.Invoked
            )
            actions += await skill_actions(server, snapshot, params.range, show_disabled)
        return [action for action in actions if action is not None]

    @server.client.feature(types.CODE_ACTION_RESOLVE)
    @guarded(empty=lambda: None)
    async def resolve_code_action(action: types.CodeAction) -> types.CodeAction:
        return resolve_edit(server, action)


async def fixes(
    server: ServerState, snapshot: Snapshot, selection: types.Range, context: list[types.Diagnostic]
) -> list[types.CodeAction]:
    """Fixes for our diagnostics that overlap the selection or that the client passed in the context (editors
    send the diagnostics of the cursor's line). Fixes are built and type-checked in the checking thread; a fix
    of the verifier's diagnostic is also re-verified on the solver thread and offered only if the diagnostic
    goes away (the snapshot memoizes it, since editors ask again on every cursor move)."""
    from argus.analysis.quick_fixes import span_of

    state = server.documents.get(snapshot.uri)
    if state is None:
        return []
    span = snapshot.positions.span(selection)
    wanted = []
    for stage in STAGES:
        result = state.results.get(stage)
        if result is None or result.version != snapshot.version:
            continue
        for raw, lsp_diagnostic in zip(result.raw, result.diagnostics, strict=False):
            named = any(c.code == lsp_diagnostic.code and c.range == lsp_diagnostic.range for c in context)
            if named or overlaps(span_of(raw), span):
                wanted.append((raw, lsp_diagnostic))
    loop = asyncio.get_running_loop()

    def build() -> list:
        return [(fix, d) for raw, d in wanted for fix in snapshot.analysis.fixes(raw)]

    actions = []
    for fix, lsp_diagnostic in await loop.run_in_executor(server.check_pool, build):
        if fix.diagnostic.code.startswith("AR3") and not await fix_verifies(server, snapshot, fix):
            continue
        action = types.CodeAction(
            title=fix.title,
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[lsp_diagnostic],
            is_preferred=fix.preferred or None,
        )
        actions.append(with_edit(server, snapshot, action, fix.edits))
    return actions


async def fix_verifies(server: ServerState, snapshot: Snapshot, fix: QuickFix) -> bool:
    settings = server.settings_for(snapshot.uri)
    budget = (settings.verify_timeout_ms, settings.verify_rlimit)
    known = snapshot.analysis.fix_verdict(fix, *budget)
    if known is not None:
        return known

    def verify() -> bool:  # on the solver thread, the one that runs z3
        return snapshot.analysis.fix_verifies(fix, *budget)

    return await server.solver.quick(verify)


def gate_compiles(server: ServerState, snapshot: Snapshot) -> dict[str, Compiled]:
    """Per kernel, the spill stores and the registers a thread of the last gate run's compile of this very
    version of the document."""
    from argus.skills.situation import Compiled

    state = server.documents.get(snapshot.uri)
    run = state.gate if state is not None else None
    if run is None or run.version != snapshot.version:
        return {}
    return {r.kernel: Compiled.of(r.compile.facts) for r in run.results if r.compile.facts is not None}


async def skill_actions(
    server: ServerState, snapshot: Snapshot, selection: types.Range, show_disabled: bool
) -> list[types.CodeAction]:
    span = snapshot.positions.span(selection)
    proposed = await asyncio.get_running_loop().run_in_executor(
        server.check_pool, snapshot.analysis.skill_actions, span, server.skills, gate_compiles(server, snapshot)
    )
    from argus.skills.apply import digest  # the skills layer loads with the language core, after initialize

    actions = []
    for action in proposed:
        title = f"{action.title}  ({action.detail})" if action.detail else action.title
        if action.applicable and action.gate_after and action.line is not None:
            # no edit: the command matches the skill again when the user picks it, applies it, then gates it
            target = SkillTarget(snapshot.uri, snapshot.version, action.skill, action.line, digest(snapshot.text))
            actions.append(
                types.CodeAction(
                    title=title,
                    kind=SKILL_KIND,
                    is_preferred=action.preferred or None,
                    command=skill_command(title, target),
                    data={"skill": action.skill, "gate_after": True},
                )
            )
        elif action.applicable:
            proposed_action = types.CodeAction(
                title=title, kind=SKILL_KIND, is_preferred=action.preferred or None, data={"skill": action.skill}
            )
            actions.append(with_edit(server, snapshot, proposed_action, action.edits))
        elif show_disabled:
            actions.append(
                types.CodeAction(
                    title=action.title,
                    kind=SKILL_KIND,
                    disabled=types.CodeActionDisabled(reason=action.failed_precondition or "not applicable here"),
                    data={"skill": action.skill},
                )
            )
    return actions


# ---- edits: carried in data, made at resolve on the text of that moment -------------------------------------
def with_edit(
    server: ServerState, snapshot: Snapshot, action: types.CodeAction, edits: tuple[Edit, ...]
) -> types.CodeAction | None:
    """`action` with `edits` (made for `snapshot`) in its data, and in its edit unless the client resolves
    edits lazily; None when the document moved under the edits' lines before the action was even sent."""
    action.data = {**(action.data or {}), **carried(snapshot.uri, snapshot.version, edits)}
    if server.client_supports("text_document", "code_action", "resolve_support") and "edit" in (
        server.client.client_capabilities.text_document.code_action.resolve_support.properties
    ):
        return action
    resolved = resolve_edit(server, action, quiet=True)
    return resolved if resolved.edit is not None else None


def carried(uri: str, version: int, edits: tuple[Edit, ...]) -> dict:
    spans = [[e.span.line, e.span.col, e.span.end_line, e.span.end_col, e.new_text] for e in edits]
    return {"uri": uri, "version": version, "edits": spans}


def carried_edits(data: object) -> tuple[str, int, tuple[Edit, ...]] | None:
    """(uri, version, edits) from an action's data, or None when it carries none (or a client mangled it)."""
    if not isinstance(data, dict):
        return None
    uri, version, raw = data.get("uri"), data.get("version"), data.get("edits")
    if not isinstance(uri, str) or not isinstance(version, int) or not isinstance(raw, list):
        return None
    edits = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 5 and all(isinstance(n, int) for n in item[:4])):
            return None
        if not isinstance(item[4], str):
            return None
        edits.append(Edit(Span(*item[:4]), item[4]))
    return uri, version, tuple(edits)


def resolve_edit(server: ServerState, action: types.CodeAction, quiet: bool = False) -> types.CodeAction:
    """`action` with its edit made for the document as it is now: moved through the lines the user left alone
    since the version it was computed for, and versioned for the current one; without an edit (and, unless
    `quiet`, a message saying why) when those lines changed or the document is gone."""
    found = carried_edits(action.data)
    if found is None:
        return action
    uri, version, edits = found
    state = server.documents.get(uri)
    moved, why = moved_edits(state, version, edits)
    if moved is None:
        if not quiet:
            message = f"{action.title}: not applied, {why}. Nothing was changed."
            server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))
        action.edit = None
        return action
    positions = server.positions(state.text)
    text_edits = [types.TextEdit(range=positions.range(e.span), new_text=e.new_text) for e in moved]
    action.edit = versioned_edit(server, uri, state.version, text_edits)
    action.data = {**action.data, **carried(uri, state.version, moved)}
    return action


def moved_edits(
    state: DocumentState | None, version: int, edits: tuple[Edit, ...]
) -> tuple[tuple[Edit, ...] | None, str]:
    """`edits` (made for `version`) moved onto the document's current text, or None and why they cannot be."""
    if state is None:
        return None, "the document is closed"
    base = state.text_of(version)
    if base is None:
        return None, "the document changed too much since it was offered; ask for the action again"
    moved = rebase_edits(base, state.text, edits)
    return (moved, "") if moved is not None else (None, "the lines it edits changed since it was offered")
