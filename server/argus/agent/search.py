"""The search planner (the default; needs nothing but the gate and the skill library): best-first over the
library skills that apply.

At a state it ranks every applicable (card, anchor line) by the card's predicted effect (the median of its
per-lineage medians; 1.0 while not measured), blended with the mean reward the skill earned in this workspace
(memory). A skill this run already gated on this kernel is ranked by what it measured here instead (the median
of ms before over ms after): the kernel's own timing outweighs a prediction learned on other kernels, so a
skill found slower is not proposed again first at the next state. Ties break by evidence (more lineage steps
first), then by card id and line, so the same inputs always give the same order. It proposes the best untried
one at the current best state; when that state has nothing left, it backs up to the next-best kept state (the
frontier, ordered by measured ms). At a state it backed up to it skips rewrites it already tried elsewhere
(same card, anchor code and parameters): they commute with the kept ones or were already found wanting, and a
gate run is too dear to ask again.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from argus.agent.memory import Memory
from argus.agent.plan import Proposal, State, Step
from argus.agent.sites import Site, applicable_sites, predicted_effect, spill_bytes
from argus.skills.apply import digest
from argus.skills.cards import Card
from argus.skills.library import load_cards

# How many observations weigh as much as the card's prediction: with n rewards observed here, the score is
# (PRIOR * predicted + n * mean reward) / (PRIOR + n).
PRIOR = 2.0


@dataclass(frozen=True, slots=True)
class Context:
    """What ranks a state's sites besides the cards: this workspace's rewards (memory), what this run measured,
    and the state's register spills (a card measured only where kernels spilled predicts nothing elsewhere)."""

    stats: dict[str, tuple[float, int]] = field(default_factory=dict)
    observed: dict[str, float] = field(default_factory=dict)
    spill_bytes: int | None = None


def score(card: Card, context: Context = Context(), params: Sequence[tuple[str, str]] = ()) -> float:
    if card.id in context.observed:
        return context.observed[card.id]
    predicted = predicted_effect(card, dict(params), context.spill_bytes)
    if card.id not in context.stats:
        return predicted
    mean, count = context.stats[card.id]
    return (PRIOR * predicted + count * mean) / (PRIOR + count)


def rank(sites: Sequence[Site], context: Context = Context()) -> list[Site]:
    return sorted(sites, key=lambda s: (-score(s.card, context, s.params), -len(s.card.evidence), s.card.id, s.line))


def observed_effects(history: Sequence[Step]) -> dict[str, float]:
    """Per skill: the median speedup it measured in this run, kept or not (steps made at the best state)."""
    ratios: dict[str, list[float]] = {}
    for step in history:
        skill = step.proposal.skill
        if skill and step.proposal.at is None and step.ms_before and step.ms_after:
            ratios.setdefault(skill, []).append(step.ms_before / step.ms_after)
    return {skill: statistics.median(values) for skill, values in ratios.items()}


@dataclass(slots=True)
class Kept:
    source: str
    ms: float | None
    spill_bytes: int | None  # from its gate result's compile facts
    order: int  # when it was first seen: later (further refined) first among equal times

    def sort_key(self) -> tuple[float, int]:
        return (self.ms if self.ms is not None else math.inf, -self.order)


class SearchPlanner:
    name = "search"

    def __init__(self, cards: Sequence[Card] | None = None, memory: Memory | None = None) -> None:
        self.cards = list(cards) if cards is not None else load_cards()
        self.memory = memory
        self.frontier: dict[str, Kept] = {}  # digest of a kept state's source -> the state
        self.tried: set[tuple[str, str]] = set()  # (state digest, site key)
        self.rewrites: set[tuple] = set()  # Site.identity of every proposal made

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None:
        current = digest(state.source)
        if current not in self.frontier:
            self.frontier[current] = Kept(state.source, state.ms, spill_bytes(state.gate), len(self.frontier))
        self.frontier[current].ms = state.ms
        stats = self.memory.skill_stats() if self.memory is not None else {}
        observed = observed_effects(history)
        for name, kept in sorted(self.frontier.items(), key=lambda item: item[1].sort_key()):
            context = Context(stats, observed, kept.spill_bytes)
            for site in rank(applicable_sites(kept.source, state.kernel, self.cards), context):
                if (name, site.key) in self.tried or (name != current and site.identity in self.rewrites):
                    continue
                self.tried.add((name, site.key))
                self.rewrites.add(site.identity)
                return Proposal(
                    kind="skill",
                    skill=site.card.id,
                    line=site.line,
                    at=None if name == current else name,
                    rationale=rationale(site, context),
                )
        return None


def rationale(site: Site, context: Context) -> str:
    expected = score(site.card, context, site.params)
    basis = "measured in this run" if site.card.id in context.observed else "predicted"
    return f"{site.title} ({basis} {expected:.2f}×, {len(site.card.evidence)} evidence)"
