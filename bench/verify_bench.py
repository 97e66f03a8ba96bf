"""Verification time of each example (and, with --corpus, of each corpus kernel): prints a table, asserts nothing.

    .venv/bin/python bench/verify_bench.py [--runs 7] [--corpus] [--calls]

Each example is checked once (parse + analysis, not timed here: bench/parse_bench.py measures it), then
verified `--runs` times from scratch (no cache) after one warm-up run: the table gives the median and the
slowest run (wall clock), the median CPU time of the process (less disturbed when other jobs share the
cores), the number of obligations (the declared tile constants and every value of each tune list) and the
time of a re-verification that hits the cache (what the language server pays for an unchanged kernel).
The aim is at most 300 ms median per example on the 2-core development machine. `--calls` adds the Python
function calls of one more verification (cProfile): a cost that does not move with the machine's load, for
comparing two commits (`PYTHONPATH=<worktree>/server`) on a shared machine where the timings do.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import platform
import pstats
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
from argus.verify import VerifyCache, verify_check  # noqa: E402

AIM_MS = 300.0


def python_calls(check) -> int:
    # A collection inside the profiled run frees z3 objects through Python finalizers and moves the count by
    # hundreds; collecting first and pausing the collector makes it a property of the code.
    gc.collect()
    gc.disable()
    try:
        profile = cProfile.Profile()
        profile.enable()
        verify_check(check)
        profile.disable()
    finally:
        gc.enable()
    return pstats.Stats(profile, stream=io.StringIO()).total_calls


def measure(path: Path, runs: int, calls: bool = False) -> dict:
    check = check_source(path.read_text(encoding="utf-8"))
    verify_check(check)  # warm-up: z3's first queries and Python's caches
    times, cpu = [], []
    result = None
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = verify_check(check)
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    cache = VerifyCache()
    verify_check(check, cache=cache)
    started = time.perf_counter()
    verify_check(check, cache=cache)
    cached = (time.perf_counter() - started) * 1000
    return {
        "name": path.name,
        "obligations": result.stats.obligations,
        "unknown": result.stats.unknown,
        "diagnostics": len(result.diagnostics),
        "median": statistics.median(times),
        "cpu": statistics.median(cpu),
        "max": max(times),
        "cached": cached,
        "calls": python_calls(check) if calls else None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--corpus", action="store_true", help="also time the bug corpus of tests/verify/corpus")
    parser.add_argument("--calls", action="store_true", help="also count the Python calls of one verification")
    args = parser.parse_args()
    paths = sorted((ROOT / "examples").glob("*.argus"))
    if not paths:
        print("no examples found", file=sys.stderr)
        return 2
    if args.corpus:
        paths += sorted((ROOT / "tests" / "verify" / "corpus").glob("*.argus"))
    print(f"# {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"# {args.runs} runs each after a warm-up; aim {AIM_MS:.0f} ms median per example\n")
    print(f"# load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    extra = " Python calls |" if args.calls else ""
    print(f"| file | obligations | diagnostics | median ms | max ms | median CPU ms | cached ms | within aim |{extra}")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |" + (" ---: |" if args.calls else ""))
    for path in paths:
        row = measure(path, args.runs, args.calls)
        ok = "yes" if row["median"] <= AIM_MS else "no"
        calls = f" {row['calls']:,} |" if args.calls else ""
        print(
            f"| `{row['name']}` | {row['obligations']} | {row['diagnostics']} | {row['median']:.1f} | "
            f"{row['max']:.1f} | {row['cpu']:.1f} | {row['cached']:.2f} | {ok} |{calls}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
