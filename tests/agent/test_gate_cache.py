"""The shared gate-result store (argus.agent.gates.GateStore, SharedGate) and `argus refine --gate-cache`: a
text gated by one run is read back by the next, the step says so, and it still counts as a gate run."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

from agent_fakes import SOFTMAX, FakeGate, ListPlanner, skill

from argus.agent.gates import GateStore, SharedGate, storable
from argus.agent.loop import refine
from argus.agent.plan import Proposal
from argus.agent.trajectory import read_trajectory
from argus.gate.result import GateError, GateResult, Status

EXP2, RECIPROCAL, WARPS = skill("exp2.row", 14), skill("reciprocal.row", 16), skill("num_warps.row", 6)


def store_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.json"))


def test_the_key_names_kernel_device_stages_and_the_exact_text(tmp_path):
    store = GateStore(tmp_path, "cuda")
    key = store.key(SOFTMAX, "softmax")
    assert len(key) == 64 and key == GateStore(tmp_path, "cuda").key(SOFTMAX, "softmax")
    assert key != store.key(SOFTMAX + " ", "softmax")
    assert key != store.key(SOFTMAX, "other")
    assert key != GateStore(tmp_path, "cpu").key(SOFTMAX, "softmax")
    assert key != GateStore(tmp_path, "cuda", ("compile",)).key(SOFTMAX, "softmax")


def test_a_result_round_trips_and_a_broken_file_is_a_miss(tmp_path):
    store = GateStore(tmp_path, "cpu")
    result = FakeGate()(SOFTMAX, "softmax")
    assert store.get(SOFTMAX, "softmax") is None
    assert store.put(SOFTMAX, "softmax", result)
    assert store.get(SOFTMAX, "softmax") == result
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []  # the temporary file was renamed
    store.path(SOFTMAX, "softmax").write_text("{not json", encoding="utf-8")
    assert store.get(SOFTMAX, "softmax") is None


def test_a_gate_that_could_not_finish_is_not_kept(tmp_path):
    store = GateStore(tmp_path, "cpu")
    timed_out = GateResult(kernel="softmax", device="cpu", errors=[GateError(code="AR504", message="killed")])
    crashed = FakeGate()(SOFTMAX, "softmax")
    crashed.profile.status = Status.error
    failed = FakeGate(wrong=lambda source: True)(SOFTMAX, "softmax")  # wrong values: a verdict, kept
    assert not storable(timed_out) and not storable(crashed) and storable(failed)
    assert not store.put(SOFTMAX, "softmax", timed_out)
    assert store_files(tmp_path) == []


def test_a_second_run_reads_every_result_back_and_counts_the_same_gate_runs(tmp_path):
    first_gate, second_gate = FakeGate(), FakeGate()
    planner = lambda: ListPlanner([EXP2, WARPS, RECIPROCAL])  # noqa: E731
    first_log, second_log = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first = refine(
        SOFTMAX, "softmax", planner(), budget=8, log=first_log,
        gate=SharedGate(first_gate, GateStore(tmp_path / "cache", "cpu")),
    )  # fmt: skip
    second = refine(
        SOFTMAX, "softmax", planner(), budget=8, log=second_log,
        gate=SharedGate(second_gate, GateStore(tmp_path / "cache", "cpu")),
    )  # fmt: skip
    assert len(first_gate.calls) == 4 and second_gate.calls == []  # the start and three candidates, once
    assert len(store_files(tmp_path / "cache")) == 4
    assert first.gate_runs == second.gate_runs == 3
    assert [s.gate_runs for s in second.steps] == [s.gate_runs for s in first.steps] == [1, 1, 1]
    assert not first.start_cached and second.start_cached
    assert [s.cached for s in first.steps] == [False] * 3 and [s.cached for s in second.steps] == [True] * 3
    assert [s.ms_after for s in second.steps] == [s.ms_after for s in first.steps]
    assert second.best.source == first.best.source
    assert [line["cached"] for line in read_trajectory(second_log)] == [True] * 3
    assert [line["cached"] for line in read_trajectory(first_log)] == [False] * 3


def test_a_text_seen_earlier_in_the_run_is_still_free_and_not_marked(tmp_path):
    """The run's own cache comes first: a text gated earlier in the run costs no gate run, store or not."""
    slower = Proposal(kind="source", source=SOFTMAX.replace("num_warps = 8", "num_warps = 16"))
    gate = SharedGate(FakeGate(), GateStore(tmp_path, "cpu"))
    result = refine(SOFTMAX, "softmax", ListPlanner([slower, slower]), budget=8, gate=gate)
    assert [s.feedback.stage for s in result.steps] == ["slower", "slower"]
    assert [s.gate_runs for s in result.steps] == [1, 0]
    assert [s.cached for s in result.steps] == [False, False]


def test_the_budget_counts_read_back_results(tmp_path):
    SharedGate(FakeGate(), GateStore(tmp_path, "cpu"))(SOFTMAX, "softmax")
    warmed = refine(SOFTMAX, "softmax", ListPlanner([EXP2, WARPS, RECIPROCAL]), budget=2, gate=FakeGate())
    cached = refine(
        SOFTMAX, "softmax", ListPlanner([EXP2, WARPS, RECIPROCAL]), budget=2,
        gate=SharedGate(FakeGate(), GateStore(tmp_path, "cpu")),
    )  # fmt: skip
    assert cached.gate_runs == warmed.gate_runs == 2
    assert len(cached.steps) == len(warmed.steps) == 2


def test_a_process_waits_for_the_one_gating_the_same_text(tmp_path):
    """Two gates side by side on one text: the second waits on the first's claim and reads its result."""
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow(source: str, kernel: str) -> GateResult:
        calls.append(source)
        started.set()
        release.wait(5)
        return FakeGate()(source, kernel)

    first = SharedGate(slow, GateStore(tmp_path, "cpu"))
    second = SharedGate(slow, GateStore(tmp_path, "cpu"))
    results = {}
    one = threading.Thread(target=lambda: results.setdefault("one", first(SOFTMAX, "softmax")))
    one.start()
    assert started.wait(5)
    two = threading.Thread(target=lambda: results.setdefault("two", second(SOFTMAX, "softmax")))
    two.start()
    time.sleep(0.2)
    assert "two" not in results  # waiting on the claim
    release.set()
    one.join(5)
    two.join(5)
    assert len(calls) == 1 and results["one"] == results["two"]
    assert second.hits == 1 and second.served(SOFTMAX, "softmax") and not first.served(SOFTMAX, "softmax")


def test_the_files_are_gate_results(tmp_path):
    SharedGate(FakeGate(), GateStore(tmp_path, "cpu"))(SOFTMAX, "softmax")
    (path,) = store_files(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["kernel"] == "softmax" and data["format"] == "argus-gate/1"
    assert GateResult.model_validate(data).profile.status == Status.passed
