"""Which library skills apply at a place in a document, and which do not with the precondition that fails.

A card matches a line when its transform has a site there: the rewrite's anchor covers the line, or, for a
skill that changes the whole kernel (a `tile`/`policy` setting, the program order), the line is the kernel's
header, its setting's line, or the header of a loop that feeds a dot. A card learned on one kind of kernel
(`dot`: a loop feeds a dot; `row`: one row per program) is offered only on that kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ast
from argus.skills.cards import SPILL_MARGIN, Card
from argus.skills.context import site_contexts
from argus.skills.document import Document
from argus.skills.facts import walk
from argus.skills.situation import Situation, situation
from argus.skills.transforms import TRANSFORMS
from argus.skills.transforms.base import Application, Check

KERNEL_WIDE = {"pipelining", "num_warps", "tile_size", "tma", "grouped_order"}
FORWARD_PARAMS = ("setting", "name")  # card parameters that select the site; values are the transform's step


@dataclass(frozen=True, slots=True)
class Match:
    card: Card
    application: Application
    facts: Situation | None = field(default=None, compare=False)  # the kernel's situation (no compile at hand)

    def prediction(self, spill_bytes: int | None = None):
        from argus.skills.predict import predict

        facts = self.facts
        if facts is not None and facts.get("spills") is None and spill_bytes is not None:
            facts = facts | {"spills": situation_spills(spill_bytes)}
        return predict(self.card, facts, self.application.params, spill_bytes)

    @property
    def applicable(self) -> bool:
        return self.application.applicable

    @property
    def failed(self) -> Check | None:
        return self.application.failed

    def to_json(self) -> dict:
        failed = self.failed
        return {
            "skill": self.card.id,
            "title": self.application.title,
            "kernel": self.application.kernel,
            "line": self.application.anchor.line + 1,
            "applicable": self.applicable,
            "failed_precondition": None if failed is None else {"name": failed.name, "found": failed.found},
            "expected_effect": self.prediction().why,
            "prediction": self.prediction().to_json(),
            "situation": self.facts,
            "params": self.application.params,
        }


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
    if card.effect_needs_spills and spill_bytes is not None and spill_bytes < SPILL_MARGIN:
        spilled = spill_range(card)
        return f"measured where the kernel without it spilled registers ({spilled}); this one spills {spill_bytes}"
    return None


def spill_range(card: Card) -> str:
    spilled = sorted(e.spill_bytes for e in card.evidence if e.spill_bytes)
    return f"{spilled[0]}–{spilled[-1]} bytes" if spilled else "bytes unknown"


def expected_effect(
    card: Card, params: dict | None = None, spill_bytes: int | None = None, facts: Situation | None = None
) -> str:
    """The card's prediction in words (argus.skills.predict): its effect where it was measured, or why none."""
    from argus.skills.predict import predict

    return predict(card, facts, params, spill_bytes).why


def situation_spills(spill_bytes: int) -> str:
    return "spills" if spill_bytes >= SPILL_MARGIN else "none"


def kernel_situation(doc: Document, kernel: str) -> Situation | None:
    """The situation of a kernel's own site, without a compile (argus.skills.situation)."""
    try:
        sites = site_contexts(doc, kernel)
    except Exception:  # a context it cannot compute (an unusual launch) leaves the prediction unsituated
        return None
    return situation(sites[0]) if sites else None


def kind_of(card: Card) -> str:
    return card.id.rsplit(".", 1)[-1]


def loop_lines(kernel: ast.Kernel) -> set[int]:
    lines = set()
    for loop in (n for n in walk(kernel.body) if isinstance(n, ast.For)):
        if any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dot" for n in walk(loop.body)
        ):
            lines.add(loop.span.line)
    return lines


def at_line(app: Application, kernel: ast.Kernel, line: int) -> bool:
    if app.anchor.line <= line <= app.anchor.end_line:
        return True
    return app.transform in KERNEL_WIDE and (line == kernel.span.line or line in loop_lines(kernel))


def match(doc: Document, line: int, cards: list[Card]) -> list[Match]:
    kernel = doc.kernel_at(line)
    if kernel is None:
        return []
    kind = "dot" if doc.facts[kernel.name].dot_in_loop else "row"
    facts = kernel_situation(doc, kernel.name)
    found = []
    for card in cards:
        transform = TRANSFORMS.get(card.transform)
        if transform is None or kind_of(card) != kind:
            continue
        params = {k: v for k, v in card.parameters.items() if k in FORWARD_PARAMS}

        def here(k: ast.Kernel, app: Application) -> bool:
            return k.name == kernel.name and at_line(app, kernel, line)

        found += [Match(card, app, facts) for app in transform.forward(doc, params, where=here)]
    return found
