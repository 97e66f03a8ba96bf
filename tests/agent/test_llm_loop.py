"""The LLM planner in the real refinement loop (argus.agent.loop.refine), through the real `ollama` client
against the loopback stub, with the real CPU gate (compile for sm_90, correct under the Triton interpreter);
only the profile stage is scripted (gates.scripted_profile), since this machine has no GPU.

The model's scripted answers, in order: malformed JSON (retried inside the planner, never reaches the loop),
an edit whose mask is off by one (the verifier refutes it: refused before the gate), an edit that computes the
wrong values (verifies, compiles, fails the correct stage), and exp -> exp2 with log2(e) folded (correct and
faster by the scripted timing). Only the last is kept.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from ollama_stub import OllamaStub, serve

from argus.agent.gates import scripted_profile
from argus.agent.llm import LlmPlanner
from argus.agent.loop import RefineResult, refine
from argus.gate import run_gate

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "examples" / "softmax.argus"
SOFTMAX = PATH.read_text(encoding="utf-8")
OFF_BY_ONE = SOFTMAX.replace("mask = cols < N", "mask = cols <= N")  # reads and writes one column past N
HALF_EXPONENT = SOFTMAX.replace("num = exp(z)", "num = exp(z * 0.5)")  # in bounds, but not softmax
EXP2 = SOFTMAX.replace("num = exp(z)", "num = exp2(z * 1.4426950408889634)")  # exp(z) = 2^(z log2 e)


def unified_diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), "a/softmax.argus", "b/softmax.argus")
    return "".join(lines)


def cpu_gate(source: str, kernel: str):
    return run_gate(source, path=str(PATH), kernel=kernel, device="cpu", stages=("compile", "correct"), timeout_s=300)


def scripted_ms(source: str) -> float:
    return 0.8 if "exp2(" in source else 1.0  # exp2 is one MUFU instruction: the scripted GPU rewards it


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RefineResult, OllamaStub, Path, LlmPlanner]]:
    """One refinement the tests below read: four real gate runs at most, about 20 s on a 2-core machine."""
    log = tmp_path_factory.mktemp("llm_loop") / "trajectory.jsonl"
    with serve(OllamaStub()) as stub:
        stub.script(
            '{"action": "source", "source": "kernel softmax(',  # cut off mid-answer
            {"action": "source", "source": OFF_BY_ONE, "rationale": "cover the whole row"},
            {"action": "diff", "diff": unified_diff(SOFTMAX, HALF_EXPONENT), "rationale": "a cheaper exponent"},
            {"action": "source", "source": EXP2, "rationale": "exp2 with log2(e) folded is one instruction"},
            {"action": "stop", "rationale": "nothing left"},
        )
        planner = LlmPlanner(model=stub.model, host=stub.host)
        result = refine(
            SOFTMAX, "softmax", planner, budget=4, gate=scripted_profile(cpu_gate, scripted_ms), path=str(PATH), log=log
        )
        yield result, stub, log, planner


def test_only_the_good_edit_is_kept(run):
    result, *_ = run
    assert [s.kept for s in result.steps] == [False, False, True]
    assert result.best.source == EXP2
    assert result.stopped == "planner"
    assert result.speedup == pytest.approx(1.25)


def test_the_malformed_answer_was_retried_inside_the_planner(run):
    _, stub, _, planner = run
    chats = stub.chats()
    assert len(chats) == 5 and planner.attempts == 5  # 1 malformed + 3 proposals + stop
    retry = chats[1]["messages"]
    assert retry[-2]["role"] == "assistant" and retry[-2]["content"].startswith('{"action": "source"')
    assert "Invalid JSON" in retry[-1]["content"]


def test_the_off_by_one_edit_is_refused_at_verify_and_never_gated(run):
    result, *_ = run
    step = result.steps[0]
    assert step.feedback.stage == "verify" and step.gate_runs == 0
    assert step.feedback.data["code"] == "AR301"
    assert step.feedback.data["counterexample"]["kind"] == "in_bounds"


def test_the_wrong_result_is_refused_at_the_correct_stage(run):
    result, *_ = run
    step = result.steps[1]
    assert step.proposal.kind == "diff"
    assert step.feedback.stage == "correct" and step.gate_runs == 1
    assert step.feedback.data["first_mismatch"]["output"] == "y"


def test_the_next_prompt_holds_the_feedback_of_the_refused_steps(run):
    _, stub, *_ = run
    prompt = stub.chats()[-2]["messages"][1]["content"]  # the chat that answered with the good edit
    assert "not kept at verify" in prompt and '"kind": "in_bounds"' in prompt
    assert "not kept at correct" in prompt and '"first_mismatch": {"output": "y"' in prompt


def test_the_trajectory_log_has_every_step(run):
    _, _, log, _ = run
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [(r["planner"], r["kept"], (r["feedback"] or {}).get("stage")) for r in records] == [
        ("llm", False, "verify"),
        ("llm", False, "correct"),
        ("llm", True, None),
    ]
    assert records[2]["reward"] == pytest.approx(1.25)
