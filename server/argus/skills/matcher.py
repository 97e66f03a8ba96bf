"""Which library skills apply at a place in a document, and which do not with the precondition that fails.

A card matches a line when its transform has a site there: the rewrite's anchor covers the line, or, for a
skill that changes the whole kernel (a `tile`/`policy` setting, the program order), the line is the kernel's
header, its setting's line, or the header of a loop that feeds a dot. A card learned on one kind of kernel
(`dot`: a loop feeds a dot; `row`: one row per program) is offered only on that kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from argus.dsl import ast
from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.facts import has_dot, walk
from argus.skills.predict import Prediction, predict
from argus.skills.roles import constants_for
from argus.skills.situation import NOT_COMPILED, Compiled, Situation, kernel_situation, with_compile
from argus.skills.transforms import TRANSFORMS
from argus.skills.transforms.base import Application, Check

KERNEL_WIDE = {"pipelining", "num_warps", "tile_size", "tma", "grouped_order"}
FORWARD_PARAMS = ("setting", "name")  # card parameters that select the site; values are the transform's step


@dataclass(frozen=True, slots=True)
class Match:
    card: Card
    application: Application
    facts: Situation | None = field(default=None, compare=False)  # the kernel's situation (no compile at hand)

    def prediction(self, compiled: Compiled = NOT_COMPILED) -> Prediction:
        facts = with_compile(self.facts, compiled)
        return predict(self.card, facts, self.application.params, compiled.spill_bytes)

    @property
    def applicable(self) -> bool:
        return self.application.applicable

    @property
    def failed(self) -> Check | None:
        return self.application.failed

    def to_json(self) -> dict:
        failed = self.failed
        predicted = self.prediction()
        return {
            "skill": self.card.id,
            "title": self.application.title,
            "kernel": self.application.kernel,
            "line": self.application.anchor.line + 1,
            "applicable": self.applicable,
            "failed_precondition": None if failed is None else {"name": failed.name, "found": failed.found},
            "expected_effect": predicted.why,
            "prediction": predicted.to_json(),
            "situation": self.facts,
            "params": self.application.params,
        }


def expected_effect(
    card: Card, params: dict | None = None, spill_bytes: int | None = None, facts: Situation | None = None
) -> str:
    """The card's prediction in words (argus.skills.predict): its effect where it was measured, or why none."""
    return predict(card, facts, params, spill_bytes).why


def kind_of(card: Card) -> str:
    return card.id.rsplit(".", 1)[-1]


def loop_lines(kernel: ast.Kernel) -> set[int]:
    return {n.span.line for n in walk(kernel.body) if isinstance(n, ast.For) and has_dot(n.body)}


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

        for site_params in by_role(card, kernel, params):
            found += [Match(card, app, facts) for app in transform.forward(doc, site_params, where=here)]
    return found


def by_role(card: Card, kernel: ast.Kernel, params: dict) -> list[dict]:
    """A tile-size card names the role its lineages' constant played (BM, BN, BK): it applies to the kernel's
    constants in that role, whatever they are called (argus.skills.roles)."""
    if card.transform != "tile_size" or "setting" not in params:
        return [params]
    names = constants_for(kernel, str(params["setting"]))
    return [params | {"setting": name} for name in names] or [params]
