"""The random baseline planner: a uniformly random untried applicable skill at the current best state,
from a seeded generator. It runs through the same loop with the same gate budget as the search planner, so
the two can be compared on held-out kernels (deterministic search against random transform sequences)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from argus.agent.plan import Proposal, State, Step
from argus.agent.sites import applicable_sites, compiled, prediction
from argus.skills.apply import digest
from argus.skills.cards import Card
from argus.skills.library import load_cards


class RandomPlanner:
    name = "random"

    def __init__(self, seed: int = 0, cards: Sequence[Card] | None = None) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.cards = list(cards) if cards is not None else load_cards()
        self.tried: set[tuple[str, str]] = set()  # (state digest, site key)

    def fork(self, assumed_from: int) -> RandomPlanner:
        """A copy that proposes the sequence this planner would propose next (its generator's state copied),
        without changing it; the history does not change what it proposes."""
        fork = RandomPlanner.__new__(RandomPlanner)
        fork.seed, fork.cards, fork.tried = self.seed, self.cards, set(self.tried)
        fork.rng = random.Random()
        fork.rng.setstate(self.rng.getstate())
        return fork

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None:
        here = digest(state.source)
        sites = [s for s in applicable_sites(state.source, state.kernel, self.cards) if (here, s.key) not in self.tried]
        if not sites:
            return None
        site = self.rng.choice(sites)  # sites come in source order, so one seed gives one sequence
        self.tried.add((here, site.key))
        # not used to choose: logged to judge the cards
        predicted = prediction(site, compiled(state.gate))
        return Proposal(
            kind="skill",
            skill=site.card.id,
            line=site.line,
            rationale=f"random (seed {self.seed})",
            prediction=predicted.to_json() | {"params": dict(site.params)},
        )
