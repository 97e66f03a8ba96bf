"""The refinement loop: planners propose, the loop alone decides what is kept.

Every proposal goes the same way: applied (a library skill through argus.skills.apply.plan, a unified diff
through a strict applier, or a whole source), parsed and checked, verified (no error the state it was made at
does not have), and gated. It is kept only when it compiled, was correct and was faster than the best state
by `min_speedup` (profile medians), or when it fixes what the best state has wrong (a verifier error, a
failing gate). `budget` counts gate runs of candidates; a proposal refused before the gate costs none, and a
source gated before in the run is not gated again. A result read from a store other runs share
(argus.agent.gates.SharedGate) counts as a gate run, and its step is marked `cached`. The loop alone reads the
budget: planners see the state and the steps so far, so the first B gate runs of a longer run are the run of
budget B (up to `max_steps`, whose default grows with the budget). Each step is logged, remembered and reported
as it ends.

Proposals gated together. With a gate that runs several at once (argus.gate.cluster.ClusterGate, `width()` above
1) and a planner that can be forked (plan.Planner.fork: the search and random planners), a proposal whose text
needs a gate run brings the texts of the next ones with it: a fork of the planner proposes on, each step
assumed not kept (no timing, reward 0), and the texts that would reach the gate (up to the width, and no more
than the budget has left) are gated as one batch. The steps are then made one at a time exactly as without
the batch: the planner proposes from the real history, and a text gated ahead takes its result then, counted
as one gate run of that step. So the steps, the kept kernel, the trajectory and memory are the serial path's
(given a gate that answers a text the same way twice); what differs is wall time, and the texts gated ahead
that no step asked for (a kept step changed the state, or a gate result changed the ranking), which
`RefineResult.unused` counts and no budget pays for.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from argus.agent import states
from argus.agent.diffs import DiffError, apply_diff
from argus.agent.gates import CachedGate, Gate, SharedGate, cached
from argus.agent.memory import Memory
from argus.agent.plan import Feedback, Planner, Proposal, State, Step
from argus.agent.trajectory import TrajectoryLog
from argus.agent.verdicts import correct_and_compiled, gate_failure, no_timing, reward_of
from argus.gate.result import GateError, GateResult, kernel_ms
from argus.skills.apply import digest, plan
from argus.skills.cards import Card
from argus.skills.library import load_cards

NEW_ERRORS_SHOWN = 5


@dataclass(slots=True)
class RefineResult:
    kernel: str
    start: State
    best: State
    steps: list[Step] = field(default_factory=list)
    gate_runs: int = 0  # candidates' gate runs; the start's run is not counted
    stopped: str = "budget"  # budget | planner (nothing left to propose) | cancelled | steps (too many free steps)
    start_seconds: float = 0.0  # the start's parse, verify and gate run
    start_cached: bool = False  # the start's gate result came from a shared store (SharedGate)
    gated_ahead: int = 0  # candidates' texts gated in a batch before their step (module docstring)
    unused: int = 0  # of those, the ones no step asked for (wall time spent, no budget)

    @property
    def kept(self) -> list[Step]:
        return [s for s in self.steps if s.kept]

    @property
    def speedup(self) -> float | None:
        if self.start.ms is None or self.best.ms is None:
            return None
        return self.start.ms / self.best.ms

    @property
    def start_status(self) -> dict[str, str | None]:
        """Each gate stage's status for the kernel as written (None: the start was not gated)."""
        if self.start.gate is None:
            return dict.fromkeys(("compile", "correct", "profile"))
        return {stage: result.status.value for stage, result in self.start.gate.stages.items()}

    @property
    def skills(self) -> list[str]:
        """The kept sequence: skill ids, or the proposal kind for an edit."""
        return [s.proposal.skill or s.proposal.kind for s in self.kept]


def refine(
    source: str,
    kernel: str,
    planner: Planner,
    *,
    budget: int,
    gate: Gate,
    path: str | None = None,
    memory: Memory | None = None,
    log: str | Path | IO[str] | None = None,
    on_step: Callable[[Step], Any] | None = None,
    cancel: threading.Event | None = None,
    min_speedup: float = 1.01,
    max_steps: int | None = None,
    cards: Sequence[Card] | None = None,
    batch: int | None = None,
) -> RefineResult:
    """Refine `kernel` of `source` with `planner` for at most `budget` gate runs (see the module docstring).

    `path` names the file in feedback; `max_steps` (default 4 × budget + 20) ends a planner that keeps
    proposing what costs no gate run; `cards` are the skill cards a proposal names (None: skills/library), the
    ones its planner proposes from; `batch` the most proposals gated together (None: the gate's width; 1: one
    at a time), for refinements that share a cluster."""
    run = _Run(kernel, planner, cached(gate), path, min_speedup, cards, batch)
    started = time.perf_counter()
    result = RefineResult(kernel=kernel, start=run.gated(states.examine(source, kernel)), best=None)  # type: ignore[arg-type]
    result.start_seconds = time.perf_counter() - started
    result.start_cached = run.served(source)
    run.best = result.best = result.start
    run.kept[digest(source)] = result.start
    trajectory = TrajectoryLog(log) if log is not None else None
    limit = max_steps if max_steps is not None else 4 * budget + 20
    try:
        result.stopped = run.loop(result, budget, limit, cancel, trajectory, memory, on_step)
    finally:
        if trajectory is not None:
            trajectory.close()
    result.best = run.best
    result.gated_ahead, result.unused = run.gate.prefetched, len(run.gate.ahead)
    return result


