"""One lineage step's candidates gated one after another and through a local dask cluster (argus.gate.cluster):
wall times, and whether the results are the same. Prints a table.

    python bench/lineage_step.py skills/experts/softmax.argus --device cpu --workers 2
    python bench/lineage_step.py skills/experts/gemm.argus --kernel gemm --device cuda --runs-per-gpu 4 \\
        --ceilings-file /tmp/ceilings.json

The candidates are the walker's at the expert's first step, those its rule would gate (the ones a precondition
or the verifier refuses never reach the gate). Serial is `run_gate` in this process's children, as
`argus lineage --cluster serial` gates; clustered is `argus lineage`'s default, its start timed apart. On the
2-core development machines the times are only ratios; a GPU's are the H200's (docs/perf.md).

Each gate run is reported on stderr as it ends, and the serial half's wall time is told before the cluster starts,
so a call cut short still says something; `--limit N` gates the first N candidates only. Results are compared
without what differs between two runs of the same text: wall times everywhere, and on a GPU the profile's
timings (its verdict, sizes and FLOP counts are compared; the median times' ratio is printed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from argus.gate import GateResult, run_gate
from argus.gate.cluster import ClusterGate, open_executor
from argus.skills.document import Document
from argus.skills.facts import verify_errors
from argus.skills.lineage.walker import candidates, kernel_node, prepare_candidate

CPU_STAGES = ("compile", "correct")


# what two gate runs of one text may differ in: wall times, and what a GPU measures
VARIABLE = {"seconds"}
MEASURED = {
    "kernel", "eager", "compiled", "tflops", "gb_per_s", "ceilings", "percent_of_ceiling", "percent_of_bandwidth",
    "percent_of_compute", "speedup_over_eager", "speedup_over_compiled", "notes",
}  # fmt: skip


def timeless(result: GateResult) -> dict:
    def strip(value):
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VARIABLE}
        return [strip(v) for v in value] if isinstance(value, list) else value

    dumped = strip(result.model_dump())
    facts = dumped["profile"].get("facts")
    if facts:
        dumped["profile"]["facts"] = {k: v for k, v in facts.items() if k not in MEASURED}
    return dumped


def profile_ms(result: GateResult) -> float | None:
    facts = result.profile.facts
    return facts.kernel.ms_median if facts is not None else None


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def texts_to_gate(text: str, kernel: str, path: str) -> list[tuple[str, str]]:
    base = verify_errors(Document.parse(text).check, kernel_node(text, kernel))
    made = [prepare_candidate(f"c{i}", text, app, kernel, base, path) for i, app in enumerate(candidates(text, kernel))]
    return [(after, kernel) for _, after, gated in made if gated]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expert")
    parser.add_argument("--kernel", help="default: the file's first")
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--workers", type=int, help="CPU workers (default as argus lineage)")
    parser.add_argument("--runs-per-gpu", type=int, default=1)
    parser.add_argument("--ceilings-file", help="cuda: measure the ceilings once, before either timing")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--limit", type=int, help="gate only the first N candidates")
    args = parser.parse_args()
    text = Path(args.expert).read_text(encoding="utf-8")
    kernel = args.kernel or Document.parse(text).kernels()[0].name
    items = texts_to_gate(text, kernel, args.expert)[: args.limit]
    say(f"{len(items)} candidates to gate, serially then through the cluster")
    options = dict(device=args.device, timeout_s=args.timeout, seed=1, trials=3)
    if args.device == "cpu":
        options["stages"] = CPU_STAGES
    if args.device == "cuda":
        # measured once here and read by both timings: otherwise every gate run measures the ceilings again
        ceilings = args.ceilings_file or str(Path(tempfile.mkdtemp()) / "ceilings.json")
        options["ceilings_file"] = str(Path(ceilings).resolve())
        run_gate(text, path=args.expert, kernel=kernel, **options)
        say("ceilings measured")
    started = time.perf_counter()
    serial = []
    for i, (t, k) in enumerate(items):
        serial.append(run_gate(t, path=args.expert, kernel=k, **options))
        say(f"serial {i + 1}/{len(items)}: passed {serial[-1].passed}, {time.perf_counter() - started:.1f} s")
    serial_s = time.perf_counter() - started
    say(f"serial: {serial_s:.1f} s for {len(items)} gate runs; now the cluster")
    started = time.perf_counter()
    cluster = dict(workers=args.workers, device=args.device, runs_per_gpu=args.runs_per_gpu)
    with open_executor("local", **cluster) as executor:
        start_s = time.perf_counter() - started
        width = executor.width()
        started = time.perf_counter()
        clustered = ClusterGate(executor, path=args.expert, **options).many(items)
        clustered_s = time.perf_counter() - started
    same = [timeless(a) == timeless(b) for a, b in zip(serial, clustered, strict=True)]
    print(f"{Path(args.expert).stem}.{kernel}, step 1, {len(items)} candidates gated, device {args.device}")
    print("| path | runs at once | wall s | speedup |")
    print("| --- | --- | --- | --- |")
    print(f"| serial | 1 | {serial_s:.1f} | 1.00x |")
    print(f"| local cluster (start {start_s:.1f} s, not counted) | {width} | {clustered_s:.1f} | "
          f"{serial_s / clustered_s:.2f}x |")  # fmt: skip
    print(f"same results: {sum(same)} of {len(same)}; passed: {sum(r.passed for r in clustered)}")
    pairs = [(profile_ms(a), profile_ms(b)) for a, b in zip(serial, clustered, strict=True)]
    ratios = [c / s for s, c in pairs if s and c]
    if ratios:
        print(f"profile ms, clustered / serial: median {statistics.median(ratios):.3f} "
              f"({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} profiles)")  # fmt: skip


if __name__ == "__main__":
    main()
