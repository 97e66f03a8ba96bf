"""Which library skills apply at a place in a document, and which do not with the precondition that fails.

A card matches a line when its transform has a site there: the rewrite's anchor covers the line, or, for a
skill that changes the whole kernel (a `tile`/`policy` setting, the program order), the line is the kernel's
header, its setting's line, or the header of a loop that feeds a dot. A card learned on one kind of kernel
(`dot`: a loop feeds a dot; `row`: one row per program) is offered only on that kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.skills.cards import SPILL_MARGIN, Card
from argus.skills.document import Document
from argus.skills.facts import walk
from argus.skills.transforms import TRANSFORMS
from argus.skills.transforms.base import Application, Check

KERNEL_WIDE = {"pipelining", "num_warps", "tile_size", "tma", "grouped_order"}
FORWARD_PARAMS = ("setting", "name")  # card parameters that select the site; values are the transform's step


@dataclass(frozen=True, slots=True)
class Match:
    card: Card
    application: Application

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
            "expected_effect": expected_effect(self.card, self.application.params),
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


def expected_effect(card: Card, params: dict | None = None, spill_bytes: int | None = None) -> str:
    if card.effect_status == "needed for correctness":
        return "needed for correctness: without it the kernel computed wrong values on the GPU (no time measured)"
    if not card.effect:
        return "effect not measured yet (CPU lineages only)"
    beyond = beyond_evidence(card, params, spill_bytes)
    if beyond is not None:
        return f"effect not measured here: {beyond}"
    medians = sorted(e.median for e in card.effect)
    middle = medians[len(medians) // 2]
    gpus = sorted({e.gpu for e in card.effect})
    where = " where the kernel spills registers" if card.effect_needs_spills else ""
    return f"{middle:.2f}× median over {len(card.effect)} lineages ({', '.join(gpus)}){where}"


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
    found = []
    for card in cards:
        transform = TRANSFORMS.get(card.transform)
        if transform is None or kind_of(card) != kind:
            continue
        params = {k: v for k, v in card.parameters.items() if k in FORWARD_PARAMS}

        def here(k: ast.Kernel, app: Application) -> bool:
            return k.name == kernel.name and at_line(app, kernel, line)

        found += [Match(card, app) for app in transform.forward(doc, params, where=here)]
    return found
