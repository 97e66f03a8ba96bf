"""The LLM planner through the real `ollama` client against a loopback server speaking the Ollama chat API
(ollama_stub.py): structured answers, retries of malformed ones, the messages for an unreachable host or a
missing model, and what the prompt holds."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from ollama_stub import OllamaStub, serve

from argus.agent.gates import scripted_timing
from argus.agent.llm import LlmAnswer, LlmPlanner, PlannerUnavailable
from argus.agent.memory import Memory
from argus.agent.plan import Feedback, Proposal, State, Step
from argus.gate.result import CompileResult, CorrectResult, GateResult, ProfileResult, Status

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = (ROOT / "examples" / "softmax.argus").read_text(encoding="utf-8")
EXP2 = {"action": "skill", "skill": "exp2.row", "line": 15, "rationale": "exp2 is one instruction"}


@pytest.fixture
def ollama_stub() -> Iterator[OllamaStub]:
    with serve(OllamaStub()) as stub:
        yield stub


def planner_for(stub: OllamaStub, **options) -> LlmPlanner:
    return LlmPlanner(model=stub.model, host=stub.host, **options)


def softmax_state() -> State:
    return State(source=SOFTMAX, kernel="softmax")


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_skill_answer_becomes_a_proposal_with_a_0_based_line(ollama_stub: OllamaStub):
    ollama_stub.script(EXP2)
    proposal = planner_for(ollama_stub).propose(softmax_state(), [])
    assert proposal == Proposal("skill", "exp2 is one instruction", skill="exp2.row", line=14)


def test_the_chat_asks_for_the_answer_schema_at_temperature_0(ollama_stub: OllamaStub):
    ollama_stub.script(EXP2)
    planner_for(ollama_stub).propose(softmax_state(), [])
    (chat,) = ollama_stub.chats()
    assert chat["format"] == LlmAnswer.model_json_schema()
    assert chat["options"] == {"temperature": 0}
    assert chat["stream"] is False
    assert [m["role"] for m in chat["messages"]] == ["system", "user"]


def test_malformed_json_is_retried_with_the_error_in_a_user_message(ollama_stub: OllamaStub):
    ollama_stub.script('{"action": "skill", "skill": "exp2.row", "line": 15', EXP2)
    planner = planner_for(ollama_stub)
    assert planner.propose(softmax_state(), []).skill == "exp2.row"
    first, retry = ollama_stub.chats()
    assert retry["messages"][: len(first["messages"])] == first["messages"]
    assistant, complaint = retry["messages"][-2:]
    assert assistant == {"role": "assistant", "content": '{"action": "skill", "skill": "exp2.row", "line": 15'}
    assert complaint["role"] == "user" and "Invalid JSON" in complaint["content"]
    assert planner.attempts == 2


def test_an_answer_missing_the_field_of_its_action_is_retried(ollama_stub: OllamaStub):
    ollama_stub.script({"action": "source", "rationale": "forgot it"}, {"action": "stop"})
    assert planner_for(ollama_stub).propose(softmax_state(), []) is None
    assert "action 'source' needs source" in ollama_stub.chats()[1]["messages"][-1]["content"]


def test_a_skill_not_in_the_library_is_retried_with_the_skills_that_match(ollama_stub: OllamaStub):
    ollama_stub.script({"action": "skill", "skill": "make_it_fast.row", "line": 15}, EXP2)
    assert planner_for(ollama_stub).propose(softmax_state(), []).skill == "exp2.row"
    complaint = ollama_stub.chats()[1]["messages"][-1]["content"]
    assert "'make_it_fast.row' is not in the library" in complaint
    assert "exp2.row, num_warps.row, reciprocal.row" in complaint


def test_a_skill_at_a_line_where_it_does_not_match_is_retried_with_its_lines(ollama_stub: OllamaStub):
    ollama_stub.script({"action": "skill", "skill": "exp2.row", "line": 16}, EXP2)
    assert planner_for(ollama_stub).propose(softmax_state(), []).line == 14
    assert "does not match at line 16; it matches at: 15" in ollama_stub.chats()[1]["messages"][-1]["content"]


def test_a_proposal_that_already_failed_at_this_state_is_retried(ollama_stub: OllamaStub):
    failed = Step(1, "llm", Proposal("skill", skill="exp2.row", line=14), kept=False, reward=-1.0,
                  feedback=Feedback("correct", "wrong values"))  # fmt: skip
    ollama_stub.script(EXP2, {"action": "stop"})
    assert planner_for(ollama_stub).propose(softmax_state(), [failed]) is None
    assert "already tried" in ollama_stub.chats()[1]["messages"][-1]["content"]


def test_after_the_retries_propose_returns_none_and_says_why(ollama_stub: OllamaStub):
    ollama_stub.script("no", "still no", "nope")
    planner = planner_for(ollama_stub, retries=2)
    assert planner.propose(softmax_state(), []) is None
    assert len(ollama_stub.chats()) == 3
    assert "Invalid JSON" in planner.last_error


def test_stop_means_nothing_left_to_propose(ollama_stub: OllamaStub):
    ollama_stub.script({"action": "stop", "rationale": "the kernel is at its roofline"})
    assert planner_for(ollama_stub).propose(softmax_state(), []) is None
    assert len(ollama_stub.chats()) == 1


def test_a_source_answer_is_the_whole_edited_file(ollama_stub: OllamaStub):
    edited = SOFTMAX.replace("num_warps = 8", "num_warps = 4")
    ollama_stub.script({"action": "source", "source": edited, "rationale": "fewer warps for a short row"})
    assert planner_for(ollama_stub).propose(softmax_state(), []) == Proposal(
        "source", "fewer warps for a short row", source=edited
    )


def test_an_unreachable_host_names_it_and_says_how_to_start_ollama():
    host = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(PlannerUnavailable) as raised:
        LlmPlanner(host=host).check_reachable()
    message = str(raised.value)
    assert host in message and "`ollama serve`" in message and "--planner search" in message


def test_propose_checks_the_host_first():
    planner = LlmPlanner(host=f"127.0.0.1:{closed_port()}")
    with pytest.raises(PlannerUnavailable, match="ollama serve"):
        planner.propose(softmax_state(), [])


def test_a_model_slower_than_the_timeout_says_so(ollama_stub: OllamaStub):
    ollama_stub.script(EXP2)
    ollama_stub.delay_s = 1.0
    with pytest.raises(PlannerUnavailable, match=r"did not answer within 0\.2 s"):
        planner_for(ollama_stub, timeout_s=0.2).propose(softmax_state(), [])


def test_the_host_comes_from_ollama_host_when_not_given(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://10.1.2.3:4567")
    assert LlmPlanner().host == "http://10.1.2.3:4567"
    monkeypatch.delenv("OLLAMA_HOST")
    assert LlmPlanner().host == "http://localhost:11434"


def test_a_model_the_server_does_not_hold_says_ollama_pull(ollama_stub: OllamaStub):
    with pytest.raises(PlannerUnavailable) as raised:
        LlmPlanner(model="qwen9-coder:70b", host=ollama_stub.host).check_reachable()
    assert "`ollama pull qwen9-coder:70b`" in str(raised.value) and ollama_stub.host in str(raised.value)


def test_a_model_not_found_by_the_chat_says_ollama_pull(ollama_stub: OllamaStub):
    planner = planner_for(ollama_stub)
    planner.check_reachable()
    ollama_stub.models = ["another-model:latest"]  # removed between the check and the chat
    with pytest.raises(PlannerUnavailable, match="ollama pull stub-coder:latest"):
        planner.propose(softmax_state(), [])


def test_the_prompt_holds_kernel_counterexample_cards_gate_feedback_and_memory(ollama_stub: OllamaStub, tmp_path: Path):
    broken = SOFTMAX.replace("mask = cols < N", "mask = cols <= N")
    counterexample = {"kind": "in_bounds", "program": {"row": 0}, "element": {"i": 1}, "sizes": {"M": 1, "N": 1}}
    state = State(
        source=broken,
        kernel="softmax",
        facts={"dot_in_loop": False, "policy": {"num_warps": 8}},
        diagnostics=[{"code": "AR301", "severity": "error", "line": 13, "message": "load of `x` may be out of bounds",
                      "data": {"verdict": "refuted", "counterexample": counterexample}}],
        gate=GateResult(kernel="softmax", device="cpu", compile=CompileResult(status=Status.passed),
                        correct=CorrectResult(status=Status.passed),
                        profile=ProfileResult(status=Status.passed, facts=scripted_timing(0.0421))),
        ms=0.0421,
    )  # fmt: skip
    mismatch = {"output": "y", "index": [0, 32], "got": 0.0044, "expected": 0.0149}
    feedback = Feedback("correct", "softmax: `y[0, 32]` is 0.0044", {"first_mismatch": mismatch})
    failed = Step(1, "llm", Proposal("source", "halve the exponent", source="..."), False, -1.0, feedback)
    memory = Memory(tmp_path / "memory.jsonl")
    memory.record(Step(1, "search", Proposal("skill", skill="num_warps.row", line=6), kept=True, reward=1.25,
                       facts={"dot_in_loop": False, "policy": {"num_warps": 8}}), "abc")  # fmt: skip
    ollama_stub.script({"action": "stop"})
    LlmPlanner(model=ollama_stub.model, host=ollama_stub.host, memory=memory).propose(state, [failed])
    prompt = ollama_stub.chats()[0]["messages"][1]["content"]
    assert "  12 |     mask = cols <= N" in prompt
    assert "error AR301 at line 13: load of `x` may be out of bounds" in prompt
    assert '"element": {"i": 1}' in prompt
    assert "exp2.row at line 15: exp → exp2 with log2(e) folded; applicable" in prompt
    assert "divisor_is_broadcast: the divisor is one value per row" in prompt  # reciprocal.row's precondition
    assert "Kernel time to beat: 0.0421 ms" in prompt
    assert "not kept at correct: softmax: `y[0, 32]` is 0.0044" in prompt
    assert '"index": [0, 32]' in prompt
    assert "succeeded: skill num_warps.row at line 7, reward 1.25" in prompt


def test_a_failed_precondition_is_in_the_prompt():
    from argus.agent.prompt import skill_matches, skills_part
    from argus.skills.library import load_cards

    matmul = (ROOT / "examples" / "matmul.argus").read_text(encoding="utf-8")
    text = skills_part(skill_matches(State(source=matmul, kernel="matmul"), load_cards()))
    assert (
        "drop_edge_masks.dot at line 15: Drop edge masks (load of A); NOT applicable: precondition "
        "divisible_by_tile fails (needs `requires M % BM == 0`, not established here)"
    ) in text


def test_a_long_kernel_is_cut_and_says_so():
    from argus.agent.prompt import MAX_SOURCE_CHARS, kernel_part

    long = SOFTMAX + "#" * (MAX_SOURCE_CHARS + 100)
    assert "more characters cut]" in kernel_part(State(source=long, kernel="softmax"))
