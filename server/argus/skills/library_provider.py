"""The skill library behind the provider interface: the editor's light bulb offers every card that matches
the cursor's line, disabled with the failed precondition where one fails. Its actions carry `gate_after`: a
library skill is followed by a gate run (the language server's `argus.applySkill` command matches the skill
again at the action's `line`, applies it and starts the gate). Each action's detail is the card's prediction in
the kernel's situation (argus.skills.predict); one the evidence says makes this kernel slower is disabled with
that condition of benefit, as a failed precondition is."""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.library import load_cards
from argus.skills.matcher import match
from argus.skills.provider import SkillAction, SkillRequest
from argus.skills.situation import NOT_COMPILED


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
                kernel = found.application.kernel
                prediction = found.prediction(request.compiled.get(kernel, NOT_COMPILED))
                reason = None if failed is None else f"{failed.name}: {failed.found}"
                if reason is None and prediction.hurts is not None:
                    reason = f"condition of benefit fails: {prediction.hurts}"
                actions.append(
                    SkillAction(
                        skill=found.card.id,
                        title=title,
                        edits=found.application.edits if reason is None else (),
                        failed_precondition=reason,
                        detail=prediction.why,
                        gate_after=True,
                        line=line,
                    )
                )
        return actions
