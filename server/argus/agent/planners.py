"""The planners by the names `argus refine --planner` and the editor's `argus.refine.planner` setting use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from argus.agent.memory import Memory
from argus.agent.plan import Planner

if TYPE_CHECKING:
    from argus.skills.cards import Card

PLANNERS = ("search", "random", "llm")


def make_planner(
    name: str,
    *,
    memory: Memory | None = None,
    seed: int = 0,
    model: str | None = None,
    host: str | None = None,
    cards: Sequence[Card] | None = None,
) -> Planner:
    """The planner `name`; `seed` is the random planner's, `model` and `host` the LLM planner's (None: its
    defaults), `cards` the skill cards every planner proposes from (None: skills/library). The LLM planner asks
    its server first and raises argus.agent.llm.PlannerUnavailable when none answers, so a run without one ends
    before it spends a gate run on the start."""
    if name == "llm":
        from argus.agent.llm import LlmPlanner  # imports the ollama client, which the other planners do not need

        planner = LlmPlanner(
            model=model or "", host=host or None, memory=memory, cards=None if cards is None else list(cards)
        )
        planner.check_reachable()
        return planner
    if name == "random":
        from argus.agent.randomized import RandomPlanner

        return RandomPlanner(seed=seed, cards=cards)
    if name == "search":
        from argus.agent.search import SearchPlanner

        return SearchPlanner(cards=cards, memory=memory)
    raise ValueError(f"no planner {name!r} (planners: {', '.join(PLANNERS)})")
