"""`argus.applySkill`: a library skill chosen in the light bulb, applied when the user picks it, then gated.

The code action carries only this command (uri, version, skill id, 0-based line, digest of the text the match
saw), not a precomputed edit, so the skill is matched again on the text as it is when the user picks it, at the
line the light bulb was on, followed to where it is now (refused when that line is gone): a
precondition that no longer holds refuses it by name and changes nothing; otherwise the server sends the
smallest edit through `workspace/applyEdit` (versioned where the client supports it) and starts a gate run of
the edited kernel through argus.lsp.gate, whose progress, diagnostics and code lens report the result.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from argus.lsp import document_edits
from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.documents import DocumentState
    from argus.lsp.state import ServerState
    from argus.skills.apply import Outcome
    from argus.skills.cards import Card

logger = logging.getLogger(__name__)

APPLY_SKILL = "argus.applySkill"


@dataclass(frozen=True, slots=True)
class SkillTarget:
    uri: str
    version: int
    skill: str
    line: int  # 0-based
    digest: str  # argus.skills.apply.digest of the text the match saw

    def arguments(self) -> list[Any]:
        return [self.uri, self.version, self.skill, self.line, self.digest]

    @classmethod
    def parse(cls, arguments: tuple[Any, ...]) -> SkillTarget | None:
        if len(arguments) == 1 and isinstance(arguments[0], dict):
            given = arguments[0]
            arguments = tuple(given.get(k) for k in ("uri", "version", "skill", "line", "digest"))
        if len(arguments) != 5:
            return None
        uri, version, skill, line, digest = arguments
        if not (isinstance(uri, str) and isinstance(skill, str) and isinstance(digest, str)):
            return None
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in (version, line)) or line < 0:
            return None
        return cls(uri, version, skill, line, digest)


def skill_command(title: str, target: SkillTarget) -> types.Command:
    return types.Command(title=title, command=APPLY_SKILL, arguments=target.arguments())


def register(server: ServerState) -> None:
    @server.client.command(APPLY_SKILL)
    @guarded(empty=lambda: {"applied": False, "error": "internal error; see the server log"})
    async def apply_skill(*arguments: Any) -> dict[str, Any]:
        target = SkillTarget.parse(arguments)
        if target is None:
            return refuse(server, f"{APPLY_SKILL} needs [uri, version, skill, line, digest]; got {list(arguments)}")
        return await apply_and_gate(server, target)


async def apply_and_gate(server: ServerState, target: SkillTarget) -> dict[str, Any]:
    state = server.documents.get(target.uri)
    if state is None:
        return refuse(server, f"the skill {target.skill} was not applied: {target.uri} is not open")
    card = library_card(server, target.skill)
    if card is None:
        return refuse(server, f"the skill {target.skill} was not applied: the skill library has no such card")
    for _ in range(3):  # a plan made while the user typed is made again on the newest text
        version, text = state.version, state.text
        line = target_line(state, target)
        if isinstance(line, str):
            return refuse(server, f"the skill {target.skill} was not applied: {line}. Nothing was changed.")
        # the solver thread: plan() verifies the result with z3, which must not run in two threads at once
        outcome, kernel = await server.solver.quick(plan, text, card, target, line)
        if state.version == version:
            break
    else:
        return refuse(server, f"the skill {target.skill} was not applied: the document kept changing")
    title = f"Skill: {outcome.title or card.title}"
    if outcome.refused is not None:
        since = " (matched again: the document changed since the light bulb)" if outcome.rematched else ""
        message = f"{title} was not applied{since}: {outcome.refused}. Nothing was changed."
        return {**refuse(server, message, types.MessageType.Warning), "refused": outcome.refused}
    failure = await document_edits.apply(server, target.uri, version, text, outcome.text_after, title)
    if failure is not None:
        return refuse(server, f"{title} was not applied: {failure}")
    from argus.lsp import gate

    run = await gate.start(server, state, kernel)
    return {"applied": True, "version": state.version, "gate": {"kernels": run.kernels, "error": run.error}}


def target_line(state: DocumentState, target: SkillTarget) -> int | str:
    """Where the light bulb's line is in the current text, or why it cannot be found: the line is followed by
    its content through the user's edits since (argus.skills.rebase), never taken by its old number."""
    from argus.skills.apply import digest
    from argus.skills.rebase import follow_line

    base = state.text_of(target.version)
    if base is None:
        if digest(state.text) == target.digest:
            return target.line
        return "the document changed too much since the light bulb to find its line again; ask for it again"
    line = follow_line(base, state.text, target.line)
    if line is None:
        return f"line {target.line + 1}, where the light bulb offered it, is gone or moved among new lines"
    return line


def plan(text: str, card: Card, target: SkillTarget, line: int) -> tuple[Outcome, str | None]:
    """The skill matched again at `line` of `text` (the target's line, followed to the current text), and the
    kernel it rewrites."""
    from argus.skills.apply import plan as plan_skill
    from argus.skills.document import Document

    outcome = plan_skill(text, card, line, since=target.digest)
    kernel = Document.parse(text).kernel_at(line) if outcome.refused is None else None
    return outcome, kernel.name if kernel is not None else None


def library_card(server: ServerState, skill: str) -> Card | None:
    provider = next((p for p in server.skills.providers if p.name == "library"), None)
    cards = getattr(provider, "cards", None)
    if cards is None:
        from argus.skills.library import card_by_id

        return card_by_id(skill)
    return next((c for c in cards if c.id == skill), None)


def refuse(server: ServerState, message: str, kind: types.MessageType = types.MessageType.Error) -> dict[str, Any]:
    server.window_show_message(types.ShowMessageParams(type=kind, message=message))
    return {"applied": False, "error": message}
