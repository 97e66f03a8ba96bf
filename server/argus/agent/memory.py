"""In-context memory: every step of every refinement in a workspace, one JSON line each, in
`<workspace>/.argus/memory.jsonl`. The LLM planner puts the most similar past successes and failures into its
prompt; the search planner re-ranks skills by the rewards they earned here.

Similarity is the number of facts two states share (a fact is a string such as `policy num_warps=8` or
`dot_in_loop`), so a record is useful on another kernel of the same shape. A line that does not parse (a
crash mid-write, a hand edit) is skipped with a warning: memory is advice, never a reason to stop.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from argus.agent.plan import Step

logger = logging.getLogger(__name__)

MEMORY_FORMAT = "argus-memory/1"
MESSAGE_CHARS = 300


def workspace_of(path: str | Path) -> Path:
    """The nearest folder above `path` holding .git or .argus; else the file's own folder."""
    start = Path(path).resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists() or (candidate / ".argus").is_dir():
            return candidate
    return folder


def facts_signature(facts: dict[str, Any]) -> list[str]:
    """The facts of a state (states.facts_json) as comparable strings, sorted."""
    found: set[str] = set()
    if "dot_in_loop" in facts:
        found.add("dot_in_loop" if facts["dot_in_loop"] else "row_per_program")
    for group in ("constants", "policy"):
        for name, value in (facts.get(group) or {}).items():
            found.add(f"{group} {name}={value}")
    for group in ("divisible", "bounded"):
        found.update(f"requires {c}" for c in facts.get(group) or ())
    found.update(f"loads {t}" for t in facts.get("loaded") or ())
    found.update(f"stores {t}" for t in facts.get("stored") or ())
    if facts.get("stages") is not None:
        found.add(f"stages={facts['stages']}")
    if facts.get("verify_errors"):
        found.add("verifier errors")
    return sorted(found)


def step_record(step: Step, kernel_digest: str) -> dict[str, Any]:
    feedback = step.feedback
    return {
        "format": MEMORY_FORMAT,
        "kernel": kernel_digest,
        "planner": step.planner,
        "proposal": step.proposal.kind,
        "skill": step.proposal.skill,
        "line": step.proposal.line,
        "facts": facts_signature(step.facts),
        "reward": step.reward,
        "kept": step.kept,
        "stage": None if feedback is None else feedback.stage,
        "message": "" if feedback is None else feedback.message[:MESSAGE_CHARS],
    }


class Memory:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    @classmethod
    def for_file(cls, path: str | Path) -> Memory:
        return cls(workspace_of(path) / ".argus" / "memory.jsonl")

    def record(self, step: Step, kernel_digest: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(step_record(step, kernel_digest)) + "\n")

    def records(self) -> list[dict[str, Any]]:
        """Every well-formed record, oldest first."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError as problem:
            logger.warning("memory %s cannot be read: %s", self.path, problem)
            return []
        return list(_parsed(text.splitlines(), self.path))

    def similar(self, facts: dict[str, Any], k: int = 3) -> tuple[list[dict], list[dict]]:
        """The `k` past successes (kept) and `k` failures (not kept) sharing the most facts with `facts`;
        among equally similar ones the most recent first."""
        mine = set(facts_signature(facts))
        records = self.records()
        ranked = sorted(
            range(len(records)), key=lambda i: (-len(mine & set(records[i]["facts"])), -i)
        )  # fmt: skip
        successes = [records[i] for i in ranked if records[i]["kept"]][:k]
        failures = [records[i] for i in ranked if not records[i]["kept"]][:k]
        return successes, failures

    def skill_stats(self) -> dict[str, tuple[float, int]]:
        """Per skill id: the mean reward it earned here and how many steps that mean is over."""
        sums: dict[str, list[float]] = {}
        for record in self.records():
            if record.get("skill"):
                sums.setdefault(record["skill"], []).append(float(record["reward"]))
        return {skill: (sum(rewards) / len(rewards), len(rewards)) for skill, rewards in sums.items()}


def _parsed(lines: Iterable[str], path: Path) -> Iterable[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("facts"), list):
                raise ValueError("not a memory record")
            float(record["reward"])
            record["kept"] = bool(record.get("kept"))
        except (ValueError, KeyError, TypeError) as problem:
            logger.warning("%s:%d: skipped a corrupt memory line (%s)", path, number, problem)
            continue
        yield record
