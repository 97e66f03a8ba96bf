"""`argus skills match|apply|list|show|extract`: the skill library from the command line (docs/skills.md).

match FILE:LINE[:COL] [--json]       skills that apply there (with their expected effect), and the ones
                                     that do not with the precondition that fails
apply ID FILE:LINE [--diff] [--since HASH]
                                     apply a skill (refused, naming the failed precondition, where one
                                     fails); --diff prints the change instead of writing it
list [--json]                        every card
show ID                              one card, as its YAML
extract                              rebuild skills/library/ from the records in skills/lineages/
transforms [--json]                  every transform a skill can apply: what it does, where, its preconditions
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

from argus.cli import read_source


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("skills", help="list, match and apply optimization skills from the library")
    parser.add_argument("--library", type=Path, metavar="DIR", help="the cards' folder (default skills/library)")
    parser.add_argument("--lineages", type=Path, metavar="DIR", help="extract: the records' folder (skills/lineages)")
    commands = parser.add_subparsers(dest="skills_command", metavar="COMMAND")
    found = commands.add_parser("match", help="skills at FILE:LINE[:COL]")
    found.add_argument("place", metavar="FILE:LINE[:COL]")
    found.add_argument("--json", action="store_true")
    found.set_defaults(run=usage_errors(run_match))
    apply = commands.add_parser("apply", help="apply skill ID at FILE:LINE")
    apply.add_argument("id", metavar="ID")
    apply.add_argument("place", metavar="FILE:LINE")
    apply.add_argument("--diff", action="store_true", help="print the change as a unified diff; do not write")
    apply.add_argument("--since", metavar="HASH", help="the file hash `match --json` reported; re-matched if changed")
    apply.set_defaults(run=usage_errors(run_apply))
    listed = commands.add_parser("list", help="every skill card")
    listed.add_argument("--json", action="store_true")
    listed.set_defaults(run=usage_errors(run_list))
    show = commands.add_parser("show", help="one skill card")
    show.add_argument("id", metavar="ID")
    show.set_defaults(run=usage_errors(run_show))
    extract = commands.add_parser("extract", help="rebuild the cards from the lineage records")
    extract.set_defaults(run=usage_errors(run_extract))
    transforms = commands.add_parser("transforms", help="every transform, with its anchor and preconditions")
    transforms.add_argument("--json", action="store_true")
    transforms.set_defaults(run=usage_errors(run_transforms))
    parser.set_defaults(run=lambda args: (parser.print_help(sys.stderr), 2)[1])


def library(args: argparse.Namespace) -> Path:
    from argus.skills.library import LIBRARY

    return args.library or LIBRARY


class UsageError(Exception):
    """A wrong argument: said in one line, exit status 2."""


def cards(args: argparse.Namespace) -> list:
    """The library's cards; a --library that is no folder of cards is a usage error, not an empty library."""
    from argus.skills.library import load_cards

    return loaded_from("--library", library(args), load_cards, "a card", "skill cards (*.yaml)")


def loaded_from(flag: str, folder: Path, load: Callable[[Path], list], one: str, kind: str) -> list:
    """What `load` reads from `folder` (named by `flag`); a folder that is not there, holds a file that does not
    load (`one` of them) or none of `kind` is a usage error, not an empty list."""
    if not folder.is_dir():
        raise UsageError(f"{flag} {folder}: no such folder")
    try:
        found = load(folder)
    except unloadable() as problem:
        raise UsageError(f"{flag} {folder}: {one} there does not load: {problem}") from problem
    if not found:
        raise UsageError(f"{flag} {folder}: no {kind} there")
    return found


def card(args: argparse.Namespace):
    found = next((c for c in cards(args) if c.id == args.id), None)
    if found is None:
        raise UsageError(f"no skill {args.id!r} (argus skills list)")
    return found


