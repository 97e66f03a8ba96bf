"""`argus refine FILE --kernel NAME`: refine a kernel with a planner; keep only what verifies, passes the gate
and is faster (docs/agent.md).

    argus refine FILE [--kernel NAME] [--planner search|random|llm] [--budget N] [--device auto|cpu|cuda]
                 [--seed S] [--model M] [--host URL] [--log FILE.jsonl] [-o OUT.argus | --write]
                 [--no-memory] [--json] [--timeout S] [--min-speedup X] [--ceilings-file FILE] [--gpu-lock FILE]
                 [--library DIR] [--gate-cache DIR] [--cluster local|serial|ADDRESS] [--workers N]
                 [--runs-per-gpu K] [--batch N]

Progress goes to stderr, one line a step, then a summary. The best source goes to OUT (-o), replaces FILE
(--write), or is printed as a unified diff. Exit status: 0 when the run finished (even with nothing kept),
1 on errors, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from argus.cli import (
    add_cluster_options,
    can_write,
    positive_float,
    positive_int,
    read_source,
    reason,
)
from argus.cli.progress import GateProgress, with_progress

if TYPE_CHECKING:
    from argus.gate.result import GateResult


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "refine",
        help="refine a kernel: a planner proposes, only what verifies, passes the gate and is faster is kept",
        description=__doc__.split("\n\n")[0] + " Exit status: 0 when done, 1 on errors, 2 on usage errors.",
    )
    parser.add_argument("file", metavar="FILE", help="an .argus file")
    parser.add_argument("--kernel", metavar="NAME", help="the kernel to refine (default: the file's only one)")
    parser.add_argument("--planner", choices=("search", "random", "llm"), default="search")
    parser.add_argument("--model", help="llm: the ollama model")
    parser.add_argument("--host", metavar="URL", help="llm: the ollama server (default localhost:11434)")
    parser.add_argument("--budget", type=int, default=8, metavar="N", help="gate runs of candidates (default 8)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    parser.add_argument("--seed", type=int, default=0, help="random: the planner's seed (default 0)")
    parser.add_argument("--log", metavar="FILE.jsonl", help="append the trajectory here, one JSON line a step")
    parser.add_argument("-o", "--output", metavar="OUT.argus", help="write the best source here")
    parser.add_argument("--write", action="store_true", help="replace FILE with the best source")
    parser.add_argument("--no-memory", action="store_true", help="neither read nor write .argus/memory.jsonl")
    parser.add_argument("--json", action="store_true", help="print a JSON summary on stdout")
    parser.add_argument("--timeout", type=positive_float, default=120.0, metavar="S", help="seconds per gate run")
    parser.add_argument(
        "--ceilings-file", metavar="FILE", help="reuse the GPU ceilings in FILE, or measure and write them there"
    )
    parser.add_argument("--gpu-lock", metavar="FILE", help="take turns on the GPU with other runs sharing FILE")
    parser.add_argument("--min-speedup", type=float, default=1.01, help="keep from this speedup (default 1.01)")
    parser.add_argument(
        "--library", metavar="DIR", help="the skill cards' folder every planner proposes from (default skills/library)"
    )
    parser.add_argument(
        "--gate-cache",
        metavar="DIR",
        help="read a candidate's gate result from DIR when any run gated the same text there before, else gate it "
        "and keep the result there (still one gate run of the budget); runs side by side may share DIR",
    )
    add_cluster_options(
        parser,
        "where the gate runs go, the search and random planners' next proposals gated together: local (a "
        "dask cluster started here: a worker per GPU and --workers CPU workers; the default, except that a run "
        "with nothing to gate together, the llm planner's, --budget 0, --batch 1 or a CPU run with one CPU "
        "worker, starts none and gates here), a dask scheduler's address (tcp://host:8786), or serial (here, "
        "one after another); docs/gate.md",
        None,
    )
    parser.add_argument(
        "--batch", type=positive_int, metavar="N",
        help="the most proposals gated together (default: as many gate runs as the cluster runs at once; 1: one "
        "at a time), for refinements that share a cluster",
    )  # fmt: skip
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.budget < 0 or (args.output and args.write):
        print("argus refine: --budget is at least 0, and -o and --write exclude each other", file=sys.stderr)
        return 2
    path = Path(args.file)
    source = read_source("refine", path)
    if source is None or not outputs_writable(args):
        return 2
    kernel, problem = pick_kernel(source, args.kernel)
    if kernel is None:
        print(f"argus refine: {path}: {problem}", file=sys.stderr)
        return 2
    refused = cannot_start(args, source, kernel)
    if refused:
        print(refused, file=sys.stderr)
        return 1
    from argus.agent.memory import Memory
    from argus.agent.planners import make_planner

    cards = library_cards(args.library)
    if isinstance(cards, str):
        print(cards, file=sys.stderr)
        return 2
    memory = None if args.no_memory else Memory.for_file(path)
    try:
        planner = make_planner(
            args.planner, memory=memory, seed=args.seed, model=args.model, host=args.host, cards=cards
        )
    except Exception as problem:  # PlannerUnavailable: the LLM planner's server does not answer
        print(f"argus refine: {problem}", file=sys.stderr)
        return 1
    from argus.gate.cluster import SERIAL, ClusterError, open_executor

    cluster = cluster_for(args, planner)
    with tempfile.TemporaryDirectory(prefix="argus-refine-") as scratch:
        try:
            ceilings = Path(args.ceilings_file) if args.ceilings_file else Path(scratch) / "ceilings.json"
            if cluster == SERIAL:
                result = refine_file(args, source, kernel, planner, memory, ceilings, cards)
            else:
                options = dict(workers=args.workers, device=args.device, runs_per_gpu=args.runs_per_gpu)
                with open_executor(cluster, **options) as executor:
                    result = refine_file(args, source, kernel, planner, memory, ceilings, cards, executor)
        except ClusterError as problem:
            print(f"argus refine: {problem}", file=sys.stderr)
            return 1
        except Exception as problem:  # a planner that stopped working mid-run (an LLM server gone or too slow)
            said = str(problem) if planner_unavailable(args, problem) else f"{type(problem).__name__}: {problem}"
            print(f"argus refine: {said}", file=sys.stderr)
            return 1
    return finish(args, path, source, result)


def cluster_for(args: argparse.Namespace, planner) -> str:
    """--cluster, or by default a local cluster, except for a run that has nothing to gate together (a planner
    that proposes one at a time, no budget, --batch 1, or a CPU run whose local cluster would have one worker):
    its gate runs go one after another here, with no cluster to start (1 to 5 s on the 2-core development
    machine, docs/gate.md)."""
    from argus.gate.cluster import LOCAL, SERIAL, default_cpu_workers

    if args.cluster is not None:
        return args.cluster
    if args.budget == 0 or args.batch == 1 or not callable(getattr(planner, "fork", None)):
        return SERIAL
    if args.device == "cpu" and (default_cpu_workers(0) if args.workers is None else args.workers) <= 1:
        return SERIAL
    return LOCAL


def cannot_start(args: argparse.Namespace, source: str, kernel: str) -> str:
    """Why this run could only spend its budget for nothing, said before the first gate run ("" if it can go):
    an error in the file, which no skill removes (a skill keeps what the kernel computes; an LLM may fix it,
    and the loop keeps a fix), or a gate that cannot run here."""
    if args.planner != "llm":
        found = kernel_errors(source, kernel)
        if found:
            first = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            return (
                f"{args.file}:{first['line']}: error[{first['code']}]: {first['message']}\n"
                f"argus refine: fix {first['code']} at line {first['line']} first{more}: a skill keeps what the "
                "kernel computes, so none removes an error (--planner llm may try to fix it)"
            )
    from argus.gate.process import gate_unavailable

    unavailable = gate_unavailable(args.device)
    return f"argus refine: {unavailable}" if unavailable else ""


def library_cards(folder: str | None):
    """The cards of --library (None: the default library), or the message that says why there are none."""
    if folder is None:
        return None
    from pydantic import ValidationError
    from yaml import YAMLError

    from argus.skills.library import load_cards

    if not Path(folder).is_dir():
        return f"argus refine: --library {folder}: not a folder"
    try:
        cards = load_cards(Path(folder))
    except (OSError, YAMLError, ValidationError) as problem:
        return f"argus refine: --library {folder}: {reason(problem) if isinstance(problem, OSError) else problem}"
    if not cards:
        return f"argus refine: --library {folder}: no skill cards (*.yaml)"
    return cards


def kernel_errors(source: str, kernel: str) -> list[dict]:
    """The file's check and verify errors, in source order (the gate refuses a file with check errors)."""
    from argus.agent.states import errors, examine

    return errors(examine(source, kernel))


