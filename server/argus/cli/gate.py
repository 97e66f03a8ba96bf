"""`argus gate FILE`: compile, correct and profile kernels in a child process; or write a bundle; or read one.

    argus gate FILE [--kernel NAME] [--device auto|cpu|cuda] [--stage S]... [--json] [--timeout S]
    argus gate FILE --bundle DIR [--kernel NAME]     then, anywhere with torch and triton: python3 DIR/run.py
    argus gate --read RESULT.json [--json]

Exit status: 0 when every kernel passed every stage it ran, 1 otherwise, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from argus.cli import positive_float, positive_int, read_source, reason

if TYPE_CHECKING:
    from argus.dsl.check import CheckResult

STAGES = ("compile", "correct", "profile")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "gate",
        help="compile, check against the reference and profile kernels (in a separate process)",
        description=__doc__.split("\n\n")[0] + " Exit status: 0 if every kernel passed, 1 if not, 2 on usage errors.",
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="an .argus file")
    parser.add_argument(
        "--kernel", metavar="NAME", help="gate only this kernel or model (default: every kernel and model)"
    )
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--stage", action="append", choices=STAGES, help="run only this stage (repeatable)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON (a GateRun: docs/gate.md)")
    parser.add_argument("--timeout", type=positive_float, default=120.0, help="seconds per kernel (default 120)")
    parser.add_argument("--trials", type=positive_int, default=3, help="correctness trials, each with a fresh seed")
    parser.add_argument("--seed", type=int, help="the first trial's seed (default: random, reported)")
    parser.add_argument("--bundle", metavar="DIR", help="write a self-contained bundle to DIR instead of running")
    parser.add_argument("--read", metavar="JSON", help="validate and print a result file that run.py wrote")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.read:
        return read(args)
    if not args.file:
        print("argus gate: give an .argus FILE, or --read RESULT.json", file=sys.stderr)
        return 2
    source = read_source("gate", args.file)
    if source is None:
        return 2
    from argus.analysis.host import analyze_file

    check = analyze_file(args.file, source).check  # checked once: the gate takes this check, not the text again
    nothing = nothing_to_gate(check, args.kernel)
    if nothing:
        print(f"argus gate: {args.file}: {nothing}", file=sys.stderr)
        return 2
    if args.bundle:
        return bundle(args, source, check)
    from argus.gate import run_gate_all

    def show(line: str) -> None:
        print(f"[gate] {line}", file=sys.stderr, flush=True)

    try:
        results = run_gate_all(
            source,
            path=args.file,
            kernel=args.kernel,
            device=args.device,
            stages=args.stage or STAGES,
            timeout_s=args.timeout,
            on_progress=show,
            check=check,
            trials=args.trials,
            seed=args.seed,
        )
    except ValueError as problem:
        print(f"argus gate: {problem}", file=sys.stderr)
        return 2
    return report(results, args)


def nothing_to_gate(check: CheckResult, kernel: str | None) -> str:
    """Why the file names nothing to gate (no kernel, or none called `kernel`): a usage error, said before any
    work. A file with errors is gated all the same: its errors are the report."""
    names = [*check.analysis.kernels, *check.analysis.models]
    if check.has_errors or (check.analysis.gated and kernel is None) or (kernel is not None and kernel in names):
        return ""
    if not names or kernel is None:
        return "the file has no kernel to gate"
    return f"no kernel or model named `{kernel}` in the file (it has: {', '.join(names)})"


def bundle(args: argparse.Namespace, source: str, check: CheckResult) -> int:
    from argus.gate import GateSetupError, write_bundle

    folder = Path(args.bundle)
    if folder.exists() and not folder.is_dir():
        print(f"argus gate: --bundle {folder}: a file is there, not a folder", file=sys.stderr)
        return 2
    try:
        run_py = write_bundle(source, folder, path=args.file, kernel=args.kernel, check=check)
    except OSError as problem:
        print(f"argus gate: --bundle {folder}: cannot write: {reason(problem)}", file=sys.stderr)
        return 2
    except GateSetupError as failure:
        print(f"argus gate: {args.file}: {failure}", file=sys.stderr)
        for error in failure.errors:
            print(f"{args.file}:{error.line or 1}:1: error[{error.code}]: {error.message}", file=sys.stderr)
        return 1
    print(f"wrote {run_py.parent}; run it with: python3 {run_py} [--device cuda] [--out RESULT.json]")
    return 0


def read(args: argparse.Namespace) -> int:
    from argus.gate import read_results

    try:
        results = read_results(Path(args.read))
    except ValueError as problem:
        print(f"argus gate: {problem}", file=sys.stderr)
        return 2
    return report(results, args)


def report(results, args: argparse.Namespace) -> int:
    from argus.gate.report import render
    from argus.gate.result import GateRun

    if args.json:
        print(GateRun(results=results).model_dump_json(indent=2))
    else:
        print("\n\n".join(render(r, args.file) for r in results))
    return 0 if results and all(r.passed for r in results) else 1
