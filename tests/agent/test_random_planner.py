"""The random baseline: a seeded, uniformly random untried applicable skill at the current best state."""

from __future__ import annotations

from agent_fakes import SOFTMAX, FakeGate

from argus.agent.loop import refine
from argus.agent.plan import State
from argus.agent.randomized import RandomPlanner


def sequence(seed: int) -> list[str]:
    planner, state, found = RandomPlanner(seed=seed), State(source=SOFTMAX, kernel="softmax"), []
    while (proposal := planner.propose(state, [])) is not None:
        found.append(proposal.key())
    return found


def test_one_seed_gives_one_sequence():
    assert sequence(7) == sequence(7)


def test_seeds_give_different_orders_of_the_same_sites():
    orders = {tuple(sequence(seed)) for seed in range(8)}
    assert len(orders) > 1
    assert all(sorted(order) == sorted(next(iter(orders))) for order in orders)
    assert len(next(iter(orders))) == 3  # each applicable site once, then nothing


def test_runs_through_the_same_loop_and_budget():
    result = refine(SOFTMAX, "softmax", RandomPlanner(seed=3), budget=2, gate=FakeGate())
    assert result.gate_runs == 2 and all(s.planner == "random" for s in result.steps)