def outputs_writable(args: argparse.Namespace) -> bool:
    """-o and --log are asked for before the first gate run, not found unwritable after the last one."""
    if args.output and not can_write("refine", args.output):
        return False
    if args.log:
        if not can_write("refine", args.log):
            return False
        try:
            Path(args.log).open("a", encoding="utf-8").close()  # the trajectory is appended to it anyway
        except OSError as problem:
            print(f"argus refine: cannot write {args.log}: {reason(problem)}", file=sys.stderr)
            return False
    return True


def pick_kernel(source: str, name: str | None) -> tuple[str | None, str]:
    from argus.dsl.check import check_source

    names = list(check_source(source).analysis.kernels)
    if name is not None:
        return (name, "") if name in names else (None, f"no kernel {name!r} (kernels: {', '.join(names) or 'none'})")
    if len(names) == 1:
        return names[0], ""
    return None, f"name a kernel with --kernel ({', '.join(names) or 'none checks'})"


def planner_unavailable(args: argparse.Namespace, problem: Exception) -> bool:
    """The LLM planner lost its server mid-run: its message says what to do."""
    if args.planner != "llm":
        return False
    from argus.agent.llm import PlannerUnavailable

    return isinstance(problem, PlannerUnavailable)


def refine_file(args, source: str, kernel: str, planner, memory, ceilings: Path, cards=None, executor=None):
    from argus.agent.gates import GateStore, SharedGate, refine_gate
    from argus.agent.loop import refine
    from argus.gate.api import STAGES

    progress = GateProgress("[refine]")
    gate = refine_gate(args.device, args.timeout, ceilings, args.gpu_lock, on_progress=progress.line, executor=executor)
    shared: list[SharedGate] = []  # read back results count as gate runs in the labels too

    def label(calls: int, count: int = 1) -> str:
        n = calls + sum(s.hits for s in shared)
        if count > 1:
            return f"{count} gate runs at once"
        return f"gate run {n} of {args.budget}" if n else "the start"

    gate = with_progress(gate, progress, label)
    if args.gate_cache:
        shared.append(SharedGate(gate, GateStore(args.gate_cache, args.device, STAGES)))
        gate = shared[0]
    print(f"[refine] {args.file}: {kernel}, planner {planner.name}, budget {args.budget} gate runs", file=sys.stderr)
    print("[refine] gating the start", file=sys.stderr, flush=True)

    def show(step) -> None:
        progress.say(f"[refine] {step_line(step, args.budget)}")

    result = refine(
        source, kernel, planner, budget=args.budget, gate=gate, path=args.file, memory=memory, log=args.log,
        on_step=show, cancel=threading.Event(), min_speedup=args.min_speedup, cards=cards, batch=args.batch,
    )  # fmt: skip
    if result.gated_ahead:
        width = gate.width() if args.batch is None else min(args.batch, gate.width())
        progress.say(
            f"[refine] {result.gated_ahead} candidates gated in batches of up to {width}: "
            f"{result.unused} of them no step asked for (wall time, no budget)"
        )
    return result


