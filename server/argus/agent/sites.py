"""Where library skills apply in a kernel: every applicable match of every card at every line of the kernel,
one per (card, anchor line), in source order. The search and random planners both choose from this list."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.matcher import match
from argus.skills.predict import Prediction, predict
from argus.skills.situation import NOT_COMPILED, Compiled, Situation, kernel_situation, with_compile

if TYPE_CHECKING:
    from argus.gate.result import GateResult


@dataclass(frozen=True, slots=True)
class Site:
    card: Card
    line: int  # 0-based anchor line: what the loop hands to argus.skills.apply.plan
    title: str
    anchor_text: str = ""  # the anchor line's code, stripped: stays the same when other lines move
    params: tuple[tuple[str, str], ...] = ()
    facts: Situation | None = None  # the kernel's situation, without a compile (argus.skills.situation)

    @property
    def key(self) -> str:
        return f"skill:{self.card.id}@{self.line}"  # the same as plan.Proposal.key()

    @property
    def identity(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """The same rewrite in another state of the kernel: card, anchor code and parameters."""
        return (self.card.id, self.anchor_text, self.params)


def prediction(site: Site, compiled: Compiled = NOT_COMPILED) -> Prediction:
    """The card's prediction at the site, with the state's register spills and registers a thread (its last
    GPU-target compile) put into the situation where known."""
    return predict(site.card, with_compile(site.facts, compiled), dict(site.params), compiled.spill_bytes)


def predicted_effect(card: Card, params: dict | None = None, spill_bytes: int | None = None, facts=None) -> float:
    """The predicted speedup (argus.skills.predict); 1.0 (no change expected) where the card predicts nothing."""
    effect = predict(card, facts, params, spill_bytes).effect
    return 1.0 if effect is None else effect


def compiled(gate: GateResult | None) -> Compiled:
    """A state's register spills and registers a thread from its gate result's compile facts, when it has them."""
    return Compiled.of(gate.compile.facts if gate is not None else None)


# A planner asks about the same state once per proposal it makes there: remember the last few answers.
_CACHE: OrderedDict[tuple[str, str, tuple[str, ...]], list[Site]] = OrderedDict()
CACHE_SIZE = 64


def applicable_sites(source: str, kernel: str, cards: Sequence[Card]) -> list[Site]:
    key = (source, kernel, tuple(c.id for c in cards))
    if key not in _CACHE:
        _CACHE[key] = _sites(source, kernel, cards)
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    by_id = {c.id: c for c in cards}  # the cards asked with, not those cached: equal ids, maybe other effects
    return [replace(site, card=by_id[site.card.id]) for site in _CACHE[key]]


def _sites(source: str, kernel: str, cards: Sequence[Card]) -> list[Site]:
    doc = Document.parse(source)
    node = next((k for k in doc.kernels() if k.name == kernel), None)
    if node is None or doc.check.has_errors:
        return []
    lines = source.splitlines()
    facts = kernel_situation(doc, kernel)
    found: dict[tuple[str, int], Site] = {}
    for line in range(node.span.line, node.span.end_line + 1):
        for m in match(doc, line, list(cards)):
            key = (m.card.id, m.application.anchor.line)
            if m.applicable and m.application.kernel == kernel and key not in found:
                anchor = m.application.anchor.line
                params = tuple(sorted((k, str(v)) for k, v in m.application.params.items()))
                found[key] = Site(m.card, anchor, m.application.title, lines[anchor].strip(), params, facts)
    return sorted(found.values(), key=lambda s: (s.line, s.card.id))
