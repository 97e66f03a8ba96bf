"""Skill cards from lineage records. Every candidate that passed the gate (accepted or not) is evidence that
the forward transform is sound where its rewrite went; every rejected one is a risk of that skill; a profiled
candidate's slowdown is the skill's measured speedup on that workload and GPU. A candidate the CPU passed but
the GPU's gate failed (f16 accumulation is close enough at K = 96, wrong at K = 4096) is both: evidence of the
site, and a risk that says the skill is load-bearing there.

One card per transform and what distinguishes its uses: the setting it changes (tile BM and BK are different
skills) and the kind of kernel (`dot`: a loop feeds a dot; `row`: one row per program), since the same knob
means something else in a GEMM and in a softmax.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from argus.gate.result import GateResult
from argus.skills.cards import SPILL_MARGIN, Card, Effect, Evidence, Precondition, Risk
from argus.skills.document import Document
from argus.skills.lineage.record import Candidate, Lineage
from argus.skills.preconditions import PRECONDITIONS
from argus.skills.transforms import TRANSFORMS

UNMEASURED = "not measured: the lineages behind this card ran on the CPU (compile and correct, no profile)"


def card_key(lineage: Lineage, candidate: Candidate, kind: str) -> str:
    setting = candidate.params.get("setting")
    parts = [candidate.transform] + ([str(setting)] if setting and setting != candidate.transform else []) + [kind]
    return ".".join(parts)


def kernel_kind(text: str, kernel: str) -> str:
    facts = Document.parse(text).facts.get(kernel)
    return "dot" if facts is not None and facts.dot_in_loop else "row"


def extract(lineages: list[Lineage]) -> list[Card]:
    found: dict[str, dict] = defaultdict(lambda: {"evidence": [], "risks": [], "params": defaultdict(set), "kind": ""})
    for lineage in lineages:
        before = lineage.baseline  # the gate result of the step's text before: the expert, then each accepted text
        for step in lineage.steps:
            kind = kernel_kind(step.text_before, lineage.kernel)
            for candidate in step.candidates:
                entry = found[card_key(lineage, candidate, kind)]
                entry["transform"], entry["kind"] = candidate.transform, kind
                for name, value in candidate.params.items():
                    entry["params"][name].add(value)
                if candidate.verdict in ("accepted", "passed"):
                    entry["evidence"].append(evidence(lineage, step.index, candidate, before))
                    if entry["evidence"][-1].failed_stage:
                        entry["risks"].append(risk(lineage, candidate))
                else:
                    entry["risks"].append(risk(lineage, candidate))
            accepted = next((c for c in step.candidates if c.verdict == "accepted"), None)
            before = accepted.gate if accepted is not None else None
    cards = []
    for card_id, entry in sorted(found.items()):
        if entry["evidence"]:  # a skill nothing vouches for is not a card; its failures stay in the records
            cards.append(card(card_id, entry))
    return cards


def spills(lineage: Lineage, gate: GateResult | None) -> int | None:
    """Spill stores of the profiled lineage's GPU compile; None for a CPU walk, whose sm_90 compile may be another
    Triton version's (the development machine's, not the GPU machine's)."""
    if not lineage.profiled or gate is None or gate.compile.facts is None:
        return None
    return gate.compile.facts.spill_stores_bytes


def evidence(lineage: Lineage, step: int, candidate: Candidate, before: GateResult | None) -> Evidence:
    return Evidence(
        lineage=lineage.id,
        step=step,
        candidate=candidate.id,
        verdict=candidate.verdict,
        device=lineage.device,
        profiled=lineage.profiled,
        slowdown=candidate.slowdown,
        failed_stage=gpu_failure(lineage, candidate),
        spill_bytes=spills(lineage, candidate.gate),
        spill_bytes_with=spills(lineage, before),
    )


def gpu_failure(lineage: Lineage, candidate: Candidate) -> str | None:
    """The stage of a GPU gate run that failed a text the CPU walk passed."""
    if not lineage.profiled or candidate.gate is None:
        return None
    return next((name for name, r in candidate.gate.stages.items() if r.status in ("failed", "error")), None)


def risk(lineage: Lineage, candidate: Candidate) -> Risk:
    failed = next((c for c in candidate.checks if not c.holds), None)
    stage = status = None
    message = candidate.reason
    if candidate.gate is not None:
        for name, result in candidate.gate.stages.items():
            if result.status in ("failed", "error"):
                stage, status, message = name, str(result.status), result.message
                break
    # the walk removes optimizations: a rejected inverse means this skill was load-bearing in that kernel (the
    # kernel without it did not check, verify, compile or compute the right values)
    failure = f"{failed.name} failed" if failed else f"the gate's {stage or 'run'} failed"
    if not failed and lineage.profiled and candidate.verdict != "rejected":
        failure += f" on the {lineage.device} (the CPU's gate passed it)"
    what = f"without it ({candidate.title}) in {lineage.kernel}: {failure}"
    return Risk(
        what=what,
        precondition=failed.name if failed else None,
        stage=stage,
        status=status,
        message=message[:400],
        evidence=f"{lineage.id}#{candidate.id}",
    )


def card(card_id: str, entry: dict) -> Card:
    transform = TRANSFORMS[entry["transform"]]
    params = {}
    for name, values in entry["params"].items():
        if name in ("setting", "name", "acc"):
            params[name] = sorted(values, key=str)[0]
        elif name == "from":
            params["expert_value"] = sorted(values, key=str)[-1]
    effects = effects_of(entry["evidence"])
    status, note = effect_status(effects, entry["evidence"])
    kind = "a loop feeds a dot" if entry["kind"] == "dot" else "one row per program"
    return Card(
        id=card_id,
        title=transform.title + (f" ({params['setting']})" if "setting" in params else ""),
        intent=transform.intent,
        anchor=f"{transform.anchor}; kernels where {kind}",
        transform=transform.name,
        parameters={k: v for k, v in params.items() if k != "expert_value"}
        | ({"expert_value": params["expert_value"]} if "expert_value" in params else {}),
        preconditions=[Precondition(name=n, meaning=PRECONDITIONS[n]) for n in transform.preconditions],
        effect=effects,
        effect_status=status,
        effect_note=note,
        effect_needs_spills=needs_spills(entry["evidence"]),
        risks=entry["risks"],
        evidence=entry["evidence"],
    )


def needs_spills(evidence: list[Evidence]) -> bool:
    """Whether every measured speedup of the card came where taking the skill away made the kernel spill."""
    measured = [e for e in evidence if e.profiled and e.slowdown]
    return bool(measured) and all(
        e.spill_bytes is not None and e.spill_bytes - (e.spill_bytes_with or 0) >= SPILL_MARGIN for e in measured
    )


def effect_status(effects: list[Effect], evidence: list[Evidence]) -> tuple[str, str]:
    if effects:
        return "measured", ""
    wrong = sorted({f"{e.lineage} ({e.device})" for e in evidence if e.profiled and e.failed_stage == "correct"})
    if wrong:
        return "needed for correctness", (
            "no time measured: without it the kernel computed wrong values on the GPU in "
            + ", ".join(wrong)
            + "; the risks give the first mismatching element"
        )
    return "not measured", UNMEASURED


def effects_of(evidence: list[Evidence]) -> list[Effect]:
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for item in evidence:
        if item.profiled and item.slowdown:
            groups[(item.lineage, item.device)].append(item.slowdown)
    return [
        Effect(workload=w, gpu=g, median=round(statistics.median(v), 4), min=min(v), max=max(v), samples=len(v))
        for (w, g), v in sorted(groups.items())
    ]
