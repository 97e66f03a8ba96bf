"""The trajectory log: one JSON object a line per step (plan.Step), appended as the loop goes, so a run that
is cancelled or killed still leaves every step it finished."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any

from argus.agent.plan import Feedback, Proposal, Step

TRAJECTORY_FORMAT = "argus-trajectory/1"


def proposal_json(proposal: Proposal) -> dict[str, Any]:
    data = {k: v for k, v in asdict(proposal).items() if v is not None and v != ""}
    data["key"] = proposal.key()
    return data


def feedback_json(feedback: Feedback | None) -> dict[str, Any] | None:
    return None if feedback is None else asdict(feedback)


def step_json(step: Step, **extra: Any) -> dict[str, Any]:
    record = {
        "format": TRAJECTORY_FORMAT,
        "index": step.index,
        "planner": step.planner,
        "proposal": proposal_json(step.proposal),
        "kept": step.kept,
        "reward": step.reward,
        "feedback": feedback_json(step.feedback),
        "ms_before": step.ms_before,
        "ms_after": step.ms_after,
        "gate_runs": step.gate_runs,
        "cached": step.cached,  # the gate result came from a shared store (still one gate run of the budget)
        "seconds": round(step.seconds, 3),
        "facts": step.facts,
        "context": step.context,  # the sites of the state the step starts from (argus.skills.context)
    }
    record.update(extra)
    return record


class TrajectoryLog:
    """Appends steps to a JSON-lines file (or an open text stream); each line is flushed when written."""

    def __init__(self, target: str | Path | IO[str]) -> None:
        self._owned = isinstance(target, (str, Path))
        if self._owned:
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        self._out: IO[str] = open(target, "a", encoding="utf-8") if self._owned else target  # noqa: SIM115

    def write(self, step: Step, **extra: Any) -> None:
        self._out.write(json.dumps(step_json(step, **extra), default=str) + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._owned:
            self._out.close()


def read_trajectory(path: str | Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
