"""`argus lineage EXPERT.argus [--kernel NAME] [--device cpu|cuda|bundle] [-o FILE]`: walk an expert kernel
backward through gate-validated simplifications and write the record (docs/skills.md).

`--device bundle` does not walk: it takes the CPU record (`--record`, by default skills/lineages/<id>.cpu.json)
and writes, into the folder `-o`, a gate bundle for the expert and for every candidate that passed on the CPU,
plus run.sh, which profiles them all on a GPU; `argus lineage --read FOLDER` then puts the GPU results into a
copy of the record (skills/lineages/<id>.json), with each step's measured slowdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

LINEAGES = Path("skills/lineages")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "lineage",
        help="walk an expert kernel backward through gated simplifications (a lineage record)",
        description="Walk an expert kernel backward. Exit status: 0 when a record was written, 1 on errors, "
        "2 on usage errors.",
    )
    parser.add_argument("expert", nargs="?", metavar="EXPERT.argus", help="the expert kernel's file")
    parser.add_argument("--kernel", help="the kernel to walk (default: the file's first)")
    parser.add_argument("--device", choices=("cpu", "cuda", "bundle"), default="cpu")
    parser.add_argument("-o", "--output", metavar="FILE", help="record file (bundle: the folder to write)")
    parser.add_argument("--record", metavar="FILE", help="bundle: the CPU record whose candidates to bundle")
    parser.add_argument("--read", metavar="FOLDER", help="read a bundle folder's GPU results back into its record")
    parser.add_argument("--max-steps", type=int, default=20, metavar="N")
    parser.add_argument("--timeout", type=float, default=300, metavar="SECONDS", help="each gate run's limit")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from argus.skills.lineage import bundle

    if args.read:
        written = bundle.read_back(Path(args.read), Path(args.output) if args.output else None)
        print(f"wrote {written}")
        return 0
    if not args.expert:
        print("argus lineage: an EXPERT.argus file is needed (or --read FOLDER)", file=sys.stderr)
        return 2
    expert = Path(args.expert)
    if not expert.is_file():
        print(f"argus lineage: no such file: {expert}", file=sys.stderr)
        return 2
    kernel = args.kernel or first_kernel(expert)
    if kernel is None:
        print(f"argus lineage: {expert} has no kernel that checks", file=sys.stderr)
        return 1
    if args.device == "bundle":
        record = Path(args.record) if args.record else LINEAGES / f"{expert.stem}.{kernel}.cpu.json"
        out = Path(args.output) if args.output else Path("build/lineage") / f"{expert.stem}.{kernel}"
        script = bundle.write(record, out)
        print(f"wrote {script}; on the GPU machine: bash {script}; then here: argus lineage --read {out}")
        return 0
    return walk(args, expert, kernel)


def first_kernel(expert: Path) -> str | None:
    from argus.skills.document import Document

    kernels = Document.parse(expert.read_text(encoding="utf-8")).kernels()
    return kernels[0].name if kernels else None


def walk(args: argparse.Namespace, expert: Path, kernel: str) -> int:
    from argus.skills.lineage.walker import Progress, cpu_gate, cuda_gate
    from argus.skills.lineage.walker import walk as walk_lineage

    gpu = args.device == "cuda"
    gate = (cuda_gate if gpu else cpu_gate)(str(expert), args.timeout)
    record = walk_lineage(
        expert,
        kernel,
        gate,
        device="cuda" if gpu else "cpu",
        profiled=gpu,
        max_steps=args.max_steps,
        progress=Progress(),
        relative_to=Path.cwd() if expert.resolve().is_relative_to(Path.cwd()) else None,
    )
    if gpu and record.baseline is not None:
        record.device = record.baseline.device
    suffix = ".json" if gpu else ".cpu.json"
    out = Path(args.output) if args.output else LINEAGES / f"{expert.stem}.{kernel}{suffix}"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(record.model_dump_json(indent=1) + "\n", encoding="utf-8")
    steps = sum(s.accepted is not None for s in record.steps)
    tried = sum(len(s.candidates) for s in record.steps)
    print(f"{record.id}: {steps} steps accepted, {tried} candidates tried, {record.seconds} s; wrote {out}")
    return 0
