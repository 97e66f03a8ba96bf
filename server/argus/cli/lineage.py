"""`argus lineage EXPERT.argus [--kernel NAME] [--device cpu|cuda|bundle] [-o FILE] [--cluster ADDRESS]`: walk an
expert kernel backward through gate-validated simplifications and write the record (docs/skills.md). A step's
candidates are gated together on a cluster (argus.gate.cluster): a local one by default, a scheduler's address, or
`serial`.

`--device bundle` does not walk: it takes the CPU record (`--record`, by default skills/lineages/<id>.cpu.json)
and writes, into the folder `-o`, a gate bundle for the expert and for every candidate that passed on the CPU,
plus run.sh, which profiles them all on a GPU; `argus lineage --read FOLDER` then puts the GPU results into a
copy of the record (skills/lineages/<id>.json), with each step's measured slowdown.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from argus.cli import (
    add_cluster_options,
    can_write,
    positive_float,
    positive_int,
    read_source,
    reason,
    write_output,
)

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
    parser.add_argument("--max-steps", type=positive_int, default=20, metavar="N")
    parser.add_argument("--timeout", type=positive_float, default=300, metavar="SECONDS", help="each gate run's limit")
    parser.add_argument(
        "--compile-configs", type=positive_int, default=8, metavar="N",
        help="configurations each gate run compiles for sm_90, the declared one first (default 8, as the gate); 1 "
        "makes a CPU walk of a kernel with long tune lists several times faster",
    )  # fmt: skip
    add_cluster_options(
        parser,
        "where a step's gate runs go together: local (a dask cluster started here: a worker per GPU, and "
        "--workers CPU workers; the default), a dask scheduler's address (tcp://host:8786), or serial (one after "
        "another, no cluster); docs/gate.md",
        "local",
    )
    parser.add_argument(
        "--ceilings-file", metavar="FILE",
        help="cuda: reuse the GPU's ceilings in FILE, or measure them at the first gate run and write them there "
        "(a path every worker can write; default: each gate run measures its own)",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.read:
        return read_back(args)
    if not args.expert:
        print("argus lineage: an EXPERT.argus file is needed (or --read FOLDER)", file=sys.stderr)
        return 2
    expert = Path(args.expert)
    text = read_source("lineage", expert)
    if text is None:
        return 2
    kernel = args.kernel or first_kernel(text)
    if kernel is None:
        print(f"argus lineage: {expert} has no kernel that checks", file=sys.stderr)
        return 1
    if args.device == "bundle":
        return write_bundles(args, expert, kernel)
    return walk(args, expert, kernel)


# What a record or a bundle folder that is not one raises when it is read: missing files, bad JSON, a record
# that does not validate (pydantic's ValidationError is a ValueError).
UNREADABLE = (OSError, ValueError, KeyError, TypeError)


def read_back(args: argparse.Namespace) -> int:
    from argus.skills.lineage import bundle

    try:
        written = bundle.read_back(Path(args.read), Path(args.output) if args.output else None)
    except UNREADABLE as problem:
        print(f"argus lineage: --read {args.read}: not a lineage bundle folder with results: {reason(problem)}",
              file=sys.stderr)  # fmt: skip
        return 2
    print(f"wrote {written}")
    return 0


def write_bundles(args: argparse.Namespace, expert: Path, kernel: str) -> int:
    from argus.skills.lineage import bundle

    record = Path(args.record) if args.record else LINEAGES / f"{expert.stem}.{kernel}.cpu.json"
    out = Path(args.output) if args.output else Path("build/lineage") / f"{expert.stem}.{kernel}"
    try:
        script = bundle.write(record, out)
    except UNREADABLE as problem:
        print(f"argus lineage: cannot bundle the record {record}: {reason(problem)}", file=sys.stderr)
        return 2
    print(f"wrote {script}; on the GPU machine: bash {script}; then here: argus lineage --read {out}")
    return 0


def first_kernel(text: str) -> str | None:
    from argus.skills.document import Document

    kernels = Document.parse(text).kernels()
    return kernels[0].name if kernels else None


def walk(args: argparse.Namespace, expert: Path, kernel: str) -> int:
    from argus.skills.lineage.walker import Progress, cpu_gate, cuda_gate
    from argus.skills.lineage.walker import walk as walk_lineage

    gpu = args.device == "cuda"
    suffix = ".json" if gpu else ".cpu.json"
    out = Path(args.output) if args.output else LINEAGES / f"{expert.stem}.{kernel}{suffix}"
    if not can_write("lineage", out):  # asked before a walk of many gate runs, not after it
        return 2
    from argus.gate.cluster import ClusterError, open_executor

    try:
        cluster = dict(workers=args.workers, device=args.device, runs_per_gpu=args.runs_per_gpu)
        with open_executor(args.cluster, **cluster) as executor:
            if gpu:
                ceilings = {"ceilings_file": str(Path(args.ceilings_file).resolve())} if args.ceilings_file else {}
                gate = cuda_gate(str(expert), args.timeout, args.compile_configs, executor, **ceilings)
            else:
                gate = cpu_gate(str(expert), args.timeout, args.compile_configs, executor)
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
    except ClusterError as problem:
        print(f"argus lineage: {problem}", file=sys.stderr)
        return 1
    if gpu and record.baseline is not None:
        record.device = record.baseline.device
    if not write_output("lineage", out, record.model_dump_json(indent=1) + "\n"):
        return 1
    steps = sum(s.accepted is not None for s in record.steps)
    tried = sum(len(s.candidates) for s in record.steps)
    print(f"{record.id}: {steps} steps accepted, {tried} candidates tried, {record.seconds} s; wrote {out}")
    return 0