def proposal_text(proposal) -> str:
    if proposal.kind == "skill":
        return f"{proposal.skill} at line {(proposal.line or 0) + 1}" + (" (earlier state)" if proposal.at else "")
    return f"an edited {proposal.kind}"


def ms_text(ms: float | None) -> str:
    return "no timing" if ms is None else f"{ms:.4f} ms"


def step_line(step, budget: int) -> str:
    if step.kept:
        verdict = f"kept: {ms_text(step.ms_after)} (reward {step.reward:.3f})"
    else:
        verdict = f"{step.feedback.stage}: {step.feedback.message[:200]}"
    runs = f"{step.gate_runs} gate run" + ("" if step.gate_runs == 1 else "s") + (", cached" if step.cached else "")
    return f"step {step.index + 1} [{step.planner}] {proposal_text(step.proposal)} ({runs}) → {verdict}"


def notes(result) -> list[str]:
    found = []
    if result.start.ms is None and result.start.gate is not None:
        profile = result.start.gate.profile
        why = profile.message or f"profile {profile.status.value}"
        found.append(f"the start has no timing ({why}); nothing can be kept as faster without one")
    return found


def summary(result, args: argparse.Namespace) -> dict:
    from argus.agent.trajectory import step_json

    gate = result.start.gate
    eager = eager_ms(gate)
    return {
        "file": args.file,
        "kernel": result.kernel,
        "planner": args.planner,
        "library": args.library,  # None: skills/library
        "device": gate.device if gate is not None else None,
        "start_ms": result.start.ms,
        "best_ms": result.best.ms,
        "speedup": result.speedup,
        "eager_ms": eager,
        "speedup_over_eager": None if eager is None or not result.best.ms else eager / result.best.ms,
        "gate_runs": result.gate_runs,
        "budget": args.budget,
        "stopped": result.stopped,
        "kept": result.skills,
        "start_gate": result.start_status,
        "start_cached": result.start_cached,
        "notes": notes(result),
        "steps": [step_json(s) for s in result.steps],
    }


