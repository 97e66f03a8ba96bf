"""The verifier on an independent corpus kept outside the repository (issue 17): a folder of `.argus` files and
a `manifest.json` listing each one as {"file", "kind": "buggy" | "correct", "bug", "bug_line", ...} (or with
"buggy": true | false and "line").

Prints the row of docs/verification.md's tables (buggy with an error anywhere and on the planted line, correct
kernels with errors and with warnings, median and max milliseconds of verification), then each buggy kernel
without an error on its planted line and each correct kernel with a diagnostic, to be read one by one ("found"
counts an error that names the bug's effect). With --json PATH the rows are written there too.

With --gate, the gate's correct stage (the Triton interpreter on this CPU, each file's `small` sizes against its
PyTorch reference) also runs on every correct kernel and on every buggy kernel the verifier finds no error in,
and a second table counts what the two find together: a wrong result is an error the editor shows too (AR502),
at the store, with the first element that differs. A gate that cannot run (a time-out, a crash) finds nothing.

    .venv/bin/python bench/independent_corpus.py /work/indep3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from argus.dsl.check import check_source
from argus.verify import verify_check


def normalized(entry: dict) -> dict:
    """A manifest entry in the form this script reads: {"kind", "bug_line"} as indep6 and indep7 write them, or
    {"buggy": true | false, "line"} as indep8 does."""
    if "kind" not in entry and isinstance(entry.get("buggy"), bool):
        entry = {**entry, "kind": "buggy" if entry["buggy"] else "correct"}
        if "line" in entry:
            entry["bug_line"] = entry["line"]
    if entry.get("kind") not in ("buggy", "correct") or (entry["kind"] == "buggy" and "bug_line" not in entry):
        raise SystemExit(f"manifest entry {entry.get('file', entry)}: needs kind (or buggy) and, if buggy, its line")
    return entry


def measured(root: Path) -> list[dict]:
    rows = []
    for entry in map(normalized, json.loads((root / "manifest.json").read_text())):
        check = check_source((root / entry["file"]).read_text())
        started = time.perf_counter()
        diagnostics = list(check.diagnostics)
        if not check.has_errors:
            diagnostics += verify_check(check).diagnostics
        ms = (time.perf_counter() - started) * 1000
        found = [(d.code, d.severity.value, d.range.start.line + 1) for d in diagnostics]
        rows.append({**entry, "diagnostics": found, "ms": ms})
    return rows


def gated(root: Path, rows: list[dict], timeout_s: float) -> None:
    """Each row the gate runs on gets "gate": {kernel: correct-stage status}, with progress on stderr."""
    from argus.gate import run_gate_all

    todo = [r for r in rows if r["kind"] == "correct" or not errors(r)]
    for number, row in enumerate(todo, start=1):
        print(f"[gate {number}/{len(todo)}] {row['file']}", file=sys.stderr, flush=True)
        path = root / row["file"]
        results = run_gate_all(path.read_text(), path=str(path), device="cpu", stages=("correct",), timeout_s=timeout_s)
        row["gate"] = {r.kernel: r.correct.status.value for r in results}


def gate_wrong(row: dict) -> bool:
    return "failed" in row.get("gate", {}).values()


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


def report_gate(rows: list[dict]) -> None:
    buggy = [r for r in rows if r["kind"] == "buggy"]
    correct = [r for r in rows if r["kind"] == "correct"]
    by_gate = [r for r in buggy if not errors(r) and gate_wrong(r)]
    found = sum(errors(r) for r in buggy) + len(by_gate)
    wrong = [r for r in correct if gate_wrong(r)]
    unfinished = [r for r in rows if any(v == "error" for v in r.get("gate", {}).values())]
    print("\n| buggy found by the verifier or the gate | of them by the gate only | correct kernels the gate fails |")
    print("| ---: | ---: | ---: |")
    print(
        f"| {found} of {len(buggy)}, {100 * found / len(buggy):.1f} % | {len(by_gate)} "
        f"| {len(wrong)} of {len(correct)} |"
    )
    print("\nfound by the gate only:")
    for r in by_gate:
        print(f"  {r['file']} ({r['category']}) {r['gate']}")
    print("\ncorrect kernels the gate fails, and gate runs that did not finish:")
    for r in wrong + unfinished:
        print(f"  {r['file']} {r['gate']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the corpus folder, with its manifest.json")
    parser.add_argument("--json", type=Path, help="write the measured rows here")
    parser.add_argument("--gate", action="store_true", help="also run the gate's correct stage on this CPU")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a file's gate run may take")
    args = parser.parse_args()
    if not (args.root / "manifest.json").is_file():
        raise SystemExit(f"{args.root} has no manifest.json")
    rows = measured(args.root)
    report(rows)
    if args.gate:
        gated(args.root, rows, args.timeout)
        report_gate(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
