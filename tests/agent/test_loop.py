"""The refinement loop with a scripted gate: what is kept, what costs a gate run, and what a planner is told."""

from __future__ import annotations

import json
import threading

import pytest
from agent_fakes import MATMUL, SOFTMAX, FakeGate, ListPlanner, skill

from argus.agent.diffs import apply_diff
from argus.agent.loop import refine
from argus.agent.plan import Proposal
from argus.agent.search import SearchPlanner

NEXT_K = MATMUL.replace("B[rk, rn], mask=(rk < K", "B[rk + BK, rn], mask=(rk + BK < K")  # b one K block ahead

EXP2, RECIPROCAL, WARPS = skill("exp2.row", 14), skill("reciprocal.row", 16), skill("num_warps.row", 6)


def test_keeps_only_correct_and_faster_candidates():
    gate = FakeGate(wrong=lambda source: "num_warps = 16" in source)
    slower = FakeGate(ms=lambda source: 1.2 if "inv = " in source else 1.0)
    result = refine(SOFTMAX, "softmax", ListPlanner([EXP2, WARPS]), budget=8, gate=gate)
    assert [s.kept for s in result.steps] == [True, False]
    assert result.skills == ["exp2.row"]
    assert result.speedup == pytest.approx(1 / 0.8)
    slow = refine(SOFTMAX, "softmax", ListPlanner([RECIPROCAL]), budget=8, gate=slower)
    assert slow.steps[0].feedback.stage == "slower" and slow.steps[0].reward == 0.0
    assert slow.best.source == SOFTMAX


def test_a_wrong_result_comes_back_with_the_first_mismatching_element():
    gate = FakeGate(wrong=lambda source: "num_warps = 16" in source)
    step = refine(SOFTMAX, "softmax", ListPlanner([WARPS]), budget=8, gate=gate).steps[0]
    assert step.feedback.stage == "correct" and step.reward < 0
    assert step.feedback.data["first_mismatch"]["index"] == [3, 7]


def test_a_speedup_under_min_speedup_is_not_kept():
    gate = FakeGate(ms=lambda source: 0.995 if "exp2(" in source else 1.0)
    result = refine(SOFTMAX, "softmax", ListPlanner([EXP2]), budget=8, gate=gate, min_speedup=1.01)
    assert result.steps[0].feedback.stage == "slower" and not result.kept


def test_a_refused_skill_uses_no_gate_run():
    gate = FakeGate()
    nowhere = skill("exp2.row", 6)  # the policy line: exp2 has no site there
    result = refine(SOFTMAX, "softmax", ListPlanner([nowhere, skill("no.such.card", 3)]), budget=8, gate=gate)
    assert [s.feedback.stage for s in result.steps] == ["apply", "apply"]
    assert "no_site" in result.steps[0].feedback.message
    assert result.steps[0].feedback.data["precondition"] == "no_site"
    assert result.gate_runs == 0 and len(gate.calls) == 1  # the start's run only
    assert all(s.gate_runs == 0 and s.reward < 0 for s in result.steps)


def test_the_budget_counts_candidate_gate_runs():
    gate = FakeGate()
    result = refine(SOFTMAX, "softmax", SearchPlanner(), budget=2, gate=gate)
    assert result.gate_runs == 2 and result.stopped == "budget"
    assert len(gate.calls) == 3  # the start, then two candidates


def test_a_source_gated_before_costs_no_gate_run():
    gate = FakeGate(ms=lambda source: 1.0)
    same = Proposal(kind="source", source=SOFTMAX.replace("exp(z)", "exp2(z * 1.4426950408889634)"))
    result = refine(SOFTMAX, "softmax", ListPlanner([same, same]), budget=8, gate=gate)
    assert [s.gate_runs for s in result.steps] == [1, 0]
    assert len(gate.calls) == 2


