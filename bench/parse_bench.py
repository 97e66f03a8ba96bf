"""Parse (and check, where argus.dsl.check exists) speed on real kernels: prints a table, asserts nothing.

    .venv/bin/python bench/parse_bench.py [--small-runs 50] [--large-runs 10]

Inputs: examples/attention.argus, and a ~2,000-line file made by concatenating every example again and again,
each copy's kernel renamed (with its reference, inputs and sizes blocks) so that every name stays unique.
Each measurement is warmed up first; the table gives the median and the 90th percentile (nearest rank).
Exits 2 when the examples are missing.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
TARGET_LINES = 2000
WARMUP_RUNS = 3

try:
    import argus  # noqa: F401
except ImportError:  # run without installing the package
    sys.path.insert(0, str(ROOT / "server"))

from argus.dsl.parser import parse  # noqa: E402

try:
    from argus.dsl.check import check_source
except ImportError:
    check_source = None

ITEM_HEADER = re.compile(r"^(kernel|reference|inputs|sizes)([ \t]+)([A-Za-z_]\w*)", re.MULTILINE)


def renamed(text: str, suffix: str) -> str:
    """The example with every kernel name (in kernel, reference, inputs and sizes headers) given a suffix."""
    kernels = {match.group(3) for match in ITEM_HEADER.finditer(text) if match.group(1) == "kernel"}

    def rename(match: re.Match) -> str:
        keyword, gap, name = match.groups()
        return f"{keyword}{gap}{name}{suffix}" if name in kernels else match.group(0)

    return ITEM_HEADER.sub(rename, text)


def concatenated(sources: list[str], target_lines: int) -> str:
    """Copies of all examples, renamed per copy, until the file has at least target_lines lines."""
    parts: list[str] = []
    lines = 0
    copy = 0
    while lines < target_lines:
        for source in sources:
            part = renamed(source, f"_{copy}").rstrip("\n") + "\n\n"
            parts.append(part)
            lines += part.count("\n")
        copy += 1
    return "".join(parts)


def measure(function: Callable[[str], object], text: str, runs: int) -> list[float]:
    for _ in range(WARMUP_RUNS):
        function(text)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        function(text)
        times.append((time.perf_counter() - started) * 1000)
    return times


def p90(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(math.ceil(0.9 * len(ordered)) - 1, 0)]


def main() -> int:
    options = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    options.add_argument("--small-runs", type=int, default=50, help="timed runs on attention.argus")
    options.add_argument("--large-runs", type=int, default=10, help="timed runs on the concatenated file")
    args = options.parse_args()

    paths = sorted(EXAMPLES.glob("*.argus"))
    attention = EXAMPLES / "attention.argus"
    if not paths or not attention.exists():
        print(f"error: no examples to measure: {attention} is missing", file=sys.stderr)
        return 2

    small = attention.read_text()
    large = concatenated([path.read_text() for path in paths], TARGET_LINES)
    kernels = ITEM_HEADER.findall(large)
    names = [name for keyword, _, name in kernels if keyword == "kernel"]
    assert len(names) == len(set(names)), "renaming left duplicate kernel names"

    stages: list[tuple[str, Callable[[str], object]]] = [("parse", parse)]
    if check_source is not None:
        stages.append(("check", check_source))

    print(f"machine: {platform.platform()}, {platform.machine()}, {os.cpu_count()} CPUs")
    print(f"python:  {platform.python_implementation()} {platform.python_version()}")
    print(f"inputs:  attention.argus; {len(paths)} examples x {len(names) // len(paths)} copies ({len(names)} kernels)")
    print(f"runs:    {WARMUP_RUNS} warm-up, then {args.small_runs} (attention) and {args.large_runs} (concatenated)")
    print()
    header = f"{'input':<24} {'stage':<6} {'lines':>6} {'runs':>5} {'diags':>6} {'median ms':>10} {'p90 ms':>9}"
    print(header)
    print("-" * len(header))
    for label, text, runs in [
        ("attention.argus", small, args.small_runs),
        ("all examples, renamed", large, args.large_runs),
    ]:
        lines = text.count("\n") + (not text.endswith("\n"))
        for stage, function in stages:
            diagnostics = len(function(text).diagnostics)
            times = measure(function, text, runs)
            print(
                f"{label:<24} {stage:<6} {lines:>6} {runs:>5} {diagnostics:>6} "
                f"{statistics.median(times):>10.2f} {p90(times):>9.2f}"
            )
    if check_source is None:
        print("\n(argus.dsl.check not found: parse only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
