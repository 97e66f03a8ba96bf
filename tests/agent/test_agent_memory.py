"""Memory: where it lives, the most similar successes and failures, rewards per skill, corrupt lines."""

from __future__ import annotations

import json
import logging

from argus.agent.memory import Memory, facts_signature, workspace_of
from argus.agent.plan import Feedback, Proposal, Step

ROW = {"dot_in_loop": False, "policy": {"num_warps": 8}, "constants": {"BN": 4096}, "loaded": ["x"], "stages": 3}
DOT = {"dot_in_loop": True, "policy": {"num_warps": 4}, "constants": {"BK": 64}, "loaded": ["A", "B"], "stages": 3}


def step(skill: str, reward: float, facts: dict, kept: bool = False, stage: str | None = None) -> Step:
    feedback = None if stage is None else Feedback(stage, f"{stage} failed")  # type: ignore[arg-type]
    return Step(0, "search", Proposal(kind="skill", skill=skill, line=1), kept, reward, feedback, facts=facts)


def test_memory_lives_in_the_workspace_of_the_file(tmp_path):
    (tmp_path / ".git").mkdir()
    kernel = tmp_path / "kernels" / "deep" / "k.argus"
    kernel.parent.mkdir(parents=True)
    kernel.write_text("")
    assert workspace_of(kernel) == tmp_path
    assert Memory.for_file(kernel).path == tmp_path / ".argus" / "memory.jsonl"


def test_similar_returns_the_successes_and_failures_sharing_most_facts(tmp_path):
    memory = Memory(tmp_path / "memory.jsonl")
    memory.record(step("exp2.row", 1.2, ROW, kept=True), "k1")
    memory.record(step("tma.dot", 1.3, DOT, kept=True), "k2")
    memory.record(step("num_warps.row", -1.0, ROW, stage="correct"), "k1")
    memory.record(step("tile_size.BK.dot", 0.0, DOT, stage="slower"), "k2")
    successes, failures = memory.similar(ROW, k=1)
    assert [r["skill"] for r in successes] == ["exp2.row"]
    assert [(r["skill"], r["stage"]) for r in failures] == [("num_warps.row", "correct")]
    successes, failures = memory.similar(DOT, k=3)
    assert [r["skill"] for r in successes] == ["tma.dot", "exp2.row"]
    assert failures[0]["facts"] == facts_signature(DOT)


def test_skill_stats_are_the_mean_reward_per_skill_and_its_count(tmp_path):
    memory = Memory(tmp_path / "memory.jsonl")
    for reward in (1.5, -1.0, 0.0):
        memory.record(step("exp2.row", reward, ROW), "k")
    memory.record(step("tma.dot", 1.2, DOT, kept=True), "k")
    assert memory.skill_stats() == {"exp2.row": (0.5 / 3, 3), "tma.dot": (1.2, 1)}


def test_corrupt_lines_are_skipped_with_a_warning(tmp_path, caplog):
    path = tmp_path / "memory.jsonl"
    memory = Memory(path)
    memory.record(step("exp2.row", 1.1, ROW, kept=True), "k")
    with path.open("a") as out:
        out.write('{"skill": "half a line\n[1, 2]\n{"facts": [], "reward": "x"}\n')
    memory.record(step("exp2.row", 0.9, ROW, kept=True), "k")
    with caplog.at_level(logging.WARNING, logger="argus.agent.memory"):
        assert len(memory.records()) == 2
    assert sum("corrupt memory line" in r.message for r in caplog.records) == 3
    assert memory.skill_stats() == {"exp2.row": (1.0, 2)}


def test_no_memory_file_is_no_memory(tmp_path):
    memory = Memory(tmp_path / "none" / "memory.jsonl")
    assert memory.similar(ROW) == ([], []) and memory.skill_stats() == {}


def test_a_record_is_one_json_line(tmp_path):
    memory = Memory(tmp_path / "memory.jsonl")
    memory.record(step("exp2.row", -1.0, ROW, stage="verify"), "abc")
    record = json.loads((tmp_path / "memory.jsonl").read_text())
    assert record["skill"] == "exp2.row" and record["kernel"] == "abc" and record["stage"] == "verify"
    assert "policy num_warps=8" in record["facts"]
