"""The refinement loop gates the search and random planners' next proposals together when its gate runs several
at once (argus.agent.loop, "Proposals gated together"), and makes the steps of the serial path: the same
proposals, kept kernel, trajectory and memory, each gated text counted once against the budget.

The gate here is scripted from a digest of the text (the nearest real thing to a gate whose verdicts are known in
advance: some texts wrong, the others timed), so kept steps change the state mid-batch and the walk takes
seconds. The real gate through a real local cluster is tests/agent/test_refine_cluster.py's."""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from agent_fakes import MATMUL, SOFTMAX, FakeGate

from argus.agent.gates import GateStore, SharedGate
from argus.agent.loop import refine
from argus.agent.memory import Memory
from argus.agent.randomized import RandomPlanner
from argus.agent.search import SearchPlanner
from argus.agent.trajectory import step_json
from argus.skills.library import load_cards

CARDS = load_cards()  # read once: both runs of a test propose from the same cards


def scripted(salt: str) -> FakeGate:
    def byte(text: str, i: int) -> int:
        return hashlib.sha256((salt + text).encode()).digest()[i]

    return FakeGate(ms=lambda text: 0.6 + byte(text, 1) / 255, wrong=lambda text: byte(text, 0) % 4 == 0)


class Batched:
    """A gate with `many`: a batch's runs at once on threads, `width` of them; it records each batch's size."""

    def __init__(self, gate, width: int) -> None:
        self.gate, self.size, self.batches = gate, width, []

    def width(self) -> int:
        return self.size

    def many(self, items, on_done=None):
        with ThreadPoolExecutor(self.size) as pool:
            results = list(pool.map(lambda item: self.gate(*item), items))
        self.batches.append(len(items))
        for index, result in enumerate(results):
            if on_done is not None:
                on_done(index, result)
        return results

    def __call__(self, text: str, kernel: str):
        return self.gate(text, kernel)


def record(result) -> dict:
    """The run as the CLI's summary and trajectory keep it, without wall times."""
    steps = [{k: v for k, v in step_json(s).items() if k != "seconds"} for s in result.steps]
    return {"best": result.best.source, "kept": result.skills, "runs": result.gate_runs, "stop": result.stopped,
            "steps": steps}  # fmt: skip


def planner_named(name: str, memory=None):
    return SearchPlanner(CARDS, memory=memory) if name == "search" else RandomPlanner(seed=3, cards=CARDS)


@pytest.mark.parametrize("salt", ["", "other verdicts", "third"])
@pytest.mark.parametrize("name", ["search", "random"])
@pytest.mark.parametrize("source", [SOFTMAX, MATMUL], ids=["softmax", "matmul"])
def test_a_refinement_gated_in_batches_makes_the_steps_of_one_gated_at_a_time(source, name, salt):
    kernel = "softmax" if source is SOFTMAX else "matmul"
    serial = refine(source, kernel, planner_named(name), budget=6, gate=scripted(salt), cards=CARDS)
    batched_gate = Batched(scripted(salt), width=3)
    batched = refine(source, kernel, planner_named(name), budget=6, gate=batched_gate, cards=CARDS)
    assert record(batched) == record(serial)
    assert max(batched_gate.batches) > 1  # something was gated together
    assert batched.gated_ahead >= batched.gate_runs and batched.gated_ahead - batched.unused == batched.gate_runs


def test_a_batch_never_runs_past_the_budget_and_a_plain_gate_gates_one_at_a_time():
    gate = Batched(scripted(""), width=8)
    result = refine(SOFTMAX, "softmax", RandomPlanner(1, CARDS), budget=2, gate=gate, cards=CARDS)
    assert result.gate_runs == 2 and max(gate.batches) <= 2
    counted = scripted("")
    plain = refine(SOFTMAX, "softmax", RandomPlanner(1, CARDS), budget=2, gate=counted, cards=CARDS)
    assert plain.gated_ahead == 0 and len(counted.calls) == 3  # the start and two candidates, nothing ahead


def test_memory_and_a_shared_store_see_what_they_see_one_at_a_time(tmp_path):
    def run(folder, gate) -> tuple[dict, list[dict]]:
        memory = Memory(folder / "memory.jsonl")
        shared = SharedGate(gate, GateStore(folder / "store", "cpu"))
        planner = SearchPlanner(CARDS, memory=memory)
        result = refine(SOFTMAX, "softmax", planner, budget=5, gate=shared, memory=memory, cards=CARDS)
        return record(result), [json.loads(line) for line in memory.path.read_text().splitlines()]

    for folder in ("serial", "batched"):
        (tmp_path / folder).mkdir()
        # an earlier run in the workspace: its rewards re-rank the skills
        run(tmp_path / folder, scripted("earlier"))
    serial = run(tmp_path / "serial", scripted("now"))
    batched = run(tmp_path / "batched", Batched(scripted("now"), width=4))
    assert batched == serial


def test_the_llm_planner_is_gated_one_proposal_at_a_time():
    from argus.agent.llm import LlmPlanner

    assert not hasattr(LlmPlanner, "fork")  # its next proposal depends on the last one's feedback