def unloadable() -> tuple[type[Exception], ...]:
    """What a card or record file that is not one raises: unreadable, bad YAML or JSON, or it does not validate
    (pydantic's ValidationError is a ValueError). yaml is imported here: every command imports this module."""
    import yaml

    return (OSError, ValueError, yaml.YAMLError)


def usage_errors(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    @functools.wraps(run)
    def guarded(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except UsageError as problem:
            print(f"argus skills: {problem}", file=sys.stderr)
            return 2

    return guarded


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
    except ValueError as problem:
        print(f"argus skills: {problem}", file=sys.stderr)
        return None
    text = read_source("skills", path)
    if text is None:
        return None
    lines = len(text.splitlines())
    if not 0 <= line < max(lines, 1):
        print(f"argus skills: {path} has {lines} lines; line {line + 1} is not one of them", file=sys.stderr)
        return None
    return path, line, text


def run_match(args: argparse.Namespace) -> int:
    read = read_place(args.place)  # before the imports: a wrong path is said at once
    if read is None:
        return 2
    from argus.skills.apply import digest
    from argus.skills.document import Document
    from argus.skills.matcher import match

    path, line, text = read
    found = match(Document.parse(text), line, cards(args))
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
    read = read_place(args.place)  # before the imports: a wrong path is said at once
    if read is None:
        return 2
    from argus.skills.apply import plan, write_atomically

    chosen = card(args)
    path, line, text = read
    outcome = plan(text, chosen, line, since=args.since)
    if outcome.rematched:
        print(f"{path} changed since the match; matched again on its current text", file=sys.stderr)
    if outcome.text_after is None:
        print(f"{path}:{line + 1}: refused: {chosen.id}: {outcome.refused}", file=sys.stderr)
        return 1
    if args.diff:
        sys.stdout.writelines(
            difflib.unified_diff(text.splitlines(True), outcome.text_after.splitlines(True), str(path), str(path))
        )
        return 0
    write_atomically(path, outcome.text_after)
    print(f"{path}:{line + 1}: applied {chosen.id}: {outcome.title}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from argus.skills.matcher import expected_effect

    found = cards(args)
    if args.json:
        print(json.dumps([c.model_dump(mode="json") for c in found], indent=1))
        return 0
    for each in found:
        counts = f"{len(each.evidence)} evidence, {len(each.risks)} risks"
        print(f"{each.id:36} {each.title:40} {expected_effect(each)}  ({counts})")
    return 0


def run_show(args: argparse.Namespace) -> int:
    import yaml

    data = card(args).model_dump(mode="json")
    print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110), end="")
    return 0


def run_extract(args: argparse.Namespace) -> int:
    from argus.skills.extract import extract
    from argus.skills.library import LINEAGES, load_lineages, save_cards

    # none is an error: extracting nothing would delete every card of the library
    folder = args.lineages or LINEAGES
    lineages = loaded_from("--lineages", folder, load_lineages, "a record", "lineage records (*.json)")
    made = extract(lineages)
    save_cards(made, library(args))
    print(f"{len(made)} cards from {len(lineages)} lineages in {library(args)}")
    return 0


def run_transforms(args: argparse.Namespace) -> int:
    """The registry a card's `transform` names (cards or not): what lineages can walk and skills apply."""
    from argus.skills.preconditions import PRECONDITIONS
    from argus.skills.transforms import TRANSFORMS

    found = [
        {
            "name": t.name,
            "title": t.title,
            "intent": t.intent,
            "anchor": t.anchor,
            "preconditions": [{"name": p, "meaning": PRECONDITIONS[p]} for p in t.preconditions],
        }
        for t in TRANSFORMS.values()
    ]
    if args.json:
        print(json.dumps(found, indent=1))
        return 0
    for each in found:
        print(f"{each['name']:20} {each['intent']}")
        print(f"{'':20} at: {each['anchor']}")
        print(f"{'':20} needs: {', '.join(p['name'] for p in each['preconditions'])}")
    return 0
