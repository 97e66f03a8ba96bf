"""What a card predicts at a site: the effect measured in a matching situation, or why it has no number there.

The rule (docs/skills.md, "What a card predicts"):
1. A card with no GPU measurement, or one that is needed for correctness, predicts nothing.
2. An application beyond what the card measured (a setting moved past the expert's value; a card measured only
   where kernels spilled, at a kernel that spills none) predicts nothing.
3. A card from an older library, whose evidence records no situation, claims its median everywhere, as it did.
4. Otherwise the measurements that agree with the site on every scope fact both know are the match. None: the
   card says "not measured for <fact> = <value>" (the first fact outside its scope, or the combination) and
   predicts nothing (`covered` is False).
5. Among the match, a condition fact whose value at the site some measurements share narrows the match to
   them. The prediction is the median over lineages of the narrowed match. At a hurting value of a condition,
   or where the match's median is a loss, `hurts` says so: the light bulb disables the action, the search
   proposes it last.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from argus.skills.cards import SPILL_MARGIN, Card
from argus.skills.situation import (
    CONDITIONS,
    HURTS,
    LABELS,
    SCOPE,
    Measurement,
    Situation,
    agrees,
    describe,
    lineage_median,
    measurements,
    outside,
)


@dataclass(frozen=True, slots=True)
class Prediction:
    effect: float | None  # the predicted speedup; None: no measurement speaks for this site
    covered: bool  # a measurement agrees with the site on its scope (always, for a card without situations)
    why: str  # the effect with its situation, or why there is none, in words
    hurts: str | None = None  # the evidence says the skill makes this kernel slower
    samples: int = 0
    lineages: int = 0

    def to_json(self) -> dict:
        return {
            "effect": None if self.effect is None else round(self.effect, 4),
            "covered": self.covered,
            "why": self.why,
            "hurts": self.hurts,
            "samples": self.samples,
            "lineages": self.lineages,
        }


def predict(
    card: Card, facts: Situation | None = None, params: dict | None = None, spill_bytes: int | None = None
) -> Prediction:
    if card.effect_status == "needed for correctness":
        return Prediction(
            None, False, "needed for correctness: without it the kernel computed wrong values on the GPU (no time "
            "measured)",
        )  # fmt: skip
    if not card.effect:
        return Prediction(None, False, "effect not measured yet (CPU lineages only)")
    beyond = beyond_evidence(card, params, spill_bytes)
    if beyond is not None:
        return Prediction(None, False, f"effect not measured here: {beyond}")
    measured = measurements(card.evidence)
    if not card.scope or facts is None or not any(m.facts for m in measured):
        return everywhere(card)
    away = outside(facts, card.scope)
    if away is not None:
        return Prediction(None, False, f"not measured for {away}")
    match = [m for m in measured if m.facts and agrees(m.facts, facts, SCOPE)]
    if not match:
        return Prediction(None, False, f"not measured for {describe(facts, SCOPE)} together")
    hurts = None
    for fact in CONDITIONS:
        value = facts.get(fact)
        narrowed = [m for m in match if value is not None and m.facts.get(fact) == value]
        if narrowed and len(narrowed) < len(match):
            match = narrowed
            condition = next((c for c in card.conditions if c.fact == fact), None)
            if hurts is None and condition is not None and value in condition.hurts:
                hurts = f"hurt where {LABELS[fact]} = {value}: {condition.note}"
    effect = lineage_median(match)
    lineages = len({m.lineage for m in match})
    if hurts is None and effect <= HURTS:
        hurts = f"measured slower in this situation ({effect:.2f}×)"
    plural = "s" if lineages > 1 else ""
    why = f"{effect:.2f}× on {describe(common(match))} ({len(match)} measured, {lineages} lineage{plural})"
    return Prediction(effect, True, why, hurts, len(match), lineages)


def number(value) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def beyond_evidence(card: Card, params: dict | None, spill_bytes: int | None = None) -> str | None:
    """Why the card's measured effect does not speak for this application: it moves a setting past the value
    the expert had, and every measurement of the card comes from walking back down from that value; or every
    measurement came where the kernel without the skill spilled registers, and this one (`spill_bytes`, from
    its last GPU-target compile, when known) spills none."""
    expert, to = number(card.parameters.get("expert_value")), number((params or {}).get("to"))
    if expert is not None and to is not None and to > expert:
        setting = card.parameters.get("setting", "the setting")
        return f"measured up to {setting} = {card.parameters['expert_value']}, this goes to {params['to']}"
    if without_its_spills(card, spill_bytes):
        spilled = spill_range(card)
        return f"measured where the kernel without it spilled registers ({spilled}); this one spills {spill_bytes}"
    return None


def without_its_spills(card: Card, spill_bytes: int | None) -> bool:
    """Every measurement of the card came where the kernel spilled registers, and this one is known to spill
    none: the mechanism its gains came from is absent."""
    return card.effect_needs_spills and spill_bytes is not None and spill_bytes < SPILL_MARGIN


def spill_range(card: Card) -> str:
    spilled = sorted(e.spill_bytes for e in card.evidence if e.spill_bytes)
    return f"{spilled[0]}–{spilled[-1]} bytes" if spilled else "bytes unknown"


def common(items: list[Measurement]) -> Situation:
    """The facts every measurement shares."""
    shared: Situation = {}
    for fact in CONDITIONS:
        values = {m.facts.get(fact) for m in items}
        if len(values) == 1:
            shared[fact] = values.pop()
    return shared


def everywhere(card: Card) -> Prediction:
    """An older card's claim: the median of its per-lineage medians, wherever it applies."""
    medians = sorted(e.median for e in card.effect)
    middle = medians[len(medians) // 2]
    gpus = sorted({e.gpu for e in card.effect})
    where = " where the kernel spills registers" if card.effect_needs_spills else ""
    why = f"{middle:.2f}× median over {len(card.effect)} lineages ({', '.join(gpus)}){where}"
    effect = statistics.median(e.median for e in card.effect)
    return Prediction(effect, True, why, None, sum(e.samples for e in card.effect), len(card.effect))
