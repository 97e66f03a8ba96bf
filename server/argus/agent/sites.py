"""Where library skills apply in a kernel: every applicable match of every card at every line of the kernel,
one per (card, anchor line), in source order. The search and random planners both choose from this list."""

from __future__ import annotations

import statistics
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace

from argus.skills.cards import Card
from argus.skills.document import Document
from argus.skills.matcher import beyond_evidence, match


@dataclass(frozen=True, slots=True)
class Site:
    card: Card
    line: int  # 0-based anchor line: what the loop hands to argus.skills.apply.plan
    title: str
    anchor_text: str = ""  # the anchor line's code, stripped: stays the same when other lines move
    params: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return f"skill:{self.card.id}@{self.line}"  # the same as plan.Proposal.key()

    @property
    def identity(self) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        """The same rewrite in another state of the kernel: card, anchor code and parameters."""
        return (self.card.id, self.anchor_text, self.params)


def predicted_effect(card: Card, params: dict | None = None, spill_bytes: int | None = None) -> float:
    """The median of the card's per-lineage medians; 1.0 (no change expected) while not measured, or where the
    application is outside what the card measured (`params`: the application's; `spill_bytes`: the kernel's
    register spills at its last GPU-target compile, None when unknown)."""
    if card.effect_status != "measured" or not card.effect or beyond_evidence(card, params, spill_bytes) is not None:
        return 1.0
    return statistics.median(e.median for e in card.effect)


def spill_bytes(gate: dict | None) -> int | None:
    """A state's register spill stores from its gate result's compile facts (GateResult JSON), when it has them."""
    facts = ((gate or {}).get("compile") or {}).get("facts") or {}
    return facts.get("spill_stores_bytes")


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
    found: dict[tuple[str, int], Site] = {}
    for line in range(node.span.line, node.span.end_line + 1):
        for m in match(doc, line, list(cards)):
            key = (m.card.id, m.application.anchor.line)
            if m.applicable and m.application.kernel == kernel and key not in found:
                anchor = m.application.anchor.line
                params = tuple(sorted((k, str(v)) for k, v in m.application.params.items()))
                found[key] = Site(m.card, anchor, m.application.title, lines[anchor].strip(), params)
    return sorted(found.values(), key=lambda s: (s.line, s.card.id))
