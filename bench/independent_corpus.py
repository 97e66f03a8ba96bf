"""The verifier on an independent corpus kept outside the repository (issue 17): a folder of `.argus` files and
a `manifest.json` listing each one as {"file", "kind": "buggy" | "correct", "bug", "bug_line", ...}.

Prints the row of docs/verification.md's tables (buggy with an error anywhere and on the planted line, correct
kernels with errors and with warnings, median and max milliseconds of verification), then each buggy kernel
without an error on its planted line and each correct kernel with a diagnostic, to be read one by one ("found"
counts an error that names the bug's effect). With --json PATH the rows are written there too.

    .venv/bin/python bench/independent_corpus.py /work/indep3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from argus.dsl.check import check_source
from argus.verify import verify_check


def measured(root: Path) -> list[dict]:
    rows = []
    for entry in json.loads((root / "manifest.json").read_text()):
        check = check_source((root / entry["file"]).read_text())
        started = time.perf_counter()
        diagnostics = list(check.diagnostics)
        if not check.has_errors:
            diagnostics += verify_check(check).diagnostics
        ms = (time.perf_counter() - started) * 1000
        found = [(d.code, d.severity.value, d.range.start.line + 1) for d in diagnostics]
        rows.append({**entry, "diagnostics": found, "ms": ms})
    return rows


def errors(row: dict, line: int | None = None) -> bool:
    return any(sev == "error" and (line is None or at == line) for _, sev, at in row["diagnostics"])


def warnings(row: dict) -> bool:
    return any(sev == "warning" for _, sev, _ in row["diagnostics"])


def report(rows: list[dict]) -> None:
    buggy = [r for r in rows if r["kind"] == "buggy"]
    correct = [r for r in rows if r["kind"] == "correct"]
    if not buggy or not correct:
        raise SystemExit("the manifest needs buggy and correct kernels")
    anywhere = sum(errors(r) for r in buggy)
    on_line = sum(errors(r, r["bug_line"]) for r in buggy)
    with_errors = sum(errors(r) for r in correct)
    warned = sum(warnings(r) for r in correct)
    times = [r["ms"] for r in rows]
    print("| buggy with an error (on the planted line) | correct with errors | correct with warnings ", end="")
    print("| median ms | max ms |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(
        f"| {anywhere} of {len(buggy)}, {100 * anywhere / len(buggy):.1f} % ({on_line} of {len(buggy)}) "
        f"| {with_errors} of {len(correct)} ({100 * with_errors / len(correct):.1f} %) "
        f"| {warned} of {len(correct)} ({100 * warned / len(correct):.1f} %) "
        f"| {statistics.median(times):.1f} | {max(times):.1f} |"
    )
    print("\nbuggy kernels without an error on the planted line:")
    for r in buggy:
        if not errors(r, r["bug_line"]):
            print(f"  {r['file']}:{r['bug_line']} {r['bug']} {r['diagnostics']}")
    print("\ncorrect kernels with a diagnostic:")
    for r in correct:
        if r["diagnostics"]:
            print(f"  {r['file']} {r['diagnostics']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the corpus folder, with its manifest.json")
    parser.add_argument("--json", type=Path, help="write the measured rows here")
    args = parser.parse_args()
    if not (args.root / "manifest.json").is_file():
        raise SystemExit(f"{args.root} has no manifest.json")
    rows = measured(args.root)
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
