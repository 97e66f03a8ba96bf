"""`argus check PATH... [--json] [--no-verify]`: diagnostics for files, as compiler-style lines or one JSON list.

Checking is parse + analysis (argus.dsl) and then verification of every kernel without errors (argus.verify:
bounds, races, coverage, contraction, statistics, tags, invariants), unless `--no-verify`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from argus.cli import read_source


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check Argus files: syntax, names, dtypes, shapes, and verify their data-flow invariants",
        description="Check Argus files. Exit status: 1 if any error was found, 0 otherwise, 2 on usage errors.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders searched for *.argus")
    parser.add_argument("--json", action="store_true", help="print one JSON list of diagnostics (LSP ranges)")
    parser.add_argument("--no-verify", action="store_true", help="skip the verifier (syntax, names and types only)")
    parser.add_argument(
        "--timeout-ms", type=int, default=1000, metavar="MS", help="z3 time limit per proof obligation (default 1000)"
    )
    parser.set_defaults(run=run)


def expand(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files.extend(sorted(path.rglob("*.argus")))
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(name)
    return files


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: every `argus` command (serve among them) imports this module at start-up.
    from argus.dsl.check import check_source

    try:
        files = expand(args.paths)
    except FileNotFoundError as missing:
        print(f"argus check: no such file or folder: {missing}", file=sys.stderr)
        return 2
    records = []
    errors = 0
    for path in files:
        text = read_source("check", path)
        if text is None:
            return 2
        result = check_source(text)
        diagnostics = list(result.diagnostics)
        if not args.no_verify:
            from argus.verify import verify_check

            diagnostics += verify_check(result, timeout_ms=max(1, args.timeout_ms)).diagnostics
            diagnostics.sort(key=lambda d: (d.range.start.line, d.range.start.character, d.code))
        errors += sum(d.severity.value == "error" for d in diagnostics)
        for diagnostic in diagnostics:
            if args.json:
                records.append({"path": str(path), **diagnostic.model_dump(mode="json")})
            else:
                print(diagnostic.text_line(str(path)))
    if args.json:
        json.dump(records, sys.stdout, indent=2)
        sys.stdout.write("\n")
    return 1 if errors else 0