class _Run:
    def __init__(
        self,
        kernel: str,
        planner: Planner,
        gate: CachedGate,
        path: str | None,
        min_speedup: float,
        cards: Sequence[Card] | None = None,
        batch: int | None = None,
    ):
        self.kernel, self.planner, self.gate, self.path = kernel, planner, gate, path
        self.min_speedup = min_speedup
        self.cards = None if cards is None else {card.id: card for card in cards}
        self.shared = gate.gate if isinstance(gate.gate, SharedGate) else None
        self.best: State
        self.kept: dict[str, State] = {}  # every kept state (and the start) by the digest of its source
        self.examined: dict[str, State] = {}  # candidates parsed, checked and verified, before their gate run
        # gate proposals together: the gate runs several at once and the planner can say what it proposes next
        self.width = gate.width() if batch is None else max(1, min(batch, gate.width()))
        self.batched = self.width > 1 and callable(getattr(planner, "fork", None))

    def gated(self, state: State) -> State:
        try:
            result = self.gate(state.source, self.kernel)
        except ValueError as problem:  # the gate refuses the request itself (no such kernel, ...)
            result = GateResult(
                kernel=self.kernel, device="none", errors=[GateError(code="AR505", message=str(problem))]
            )
        state.gate = result
        state.ms = kernel_ms(result)
        states.add_compile(state, result)
        return state

    def served(self, source: str) -> bool:
        """The source's gate result came from the shared store, not from a gate run of this process."""
        return self.shared is not None and self.shared.served(source, self.kernel)

    def card(self, card_id: str) -> Card | None:
        if self.cards is None:  # skills/library, read once a run (not at every step)
            self.cards = {card.id: card for card in load_cards()}
        return self.cards.get(card_id)

    def loop(self, result, budget, limit, cancel, trajectory, memory, on_step) -> str:
        start_digest = digest(result.start.source)
        while result.gate_runs < budget:
            if len(result.steps) >= limit:
                return "steps"
            if cancel is not None and cancel.is_set():
                return "cancelled"
            proposal = self.planner.propose(self.best, list(result.steps))
            if proposal is None:
                return "planner"
            if cancel is not None and cancel.is_set():
                return "cancelled"
            if self.batched:
                self.look_ahead(proposal, result.steps, budget - result.gate_runs, limit)
            step = self.attempt(len(result.steps), proposal)
            result.steps.append(step)
            result.gate_runs += step.gate_runs
            if trajectory is not None:
                trajectory.write(step, kernel=self.kernel)
            if memory is not None:
                memory.record(step, start_digest)
            if on_step is not None:
                on_step(step)
        return "budget"

    def attempt(self, index: int, proposal: Proposal) -> Step:
        started = time.perf_counter()
        best = self.best
        base = self.kept.get(proposal.at) if proposal.at else best
        step = Step(index, self.planner.name, proposal, kept=False, reward=0.0, ms_before=best.ms)
        if base is None:
            feedback = Feedback("apply", f"no kept state with digest {proposal.at}", {"at": proposal.at})
        else:
            step.facts = base.facts
            step.context = base.context
            feedback = self.judge(step, proposal, base, best)
        step.feedback = feedback
        step.kept = feedback is None
        speedup = best.ms / step.ms_after if step.kept and best.ms and step.ms_after else None
        step.reward = reward_of(feedback, speedup)
        step.seconds = time.perf_counter() - started
        return step

    def look_ahead(self, proposal: Proposal, history: Sequence[Step], room: int, limit: int) -> None:
        """When `proposal`'s text needs a gate run, gate it together with the texts of the proposals a fork of
        the planner makes after it, each step assumed not kept: up to the gate's width, at most `room` (the
        budget left), within the steps' `limit`."""
        first = self.to_gate(proposal)
        if first is None:
            return
        texts = [first]
        fork = self.planner.fork(len(history))  # type: ignore[attr-defined]
        assumed = [*history, self.assumed(len(history), proposal)]
        while len(texts) < min(self.width, room) and len(assumed) < limit:
            following = fork.propose(self.best, list(assumed))
            if following is None:
                break
            assumed.append(self.assumed(len(assumed), following))
            text = self.to_gate(following)
            if text is not None and text not in texts:
                texts.append(text)
        self.gate.prefetch([(text, self.kernel) for text in texts])

    def assumed(self, index: int, proposal: Proposal) -> Step:
        """The step a fork of the planner is told `proposal` made: not kept, no timing, no reward."""
        return Step(index, self.planner.name, proposal, kept=False, reward=0.0, ms_before=self.best.ms)

    def to_gate(self, proposal: Proposal) -> str | None:
        """The text `proposal`'s step would gate, or None: refused before the gate, or gated already."""
        base = self.kept.get(proposal.at) if proposal.at else self.best
        if base is None:
            return None
        text, _, refused = self.prepared(proposal, base)
        if refused is not None or self.gate.seen(text, self.kernel):
            return None
        return text

    def prepared(self, proposal: Proposal, base: State) -> tuple[str, State | None, Feedback | None]:
        """The candidate's text and its state before the gate, or the feedback that refuses it before the gate."""
        text, refused = self.candidate(proposal, base)
        if refused is not None:
            return text, None, refused
        key = digest(text)
        if key not in self.examined:
            self.examined[key] = states.examine(text, self.kernel)
        candidate = copy.deepcopy(self.examined[key])  # gated() fills it in
        return text, candidate, self.broken(base, candidate)

    def judge(self, step: Step, proposal: Proposal, base: State, best: State) -> Feedback | None:
        """None when the candidate is kept (and becomes the best state); otherwise why not."""
        text, candidate, refused = self.prepared(proposal, base)
        if refused is not None:
            return refused
        assert candidate is not None
        runs = self.gate.runs
        self.gated(candidate)
        step.gate_runs = self.gate.runs - runs
        step.cached = step.gate_runs > 0 and self.served(text)
        step.ms_after = candidate.ms
        result = candidate.gate
        assert result is not None  # gated() sets it
        failure = gate_failure(result)
        if failure is not None:
            return failure
        if not self.improves(candidate, best, result):
            if candidate.ms is None or best.ms is None:
                return no_timing(result, best.ms)
            speedup = best.ms / candidate.ms
            return Feedback(
                "slower",
                f"{candidate.ms:.4f} ms against the best {best.ms:.4f} ms ({speedup:.3f}×, "
                f"kept from {self.min_speedup:.2f}×)",
                {"ms": candidate.ms, "best_ms": best.ms, "speedup": speedup, "min_speedup": self.min_speedup},
            )
        self.best = candidate
        self.kept[digest(text)] = candidate
        return None

    def improves(self, candidate: State, best: State, result: GateResult) -> bool:
        if len(states.verify_errors(candidate)) < len(states.verify_errors(best)):
            return True  # fixes an invariant the best state breaks
        if best.gate is not None and not correct_and_compiled(best.gate):
            return correct_and_compiled(result)  # the best state fails the gate; this one passes
        return candidate.ms is not None and best.ms is not None and best.ms / candidate.ms >= self.min_speedup

    def candidate(self, proposal: Proposal, base: State) -> tuple[str, Feedback | None]:
        """The proposed source, or the feedback that says why there is none."""
        try:
            text = self._apply(proposal, base)
        except _Refused as refused:
            return base.source, refused.feedback
        if text == base.source:
            return text, Feedback("apply", "the proposal does not change the source", {})
        return text, None

    def _apply(self, proposal: Proposal, base: State) -> str:
        if proposal.kind == "skill":
            card = self.card(proposal.skill or "")
            if card is None or proposal.line is None:
                raise _Refused("apply", f"no library skill {proposal.skill!r} (or no anchor line)", {})
            outcome = plan(base.source, card, proposal.line, verify=False)  # verified below, with witnesses
            if outcome.text_after is None:
                name = (outcome.refused or "").split(":", 1)[0]
                data = {"skill": card.id, "line": proposal.line + 1, "precondition": name}
                raise _Refused("apply", f"{card.id} refused: {outcome.refused}", data)
            return outcome.text_after
        if proposal.kind == "diff":
            try:
                return apply_diff(base.source, proposal.diff or "")
            except DiffError as problem:
                raise _Refused("apply", f"the diff does not apply: {problem}", {}) from problem
        if proposal.kind == "source" and proposal.source:
            return proposal.source
        raise _Refused("apply", f"a {proposal.kind!r} proposal without its content", {})

    def broken(self, base: State, candidate: State) -> Feedback | None:
        """Feedback for errors the candidate has and its base does not: parse, check, then verify."""
        added = states.new_errors(base, candidate)
        if not added:
            return None
        first = added[0]
        stage = "parse" if first["code"].startswith("AR0") else "verify" if first["code"].startswith("AR3") else "check"
        where = f"{self.path}:" if self.path else "line "
        message = f"{where}{first['line']}: error[{first['code']}]: {first['message']}"
        data = {**first["data"], "code": first["code"], "line": first["line"], "message": first["message"]}
        data["errors"] = added[:NEW_ERRORS_SHOWN]
        return Feedback(stage, message, data)


class _Refused(Exception):
    def __init__(self, stage: str, message: str, data: dict[str, Any]):
        super().__init__(message)
        self.feedback = Feedback(stage, message, data)  # type: ignore[arg-type]
