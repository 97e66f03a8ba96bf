"""The search planner end to end on the CPU: the real gate compiles each candidate for sm_90 and checks it
against the PyTorch reference under the Triton interpreter; the profile stage, which needs a GPU, is filled
through the gate's own result model by scripted timings (argus.agent.gates.scripted_profile). Three real gate
runs: the start and two candidates."""

from __future__ import annotations

import json

import pytest
from agent_fakes import SOFTMAX, softmax_ms, unmeasured_cards

from argus.agent.gates import local_gate, scripted_profile
from argus.agent.loop import refine
from argus.agent.search import SearchPlanner


def test_search_on_the_cpu_keeps_what_the_scripted_timings_imply(tmp_path):
    gate = scripted_profile(local_gate("cpu", 300, ("compile", "correct"), trials=1, seed=0), softmax_ms)
    log = tmp_path / "trajectory.jsonl"
    cards = [c for c in unmeasured_cards() if c.id in ("exp2.row", "reciprocal.row")]
    result = refine(SOFTMAX, "softmax", SearchPlanner(cards), budget=2, gate=gate, log=log)

    assert result.start.gate is not None  # the model itself, not its JSON
    assert result.start.gate.compile.status == "passed" and result.start.gate.correct.status == "passed"
    # exp2.row ranks first (more evidence), then reciprocal.row: both correct and faster, both kept.
    assert result.skills == ["exp2.row", "reciprocal.row"]
    assert result.speedup == pytest.approx(1 / (0.9 * 0.8))
    assert result.gate_runs == 2
    assert "inv = 1.0 / den" in result.best.source and "exp2(" in result.best.source
    steps = [json.loads(line) for line in log.read_text().splitlines()]
    assert [s["reward"] for s in steps] == pytest.approx([1 / 0.8, 1 / 0.9])
    assert all(s["gate_runs"] == 1 and s["feedback"] is None for s in steps)
