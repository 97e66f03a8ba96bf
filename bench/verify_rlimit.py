"""z3's resource use per obligation over every kernel the project verifies: prints tables, asserts nothing.

    .venv/bin/python bench/verify_rlimit.py [--rlimit N] [--timeout-ms MS] [--top 12]

Every `.argus` file under examples/, skills/experts/ and tests/verify/corpus/ (sub-folders included) is
checked and verified (the declared tile constants and every tune value, no cache). Every z3 query the verifier
makes is recorded: the resource units it consumed (z3's "rlimit count" statistic, which counts for the whole
context, read before and after the check) and its wall-clock milliseconds, labelled by what asked for it: the
query that decides an obligation (`decide`), the re-queries that shrink a refuted obligation's witness to small
sizes (`shrink`), and the `requires` candidates tried for a hint (`hint`). Resource units are deterministic:
the same query consumes the same units on a loaded or an idle machine; milliseconds are not.

By default the budget is made wide (`--rlimit 30000000`, six times the verifier's default, and a wall-clock
safety net of a minute: solve.wall_cap_ms), so that what is measured is what each query needs, not where a
budget cut it; only a query that needs more than six default budgets is cut. The verifier's default budget
per obligation (`argus.verify.solve.DEFAULT_RLIMIT`) was chosen from the `decide` maximum printed here.
"""

from __future__ import annotations

import argparse
import contextvars
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

try:
    import argus  # noqa: F401
except ImportError:  # run without installing the package
    sys.path.insert(0, str(ROOT / "server"))

import z3  # noqa: E402

from argus.dsl.check import check_source  # noqa: E402
from argus.verify import hints, solve, verify_check  # noqa: E402

FOLDERS = ("examples", "skills/experts", "tests/verify/corpus")

_label: contextvars.ContextVar[str] = contextvars.ContextVar("label", default="other")
_file: contextvars.ContextVar[str] = contextvars.ContextVar("file", default="")
queries: list[dict] = []  # one per z3 check: file, label, units, ms, answer
decided: list[dict] = []  # one per obligation: file, code, kind, line, status, units, ms


