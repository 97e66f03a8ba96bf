"""Lineage bundles (`argus lineage ... --device bundle -o build/lineage/ID`) profiled on a GPU machine through the
gate's executor (argus.gate.cluster): every bundle's expert first (it measures the ceilings, and its reference
under torch.compile too), then every candidate of every lineage, all in one fan-out with one progress bar;
`NAME.result.json` next to each bundle, as the bundle's run.sh writes them, so `argus lineage --read
build/lineage/ID` reads them back here.

    python bench/lineage_device.py build/lineage/gemm.gemm build/lineage/attention.attention --left 540 \\
        --runs-per-gpu 10 --out /tmp/out

A local cluster by default (a worker per GPU, --runs-per-gpu K gate runs on each card at once, their GPU stages
taking turns on its lock), a scheduler's address, or serial. A result already there is kept (resumable: a call
cut short by --left runs the others next time); runs still going at the deadline are cancelled, with no result.
"""

from __future__ import annotations

import _thread
import argparse
import contextlib
import json
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

from argus.gate.cluster import ClusterError, open_executor  # noqa: E402
from argus.gate.jobs import job_for_bundle  # noqa: E402
from argus.gate.result import GateRun  # noqa: E402
from argus.skills.lineage.bundle import MANIFEST  # noqa: E402
from argus.skills.lineage.walker import Progress  # noqa: E402


def bundles(folder: Path) -> list[str]:
    """The bundle names of a lineage folder, the expert (base) first."""
    names = sorted(p.parent.name for p in folder.glob("*/run.py"))
    return sorted(names, key=lambda name: name != "base")


def kernel_of(folder: Path) -> str:
    record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))["record"]
    return json.loads(Path(record).read_text(encoding="utf-8"))["kernel"]


def jobs_for(folder: Path, names: list[str], kernel: str, ceilings: Path, timeout_s: float, device: str = "cuda"):
    """Jobs for the bundles without a result yet: the expert's reference timed eager and compiled (as run.sh's
    --references all), the candidates' eager only."""
    jobs = []
    for name in names:
        if (folder / f"{name}.result.json").is_file():
            continue
        references = "all" if name == "base" else "eager"
        options = dict(ceilings_file=str(ceilings), references=references)
        job = job_for_bundle(folder / name / "run.py", kernel, device=device, timeout_s=timeout_s,
                             label=f"{folder.name}.{name}", **options)  # fmt: skip
        jobs.append((folder / f"{name}.result.json", job))
    return jobs


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    folders = [Path(f).resolve() for f in args.lineages]
    missing = [str(f) for f in folders if not (f / MANIFEST).is_file()]
    if missing:
        print(f"not a lineage bundle folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    ceilings = folders[0].parent / "ceilings.json"  # shared by every lineage's runs
    pending = []
    for folder in folders:
        pending += jobs_for(folder, bundles(folder), kernel_of(folder), ceilings, args.timeout, args.device)
    progress, done = Progress(), [0]
    try:
        options = dict(workers=args.workers, device=args.device, runs_per_gpu=args.runs_per_gpu)
        with open_executor(args.cluster, **options) as executor:
            # the first expert alone, where the ceilings are not measured yet; then everything else at once
            first = [pending.pop(0)] if pending and not ceilings.is_file() else []
            for batch in (first, pending):
                if time.monotonic() - started > args.left - args.min_left:
                    break
                run_batch(executor, batch, progress, done, len(first) + len(pending), started + args.left)
    except ClusterError as problem:
        print(f"bench/lineage_device.py: {problem}", file=sys.stderr)
        return 1
    progress.end()
    for folder in folders:  # run.sh kept the ceilings in each folder: `argus lineage --read` finds them there too
        if ceilings.is_file() and not (folder / "ceilings.json").exists():
            shutil.copy(ceilings, folder / "ceilings.json")
        count = len(list(folder.glob("*.result.json")))
        print(f"{folder.name}: {count} of {len(bundles(folder))} results")
    print(f"{time.monotonic() - started:.0f} s")
    if args.out:
        print(f"wrote {archive(folders, Path(args.out))}")
    return 0


def run_batch(executor, batch, progress, done, total: int, deadline: float) -> None:
    """The batch through the executor, each result written as it comes; at the deadline the rest is cancelled
    (a Ctrl-C's way: nothing more starts, what runs is let go)."""
    if not batch:
        return

    def finished(index: int, result) -> None:
        target, job = batch[index]
        target.write_text(GateRun(results=[result]).model_dump_json(indent=1) + "\n", encoding="utf-8")
        done[0] += 1
        progress.show(1, done[0], total, job.label)

    jobs = [job for _, job in batch]
    alarm = threading.Timer(max(0.0, deadline - time.monotonic()), _thread.interrupt_main)
    alarm.daemon = True
    alarm.start()
    try:
        executor.map(jobs, finished)
    except KeyboardInterrupt:
        print(f"\nout of time: {total - done[0]} runs left for the next call", file=sys.stderr)
    finally:
        alarm.cancel()


def archive(folders: list[Path], out: Path) -> Path:
    import tarfile

    target = out / "lineage.tgz"
    with tarfile.open(target, "w:gz") as tar:
        for folder in folders:
            for path in sorted(folder.glob("*.result.json")) + sorted(folder.glob("ceilings.json")):
                tar.add(path, arcname=str(Path("build/lineage") / folder.name / path.name))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lineages", nargs="+", metavar="FOLDER", help="build/lineage/ID folders")
    parser.add_argument("--cluster", default="local", metavar="ADDRESS", help="local (default), serial or an address")
    parser.add_argument("--workers", type=int, metavar="N", help="local: CPU workers beside the GPU workers")
    parser.add_argument("--runs-per-gpu", type=int, default=1, metavar="K", help="local: gate runs on a card at once")
    parser.add_argument("--left", type=float, default=540, metavar="S", help="seconds this call may take")
    parser.add_argument("--min-left", type=float, default=20, metavar="S", help="start nothing with less left")
    parser.add_argument("--timeout", type=float, default=300, metavar="S", help="each gate run's limit")
    parser.add_argument("--out", metavar="FOLDER", help="write FOLDER/lineage.tgz of the results")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda", help="cpu: a try without a GPU")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
