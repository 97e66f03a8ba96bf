"""The skill library on disk: cards as YAML files in skills/library/, lineage records as JSON in
skills/lineages/. A GPU record (`<id>.json`) supersedes the CPU record of the same lineage (`<id>.cpu.json`)."""

from __future__ import annotations

from pathlib import Path

import yaml

from argus.skills.cards import Card
from argus.skills.lineage.record import Lineage

ROOT = Path(__file__).resolve().parents[3]  # the repository: server/argus/skills/library.py
LIBRARY = ROOT / "skills" / "library"
LINEAGES = ROOT / "skills" / "lineages"


def load_cards(folder: Path = LIBRARY) -> list[Card]:
    cards = []
    for path in sorted(folder.glob("*.yaml")):
        cards.append(Card.model_validate(yaml.safe_load(path.read_text(encoding="utf-8"))))
    return cards


def card_by_id(card_id: str, folder: Path = LIBRARY) -> Card | None:
    return next((c for c in load_cards(folder) if c.id == card_id), None)


def save_cards(cards: list[Card], folder: Path = LIBRARY) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    keep = {f"{c.id}.yaml" for c in cards}
    for stale in folder.glob("*.yaml"):
        if stale.name not in keep:
            stale.unlink()  # a card no lineage supports any more
    for card in cards:
        path = folder / f"{card.id}.yaml"
        data = card.model_dump(mode="json")
        path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
        written.append(path)
    return written


def load_lineages(folder: Path = LINEAGES) -> list[Lineage]:
    records: dict[str, Lineage] = {}
    for path in sorted(folder.glob("*.json")):
        record = Lineage.model_validate_json(path.read_text(encoding="utf-8"))
        if record.id not in records or record.profiled:
            records[record.id] = record
    return list(records.values())
