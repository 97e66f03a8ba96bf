"""Test doubles for the refinement loop: a gate that answers from the source's text (no processes), and a
planner that proposes from a list. The loop under test is the real one; only the gate's verdict is scripted."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from argus.agent.gates import scripted_timing
from argus.agent.plan import Proposal, State, Step
from argus.gate.result import CorrectFacts, GateResult, Mismatch, Status

ROOT = Path(__file__).resolve().parents[2]
SOFTMAX = (ROOT / "examples" / "softmax.argus").read_text(encoding="utf-8")
MATMUL = (ROOT / "examples" / "matmul.argus").read_text(encoding="utf-8")


def softmax_ms(source: str) -> float:
    """Scripted timings of the softmax example: exp2 and one reciprocal per row help, 16 warps hurt."""
    ms = 1.0
    if "exp2(" in source:
        ms *= 0.8
    if "inv = " in source:
        ms *= 0.9
    if "num_warps = 16" in source:
        ms *= 1.1
    return ms


@dataclass
class FakeGate:
    """Compiles everything; wrong when `wrong(source)`; `ms(source)` as the profile, or no profile."""

    ms: Callable[[str], float] | None = softmax_ms
    wrong: Callable[[str], bool] = lambda source: False
    calls: list[str] = field(default_factory=list)

    def __call__(self, source: str, kernel: str) -> GateResult:
        self.calls.append(source)
        result = GateResult(kernel=kernel, device="fake")
        result.compile.status = Status.passed
        if self.wrong(source):
            result.correct.status = Status.failed
            result.correct.message = "y differs from the reference at (3, 7)"
            mismatch = Mismatch(output="y", index=[3, 7], got=0.5, expected=0.25, count=12, elements=37000)
            result.correct.facts = CorrectFacts(
                trials=1, seeds=[1], sizes=[{"M": 37, "N": 1000}], interpreter=True, tolerance={"y": 0.01},
                first_mismatch=mismatch,
            )  # fmt: skip
            return result
        result.correct.status = Status.passed
        if self.ms is None:
            result.profile.message = "profiling needs a GPU"
        else:
            result.profile.status = Status.passed
            result.profile.facts = scripted_timing(self.ms(source))
        return result


@dataclass
class ListPlanner:
    """Proposes the given proposals in order, then nothing."""

    proposals: Sequence[Proposal]
    name: str = "list"
    seen: list[State] = field(default_factory=list)

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None:
        self.seen.append(state)
        return self.proposals[len(self.seen) - 1] if len(self.seen) <= len(self.proposals) else None


def skill(card: str, line: int) -> Proposal:
    return Proposal(kind="skill", skill=card, line=line)


def unmeasured_cards():
    """The library as CPU lineages alone make it (no effect measured): rankings in tests follow evidence only,
    whatever the committed library has measured since."""
    from argus.skills.library import load_cards

    return [c.model_copy(update={"effect": [], "effect_status": "not measured"}) for c in load_cards()]
