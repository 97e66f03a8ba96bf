"""The lineage walker gates a step's candidates in batches when its gate has `many` (argus.gate.cluster's
ClusterGate), and writes the record that gating them one at a time in order writes.

The gate here is scripted, the nearest real thing to a gate whose verdicts are known in advance: a digest of the
text says whether it passes (and, for a GPU walk, its time), so the steps, with candidates that passed at one step
met again at the next, are the same across runs and the walk takes seconds. The real gate through a real cluster
is tests/gate/test_cluster.py's."""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from argus.agent.gates import scripted_timing
from argus.gate.result import GateResult, Status
from argus.skills.lineage.walker import walk

ROOT = Path(__file__).resolve().parents[2]
EXPERT = ROOT / "skills" / "experts" / "softmax.argus"


def scripted(profiled: bool, salt: str = ""):
    def gate(text: str, kernel: str) -> GateResult:
        digest = hashlib.sha256((salt + text).encode()).digest()
        result = GateResult(kernel=kernel, device="scripted")
        result.compile.status = Status.passed
        result.correct.status = Status.passed if digest[0] % 3 else Status.failed
        result.correct.message = "" if digest[0] % 3 else "scripted: wrong"
        if profiled and result.correct.status == Status.passed:
            result.profile.status = Status.passed
            result.profile.facts = scripted_timing(1.0 + digest[1] / 255)
        return result

    return gate


class Batched:
    """A gate with `many`: a batch's runs at once, on threads, `width` of them."""

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

    def __call__(self, text: str, kernel: str) -> GateResult:
        return self.gate(text, kernel)


def record_of(gate, profiled: bool) -> dict:
    """The record of a walk of the softmax expert, without wall times."""
    record = walk(EXPERT, "softmax", gate, device="cpu", profiled=profiled, relative_to=ROOT)
    return strip(record.model_dump())


def strip(value):
    """Without wall times, which no two walks share."""
    if isinstance(value, dict):
        return {k: strip(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [strip(v) for v in value]
    return value


@pytest.mark.parametrize("salt", ["", "other verdicts"])
@pytest.mark.parametrize("profiled", [False, True], ids=["cpu", "gpu"])
def test_a_walk_gated_in_batches_writes_the_record_of_one_gated_at_a_time(profiled, salt):
    one_at_a_time = record_of(scripted(profiled, salt), profiled)
    batched = Batched(scripted(profiled, salt), width=3)
    assert record_of(batched, profiled) == one_at_a_time
    assert max(batched.batches) > 1
    assert sum(len(s["candidates"]) for s in one_at_a_time["steps"]) > len(one_at_a_time["steps"])


def test_a_cpu_walk_gates_a_candidate_seen_before_again_only_up_to_the_first_that_passes():
    calls: list[str] = []
    gate = scripted(False)

    def counted(text: str, kernel: str) -> GateResult:
        calls.append(text)
        return gate(text, kernel)

    record = walk(EXPERT, "softmax", Batched(counted, width=1), device="cpu", profiled=False, relative_to=ROOT)
    gated = 1 + sum(c.gate is not None for s in record.steps for c in s.candidates)  # and the expert
    assert len(calls) == gated  # width 1: no run beyond the rule's, none dropped