def install() -> None:
    """Wrap z3.Solver.check and the three places that call it, to label and measure every query."""
    check = z3.Solver.check

    def measured_check(self, *args):
        before = solve.units(self)
        started = time.perf_counter()
        answer = check(self, *args)
        ms = (time.perf_counter() - started) * 1000
        queries.append(
            {
                "file": _file.get(),
                "label": _label.get(),
                "units": solve.units(self) - before,
                "ms": ms,
                "answer": str(answer),
            }
        )
        return answer

    z3.Solver.check = measured_check

    def labelled(function, label):
        def run(*args, **kwargs):
            token = _label.set(label)
            try:
                return function(*args, **kwargs)
            finally:
                _label.reset(token)

        return run

    decide = solve.Prover._decide
    solve.Prover.small_model = labelled(solve.Prover.small_model, "shrink")
    hints.suggest_requires = labelled(hints.suggest_requires, "hint")

    def measured_decide(self, ob):
        first = len(queries)
        verdict = labelled(decide, "decide")(self, ob)
        main = [q for q in queries[first:] if q["label"] == "decide"]
        decided.append(
            {
                "file": _file.get(),
                "code": ob.code,
                "kind": ob.kind,
                "line": ob.span.line + 1,
                "status": verdict.status,
                "reason": verdict.reason,
                "units": sum(q["units"] for q in main),
                "ms": sum(q["ms"] for q in main),
                "solved": bool(main),  # False: settled by simplification, no z3 query
            }
        )
        return verdict

    solve.Prover._decide = measured_decide


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return 0.0
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def fmt(n: float) -> str:
    return f"{n:,.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rlimit", type=int, default=30_000_000, help="z3 resource units per obligation")
    parser.add_argument("--timeout-ms", type=int, default=1000, help="the safety net's unit (solve.wall_cap_ms)")
    parser.add_argument("--top", type=int, default=12, help="how many of the costliest obligations to list")
    args = parser.parse_args()
    install()
    paths = [p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.argus"))]
    budget = {"timeout_ms": args.timeout_ms, "rlimit": args.rlimit}
    print(
        f"# {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"z3 {z3.get_version_string()}"
    )
    print(f"# {len(paths)} files under {', '.join(FOLDERS)}; budget {budget}")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    per_file: dict[str, list[dict]] = defaultdict(list)
    started = time.perf_counter()
    for path in paths:
        name = str(path.relative_to(ROOT))
        token = _file.set(name)
        try:
            verify_check(check_source(path.read_text(encoding="utf-8")), **budget)
        finally:
            _file.reset(token)
        per_file[name] = [d for d in decided if d["file"] == name]
    total_s = time.perf_counter() - started

    print("## Per file (obligations decided by a z3 query)\n")
    print("| file | obligations | z3 queries | unknown | max units | median units | max ms | units/ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, rows in per_file.items():
        solved = [r for r in rows if r["solved"]]
        if not rows:
            print(f"| `{name}` | 0 | 0 | 0 | | | | |")
            continue
        units = [r["units"] for r in solved] or [0]
        ms = [r["ms"] for r in solved] or [0.0]
        rate = sum(units) / max(sum(ms), 1e-9)
        unknown = sum(r["status"] == "unknown" for r in rows)
        print(
            f"| `{name}` | {len(rows)} | {len(solved)} | {unknown} | {fmt(max(units))} | "
            f"{fmt(statistics.median(units))} | {max(ms):.1f} | {fmt(rate)} |"
        )

    print("\n## Distribution of resource units per z3 query\n")
    print("| query | count | median | p90 | p99 | max | max ms | units/ms min | units/ms max |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label in ("decide", "shrink", "hint"):
        rows = [q for q in queries if q["label"] == label]
        if not rows:
            continue
        units = [q["units"] for q in rows]
        rates = [q["units"] / q["ms"] for q in rows if q["ms"] > 0.05]
        print(
            f"| {label} | {len(rows)} | {fmt(statistics.median(units))} | {fmt(percentile(units, 90))} | "
            f"{fmt(percentile(units, 99))} | {fmt(max(units))} | {max(q['ms'] for q in rows):.1f} | "
            f"{fmt(min(rates) if rates else 0)} | {fmt(max(rates) if rates else 0)} |"
        )

    print(f"\n## The {args.top} costliest obligations (decide)\n")
    print("| file | line | code | kind | verdict | units | ms |")
    print("| --- | ---: | --- | --- | --- | ---: | ---: |")
    for r in sorted(decided, key=lambda r: -r["units"])[: args.top]:
        print(
            f"| `{r['file']}` | {r['line']} | {r['code']} | {r['kind']} | {r['status']} | {fmt(r['units'])} | "
            f"{r['ms']:.1f} |"
        )
    large = [q for q in queries if q["label"] == "decide" and q["units"] >= 100_000]
    if large:
        rates = [q["units"] / q["ms"] for q in large]
        print(
            f"\n# {len(large)} decide queries of at least 100,000 units ran at {fmt(min(rates))} to "
            f"{fmt(max(rates))} units/ms (median {fmt(statistics.median(rates))})"
        )
    undecided = [r for r in decided if r["status"] == "unknown"]
    print(
        f"\n# {len(decided)} obligations, {sum(r['solved'] for r in decided)} z3 queries deciding them, "
        f"{len(undecided)} unknown; {len(queries)} z3 queries in all; {total_s:.1f} s"
    )
    for r in undecided:
        print(f"#   unknown: {r['file']}:{r['line']} {r['code']} {r['kind']}: {r['reason']}")
    top = max((r["units"] for r in decided), default=0)
    default = getattr(solve, "DEFAULT_RLIMIT", None)
    if default:
        print(f"# DEFAULT_RLIMIT = {fmt(default)}: {default / max(top, 1):.1f} x the largest decide query here")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
