"""Every example through the gate on a GPU: write the bundles here, run them there, print the table here.

    python bench/h200_examples.py bundle [--out build/h200] [--from examples/models]
                                                                 one bundle per example, plus run_all.sh
    [JOBS=8] bash build/h200/run_all.sh RESULTS_DIR              on the GPU machine (torch and triton only)
    python bench/h200_examples.py table RESULTS_DIR/*.json       the markdown table for docs/perf.md

The ceilings (copy bandwidth, cuBLAS fp16 and bf16 GEMM) are measured once per run_all.sh, by the first
bundle, and shared by the others through a file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

RUN_ALL = """#!/usr/bin/env bash
# Gate every example bundle in this folder on the GPU: python3 NAME/run.py for each, results to RESULTS_DIR.
# The first bundle runs alone and measures the ceilings; the others run JOBS at a time, taking turns on the
# GPU for their correctness trials and timings (--gpu-lock) while imports and compiles overlap.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/results}
mkdir -p "$out"
export DEVICE=${DEVICE:-cuda} TIMEOUT=${TIMEOUT:-240} TRIALS=${TRIALS:-5} OUT_DIR=$out
export CEILINGS=$(mktemp -u /tmp/argus-ceilings-XXXXXX.json) LOCK=$(mktemp -u /tmp/argus-gpu-XXXXXX.lock)
gate_one() {
    name=$(basename "$1")
    python3 "$1/run.py" --device "$DEVICE" --timeout "$TIMEOUT" --trials "$TRIALS" --gpu-lock "$LOCK" \\
        --ceilings-file "$CEILINGS" --out "$OUT_DIR/$name.json" > "$OUT_DIR/$name.log" 2>&1
    echo "$name: exit $? ($(date +%T))"
}
export -f gate_one
dirs=$(find "$here" -mindepth 2 -maxdepth 2 -name run.py -printf '%h\\n' | sort)  # bundles, not results
gate_one "$(echo "$dirs" | head -n 1)"
echo "$dirs" | tail -n +2 | xargs -P "${JOBS:-1}" -I{} bash -c 'gate_one "$1"' _ {}
"""


def write_bundles(out: Path, folder: Path = EXAMPLES) -> int:
    """One bundle per `.argus` file of `folder` (every kernel and model of the file), and run_all.sh."""
    from argus.gate import GateSetupError, write_bundle

    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for example in sorted(folder.glob("*.argus")):
        try:
            run_py = write_bundle(
                example.read_text(encoding="utf-8"), out / example.stem, path=str(example.relative_to(ROOT))
            )
            print(f"wrote {run_py.parent}")
        except GateSetupError as failure:
            print(f"{example}: {failure}", file=sys.stderr)
            status = 1
    (out / "run_all.sh").write_text(RUN_ALL, encoding="utf-8")
    print(f"wrote {out / 'run_all.sh'}")
    return status


def _stage_marks(result) -> str:
    return " ".join(f"{name} {stage.status.value}" for name, stage in result.stages.items())


def table(paths: list[Path]) -> int:
    from argus.gate import read_results

    results = [r for path in paths for r in read_results(path)]
    rows = [
        "| kernel | stages | sizes | ms (p10-p90) | TFLOP/s | GB/s | % of ceiling | eager ms | × eager | "
        "compiled ms | × compiled |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ceilings = None
    for r in results:
        facts = r.profile.facts
        if facts is None:
            rows.append(f"| `{r.kernel}` | {_stage_marks(r)} | | | | | | | | | |")
            continue
        ceilings = facts.ceilings
        sizes = ", ".join(f"{k}={v}" for k, v in facts.sizes.items())
        k = facts.kernel
        eager = facts.eager.ms_median if facts.eager else None
        compiled = facts.compiled.ms_median if facts.compiled else None
        rows.append(
            f"| `{r.kernel}` | {_stage_marks(r)} | {sizes} | {k.ms_median:.3f} ({k.ms_p10:.3f}-{k.ms_p90:.3f}) | "
            f"{facts.tflops:.1f} | {facts.gb_per_s:.0f} | {facts.percent_of_ceiling:.0f}% {facts.bound} | "
            f"{_opt(eager)} | {_opt(facts.speedup_over_eager, 'x')} | {_opt(compiled)} | "
            f"{_opt(facts.speedup_over_compiled, 'x')} |"
        )
    print("\n".join(rows))
    if ceilings is not None:
        print(
            f"\nCeilings ({ceilings.device}, same run): copy {ceilings.copy_gb_per_s:.0f} GB/s, cuBLAS fp16 GEMM "
            f"{ceilings.gemm_fp16_tflops:.0f} TFLOP/s, bf16 GEMM {ceilings.gemm_bf16_tflops:.0f} TFLOP/s."
        )
    for r in results:
        for error in r.errors:
            print(f"\n{r.kernel}: {error.code} {error.message}")
        if r.profile.facts is not None:
            for note in r.profile.facts.notes:
                print(f"\n{r.kernel}: {note}")
    return 0 if results and all(r.passed for r in results) else 1


def _opt(value: float | None, suffix: str = "") -> str:
    if value is None:
        return "–"
    return f"{value:.2f}{suffix}" if suffix else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    bundle = commands.add_parser("bundle", help="write one bundle per example and run_all.sh")
    bundle.add_argument("--out", type=Path, default=ROOT / "build" / "h200")
    bundle.add_argument(
        "--from",
        dest="folder",
        type=lambda text: (ROOT / text).resolve(),
        default=EXAMPLES,
        help="the folder of .argus files to bundle, relative to the repository (default examples; the "
        "expressiveness suite is examples/models)",
    )
    shown = commands.add_parser("table", help="print the markdown table of result files")
    shown.add_argument("results", nargs="+", type=Path)
    args = parser.parse_args(argv)
    return write_bundles(args.out, args.folder) if args.command == "bundle" else table(args.results)


if __name__ == "__main__":
    sys.exit(main())
