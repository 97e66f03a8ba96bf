"""What a lineage walk records: every candidate it tried, the gate's verdict on each, the steps it accepted.

Rejected candidates stay in the record: they are the evidence for a skill's risks. Profile numbers exist only
where a GPU ran the gate; a CPU walk says so in `profiled` and every candidate's profile stage is skipped.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from argus.gate import GateResult
from argus.skills.context import SiteContext

RECORD_FORMAT = "argus.lineage/1"


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PreconditionCheck(Model):
    name: str
    holds: bool
    found: str = ""


class Candidate(Model):
    id: str = Field(description="`s<step>.c<candidate>`, unique in the lineage")
    transform: str
    title: str
    params: dict[str, int | float | str]
    anchor_line: int = Field(description="1-based line of the rewritten code in the text before")
    diff: str = Field(description="unified diff of the text before against the candidate")
    checks: list[PreconditionCheck] = Field(default_factory=list)
    verify_errors: int | None = Field(None, description="verifier errors in the kernel after the rewrite")
    gate: GateResult | None = Field(None, description="None when the candidate was refused before the gate")
    verdict: Literal["accepted", "rejected", "passed"] = Field(
        description="accepted: the step taken; rejected: failed a check or the gate; passed: passed the gate but "
        "another candidate was taken"
    )
    reason: str = Field("", description="why it was rejected: the failed check or gate stage and its message")
    slowdown: float | None = Field(None, description="kernel time after over before (GPU profile only)")
    seconds: float = Field(0.0, description="wall time spent on this candidate (check, verifier, gate)")
    context: list[SiteContext] | None = Field(
        None,
        description="the sites of the candidate's text, after the rewrite (argus.skills.context), with the compile "
        "facts of its gate; None in records written before contexts were recorded, or when the text does not check",
    )


class KernelFactsRecord(Model):
    """The facts preconditions are stated over (argus.skills.facts), for the kernel's text before a step."""

    constants: dict[str, int | float | str] = Field(description="tile constants; a string one names a precision")
    policy: dict[str, int | float]
    tune: dict[str, list[int | float | str]]
    divisible: list[list[str]] = Field(description="[S, B] pairs with `requires S % B == 0`")
    bounded: list[list[str]] = Field(description="[N, B] pairs with `requires N <= B`")
    stage_bytes: int | None = Field(description="shared memory of one pipeline stage of the dot operands")
    stages: int
    dot_in_loop: bool
    loaded: list[str]
    stored: list[str]
    verify_errors: int | None = None


class Step(Model):
    index: int
    facts: KernelFactsRecord | None = None
    text_before: str
    text_after: str | None = Field(None, description="the accepted candidate's text; None for the last step")
    accepted: str | None = Field(None, description="id of the accepted candidate")
    candidates: list[Candidate] = Field(default_factory=list)
    context: list[SiteContext] | None = Field(
        None,
        description="the sites of text_before (argus.skills.context), with the compile facts of the gate run on "
        "that text (the baseline, or the step before's accepted candidate); None in older records",
    )


class Lineage(Model):
    format: str = RECORD_FORMAT
    id: str = Field(description="`<file stem>.<kernel>`, e.g. gemm.gemm")
    expert: str = Field(description="path of the expert file, relative to the repository")
    kernel: str
    device: str = Field(description="what gated the candidates: cpu, or the GPU's name")
    profiled: bool = Field(description="whether candidates were profiled (only on a GPU)")
    rule: str = Field(description="the acceptance rule the walk used, in words")
    baseline: GateResult | None = Field(None, description="the expert itself through the same gate")
    steps: list[Step] = Field(default_factory=list)
    final_text: str = ""
    seconds: float = 0.0
    note: str = ""

    def candidate(self, candidate_id: str) -> Candidate | None:
        return next((c for s in self.steps for c in s.candidates if c.id == candidate_id), None)
