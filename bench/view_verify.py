"""What declared views cost the verifier: examples/models/layernorm_chw.argus (x, w, b and y read through
`as [B, C * H * W]` views, whose extents are products of sizes, nonlinear terms for z3) against the same kernel
over flat `[B, N]` tensors. Prints a table, asserts nothing.

    .venv/bin/python bench/view_verify.py [--runs 5] [--rounds 2]

Each variant is checked once, then verified `--runs` times from scratch (no cache); the rounds alternate the
two variants so that the machine's load falls on both. The table gives obligations, the median wall time and
the median CPU time of the process per round.
"""

from __future__ import annotations

import argparse
import os
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

FLAT = [
    ("x: f16[B, C, H, W] as [B, C * H * W]", "x: f16[B, N]"),
    ("w: f16[C, H, W] as [C * H * W]", "w: f16[N]"),
    ("b: f16[C, H, W] as [C * H * W]", "b: f16[N]"),
    ("y: out f16[B, C, H, W] as [B, C * H * W]", "y: out f16[B, N]"),
    ("n = C * H * W", "n = N"),
    ("small: B = 3, C = 5, H = 7, W = 9", "small: B = 3, N = 315"),
    ("large: B = 64, C = 256, H = 32, W = 32", "large: B = 64, N = 262144"),
]


def variants() -> dict[str, str]:
    view = (ROOT / "examples" / "models" / "layernorm_chw.argus").read_text(encoding="utf-8")
    flat = view
    for old, new in FLAT:
        assert old in flat, old
        flat = flat.replace(old, new)
    return {"views [B, C * H * W]": view, "flat [B, N]": flat}


def timed(text: str, runs: int) -> tuple[int, float, float]:
    check = check_source(text)
    assert not check.has_errors, [d.message for d in check.diagnostics]
    walls, cpus, obligations = [], [], 0
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = verify_check(check)
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
        assert result.diagnostics == [], [d.message for d in result.diagnostics]
        obligations = result.stats.obligations
    return obligations, statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    texts = variants()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"layernorm_chw, {args.runs} verifications a round, load average {load:.1f} at the start")
    print("| variant | round | obligations | median ms | median CPU ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for number in range(1, args.rounds + 1):
        for name, text in texts.items():
            obligations, wall, cpu = timed(text, args.runs)
            print(f"| {name} | {number} | {obligations} | {wall:.1f} | {cpu:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
