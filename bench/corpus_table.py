"""The verifier's own corpus as a table: detections, false errors, warnings and time. Prints, asserts nothing.

    .venv/bin/python bench/corpus_table.py

Three kinds of file in tests/verify/corpus/: a buggy kernel (`NAME.argus`, `# expect: ARnnn line L`), its
fixed twin (`NAME.fixed.argus`) and a correct-but-tricky kernel (`tricky/NAME.argus`). A buggy kernel is
*found* when the verifier gives an error with the expected code on the expected line, *warned* when it gives
only a warning there (with that code or AR312), *missed* otherwise. A correct kernel (a twin or a tricky one)
with any verifier error is a *false error*, with any verifier warning a *warning*. Only verifier codes count
(AR3xx); the checker's AR1xx/AR4xx notes (no reference, no sizes) are not the verifier's. Time: one
verification after a warm-up, wall clock and CPU, on whatever machine runs it (say which with the table).
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

try:
    import argus  # noqa: F401
except ImportError:  # run without installing the package
    sys.path.insert(0, str(ROOT / "server"))

from argus.dsl.check import check_source  # noqa: E402
from argus.verify import verify_check  # noqa: E402

CORPUS = ROOT / "tests" / "verify" / "corpus"
EXPECT = re.compile(r"^# expect: (AR\d{3}) line (\d+)$", re.MULTILINE)


def verified(path: Path) -> tuple[list[tuple[str, str, int]], float, float]:
    """(code, severity, 1-based line) of each verifier diagnostic, and the wall and CPU ms of one verification."""
    check = check_source(path.read_text(encoding="utf-8"))
    verify_check(check)  # warm-up
    started, started_cpu = time.perf_counter(), time.process_time()
    result = verify_check(check)
    wall, cpu = (time.perf_counter() - started) * 1000, (time.process_time() - started_cpu) * 1000
    found = [(d.code, d.severity.value, d.range.start.line + 1) for d in result.diagnostics if d.code.startswith("AR3")]
    return found, wall, cpu


def verdict(path: Path, found: list[tuple[str, str, int]]) -> str:
    match = EXPECT.search(path.read_text(encoding="utf-8"))
    if match is None:
        return "no expect line"
    code, line = match.group(1), int(match.group(2))
    here = [(c, s) for c, s, at in found if at == line]
    if (code, "error") in here:
        return "found"
    if any(c in (code, "AR312") for c, _ in here):
        return "warned"
    return "missed"


def main() -> int:
    buggy = sorted(p for p in CORPUS.glob("*.argus") if not p.name.endswith(".fixed.argus"))
    correct = sorted(CORPUS.glob("*.fixed.argus")) + sorted((CORPUS / "tricky").glob("*.argus"))
    if not buggy:
        print(f"no corpus in {CORPUS}", file=sys.stderr)
        return 2
    rows, walls, cpus = [], [], []
    counts = {"found": 0, "warned": 0, "missed": 0, "no expect line": 0}
    for path in buggy:
        found, wall, cpu = verified(path)
        walls.append(wall)
        cpus.append(cpu)
        v = verdict(path, found)
        counts[v] += 1
        if v != "found":
            rows.append(f"| `{path.name}` | buggy | {v} | {', '.join(f'{c} {s} line {at}' for c, s, at in found)} |")
    false_errors = warned = 0
    for path in correct:
        found, wall, cpu = verified(path)
        walls.append(wall)
        cpus.append(cpu)
        errors = [f for f in found if f[1] == "error"]
        false_errors += bool(errors)
        warned += bool(found) and not errors
        if found:
            kind = "false error" if errors else "warning"
            name = path.relative_to(CORPUS)
            rows.append(f"| `{name}` | correct | {kind} | {', '.join(f'{c} {s} line {at}' for c, s, at in found)} |")
    n, m = len(buggy), len(correct)
    print(
        f"# {n} buggy kernels, {m} correct ones ({len(list(CORPUS.glob('*.fixed.argus')))} twins, "
        f"{m - len(list(CORPUS.glob('*.fixed.argus')))} tricky)\n"
    )
    print(
        "| buggy found as errors | warned only | missed | correct with errors | correct with warnings "
        "| median ms | max ms | median CPU ms |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {counts['found']} of {n} ({100 * counts['found'] / n:.0f} %) | {counts['warned']} | "
        f"{counts['missed'] + counts['no expect line']} | {false_errors} of {m} ({100 * false_errors / m:.1f} %) | "
        f"{warned} of {m} ({100 * warned / m:.1f} %) | {statistics.median(walls):.1f} | {max(walls):.1f} | "
        f"{statistics.median(cpus):.1f} |"
    )
    if rows:
        print("\n| file | kind | verdict | verifier diagnostics |\n| --- | --- | --- | --- |")
        print("\n".join(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
