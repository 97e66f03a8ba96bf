"""The search planner (the default; needs nothing but the gate and the skill library): best-first over the
library skills that apply, ranked by what each card predicts in the state's situation.

At a state every applicable (card, anchor line) gets the card's prediction there (argus.skills.predict: the
effect measured in a matching situation, with the state's register spills from its last gate compile), and
falls in one of four tiers, proposed in this order:

1. **predicted gains**: a prediction of at least GAIN, blended with the mean reward the skill earned in this
   workspace (memory); a skill this run already gated on this kernel, at a state of the same kind (the same
   scope facts: argus.skills.situation.SCOPE), is ranked by what it measured there (the median of ms before
   over ms after), which outweighs any card. A kept step can change the kind of kernel (BM 64 → 128 moves the
   accumulator from 64-127 registers a thread to 128 or more), and what BM 64 → 128 measured before says
   nothing of BM 128 → 256 after: there the card's evidence for the new situation decides (on 2026-12-02's
   fifth held-out run the measured 1.16× was carried over to a step the card predicted at 0.31×; it measured
   0.19×);
2. **exploration**: a card whose evidence does not cover the situation (no measurement agrees on the scope
   facts) has no prediction; it is ranked by a prior, the median of its measurements anywhere shrunk halfway
   to 1 (EXPLORE_SHRINK), and gets every EXPLORE_EVERY-th proposal even while predicted gains remain (a budget
   share of 1 in 4), so unmeasured situations are measured deliberately but never crowd out what the evidence
   says. A card whose every gain came where the kernel spilled registers is not unmeasured at a kernel that
   spills none: the mechanism is absent, and it falls to noise (on 2026-12-01's held-out run `num_warps.dot`
   led the exploration there at a prior of 1.54× and measured 0.54×);
3. **predicted noise**: covered, predicted between HURTS and GAIN;
4. **predicted losses**: the evidence says the skill makes this kernel slower (a hurting condition of
   benefit, or a median loss in the matching situation). Never proposed while anything else is left.

The rule does not look at the budget, so a run of budget B is the first B gate runs of any longer run. Ties
break by evidence (more lineage steps first), then by card id and line, so the same inputs always give the same
order. It proposes the best untried one at the current best state; when that state has nothing left, it backs
up to the next-best kept state (the frontier, ordered by measured ms). At a state it backed up to it skips
rewrites it already tried elsewhere (same card, anchor code and parameters): they commute with the kept ones
or were already found wanting, and a gate run is too dear to ask again. A rewrite whose gate run failed to
compile or to pass correct (same card and parameters) is not proposed again at any state of the run: Triton
refusing `warp_specialize = 1` on a kernel, or tf32 missing an output's tolerance, does not depend on which kept
state it is tried at (on 2026-12-02's held-out run the search spent 3 of a GEMM's 8 gate runs on one refusal).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from argus.agent.memory import Memory
from argus.agent.plan import Proposal, State, Step
from argus.agent.sites import Site, applicable_sites, compiled, prediction
from argus.skills.apply import digest
from argus.skills.cards import Card
from argus.skills.library import load_cards
from argus.skills.predict import Prediction, without_its_spills
from argus.skills.situation import HURTS, NOT_COMPILED, SCOPE, Compiled, Situation

# How many observations weigh as much as the card's prediction: with n rewards observed here, the score is
# (PRIOR * predicted + n * mean reward) / (PRIOR + n).
PRIOR = 2.0
GAIN = 1.02  # a prediction at or above this is a gain; between HURTS and GAIN, noise
EXPLORE_SHRINK = 0.5  # an unmeasured situation's prior: 1 + EXPLORE_SHRINK * (the card's median anywhere - 1)
EXPLORE_EVERY = 4  # every 4th proposal goes to the best unmeasured site, while one is left
GAINS, EXPLORE, NOISE, LOSSES = range(4)
BROKE = ("compile", "correct")  # the gate stages whose failure says the rewrite is wrong for this kernel


# A situation's scope facts as a key; None: a step logged before proposals recorded them (it counts anywhere).
Kind = tuple[tuple[str, str], ...] | None


def scope_facts(facts: Situation | None) -> dict[str, str | None] | None:
    """The kind of kernel a site is in (the scope facts of its situation, as JSON), or None without one."""
    if facts is None:
        return None
    return {key: None if facts.get(key) is None else str(facts[key]) for key in SCOPE}


def kind(facts: dict[str, str | None] | None) -> Kind:
    return None if facts is None else tuple(sorted((k, str(v)) for k, v in facts.items()))


@dataclass(frozen=True, slots=True)
class Context:
    """What ranks a state's sites besides the cards: this workspace's rewards (memory), what this run measured
    (per skill, per kind of kernel it was measured at), and the state's register spills (a card measured only
    where kernels spilled predicts nothing elsewhere)."""

    stats: dict[str, tuple[float, int]] = field(default_factory=dict)
    observed: dict[str, dict[Kind, float]] = field(default_factory=dict)
    compiled: Compiled = NOT_COMPILED

    def measured(self, site: Site) -> float | None:
        """What this run measured of the site's skill at a state of the site's kind (a step without a recorded
        kind counts at any)."""
        by_kind = self.observed.get(site.card.id)
        if not by_kind:
            return None
        here = by_kind.get(kind(scope_facts(site.facts)))
        return here if here is not None else by_kind.get(None)


def prior(card: Card) -> float:
    """What an unmeasured situation is expected to give: the card's median over its lineages anywhere, shrunk
    toward no change; a card that lost on the whole gets no credit above 1."""
    medians = sorted(e.median for e in card.effect)
    if not medians:
        return 1.0
    middle = statistics.median(medians)
    return 1.0 + EXPLORE_SHRINK * (middle - 1.0) if middle > 1.0 else middle


def scored(site: Site, context: Context = Context()) -> tuple[int, float, Prediction]:
    """The site's tier, its score within the tier, and the card's prediction there."""
    predicted = prediction(site, context.compiled)
    card = site.card
    measured = context.measured(site)
    if measured is not None:
        return (GAINS if measured >= GAIN else NOISE if measured > HURTS else LOSSES), measured, predicted
    effect = prior(card) if predicted.effect is None else predicted.effect
    if card.id not in context.stats:
        if predicted.effect is None and without_its_spills(card, context.compiled.spill_bytes):
            return NOISE, 1.0, predicted  # not unmeasured: measured, and its gains needed what is absent here
        if predicted.effect is None:
            return EXPLORE, effect, predicted
        if predicted.hurts is not None:
            return LOSSES, effect, predicted
    else:  # this workspace measured the skill: its rewards tier it, the prediction or prior only weighs in
        mean, count = context.stats[card.id]
        effect = (PRIOR * effect + count * mean) / (PRIOR + count)
    return (GAINS if effect >= GAIN else NOISE if effect > HURTS else LOSSES), effect, predicted


def score(card: Card, context: Context = Context(), params: Sequence[tuple[str, str]] = ()) -> float:
    """The score of the card at a site with no situation (the older, context-free ranking)."""
    return scored(Site(card, 0, card.title, params=tuple(params)), context)[1]


def rank(sites: Sequence[Site], context: Context = Context(), explore: bool = False) -> list[Site]:
    """Best first: by tier (GAINS, EXPLORE, NOISE, LOSSES; EXPLORE first when `explore`), then score, then
    evidence, card id and line."""
    order = {EXPLORE: -1} if explore else {}

    def key(site: Site):
        tier, value, _ = scored(site, context)
        return (order.get(tier, tier), -value, -len(site.card.evidence), site.card.id, site.line)

    return sorted(sites, key=key)


def observed_effects(history: Sequence[Step]) -> dict[str, dict[Kind, float]]:
    """Per skill and kind of kernel: the median speedup it measured in this run, kept or not (steps made at
    the best state)."""
    ratios: dict[str, dict[Kind, list[float]]] = {}
    for step in history:
        skill = step.proposal.skill
        if skill and step.proposal.at is None and step.ms_before and step.ms_after:
            at = kind((step.proposal.prediction or {}).get("scope_facts"))
            ratios.setdefault(skill, {}).setdefault(at, []).append(step.ms_before / step.ms_after)
    return {
        skill: {at: statistics.median(values) for at, values in by_kind.items()} for skill, by_kind in ratios.items()
    }


def broken_rewrites(history: Sequence[Step]) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    """(card, sorted parameters) of every rewrite this run gated that failed to compile or to pass correct."""
    broken = set()
    for step in history:
        if step.proposal.skill and step.feedback is not None and step.feedback.stage in BROKE:
            params = ((step.proposal.prediction or {}).get("params")) or {}
            broken.add((step.proposal.skill, tuple(sorted((str(k), str(v)) for k, v in params.items()))))
    return broken


@dataclass(slots=True)
class Kept:
    source: str
    ms: float | None
    compiled: Compiled  # from its gate result's compile facts
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
        self.proposals = 0
        self.assumed_from: int | None = None  # a fork: history from here on is assumed, not yet in memory

    def fork(self, assumed_from: int) -> SearchPlanner:
        """A copy that proposes as this planner would next, without changing it: the refinement loop asks one
        for the proposals after the current one, to gate them together. Steps of the history from
        `assumed_from` on are the loop's guesses (not kept, no timing); the copy counts their rewards as memory
        would have recorded them."""
        fork = SearchPlanner.__new__(SearchPlanner)
        fork.cards, fork.memory, fork.proposals = self.cards, self.memory, self.proposals
        fork.frontier = {name: replace(kept) for name, kept in self.frontier.items()}
        fork.tried, fork.rewrites = set(self.tried), set(self.rewrites)
        fork.assumed_from = assumed_from
        return fork

    def skill_stats(self, history: Sequence[Step]) -> dict[str, tuple[float, int]]:
        """This workspace's mean reward per skill (memory), with a fork's assumed steps in it."""
        if self.memory is None:
            return {}
        stats = self.memory.skill_stats()
        if self.assumed_from is None:
            return stats
        for step in history[self.assumed_from :]:
            if step.proposal.skill:
                mean, count = stats.get(step.proposal.skill, (0.0, 0))
                stats[step.proposal.skill] = ((mean * count + step.reward) / (count + 1), count + 1)
        return stats

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None:
        current = digest(state.source)
        if current not in self.frontier:
            self.frontier[current] = Kept(state.source, state.ms, compiled(state.gate), len(self.frontier))
        self.frontier[current].ms = state.ms
        stats = self.skill_stats(history)
        observed = observed_effects(history)
        broken = broken_rewrites(history)
        explore = self.proposals % EXPLORE_EVERY == EXPLORE_EVERY - 1
        for name, kept in sorted(self.frontier.items(), key=lambda item: item[1].sort_key()):
            context = Context(stats, observed, kept.compiled)
            for site in rank(applicable_sites(kept.source, state.kernel, self.cards), context, explore):
                if (name, site.key) in self.tried or (name != current and site.identity in self.rewrites):
                    continue
                if (site.card.id, tuple(sorted(site.params))) in broken:
                    continue
                self.tried.add((name, site.key))
                self.rewrites.add(site.identity)
                self.proposals += 1
                tier, value, predicted = scored(site, context)
                return Proposal(
                    kind="skill",
                    skill=site.card.id,
                    line=site.line,
                    at=None if name == current else name,
                    rationale=rationale(site, context, tier, value, predicted),
                    prediction=predicted.to_json()
                    | {"params": dict(site.params), "scope_facts": scope_facts(site.facts)},
                )
        return None


def rationale(site: Site, context: Context, tier: int, value: float, predicted: Prediction) -> str:
    if context.measured(site) is not None:
        return f"{site.title} (measured in this run {value:.2f}×)"
    if tier == EXPLORE:
        return f"{site.title} (exploring, prior {value:.2f}×: {predicted.why})"
    return f"{site.title} (predicted {value:.2f}×: {predicted.why})"
