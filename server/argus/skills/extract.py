"""Skill cards from lineage records. Every candidate that passed the gate (accepted or not) is evidence that
the forward transform is sound where its rewrite went; every rejected one is a risk of that skill; a profiled
candidate's slowdown is the skill's measured speedup on that workload and GPU. A candidate the CPU passed but
the GPU's gate failed (f16 accumulation is close enough at K = 96, wrong at K = 4096) is both: evidence of the
site, and a risk that says the skill is load-bearing there.

One card per transform and what distinguishes its uses: the setting it changes (tile BM and BK are different
skills; a precision constant's name is not, so one precision card covers PREC and a literal) and the kind of
kernel (`dot`: a loop feeds a dot; `row`: one row per program), since the same knob means something else in a
GEMM and in a softmax.
"""

from __future__ import annotations

import statistics
from collections import defaultdict

from argus.gate.result import GateResult
from argus.skills.cards import SPILL_MARGIN, Card, Change, Condition, Effect, Evidence, Link, Precondition, Risk
from argus.skills.context import SiteContext
from argus.skills.document import Document
from argus.skills.lineage.record import Candidate, Lineage
from argus.skills.preconditions import PRECONDITIONS
from argus.skills.situation import (
    CONDITIONS,
    HELPS,
    HURTS,
    LABELS,
    Measurement,
    Situation,
    lineage_median,
    measurements,
    scope_of,
    sites_situation,
)
from argus.skills.transforms import TRANSFORMS

UNMEASURED = "not measured: the lineages behind this card ran on the CPU (compile and correct, no profile)"


def card_key(lineage: Lineage, candidate: Candidate, kind: str) -> str:
    setting = candidate.params.get("setting") if TRANSFORMS[candidate.transform].setting_is_skill else None
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
                    entry["evidence"].append(evidence(lineage, step.index, candidate, before, step.context))
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
    return link(cards)


def spills(lineage: Lineage, gate: GateResult | None) -> int | None:
    """Spill stores of the profiled lineage's GPU compile; None for a CPU walk, whose sm_90 compile may be another
    Triton version's (the development machine's, not the GPU machine's)."""
    if not lineage.profiled or gate is None or gate.compile.facts is None:
        return None
    return gate.compile.facts.spill_stores_bytes


def kernel_facts(sites: list[SiteContext] | None) -> Situation | None:
    """The situation of a text's kernel (its sites: the kernel's first, carrying the principal dot's facts)."""
    return sites_situation(sites)


def evidence(
    lineage: Lineage, step: int, candidate: Candidate, before: GateResult | None, sites_before: list | None = None
) -> Evidence:
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
        facts=kernel_facts(candidate.context),
        facts_with=kernel_facts(sites_before),
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
        facts=kernel_facts(candidate.context),
    )


def card(card_id: str, entry: dict) -> Card:
    transform = TRANSFORMS[entry["transform"]]
    params = {}
    for name, values in entry["params"].items():
        if name == "setting" and not transform.setting_is_skill:
            continue
        if name in ("setting", "name", "acc"):
            params[name] = sorted(values, key=str)[0]
        elif name == "from":
            params["expert_value"] = sorted(values, key=str)[-1]
    effects = effects_of(entry["evidence"])
    status, note = effect_status(effects, entry["evidence"])
    measured = measurements(entry["evidence"])
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
        scope=scope_of(measured),
        conditions=conditions(measured),
        provides=provides(entry["evidence"]),
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


# ---- situations: scope, conditions, provides, requires and conflicts ------------------------------------------


