"""Skill cards: what a skill does, where it applies, when it is sound, what it gained and what went wrong,
each claim backed by lineage evidence. Stored as YAML in skills/library/; the JSON schema is in docs/skills.md
(`python -m argus.skills.cards` prints it)."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CARD_FORMAT = "argus.skill/1"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Precondition(Model):
    name: str = Field(description="a predicate of argus.skills.preconditions")
    meaning: str


# Spill stores (bytes, ptxas) that make a difference: below this a kernel "spills none" for a card's context.
SPILL_MARGIN = 256


class Effect(Model):
    workload: str = Field(description="the lineage the measurement comes from, e.g. gemm.gemm")
    gpu: str = Field(description="the GPU that profiled it, as torch names it")
    median: float = Field(description="speedup of applying the skill: kernel time without it over with it")
    min: float
    max: float
    samples: int = Field(description="candidates measured (one per lineage step or passing candidate)")


class Risk(Model):
    what: str = Field(description="what went wrong, in one line")
    precondition: str | None = Field(None, description="the precondition that failed, when one did")
    stage: str | None = Field(None, description="the gate stage that failed: compile, correct, profile")
    status: str | None = Field(None, description="that stage's status: failed or error")
    message: str = ""
    evidence: str = Field(description="`<lineage id>#<candidate id>`")


class Evidence(Model):
    lineage: str
    step: int
    candidate: str
    verdict: Literal["accepted", "passed"]
    device: str
    profiled: bool
    slowdown: float | None = Field(None, description="kernel time after the inverse over before (GPU only)")
    failed_stage: str | None = Field(
        None, description="the GPU gate stage the text without the skill failed, though the CPU's gate passed it"
    )
    spill_bytes: int | None = Field(
        None, description="register spill stores of the text without the skill (ptxas, from its GPU compile)"
    )
    spill_bytes_with: int | None = Field(None, description="the same for the text with the skill")


class Card(Model):
    format: str = CARD_FORMAT
    id: str = Field(description="stable identifier, e.g. pipelining.num_stages.dot")
    title: str
    intent: str
    anchor: str = Field(description="the code shape it applies to")
    transform: str = Field(description="the transform of argus.skills.transforms that applies it")
    parameters: dict[str, int | float | str] = Field(
        default_factory=dict, description="what the transform is called with (and the values the lineages saw)"
    )
    preconditions: list[Precondition]
    effect: list[Effect] = Field(default_factory=list)
    effect_status: Literal["measured", "needed for correctness", "not measured"] = Field(
        description="`not measured` while no lineage of this skill was profiled on a GPU; `needed for correctness` "
        "when the GPU measured no time because every kernel without the skill computed wrong values there; effect "
        "is then empty and effect_note says where"
    )
    effect_note: str = ""
    effect_needs_spills: bool = Field(
        False,
        description="every measured speedup came where the kernel without the skill spilled registers (at least "
        "SPILL_MARGIN bytes more than with it): the effect is predicted only for a kernel that spills",
    )
    risks: list[Risk] = Field(default_factory=list)
    evidence: list[Evidence]


def schema() -> dict:
    return Card.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(schema(), indent=2))
