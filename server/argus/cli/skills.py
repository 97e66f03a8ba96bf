"""`argus skills match|apply|list|show|extract`: the skill library from the command line (docs/skills.md).

match FILE:LINE[:COL] [--json]       skills that apply there (with their expected effect), and the ones
                                     that do not with the precondition that fails
apply ID FILE:LINE [--diff] [--since HASH]
                                     apply a skill (refused, naming the failed precondition, where one
                                     fails); --diff prints the change instead of writing it
list [--json]                        every card
show ID                              one card, as its YAML
extract                              rebuild skills/library/ from the records in skills/lineages/
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("skills", help="list, match and apply optimization skills from the library")
    parser.add_argument("--library", type=Path, metavar="DIR", help="the cards' folder (default skills/library)")
    parser.add_argument("--lineages", type=Path, metavar="DIR", help="extract: the records' folder (skills/lineages)")
    commands = parser.add_subparsers(dest="skills_command", metavar="COMMAND")
    found = commands.add_parser("match", help="skills at FILE:LINE[:COL]")
    found.add_argument("place", metavar="FILE:LINE[:COL]")
    found.add_argument("--json", action="store_true")
    found.set_defaults(run=run_match)
    apply = commands.add_parser("apply", help="apply skill ID at FILE:LINE")
    apply.add_argument("id", metavar="ID")
    apply.add_argument("place", metavar="FILE:LINE")
    apply.add_argument("--diff", action="store_true", help="print the change as a unified diff; do not write")
    apply.add_argument("--since", metavar="HASH", help="the file hash `match --json` reported; re-matched if changed")
    apply.set_defaults(run=run_apply)
    listed = commands.add_parser("list", help="every skill card")
    listed.add_argument("--json", action="store_true")
    listed.set_defaults(run=run_list)
    show = commands.add_parser("show", help="one skill card")
    show.add_argument("id", metavar="ID")
    show.set_defaults(run=run_show)
    extract = commands.add_parser("extract", help="rebuild the cards from the lineage records")
    extract.set_defaults(run=run_extract)
    parser.set_defaults(run=lambda args: (parser.print_help(sys.stderr), 2)[1])


def library(args: argparse.Namespace) -> Path:
    from argus.skills.library import LIBRARY

    return args.library or LIBRARY


def place(text: str) -> tuple[Path, int, int | None]:
    """FILE:LINE[:COL], 1-based, into (path, 0-based line, 0-based column or None)."""
    parts = text.rsplit(":", 2)
    if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
        return Path(parts[0]), int(parts[1]) - 1, int(parts[2]) - 1
    parts = text.rsplit(":", 1)
    if len(parts) == 2 and parts[1].isdigit():
        return Path(parts[0]), int(parts[1]) - 1, None
    raise ValueError(f"expected FILE:LINE[:COL], got {text!r}")


def read_place(arg: str) -> tuple[Path, int, str] | None:
    try:
        path, line, _ = place(arg)
        return path, line, path.read_text(encoding="utf-8")
    except (ValueError, OSError) as problem:
        print(f"argus skills: {problem}", file=sys.stderr)
        return None


def run_match(args: argparse.Namespace) -> int:
    from argus.skills.apply import digest
    from argus.skills.document import Document
    from argus.skills.library import load_cards
    from argus.skills.matcher import match

    read = read_place(args.place)
    if read is None:
        return 2
    path, line, text = read
    found = match(Document.parse(text), line, load_cards(library(args)))
    if args.json:
        print(
            json.dumps(
                {"file": str(path), "line": line + 1, "hash": digest(text), "skills": [m.to_json() for m in found]},
                indent=1,
            )
        )
        return 0
    if not found:
        print(f"{path}:{line + 1}: no skill of the library matches here")
    for m in found:
        if m.applicable:
            print(f"  ✓ {m.card.id:32} {m.application.title}  [{m.to_json()['expected_effect']}]")
        else:
            print(f"  ✗ {m.card.id:32} {m.application.title}  needs {m.failed.name}: {m.failed.found}")
    return 0


def run_apply(args: argparse.Namespace) -> int:
    from argus.skills.apply import plan, write_atomically
    from argus.skills.library import card_by_id

    card = card_by_id(args.id, library(args))
    if card is None:
        print(f"argus skills: no skill {args.id!r} (argus skills list)", file=sys.stderr)
        return 2
    read = read_place(args.place)
    if read is None:
        return 2
    path, line, text = read
    outcome = plan(text, card, line, since=args.since)
    if outcome.rematched:
        print(f"{path} changed since the match; matched again on its current text", file=sys.stderr)
    if outcome.text_after is None:
        print(f"{path}:{line + 1}: refused: {card.id}: {outcome.refused}", file=sys.stderr)
        return 1
    if args.diff:
        sys.stdout.writelines(
            difflib.unified_diff(text.splitlines(True), outcome.text_after.splitlines(True), str(path), str(path))
        )
        return 0
    write_atomically(path, outcome.text_after)
    print(f"{path}:{line + 1}: applied {card.id}: {outcome.title}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from argus.skills.library import load_cards
    from argus.skills.matcher import expected_effect

    cards = load_cards(library(args))
    if args.json:
        print(json.dumps([c.model_dump(mode="json") for c in cards], indent=1))
        return 0
    for card in cards:
        counts = f"{len(card.evidence)} evidence, {len(card.risks)} risks"
        print(f"{card.id:36} {card.title:40} {expected_effect(card)}  ({counts})")
    return 0


def run_show(args: argparse.Namespace) -> int:
    import yaml

    from argus.skills.library import card_by_id

    card = card_by_id(args.id, library(args))
    if card is None:
        print(f"argus skills: no skill {args.id!r} (argus skills list)", file=sys.stderr)
        return 2
    print(yaml.safe_dump(card.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=110), end="")
    return 0


def run_extract(args: argparse.Namespace) -> int:
    from argus.skills.extract import extract
    from argus.skills.library import LINEAGES, load_lineages, save_cards

    lineages = load_lineages(args.lineages or LINEAGES)
    cards = extract(lineages)
    save_cards(cards, library(args))
    print(f"{len(cards)} cards from {len(lineages)} lineages in {library(args)}")
    return 0