def test_cancel_stops_after_the_step_in_flight():
    cancel = threading.Event()
    result = refine(
        SOFTMAX, "softmax", SearchPlanner(), budget=8, gate=FakeGate(), cancel=cancel,
        on_step=lambda step: cancel.set(),
    )  # fmt: skip
    assert result.stopped == "cancelled" and len(result.steps) == 1


def test_a_planner_with_nothing_left_ends_the_run():
    result = refine(SOFTMAX, "softmax", ListPlanner([]), budget=8, gate=FakeGate())
    assert result.stopped == "planner" and result.steps == []


def test_a_verifier_regression_is_refused_before_the_gate_with_its_counterexample():
    gate = FakeGate()
    result = refine(MATMUL, "matmul", ListPlanner([Proposal(kind="source", source=NEXT_K)]), budget=8, gate=gate)
    feedback = result.steps[0].feedback
    assert feedback.stage == "verify" and feedback.data["code"] == "AR310"
    assert feedback.data["line"] == 17
    assert feedback.data["counterexample"]["kind"] == "contraction"
    assert result.steps[0].gate_runs == 0 and len(gate.calls) == 1


def test_fixing_a_verifier_error_is_kept_without_a_timing():
    fix = Proposal(kind="source", source=MATMUL)
    result = refine(NEXT_K, "matmul", ListPlanner([fix]), budget=8, gate=FakeGate(ms=None))
    assert result.steps[0].kept and result.best.source == MATMUL


def test_without_a_profile_a_correct_candidate_is_not_kept_and_says_profiling_needs_a_gpu():
    result = refine(SOFTMAX, "softmax", ListPlanner([EXP2]), budget=8, gate=FakeGate(ms=None))
    feedback = result.steps[0].feedback
    assert feedback.stage == "profile" and "profiling needs a GPU" in feedback.message
    assert result.steps[0].reward == 0.0


def test_parse_and_check_errors_come_back_as_feedback():
    typo = Proposal(kind="source", source=SOFTMAX.replace("den = sum(num, axis=0)", "den = sum(num, axis=0"))
    undefined = Proposal(kind="source", source=SOFTMAX.replace("(num / den)", "(num / dem)"))
    result = refine(SOFTMAX, "softmax", ListPlanner([typo, undefined]), budget=8, gate=FakeGate())
    assert [s.feedback.stage for s in result.steps] == ["parse", "check"]
    assert result.steps[1].feedback.data["code"] == "AR101"


def test_a_diff_is_applied_and_one_that_does_not_fit_is_refused():
    diff = (
        "--- a/softmax.argus\n+++ b/softmax.argus\n@@ -15,1 +15,1 @@\n"
        "-    num = exp(z)\n+    num = exp2(z * 1.4426950408889634)\n"
    )
    stale = diff.replace("num = exp(z)", "num = exp(v)")
    planner = ListPlanner([Proposal(kind="diff", diff=stale), Proposal(kind="diff", diff=diff)])
    result = refine(SOFTMAX, "softmax", planner, budget=8, gate=FakeGate())
    assert result.steps[0].feedback.stage == "apply" and "line 15" in result.steps[0].feedback.message
    assert result.steps[1].kept and result.best.source == apply_diff(SOFTMAX, diff)


def test_every_step_is_one_json_line_with_its_reward(tmp_path):
    log = tmp_path / "run.jsonl"
    gate = FakeGate(wrong=lambda source: "num_warps = 16" in source)
    refine(SOFTMAX, "softmax", ListPlanner([EXP2, WARPS, skill("exp2.row", 6)]), budget=8, gate=gate, log=log)
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["proposal"]["skill"], r["kept"]) for r in lines] == [
        ("exp2.row", True), ("num_warps.row", False), ("exp2.row", False),
    ]  # fmt: skip
    assert lines[0]["reward"] == pytest.approx(1.25) and lines[1]["reward"] == -1.0
    assert lines[1]["feedback"]["stage"] == "correct" and lines[2]["gate_runs"] == 0
    assert lines[0]["facts"]["policy"] == {"num_warps": 8}
