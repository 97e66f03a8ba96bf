"""`argus check PATH... [--json] [--no-verify] [--rlimit N] [--timeout-ms MS]`: diagnostics for files, as
compiler-style lines or one JSON list.

Checking is parse + analysis (argus.dsl) and then verification of every kernel without errors (argus.verify:
bounds, races, coverage, contraction, statistics, tags, invariants), unless `--no-verify`. Diagnostics go to
stdout; a file without a kernel and the closing summary line go to stderr, so `--json` stays pure JSON."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from argus.cli import positive_int, read_source, stop_if_interrupted

# argus.verify.DEFAULT_RLIMIT, which this module does not import (it would load z3 for every command);
# tests/verify/test_budget.py checks that the two agree.
DEFAULT_RLIMIT = 5_000_000


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "check",
        help="check Argus files: syntax, names, dtypes, shapes, and verify their data-flow invariants",
        description="Check Argus files. Exit status: 1 if any error was found, 0 otherwise, 2 on usage errors "
        "(among them a folder without an .argus file).",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, or folders searched for *.argus files (not in hidden folders)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list of diagnostics (LSP ranges)")
    parser.add_argument("--no-verify", action="store_true", help="skip the verifier (syntax, names and types only)")
    parser.add_argument(
        "--rlimit",
        type=positive_int,
        default=DEFAULT_RLIMIT,
        metavar="N",
        help=f"z3 resource units per proof obligation, what decides a verdict, the same on a loaded or an idle "
        f"machine (default {DEFAULT_RLIMIT:,})",
    )
    parser.add_argument(
        "--timeout-ms",
        type=positive_int,
        default=1000,
        metavar="MS",
        help="the wall-clock safety net: z3 is stopped on one query after 10 x MS, or after the time the --rlimit "
        "budget lasts at 500 units/ms if that is longer (10 s by default), and the verdict says so (default 1000); "
        "it does not decide verdicts, --rlimit does",
    )
    parser.set_defaults(run=run)


class UsageError(Exception):
    pass


def expand(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found = kernel_files(path)
            if not found:
                raise UsageError(f"no .argus file in {name}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise UsageError(f"no such file or folder: {name}")
    return files


def kernel_files(folder: Path) -> list[Path]:
    """The *.argus files under `folder`. Hidden folders (.argus/, where refine keeps its memory, .git, .venv)
    are not searched, and a folder is not a file whatever its name."""
    return sorted(
        path
        for path in folder.rglob("*.argus")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts[:-1])
    )


@dataclass
class Tally:
    files: int = 0
    kernels: int = 0
    errors: int = 0
    warnings: int = 0
    files_with_problems: int = 0
    models: int = 0

    def add(self, kernels: int, errors: int, warnings: int, models: int = 0) -> None:
        self.files += 1
        self.kernels += kernels
        self.models += models
        self.errors += errors
        self.warnings += warnings
        self.files_with_problems += bool(errors or warnings)

    def line(self) -> str:
        checked = f"checked {counted(self.files, 'file')}, {counted(self.kernels, 'kernel')}"
        if self.models:
            checked += f", {counted(self.models, 'model')}"
        if not (self.errors or self.warnings):
            return f"{checked}: no problems"
        found = ", ".join(counted(n, word) for n, word in ((self.errors, "error"), (self.warnings, "warning")) if n)
        return f"{checked}: {found} in {self.files_with_problems} of {self.files} files"


def counted(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def run(args: argparse.Namespace) -> int:
    try:
        files = expand(args.paths)
    except UsageError as problem:
        print(f"argus check: {problem}", file=sys.stderr)
        return 2
    records = []
    tally = Tally()
    for path in files:
        text = read_source("check", path)
        if text is None:
            return 2
        kernels, diagnostics, models = check_file(path, text, args)
        stop_if_interrupted()  # before printing what an interrupt lost inside the verifier may have made up
        errors = sum(d.severity.value == "error" for d in diagnostics)
        warnings = sum(d.severity.value == "warning" for d in diagnostics)
        if not kernels and not errors:
            print(f"argus check: {path}: warning: no kernel in this file", file=sys.stderr)
            warnings += 1
        tally.add(kernels, errors, warnings, models)
        for diagnostic in diagnostics:
            if args.json:
                records.append({"path": str(path), **diagnostic.model_dump(mode="json")})
            else:
                print(diagnostic.text_line(str(path)))
    if args.json:
        json.dump(records, sys.stdout, indent=2)
        sys.stdout.write("\n")
    sys.stdout.flush()  # the diagnostics come before the summary that counts them
    print(tally.line(), file=sys.stderr)
    return 1 if tally.errors else 0


def check_file(path: Path, text: str, args: argparse.Namespace) -> tuple[int, list, int]:
    """(how many kernels the file has, its diagnostics in source order, how many models)."""
    # Imported here, not at the top: every `argus` command (serve among them) imports this module at start-up.
    from argus.analysis.host import analyze_file

    analysis = analyze_file(path, text)
    diagnostics = list(analysis.check.diagnostics)
    if not args.no_verify:
        diagnostics += analysis.verdicts("all", args.timeout_ms, args.rlimit).diagnostics
        diagnostics.sort(key=lambda d: (d.range.start.line, d.range.start.character, d.code))
    return len(analysis.check.analysis.kernels), diagnostics, len(analysis.check.analysis.models)
