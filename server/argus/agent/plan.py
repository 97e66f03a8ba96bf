"""What a planner and the refinement loop exchange: the state a planner sees, the action it proposes, the
structured feedback it gets when a proposal is not kept, and one logged step of a trajectory.

Planners (search, random, llm) only propose; the loop (argus.agent.loop) parses, verifies and gates every
proposal and alone decides what is kept. Model text is never run except through that path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from argus.gate.result import GateResult

ProposalKind = Literal["skill", "source", "diff"]
FeedbackStage = Literal["parse", "apply", "check", "verify", "compile", "correct", "profile", "slower", "budget"]


@dataclass(frozen=True, slots=True)
class Proposal:
    """One action: a library skill at an anchor line, or (LLM) a whole edited file or a unified diff."""

    kind: ProposalKind
    rationale: str = ""
    skill: str | None = None  # card id, kind == "skill"
    line: int | None = None  # 0-based anchor line of the skill, kind == "skill"
    source: str | None = None  # the whole edited file, kind == "source"
    diff: str | None = None  # a unified diff against the current source, kind == "diff"
    # The kept state it applies to (argus.skills.apply.digest of its source); None: the current best. The search
    # planner sets it when it backs up to an earlier kept state whose proposals are not exhausted.
    at: str | None = None
    # what the skill's card predicts at the state it applies to (argus.skills.predict.Prediction.to_json): the
    # effect, whether the card's evidence covers the state's situation, and why; logged to judge the cards
    prediction: dict[str, Any] | None = field(default=None, compare=False)

    def key(self) -> str:
        """Identifies the proposal so a planner does not propose it twice at one state."""
        if self.kind == "skill":
            return f"skill:{self.skill}@{self.line}" + (f"#{self.at}" if self.at else "")
        return f"{self.kind}:{hash(self.source or self.diff or '')}"


@dataclass(frozen=True, slots=True)
class Feedback:
    """Why a proposal was not kept, with the evidence a planner can act on."""

    stage: FeedbackStage
    message: str
    # the diagnostic's counterexample (code, line, data), the first mismatching element, the compile error, ...
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class State:
    """The kernel as it stands: source, facts, diagnostics and its last gate result."""

    source: str
    kernel: str
    facts: dict[str, Any] = field(default_factory=dict)  # a JSON view of argus.skills.facts.KernelFacts
    diagnostics: list[dict[str, Any]] = field(default_factory=list)  # code, severity, line, message, data
    gate: GateResult | None = None  # the last gate run's result, the model itself (dumped only to be written)
    ms: float | None = None  # median kernel time of the last profile, None without one
    # the kernel's sites (argus.skills.context.SiteContext as JSON), with the last gate's compile facts once gated;
    # None where not computed (the source does not check)
    context: list[dict[str, Any]] | None = None


@dataclass(slots=True)
class Step:
    """One proposal and its outcome: a line of the trajectory log (JSON lines)."""

    index: int
    planner: str
    proposal: Proposal
    kept: bool
    reward: float  # speedup (ms before / ms after) when kept; 0 when not kept and nothing broke; < 0 on a failure
    feedback: Feedback | None = None
    ms_before: float | None = None
    ms_after: float | None = None
    gate_runs: int = 0  # gate runs this step used (0 when refused before the gate)
    seconds: float = 0.0
    facts: dict[str, Any] = field(default_factory=dict)  # facts of the state the proposal was made at
    context: list[dict[str, Any]] | None = None  # the sites of that state (State.context)
    # its gate result was read from a store of results some run gated before (argus.agent.gates.SharedGate):
    # it still counts in gate_runs, so runs with and without a store spend equal budgets
    cached: bool = False


class Planner(Protocol):
    """Proposes the next action at a state, or None when it has nothing left to try.

    A planner may also have `fork(assumed_from) -> Planner`: a copy that proposes what this one would propose
    next, without changing it, given a history whose steps from `assumed_from` on are guesses (the search and
    random planners have it). With a gate that runs several at once, the loop asks a fork for the proposals
    after the current one and gates them together (argus.agent.loop); a planner without it (the LLM planner,
    whose next proposal depends on the last one's feedback) is gated one proposal at a time."""

    name: str

    def propose(self, state: State, history: Sequence[Step]) -> Proposal | None: ...
