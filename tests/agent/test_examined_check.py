"""The agent asks `analysis` for a state (argus.agent.states.analysis_of), and its local gate takes the check the
state was examined with instead of checking the text again."""

from __future__ import annotations

from agent_fakes import SOFTMAX

import argus.agent.gates as gates
from argus.agent import states
from argus.gate.result import GateResult


def test_a_state_and_its_gate_run_share_one_check(monkeypatch):
    handed: list[object] = []

    def run_gate(source: str, **options) -> GateResult:
        handed.append(options["check"])
        return GateResult(kernel=options["kernel"], device="fake")

    monkeypatch.setattr(gates, "run_gate", run_gate)
    state = states.examine(SOFTMAX, "softmax")
    assert state.diagnostics == []
    gates.local_gate(device="cpu")(SOFTMAX, "softmax")
    assert handed == [states.analysis_of(SOFTMAX).check]
    assert handed[0] is states.analysis_of(SOFTMAX).check  # the very object, not an equal new check


def test_the_latest_texts_are_kept_and_the_oldest_dropped():
    texts = [SOFTMAX.replace("softmax", f"softmax{i}") for i in range(states.RECENT + 1)]
    first = states.analysis_of(texts[0])
    for text in texts[1:]:
        states.analysis_of(text)
    assert states.analysis_of(texts[-1]) is states.analysis_of(texts[-1])
    assert states.analysis_of(texts[0]) is not first  # pushed out by RECENT newer texts, analyzed anew