def conditions(items: list[Measurement]) -> list[Condition]:
    """Per condition fact with at least two values among the measurements: where the median over lineages at one
    value is a gain (≥ HELPS) and at another a loss (≤ HURTS), that split is a candidate condition of benefit. Of
    the candidates only those that explain the most measurements are kept (`agreement`): facts move together in
    a walk, and a split that another fact explains better is a confound, not a condition. BM's f16 measurements
    mixed gains at 8 warps with losses at 4, so "hurts on f16" is left out while "hurts with 4 warps" stays;
    two facts that always moved together (warps and stages in one step) explain as much and both stay."""
    found = []
    for fact in CONDITIONS:
        groups: dict = defaultdict(list)
        for m in items:
            if m.facts.get(fact) is not None:
                groups[m.facts[fact]].append(m)
        if len(groups) < 2:
            continue
        medians = {value: lineage_median(group) for value, group in groups.items()}
        helps = sorted((v for v, x in medians.items() if x >= HELPS), key=str)
        hurts = sorted((v for v, x in medians.items() if x <= HURTS), key=str)
        if not helps or not hurts:
            continue
        words = LABELS[fact]
        note = "; ".join(
            [f"helps with {words} = {v} ({medians[v]:.2f}×)" for v in helps]
            + [f"hurts with {words} = {v} ({medians[v]:.2f}×)" for v in hurts]
        )
        condition = Condition(
            fact=fact,
            helps=helps,
            hurts=hurts,
            medians={str(v): round(x, 4) for v, x in sorted(medians.items(), key=lambda kv: str(kv[0]))},
            evidence=[f"{m.lineage}#{m.candidate}" for v in hurts for m in groups[v]],
            note=note,
        )
        found.append((agreement(groups, medians), condition))
    best = max((score for score, _ in found), default=0.0)
    return [condition for score, condition in found if score >= best - 1e-9]


def agreement(groups: dict, medians: dict) -> float:
    """The share of the measurements that are a gain or a loss whose sign is their group's: 1.0 when the fact's
    values alone say which measurements helped and which hurt."""
    decided = [(m.speedup, medians[v]) for v, group in groups.items() for m in group if sign(m.speedup)]
    return sum(sign(x) == sign(median) for x, median in decided) / len(decided) if decided else 0.0


def sign(speedup: float) -> int:
    return 1 if speedup >= HELPS else -1 if speedup <= HURTS else 0


def provides(evidence: list[Evidence]) -> list[Change]:
    """The condition facts that differ between the text without the skill and with it, per change, counted."""
    counts: dict[tuple, int] = defaultdict(int)
    for e in evidence:
        if e.facts is None or e.facts_with is None:
            continue
        for fact in CONDITIONS:
            before, after = e.facts.get(fact), e.facts_with.get(fact)
            if before is not None and after is not None and before != after:
                counts[(fact, before, after)] += 1
    return [
        Change(fact=fact, before=before, after=after, samples=n)
        for (fact, before, after), n in sorted(counts.items(), key=lambda kv: (kv[0][0], str(kv[0][1]), str(kv[0][2])))
    ]


def link(cards: list[Card]) -> list[Card]:
    """Requires and conflicts from the conditions: a card that helps where a fact is g and hurts where it is h
    requires g, and the cards whose forward moves that fact from h to g provide it; a card whose forward moves
    it from g to h conflicts with it. What the walk backward reveals: BM 128 lost 3× once num_warps went 8 → 4."""
    for card in cards:
        requires, conflicts = [], []
        for condition in card.conditions:
            for good in condition.helps:
                for bad in condition.hurts:
                    gain, loss = condition.medians[str(good)], condition.medians[str(bad)]
                    note = f"{LABELS[condition.fact]} = {good}: {gain:.2f}×, = {bad}: {loss:.2f}×"
                    makers = movers(cards, card, condition.fact, bad, good)
                    requires += [Link(skill=s, fact=condition.fact, value=good, note=note) for s in makers or [None]]
                    conflicts += [
                        Link(skill=s, fact=condition.fact, value=bad, note=note)
                        for s in movers(cards, card, condition.fact, good, bad)
                    ]
        card.requires, card.conflicts = unique(requires), unique(conflicts)
    return cards


def movers(cards: list[Card], this: Card, fact: str, before, after) -> list[str]:
    def moves(other: Card) -> bool:
        return any(c.fact == fact and c.before == before and c.after == after for c in other.provides)

    kind = this.id.rsplit(".", 1)[-1]  # a row kernel's warps say nothing of a dot kernel's
    return [other.id for other in cards if other.id != this.id and other.id.endswith("." + kind) and moves(other)]


def unique(links: list[Link]) -> list[Link]:
    seen, out = set(), []
    for item in links:
        key = (item.skill, item.fact, item.value)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out