def eager_ms(gate: GateResult | None) -> float | None:
    """The PyTorch reference as written, timed in the start's profile (the same inputs as the kernel)."""
    facts = gate.profile.facts if gate is not None else None
    return facts.eager.ms_median if facts is not None and facts.eager is not None else None


def table(data: dict) -> str:
    speedup = "-" if data["speedup"] is None else f"{data['speedup']:.3f}×"
    rows = [
        ("start", ms_text(data["start_ms"])),
        ("best", ms_text(data["best_ms"])),
        ("speedup", speedup),
        ("vs eager", "-" if data["speedup_over_eager"] is None else f"{data['speedup_over_eager']:.2f}×"),
        ("gate runs", f"{data['gate_runs']} of {data['budget']} (the start's run not counted)"),
        ("kept", f"{len(data['kept'])}: {', '.join(data['kept'])}" if data["kept"] else "0"),
        ("stopped", data["stopped"]),
        ("device", str(data["device"])),
    ]
    lines = [f"{name:<10} {value}" for name, value in rows]
    return "\n".join(lines + [f"note: {n}" for n in data["notes"]])


def finish(args: argparse.Namespace, path: Path, source: str, result) -> int:
    from argus.skills.apply import write_atomically

    data = summary(result, args)
    print(table(data), file=sys.stderr)
    best = result.best.source
    try:
        if args.output:
            Path(args.output).write_text(best, encoding="utf-8")
            data["output"] = args.output
        elif args.write and best != source:
            write_atomically(path, best)
            data["output"] = str(path)
    except OSError as problem:
        print(f"argus refine: cannot write: {problem}", file=sys.stderr)
        return 1
    diff = "".join(difflib.unified_diff(source.splitlines(True), best.splitlines(True), str(path), str(path)))
    if args.json:
        data["diff"] = diff
        print(json.dumps(data, indent=2, default=str))
    elif not args.output and not args.write:
        sys.stdout.write(diff)
    return 0
