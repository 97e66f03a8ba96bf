"""The skill actions at a place of a snapshot: what each registered provider proposes (argus.skills.provider),
applicable with its edits or disabled with the precondition that failed."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from argus.skills.provider import SkillRequest

if TYPE_CHECKING:
    from argus.analysis.snapshot import Analysis
    from argus.dsl.spans import Span
    from argus.skills.provider import ProviderRegistry, SkillAction, SkillProvider
    from argus.skills.situation import Compiled


def default_providers() -> list[SkillProvider]:
    """The built-in tuning steps (argus.analysis.tuning_skills), then the skill library's cards. Loads the
    language core and the library: call it off the event loop, or once it is loaded."""
    from argus.analysis.tuning_skills import builtin_providers
    from argus.skills.library_provider import LibraryProvider

    return [*builtin_providers(), LibraryProvider()]


def skill_actions(
    analysis: Analysis,
    span: Span,
    registry: ProviderRegistry,
    compiled: Mapping[str, Compiled] | None = None,
) -> list[SkillAction]:
    request = SkillRequest(analysis.uri, analysis.text, analysis.check, span, dict(compiled or {}))
    return registry.actions(request)
