"""The skill provider interface: a document and a range in; the actions that apply there, and the ones that do
not together with the precondition that failed, out.

Consumers (the language server's code actions, later the agent) see only these dataclasses, so a provider
never depends on pygls or on how an editor shows an action. Spans are 0-based lines and code-point columns
with exclusive ends, as everywhere in Argus.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from argus.dsl.spans import Span

if TYPE_CHECKING:
    from argus.dsl.check import CheckResult
    from argus.skills.situation import Compiled

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text of `span` with `new_text` (an empty span inserts)."""

    span: Span
    new_text: str


@dataclass(frozen=True, slots=True)
class SkillRequest:
    """Where the user asked: the whole document, its check result, and the selected range."""

    uri: str
    text: str
    check: CheckResult
    span: Span
    # per kernel, what a GPU-target compile of this very text measured (spills, registers), where the gate
    # compiled it: a skill measured only on spilling kernels predicts nothing for one that spills none
    compiled: Mapping[str, Compiled] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SkillAction:
    """One skill application at the request's place.

    An applicable action has edits and no failed precondition; a non-applicable one names the precondition
    that failed (in words a user can act on) and has no edits.
    """

    skill: str  # stable identifier of the skill, e.g. "pipelining.num_stages"
    title: str
    edits: tuple[Edit, ...] = ()
    failed_precondition: str | None = None
    detail: str = ""  # the evidence or effect, e.g. "1.31× median over 4 lineages (H200)"
    preferred: bool = False
    gate_after: bool = False  # ask the editor to run the gate once the edit is applied
    line: int | None = None  # the 0-based line the skill matched at, where applying it later matches again

    @property
    def applicable(self) -> bool:
        return self.failed_precondition is None


@runtime_checkable
class SkillProvider(Protocol):
    """Anything that proposes skill actions for a place in a document."""

    @property
    def name(self) -> str: ...  # read-only: a frozen dataclass's field, or a class attribute

    def actions(self, request: SkillRequest) -> list[SkillAction]: ...


@dataclass(slots=True)
class ProviderRegistry:
    """The providers a consumer asks, in registration order; one that raises is logged and skipped."""

    providers: list[SkillProvider] = field(default_factory=list)

    def register(self, provider: SkillProvider) -> None:
        if any(p.name == provider.name for p in self.providers):
            raise ValueError(f"a skill provider named {provider.name!r} is already registered")
        self.providers.append(provider)

    def actions(self, request: SkillRequest) -> list[SkillAction]:
        found: list[SkillAction] = []
        for provider in self.providers:
            try:
                found.extend(provider.actions(request))
            except Exception:  # a broken skill must not take the light bulb away from the others
                logger.exception("skill provider %s failed", provider.name)
        return without_repeats(found)


def without_repeats(actions: list[SkillAction]) -> list[SkillAction]:
    """One action per change: where two providers offer the same edits (a built-in pipelining step and the
    library's card for it), the one followed by a gate run (the library's, which carries evidence) takes the
    place of the first in the list, so menus keep their order."""
    kept: list[SkillAction] = []
    where: dict[tuple[Edit, ...], int] = {}
    for action in actions:
        key = tuple(sorted(action.edits, key=lambda e: (e.span.line, e.span.col, e.new_text)))
        if not action.edits or key not in where:
            if action.edits:
                where[key] = len(kept)
            kept.append(action)
        elif action.gate_after and not kept[where[key]].gate_after:
            kept[where[key]] = action
    return kept
