"""The held-out check's table: naive kernels refined by the deterministic skill search against the random
baseline with the same gate budget (bench/heldout_device.sh runs them on a GPU).

    python bench/heldout.py table skills/heldout/results/h200-2026-11-30
    python bench/heldout.py predict skills/heldout/results/h200-2026-11-30    # cards' predictions vs measured

Several folders make one table: a run (kernel and planner) found in an earlier folder hides the same run in a
later one, so a re-run of the search can stand beside the random baseline of an earlier call.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def run_files(folders: list[Path], suffix: str) -> dict[tuple[str, str], Path]:
    """(kernel, run name: search, random0, ...) -> its file; the first folder that has a run gives it."""
    found: dict[tuple[str, str], Path] = {}
    for folder in folders:
        for path in sorted(folder.glob(f"*{suffix}")):
            found.setdefault(tuple(path.name.removesuffix(suffix).rsplit(".", 1)), path)
    return found


def load(folders: list[Path]) -> dict[str, dict[str, dict]]:
    """kernel -> run name (search, random, random1, ...) -> `argus refine --json` summary."""
    runs: dict[str, dict[str, dict]] = {}
    for (kernel, name), path in sorted(run_files(folders, ".json").items()):
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


def observed_steps(folders: list[Path]) -> list[tuple[str, str, float]]:
    """(kernel, skill, measured speedup of the candidate over the state it was applied to) for every gated step."""
    found = []
    for (kernel, _), path in sorted(run_files(folders, ".jsonl").items()):
        for line in path.read_text(encoding="utf-8").splitlines():
            step = json.loads(line)
            skill, before, after = step["proposal"].get("skill"), step.get("ms_before"), step.get("ms_after")
            if skill and before and after:
                found.append((kernel, skill, before / after))
    return found


def ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    result = [0.0] * len(values)
    i = 0
    while i < len(order):  # ties share their mean rank
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            result[order[k]] = (i + j) / 2
        i = j + 1
    return result


def spearman(xs: list[float], ys: list[float]) -> float:
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else float("nan")


def predict(folders: list[Path]) -> str:
    """How well the committed cards' effects predict what each skill measured on the held-out kernels."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
    from argus.agent.sites import predicted_effect
    from argus.skills.library import load_cards

    cards = {c.id: c for c in load_cards()}
    steps = [(k, s, got) for k, s, got in observed_steps(folders) if s in cards]
    by_skill: dict[str, list[float]] = {}
    for _, skill, got in steps:
        by_skill.setdefault(skill, []).append(got)
    rows = ["| skill | predicted | measured on held-out (median, n) | min–max |", "| --- | ---: | ---: | ---: |"]
    for skill, got in sorted(by_skill.items(), key=lambda item: -predicted_effect(cards[item[0]])):
        median = sorted(got)[len(got) // 2]
        rows.append(
            f"| {skill} | {predicted_effect(cards[skill]):.3f}× | {median:.3f}× ({len(got)}) "
            f"| {min(got):.3f}–{max(got):.3f} |"
        )
    predicted = [predicted_effect(cards[s]) for _, s, _ in steps]
    measured = [got for _, _, got in steps]
    rows.append(f"\nSpearman rank correlation over {len(steps)} gated steps: {spearman(predicted, measured):.2f}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("table", help="print the markdown table of results folders")
    show.add_argument("folders", type=Path, nargs="+")
    guess = sub.add_parser("predict", help="the committed cards' predictions against the measured steps")
    guess.add_argument("folders", type=Path, nargs="+")
    args = parser.parse_args(argv)
    missing = [str(f) for f in args.folders if not f.is_dir()]
    if missing:
        print(f"no such folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    if args.command == "predict":
        print(predict(args.folders))
        return 0
    runs = load(args.folders)
    if not runs:
        print(f"no refine summaries (*.json) in {', '.join(map(str, args.folders))}", file=sys.stderr)
        return 1
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
