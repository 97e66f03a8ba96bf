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


Value = str | int | bool  # a situation fact's value


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
    facts: dict[str, Value | None] | None = Field(
        None, description="the situation it failed in (argus.skills.situation): the kernel without the skill"
    )


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
    facts: dict[str, Value | None] | None = Field(
        None,
        description="the situation the skill was measured in (argus.skills.situation): the facts of the kernel "
        "it applies to, the text without it; None where the record has no context",
    )
    facts_with: dict[str, Value | None] | None = Field(
        None, description="the same for the text with the skill: what applying it changed"
    )


class Condition(Model):
    """Where the measurements that agree on the scope split by one fact into gains and losses."""

    fact: str = Field(description="a condition fact of argus.skills.situation (num_warps, spills, operands, ...)")
    helps: list[Value] = Field(description="values where the skill's median speedup was at least 1.02")
    hurts: list[Value] = Field(description="values where it was at most 0.98: the skill made the kernel slower")
    medians: dict[str, float] = Field(description="the median speedup (over lineages) at each value seen")
    evidence: list[str] = Field(description="`<lineage>#<candidate>` of the measurements at the hurting values")
    note: str = Field(description="the condition in words")


class Change(Model):
    """A fact that applying the skill changed, as measured: the situation without it against with it."""

    fact: str
    before: Value | None
    after: Value | None
    samples: int = Field(description="evidence items in which applying the skill made this change")


class Link(Model):
    """A requirement or conflict: the skill gains only where `fact` is `value` (requires) or loses there
    (conflicts); `skill` is the card whose forward makes the fact so, when one does."""

    skill: str | None
    fact: str
    value: Value
    note: str


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
    scope: dict[str, list[Value]] = Field(
        default_factory=dict,
        description="per scope fact (argus.skills.situation.SCOPE), the values its measurements cover; the card "
        "claims an effect only where a measurement agrees with the site on all of them",
    )
    conditions: list[Condition] = Field(
        default_factory=list, description="facts whose values split its measurements into gains and losses"
    )
    provides: list[Change] = Field(default_factory=list, description="the facts applying it changed")
    requires: list[Link] = Field(
        default_factory=list, description="fact values (and the skills that provide them) its gains came with"
    )
    conflicts: list[Link] = Field(
        default_factory=list, description="fact values (and the skills that provide them) where it lost"
    )
    risks: list[Risk] = Field(default_factory=list)
    evidence: list[Evidence]


def schema() -> dict:
    return Card.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(schema(), indent=2))
