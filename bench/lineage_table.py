"""Profiled lineages as a table: per step, the inverse transform the walk accepted and its measured slowdown
(kernel time after undoing the optimization over before), from the records in skills/lineages.

    python bench/lineage_table.py [skills/lineages]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def rows(record: dict) -> list[str]:
    base = (record["baseline"] or {}).get("profile", {}).get("facts") or {}
    ms = base.get("kernel", {}).get("ms_median")
    lines = [f"| **{record['id']}** | expert | {ms:.4f} ms |" if ms else f"| **{record['id']}** | expert | - |"]
    for step in record["steps"]:
        for candidate in step["candidates"]:
            if candidate["verdict"] == "accepted":
                slowdown = candidate.get("slowdown")
                shown = f"{slowdown:.3f}×" if slowdown is not None else "not profiled"
                lines.append(f"| | {step['index']}. {candidate['title']} | {shown} |")
    return lines


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path("skills/lineages")
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    profiled = [r for r in records if r.get("profiled")]
    if not profiled:
        print(f"no profiled lineage in {folder}", file=sys.stderr)
        return 1
    print("| lineage | step (inverse accepted) | slowdown |\n| --- | --- | ---: |")
    for record in profiled:
        print("\n".join(rows(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
