"""The skill library behind the provider interface: the editor's light bulb offers every card that matches
the cursor's line, disabled with the failed precondition where one fails. Its actions carry `gate_after`: a
library skill is followed by a gate run (the language server's `argus.applySkill` command matches the skill
again at the action's `line`, applies it and starts the gate)."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.library import load_cards
from argus.skills.matcher import expected_effect, match
from argus.skills.provider import SkillAction, SkillRequest


@dataclass
class LibraryProvider:
    name: str = "library"
    cards: list[Card] = field(default_factory=load_cards)

    def actions(self, request: SkillRequest) -> list[SkillAction]:
        if not self.cards:
            return []
        doc = Document.parse(request.text, request.check)
        actions = []
        for line in range(request.span.line, request.span.end_line + 1):
            for found in match(doc, line, self.cards):
                title = f"Skill: {found.application.title}"
                if any(a.title == title for a in actions):
                    continue
                failed = found.failed
                actions.append(
                    SkillAction(
                        skill=found.card.id,
                        title=title,
                        edits=found.application.edits if failed is None else (),
                        failed_precondition=None if failed is None else f"{failed.name}: {failed.found}",
                        detail=expected_effect(
                            found.card, found.application.params, request.spill_bytes.get(found.application.kernel)
                        ),
                        gate_after=True,
                        line=line,
                    )
                )
        return actions
