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
context FILE [--json]                the context of every site (kernel, loops, dots) of every kernel: the facts
                                     that decide a skill's effect there (argus.skills.context)
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
    context = commands.add_parser("context", help="the facts at every site of every kernel in FILE")
    context.add_argument("file", type=Path, metavar="FILE")
    context.add_argument("--json", action="store_true")
    context.set_defaults(run=usage_errors(run_context))
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
        predicted = m.prediction()
        if not m.applicable:
            print(f"  ✗ {m.card.id:32} {m.application.title}  needs {m.failed.name}: {m.failed.found}")
        elif predicted.hurts is not None:
            print(f"  ✗ {m.card.id:32} {m.application.title}  condition of benefit fails: {predicted.hurts}")
        else:
            print(f"  ✓ {m.card.id:32} {m.application.title}  [{predicted.why}]")
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
        if each.scope:
            print(f"{'':36} scope: " + "; ".join(f"{k} {', '.join(map(str, v))}" for k, v in each.scope.items()))
        for condition in each.conditions:
            print(f"{'':36} condition: {condition.note}")
        for link in each.requires:
            print(f"{'':36} requires {link.fact} = {link.value}" + (f" ({link.skill})" if link.skill else ""))
        for link in each.conflicts:
            print(f"{'':36} conflicts with {link.skill} ({link.fact} = {link.value})")
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


def run_context(args: argparse.Namespace) -> int:
    text = read_source("skills", args.file)  # before the imports: a wrong path is said at once
    if text is None:
        return 2
    from argus.skills.context import site_contexts
    from argus.skills.document import Document

    doc = Document.parse(text)
    found = {k.name: site_contexts(doc, k.name) for k in doc.kernels()}
    if args.json:
        data = {name: [s.model_dump(mode="json") for s in sites] for name, sites in found.items()}
        print(json.dumps({"file": str(args.file), "kernels": data}, indent=1))
        return 0
    if not found:
        print(f"{args.file}: no kernel")
    for name, sites in found.items():
        if not sites:
            print(f"{name}: no context (the kernel does not check)")
            continue
        print(f"{name}:")
        print("  " + "\n  ".join(context_lines(sites[0])))
        for site in sites[1:]:
            print(f"  {site.site} at line {site.line}:")
            print("    " + "\n    ".join(site_lines(site)))
    return 0


def context_lines(site) -> list[str]:
    """The kernel's own facts, a line each."""

    def n(value) -> str:
        return "?" if value is None else f"{value:,}"

    sizes = ", ".join(f"{k} = {v}" for k, v in site.sizes.items()) or "no size set"
    consts = ", ".join(f"{k} = {v}" for k, v in site.constants.items())
    lines = [f"policy num_warps = {site.num_warps}, num_stages = {site.num_stages}; tile {consts}"]
    compiled = (
        f"; compiled: {site.registers} registers, {site.spill_stores_bytes} B spill stores, "
        f"{n(site.shared_memory_bytes)} B shared"
        if site.registers is not None
        else "; no compile at hand"
    )
    lines.append(f"shared memory estimate {n(site.shared_memory_estimate_bytes)} B{compiled}")
    lines.append(f"at {site.size_set or '?'} ({sizes}): {n(site.flops)} FLOPs ({n(site.dot_flops)} in dots), "
                 f"{n(site.bytes)} bytes, intensity {site.arithmetic_intensity}")  # fmt: skip
    lines.append(f"bound: {site.bound or '?'} (compute {site.compute_ms} ms, memory {site.memory_ms} ms at H200 "
                 "ceilings)")  # fmt: skip
    lines.append(f"grid: {n(site.programs)} programs, {site.waves} waves over 132 SMs ({site.tail_programs} in the "
                 "last)")  # fmt: skip
    if site.row_length is not None or site.row_tile is not None:
        wider = {True: "wider than one tile", False: "fits one tile", None: "?"}[site.row_wider_than_tile]
        lines.append(f"rows of {site.row_tensor}: {site.row_length} against a tile of {site.row_tile} ({wider})")
    lines += site_lines(site) if site.dot_line is not None else []
    return lines


def site_lines(site) -> list[str]:
    lines = []
    if site.loop_trips is not None:
        lines.append(f"{site.loop_trips} iterations a program")
    if site.dot_line is None:
        return lines or ["no dot"]
    which = "" if site.site == "dot" else f" (of {site.dots}: the one at line {site.dot_line})"
    precision = f", input_precision {site.input_precision}" if site.input_precision else ""
    if site.precision_constant:
        precision += f" (from {site.precision_constant})"
    lines.append(f"dot{which}: {site.a_dtype} x {site.b_dtype}{precision}, on {site.engine}")
    for name in ("a", "b"):
        tensor = getattr(site, f"{name}_tensor")
        if tensor is None:
            lines.append(f"  {name}: not loaded from one tensor")
            continue
        major = {True: "K-major", False: "not K-major", None: "K-major unknown"}[getattr(site, f"{name}_k_major")]
        declared = " (declared by `layout`)" if getattr(site, f"{name}_layout_declared") else ""
        trans = ", through trans" if getattr(site, f"{name}_trans") else ""
        lines.append(f"  {name}: {tensor}, {getattr(site, f'{name}_contiguous')} contiguous{declared}: {major}{trans}")
    lines.append(f"  accumulator {site.accumulator_dtype}{site.accumulator_shape}: {site.accumulator_registers} "
                 "registers a thread")  # fmt: skip
    return lines
