"""The held-out check's table: naive kernels refined by the deterministic skill search against the random
baseline with the same gate budget (bench/heldout_device.sh runs them on a GPU).

    python bench/heldout.py table skills/heldout/results/h200-2026-11-30
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def load(folder: Path) -> dict[str, dict[str, dict]]:
    """kernel -> run name (search, random, random1, ...) -> `argus refine --json` summary."""
    runs: dict[str, dict[str, dict]] = {}
    for path in sorted(folder.glob("*.json")):
        kernel, name = path.stem.rsplit(".", 1)
        try:
            runs.setdefault(kernel, {})[name] = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            print(f"skipped {path}: not a finished run's JSON", file=sys.stderr)
    return runs


def speedup(run: dict) -> float:
    """Best over start; a run that kept nothing is 1.0 (its start)."""
    return run["speedup"] or 1.0


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def table(runs: dict[str, dict[str, dict]]) -> str:
    rows = [
        "| kernel | start ms | eager ms | search: best ms | × start | × eager | kept | random: × start (each seed) "
        "| gate runs each |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |",
    ]
    search_all, random_all = [], []
    for kernel, by_name in sorted(runs.items()):
        search = by_name.get("search")
        randoms = [run for name, run in sorted(by_name.items()) if name.startswith("random")]
        if search is None:
            continue
        search_all.append(speedup(search))
        random_all += [speedup(r) for r in randoms]
        kept = ", ".join(search["kept"]) or "nothing"
        eager = search["speedup_over_eager"]
        random_text = " / ".join(f"{speedup(r):.2f}×" for r in randoms) or "-"
        rows.append(
            f"| {kernel} | {search['start_ms']:.4f} | {search['eager_ms']:.3f} | {search['best_ms']:.4f} "
            f"| {speedup(search):.2f}× | {eager:.1f}× | {kept} | {random_text} | {search['budget']} + start |"
        )
    rows.append(f"| geometric mean | | | | {geomean(search_all):.3f}× | | | {geomean(random_all):.3f}× | |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("table", help="print the markdown table of a results folder")
    show.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    runs = load(args.folder)
    if not runs:
        print(f"no refine summaries (*.json) in {args.folder}", file=sys.stderr)
        return 1
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
