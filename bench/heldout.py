"""The held-out check: naive kernels refined by the deterministic skill search against the random baseline with
the same gate budget, run (`run`, through the gate's executor) and tabled.

    python bench/heldout.py run --set skills/heldout2 --set skills/heldout --dir /tmp/heldout --left 540
    python bench/heldout.py table skills/heldout/results/h200-2026-11-30
    python bench/heldout.py predict skills/heldout/results/h200-2026-11-30    # cards' predictions vs measured
    python bench/heldout.py figures DIR [DIR ...] [--budgets 4 8]              # issue 15: new cards, old cards

Several folders make one table: a run (kernel and planner) found in an earlier folder hides the same run in a
later one, so a re-run of the search can stand beside the random baseline of an earlier call.

`figures` reads runs named search (the search planner on the new cards), oldsearch (on the cards as they were
before issue 15, bench/cards/before-issue15) and random0, random1, ... (the random planner on the new cards),
groups kernels by the folder of their file (skills/heldout2, skills/heldout) and reads every figure at a
budget B from the first B gate runs of each run's trajectory: the loop stops a run of budget B exactly there
(the planners never see the budget), so the first 4 gate runs of a run of 8 are the run of 4.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OLD_CARDS = ROOT / "bench" / "cards" / "before-issue15"
NEW_RUN, OLD_RUN = "search", "oldsearch"
BUDGETS = (4, 8)
SET_ORDER = ("heldout2", "heldout")  # the pre-registered set first
CONFIDENT, WRONG = 1.0, 0.8  # a covered prediction of at least 1.0 whose step measured under 0.8


def run_files(folders: list[Path], suffix: str) -> dict[tuple[str, str], Path]:
    """(kernel, run name: search, random0, ...) -> its file; the first folder that has a run gives it."""
    found: dict[tuple[str, str], Path] = {}
    for folder in folders:
        for path in sorted(folder.glob(f"*{suffix}")):
            parts = tuple(path.name.removesuffix(suffix).rsplit(".", 1))
            if len(parts) == 2:  # not ceilings.json or another file of the call
                found.setdefault(parts, path)
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
        ms = [number(search[key], digits, "") for key, digits in (("start_ms", 4), ("eager_ms", 3), ("best_ms", 4))]
        rows.append(
            f"| {kernel} | {' | '.join(ms)} "
            f"| {speedup(search):.2f}× | {number(eager, 1)} | {kept} | {random_text} | {search['budget']} + start |"
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
    if len(xs) < 2:
        return float("nan")
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


# --- run: every kernel of the sets refined by each run, through the gate's executor ----------------------------
#
# One `argus refine` a (kernel, run name), JOBS at a time, each a child of this process whose gate runs go to one
# cluster (argus.gate.cluster): local by default, started here (a worker per GPU, --runs-per-gpu K gate runs on
# each card at once, their GPU stages taking turns on its lock), or a scheduler's address; or serial, each
# refinement gating in its own children with --gpu-lock DIR/gpu.lock (the shell fan-out of old). Every run
# shares DIR/gate-cache (a text gated by one run is read back by the others, still one gate run of their
# budgets) and DIR/ceilings.json (on a GPU the first run measures the ceilings alone; the others start once the
# file is there). Per run DIR/KERNEL.NAME.{json,jsonl,best.argus,log}: the summary, the trajectory, the best
# source and the log. Resumable: a run whose summary parses is kept, the others start again (the gate cache
# replays what they had gated); --resume X.tgz seeds a DIR that does not exist from an earlier call's archive;
# --left S stops starting runs S seconds after the start, less --min-left, and ends the ones still going then.
# Writes OUT/NAME.tgz (NAME: DIR's basename; the device tool returns at most 8 files) when --out is given.

RUN_NAMES = "search, oldsearch, randomN"
REDRAW_S = 1.0
LOG_EVERY_S = 30.0  # off a terminal: a progress line at most this often, and one each time a run ends


@dataclass
class Job:
    path: Path
    name: str

    @property
    def kernel(self) -> str:
        return self.path.stem

    def base(self, folder: Path) -> Path:
        return folder / f"{self.kernel}.{self.name}"

    def file(self, folder: Path, suffix: str) -> Path:
        """DIR/KERNEL.NAME.json, .jsonl, .best.argus, .log."""
        return folder / f"{self.kernel}.{self.name}{suffix}"


def planner_args(name: str, old_cards: Path) -> list[str] | None:
    if name == "search":
        return ["--planner", "search"]
    if name == "oldsearch":
        return ["--planner", "search", "--library", str(old_cards)]
    if name.startswith("random") and name[len("random") :].isdigit():
        return ["--planner", "random", "--seed", name[len("random") :]]
    return None


def jobs_of(sets: list[str], kernels: list[str] | None, names: list[str]) -> list[Job]:
    """Kernel by kernel (runs of one kernel side by side share the most gate results), each with every run."""
    paths = []
    for folder in sets:
        if kernels:
            paths += [Path(folder) / f"{k}.argus" for k in kernels if (Path(folder) / f"{k}.argus").is_file()]
        else:
            paths += sorted(Path(folder).glob("*.argus"))
    return [Job(path, name) for path in paths for name in names]


def finished(summary: Path) -> bool:
    """A summary that parses: the run ended and printed it."""
    try:
        return "gate_runs" in json.loads(summary.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


def spent(trajectory: Path) -> int:
    """Gate runs a run's trajectory says it spent so far."""
    try:
        lines = trajectory.read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0
    total = 0
    for line in lines:
        with contextlib.suppress(ValueError, AttributeError):  # a line being written
            total += json.loads(line).get("gate_runs") or 0
    return total


def resume_from(archive: Path, folder: Path) -> bool:
    """Seed `folder` (absent) from an earlier call's archive of it (its top folder stripped, as tar
    --strip-components=1)."""
    import tarfile

    if folder.exists() or not archive.is_file():
        return False
    folder.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts[1:]
            if not parts or ".." in parts or Path(member.name).is_absolute():
                continue
            member.name = str(Path(*parts))
            tar.extract(member, folder, filter="data")
    return True


def archive(folder: Path, out: Path) -> Path:
    import tarfile

    target = out / f"{folder.name}.tgz"
    with tarfile.open(target, "w:gz") as tar:
        tar.add(folder, arcname=folder.name, filter=lambda info: None if info.name.endswith(".lock") else info)
    return target


class FanOut:
    """The whole fan-out's progress on stderr: gate runs spent over all runs' budgets, runs finished, running."""

    def __init__(self, jobs: list[Job], folder: Path, budget: int, end: float, stream=None) -> None:
        self.jobs, self.folder, self.budget, self.end = jobs, folder, budget, end
        self.stream = stream or sys.stderr
        self.live = getattr(self.stream, "isatty", lambda: False)()
        self.running: set[str] = set()
        self.children: set = set()  # the refinements' processes, each the leader of its own session
        self.ended = 0
        self.lock = threading.Lock()
        self.last = 0.0

    def line(self) -> str:
        runs = sum(min(self.budget, spent(job.file(self.folder, ".jsonl"))) for job in self.jobs)
        total = self.budget * len(self.jobs)
        done = sum(finished(job.file(self.folder, ".json")) for job in self.jobs)
        filled = int(24 * runs / total) if total else 24
        left = max(0, int(self.end - time.monotonic()))
        return (
            f"[heldout] ▕{'█' * filled}{'░' * (24 - filled)}▏ {runs}/{total} gate runs, {done}/{len(self.jobs)} "
            f"runs finished, {len(self.running)} running, {left} s left"
        )

    def show(self, force: bool = False) -> None:
        with self.lock:
            now = time.monotonic()
            if not (self.live or force or now - self.last >= LOG_EVERY_S):
                return
            self.last = now
            text = self.line()
            self.stream.write(("\r\x1b[K" + text) if self.live else text + "\n")
            self.stream.flush()

    def say(self, text: str) -> None:
        with self.lock:
            self.stream.write(("\r\x1b[K" if self.live else "") + text + "\n")
            self.stream.flush()

    def end_children(self) -> None:
        """The refinements still running, ended (SIGTERM to their sessions): a Ctrl-C of the runner."""
        for child in list(self.children):
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGTERM)

    def ticking(self, stop: threading.Event) -> None:
        while not stop.wait(REDRAW_S):
            self.show()


def refine_command(job: Job, args: argparse.Namespace, folder: Path, cluster: str, batch: int | None) -> list[str]:
    base = job.base(folder)
    command = [sys.executable, "-m", "argus", "refine", str(job.path), *planner_args(job.name, args.old_cards)]
    command += ["--budget", str(args.budget), "--device", args.device, "--no-memory", "--json"]
    command += ["--ceilings-file", str(folder / "ceilings.json"), "--gate-cache", str(folder / "gate-cache")]
    command += ["--log", f"{base}.jsonl", "-o", f"{base}.best.argus", "--timeout", str(args.timeout)]
    command += ["--cluster", cluster]
    if cluster == "serial":
        command += ["--gpu-lock", str(folder / "gpu.lock")]  # runners side by side take turns on the GPU
    elif batch is not None:
        command += ["--batch", str(batch)]
    return command


def run_one(job: Job, args, folder: Path, cluster: str, batch: int | None, end: float, fan: FanOut) -> str:
    import subprocess

    base = job.base(folder)
    if finished(job.file(folder, ".json")):
        return f"{job.kernel} {job.name}: finished earlier"
    left = end - time.monotonic()
    if left <= args.min_left:
        return f"{job.kernel} {job.name}: no time left"
    for suffix in (".json", ".jsonl", ".best.argus", ".log"):  # a run cut short starts again
        Path(f"{base}{suffix}").unlink(missing_ok=True)
    started = time.monotonic()
    paths = [str(ROOT / "server"), os.environ.get("PYTHONPATH")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, paths)))
    with open(f"{base}.json", "w") as out, open(f"{base}.log", "w") as log:
        child = subprocess.Popen(
            refine_command(job, args, folder, cluster, batch), stdout=out, stderr=log, stdin=subprocess.DEVNULL,
            env=env, start_new_session=True,
        )  # fmt: skip
        fan.running.add(f"{job.kernel}.{job.name}")
        fan.children.add(child)
        try:
            rc = child.wait(timeout=left)
        except subprocess.TimeoutExpired:  # out of time: the run and its gate runs end, and start again next call
            os.killpg(child.pid, signal.SIGTERM)
            try:
                rc = child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                rc = child.wait()
        finally:
            fan.running.discard(f"{job.kernel}.{job.name}")
            fan.children.discard(child)
    line = f"{job.kernel} {job.name} rc={rc} {time.monotonic() - started:.0f} s"
    with open(folder / "runs.txt", "a", encoding="utf-8") as runs:
        runs.write(line + "\n")
    return line


def ceilings_ready(folder: Path) -> bool:
    try:
        json.loads((folder / "ceilings.json").read_text(encoding="utf-8"))
        return True
    except (OSError, ValueError):
        return False


def run_all(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT / "server"))
    from concurrent.futures import ThreadPoolExecutor

    from argus.gate.cluster import SERIAL, ClusterError, open_executor

    started = time.monotonic()
    end = started + args.left
    folder = Path(args.dir).resolve()
    if args.resume and resume_from(Path(args.resume), folder):
        print(f"resumed from {args.resume}", file=sys.stderr)
    (folder / "gate-cache").mkdir(parents=True, exist_ok=True)
    names = args.runs.split()
    unknown = [n for n in names if planner_args(n, args.old_cards) is None]
    if unknown:
        print(f"no such run: {', '.join(unknown)} (runs: {RUN_NAMES})", file=sys.stderr)
        return 2
    jobs = jobs_of(args.set, args.kernels.split() if args.kernels else None, names)
    if not jobs:
        print(f"no kernels in {' '.join(args.set)} (kernels: {args.kernels or 'all'})", file=sys.stderr)
        return 1
    fan = FanOut(jobs, folder, args.budget, end)
    try:
        with contextlib.ExitStack() as stack:
            cluster, batch = SERIAL, None
            if args.cluster != SERIAL:
                options = dict(workers=args.workers, device=args.device, runs_per_gpu=args.runs_per_gpu)
                executor = stack.enter_context(open_executor(args.cluster, **options))
                cluster = executor.client.scheduler.address
                width = executor.width()
                batch = max(1, width // min(args.jobs, len(jobs)))  # the cluster's width shared by the runs at once
                print(f"[heldout] cluster {cluster}: {width} gate runs at once; {args.jobs} refinements at once, "
                      f"each gating up to {batch} of its proposals together", file=sys.stderr)  # fmt: skip
            stop = threading.Event()
            ticker = threading.Thread(target=fan.ticking, args=(stop,), daemon=True)
            ticker.start()
            stack.callback(stop.set)
            pool = stack.enter_context(ThreadPoolExecutor(args.jobs))
            stack.callback(fan.end_children)  # before the pool waits for its threads: none left at a normal end

            def one(job: Job) -> None:
                fan.say(run_one(job, args, folder, cluster, batch, end, fan))
                fan.show(force=True)

            todo = [job for job in jobs if not finished(job.file(folder, ".json"))]
            for job in jobs:
                if job not in todo:
                    fan.say(f"{job.kernel} {job.name}: finished earlier")
            if todo and args.device == "cuda" and not ceilings_ready(folder):
                first = pool.submit(one, todo.pop(0))  # it measures the GPU's ceilings; the others read them
                while not first.done() and not ceilings_ready(folder):
                    time.sleep(1)
            for future in [pool.submit(one, job) for job in todo]:
                future.result()
    except ClusterError as problem:
        print(f"bench/heldout.py run: {problem}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # the refinements, in sessions of their own, were ended on the way out
        print("bench/heldout.py run: interrupted; the runs not finished start again next call", file=sys.stderr)
        return 130
    kept = len(list((folder / "gate-cache").glob("*.json")))
    fan.say(f"{len(jobs)} runs, {kept} gate results kept, {time.monotonic() - started:.0f} s")
    if args.out:
        print(f"wrote {archive(folder, Path(args.out))}", file=sys.stderr)
    return 0


# --- issue 15: the search on the new and the old cards against random, at budgets 4 and 8 ---------------------


@dataclass
class Run:
    kernel: str
    name: str  # search, oldsearch, random0, ...
    set: str  # the folder of the kernel's file: heldout2, heldout
    start_ms: float | None
    steps: list[dict] = field(default_factory=list)
    budget: int = 0


def load_runs(folders: list[Path]) -> dict[tuple[str, str], dict[str, Run]]:
    """(set, kernel) -> run name -> the run, from the finished runs' summaries (their steps are the trajectory)."""
    runs: dict[tuple[str, str], dict[str, Run]] = {}
    for (kernel, name), path in sorted(run_files(folders, ".json").items()):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            print(f"skipped {path}: not a finished run's JSON", file=sys.stderr)
            continue
        group = Path(data.get("file") or "?/x").parent.name
        run = Run(kernel, name, group, data.get("start_ms"), data.get("steps") or [], data.get("budget") or 0)
        runs.setdefault((group, kernel), {})[name] = run
    return runs


def within(steps: list[dict], budget: int) -> list[dict]:
    """The steps a run of `budget` gate runs would have made: the loop proposes while fewer than `budget` gate
    runs are spent and at most 4 × budget + 20 steps were made (argus.agent.loop), and nothing else it does
    depends on the budget."""
    taken, runs = [], 0
    for step in steps:
        if runs >= budget or len(taken) >= 4 * budget + 20:
            break
        taken.append(step)
        runs += step.get("gate_runs") or 0
    return taken


def gate_runs(steps: list[dict]) -> int:
    return sum(step.get("gate_runs") or 0 for step in steps)


def best_speedup(run: Run, budget: int) -> float | None:
    """The start's ms over the best kept state's within the first `budget` gate runs (1.0: nothing kept);
    None when the start has no timing."""
    if not run.start_ms:
        return None
    kept = [s["ms_after"] for s in within(run.steps, budget) if s.get("kept") and s.get("ms_after")]
    return run.start_ms / min([run.start_ms, *kept])


def best_ms(run: Run, budget: int) -> float | None:
    found = best_speedup(run, budget)
    return None if found is None or run.start_ms is None else run.start_ms / found


def randoms(by_name: dict[str, Run]) -> list[Run]:
    return [run for name, run in sorted(by_name.items()) if name.startswith("random")]


def measured(step: dict) -> float | None:
    before, after = step.get("ms_before"), step.get("ms_after")
    return before / after if before and after else None


def step_spills(step: dict) -> int | None:
    """The register spill stores of the state the step started from (its context's compile facts)."""
    context = step.get("context") or []
    return context[0].get("spill_stores_bytes") if context and isinstance(context[0], dict) else None


def logged_prediction(step: dict) -> tuple[float | None, bool]:
    """(effect, covered) as the proposal logged them."""
    prediction = (step.get("proposal") or {}).get("prediction") or {}
    return prediction.get("effect"), bool(prediction.get("covered"))


def old_prediction(step: dict, cards: dict) -> tuple[float | None, bool]:
    """What the cards before issue 15 predict for a step another planner made: an old card claims its median
    wherever it applies (argus.skills.predict with no situation), so every prediction it makes is covered."""
    from argus.skills.predict import predict

    proposal = step.get("proposal") or {}
    card = cards.get(proposal.get("skill"))
    if card is None:
        return None, False
    params = ((proposal.get("prediction") or {}).get("params")) or {}
    return predict(card, None, params=params, spill_bytes=step_spills(step)).effect, True


@dataclass
class Judged:
    """Predicted against measured over gated steps with a timing: the pairs, the steps with no prediction, and
    the covered predictions of a gain that measured a loss of more than 20%. A step the search made at an
    earlier kept state (its proposal's `at`) is left out and counted: its ms_before is the best state's, not
    that of the state the skill was applied to."""

    pairs: list[tuple[float, float]] = field(default_factory=list)
    unpredicted: int = 0
    confident_wrong: int = 0
    elsewhere: int = 0

    def add(self, effect: float | None, covered: bool, got: float) -> None:
        if effect is None:
            self.unpredicted += 1
            return
        self.pairs.append((effect, got))
        if covered and effect >= CONFIDENT and got < WRONG:
            self.confident_wrong += 1

    @property
    def rho(self) -> float:
        if len(self.pairs) < 2:
            return float("nan")
        return spearman([p for p, _ in self.pairs], [g for _, g in self.pairs])


def judge(kernels: list[dict[str, Run]], budget: int, old: dict | None) -> Judged:
    """New cards (old None): the search's and the random runs' logged predictions. Old cards: the oldsearch
    steps' logged predictions, and the random steps' recomputed with the old cards (every one covered)."""
    judged = Judged()
    for by_name in kernels:
        own = by_name.get(NEW_RUN if old is None else OLD_RUN)
        for run in ([own] if own else []) + randoms(by_name):
            for step in within(run.steps, budget):
                got = measured(step)
                if got is None or not step.get("gate_runs"):
                    continue
                if (step.get("proposal") or {}).get("at"):
                    judged.elsewhere += 1
                    continue
                if old is None:
                    effect, covered = logged_prediction(step)
                elif run is own:
                    effect, covered = logged_prediction(step)[0], True
                else:
                    effect, covered = old_prediction(step, old)
                judged.add(effect, covered, got)
    return judged


def number(value: float | None, digits: int = 3, suffix: str = "×") -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}{suffix}"


@dataclass
class Figure:
    set: str
    cards: str  # new | old
    budget: int
    kernels: int
    search: float  # geometric mean over kernels of the search's best speedup
    random: float  # geometric mean over kernels of the random seeds' mean speedup
    ratio: float  # geometric mean over kernels of search / the seeds' mean
    judged: Judged


def figure(group: str, kernels: list[dict[str, Run]], cards: str, budget: int, old: dict | None) -> Figure:
    name = NEW_RUN if cards == "new" else OLD_RUN
    search_all, random_all, ratios = [], [], []
    for by_name in kernels:
        own = by_name.get(name)
        got = best_speedup(own, budget) if own else None
        seeds = [x for x in (best_speedup(r, budget) for r in randoms(by_name)) if x is not None]
        if got is None:
            continue
        search_all.append(got)
        if seeds:
            random_all.append(statistics.mean(seeds))
            ratios.append(got / statistics.mean(seeds))
    judged = judge(kernels, budget, old)
    return Figure(
        group, cards, budget, len(search_all), geomean(search_all), geomean(random_all), geomean(ratios), judged
    )


def sets_of(runs: dict[tuple[str, str], dict[str, Run]]) -> list[str]:
    found = {group for group, _ in runs}
    return [s for s in SET_ORDER if s in found] + sorted(found - set(SET_ORDER))


def compute(runs: dict[tuple[str, str], dict[str, Run]], budgets=BUDGETS, old: dict | None = None) -> list[Figure]:
    """Every figure, per set, card set (new, old) and budget; `old`: card id -> the card before issue 15."""
    result = []
    for group in sets_of(runs):
        kernels = [by_name for (g, _), by_name in sorted(runs.items()) if g == group]
        for cards in ("new", "old"):
            if not any((NEW_RUN if cards == "new" else OLD_RUN) in k for k in kernels):
                continue
            for budget in budgets:
                result.append(figure(group, kernels, cards, budget, None if cards == "new" else old or {}))
    return result


def figures_table(found: list[Figure]) -> str:
    rows = [
        "| set | cards | B | kernels | search × start | random × start | search / random | Spearman "
        "(steps; no prediction; at an earlier state) | covered, predicted ≥ 1.0, measured < 0.8 |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for f in found:
        j = f.judged
        rho = "-" if math.isnan(j.rho) else f"{j.rho:.2f}"
        rows.append(
            f"| {f.set} | {f.cards} | {f.budget} | {f.kernels} | {number(f.search)} | {number(f.random)} "
            f"| {number(f.ratio)} | {rho} ({len(j.pairs)}; {j.unpredicted}; {j.elsewhere}) | {j.confident_wrong} |"
        )
    return "\n".join(rows)


def kernels_table(runs: dict[tuple[str, str], dict[str, Run]], budgets=BUDGETS) -> str:
    small, large = min(budgets), max(budgets)
    rows = [
        f"| set | kernel | start ms | search: best ms (B={large}) | × start (B={small} / {large}) "
        f"| oldsearch: best ms | × start (B={small} / {large}) | random: × start, B={large} (each seed) "
        "| gate runs each | cached steps |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for group in sets_of(runs):
        for (g, kernel), by_name in sorted(runs.items()):
            if g != group:
                continue
            cells = []
            for name in (NEW_RUN, OLD_RUN):
                run = by_name.get(name)
                if run is None:
                    cells += ["-", "-"]
                    continue
                speedups = " / ".join(number(best_speedup(run, b), 2) for b in (small, large))
                cells += [number(best_ms(run, large), 4, ""), speedups]
            seeds = " / ".join(number(best_speedup(r, large), 2) for r in randoms(by_name)) or "-"
            every = sorted(by_name.values(), key=lambda r: (r.name != NEW_RUN, r.name != OLD_RUN, r.name))
            start = next((r.start_ms for r in every if r.start_ms), None)  # the search's, where it has one
            spent = sorted({gate_runs(within(r.steps, large)) for r in every})
            cached = sum(1 for r in every for s in within(r.steps, large) if s.get("cached"))
            steps = sum(len(within(r.steps, large)) for r in every)
            rows.append(
                f"| {group} | {kernel} | {number(start, 4, '')} | {' | '.join(cells)} | {seeds} "
                f"| {', '.join(map(str, spent))} | {cached} of {steps} |"
            )
    return "\n".join(rows)


def short_runs(runs: dict[tuple[str, str], dict[str, Run]], budget: int) -> list[str]:
    """Runs that spent fewer than `budget` gate runs (the planner ran out, or the run was cut short)."""
    return [
        f"{kernel}.{name} ({gate_runs(run.steps)} gate runs)"
        for (_, kernel), by_name in sorted(runs.items())
        for name, run in sorted(by_name.items())
        if gate_runs(within(run.steps, budget)) < budget
    ]


def load_old_cards(folder: Path = OLD_CARDS) -> dict:
    """Card id -> the card as it was before issue 15."""
    sys.path.insert(0, str(ROOT / "server"))
    from argus.skills.library import load_cards

    return {card.id: card for card in load_cards(folder)}


def figures(folders: list[Path], budgets=BUDGETS, old_cards: Path = OLD_CARDS) -> str:
    runs = load_runs(folders)
    old = load_old_cards(old_cards)
    given = max((run.budget for by_name in runs.values() for run in by_name.values()), default=0)
    unrun = [b for b in budgets if b > given]  # a B no run was given would repeat the largest one's figures
    budgets = tuple(b for b in budgets if b <= given) or budgets
    text = [figures_table(compute(runs, budgets, old)), "", kernels_table(runs, budgets)]
    short = short_runs(runs, max(budgets))
    if short:
        text += ["", f"Under {max(budgets)} gate runs: {', '.join(short)}"]
    if unrun:
        text += ["", f"Not run: B = {', '.join(map(str, unrun))} (the runs were given at most {given} gate runs)"]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="refine every kernel of the sets with each run, through the gate's executor")
    run.add_argument("--set", action="append", required=True, metavar="FOLDER", help="a kernels' folder (again: more)")
    run.add_argument("--dir", required=True, metavar="DIR", help="the results folder (resumed when it has runs)")
    run.add_argument("--runs", default="search oldsearch random0 random1 random2", help=f"run names ({RUN_NAMES})")
    run.add_argument("--kernels", help="only these kernels of the sets (names, space-separated)")
    run.add_argument("--budget", type=int, default=8, metavar="B", help="gate runs of each refinement (default 8)")
    run.add_argument("--jobs", type=int, default=16, metavar="N", help="refinements at once (default 16)")
    run.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    run.add_argument("--cluster", default="local", metavar="ADDRESS", help="local (default), serial or tcp://HOST:PORT")
    run.add_argument("--workers", type=int, metavar="N", help="local: CPU workers (default as argus refine)")
    run.add_argument("--runs-per-gpu", type=int, default=1, metavar="K", help="local: gate runs on a card at once")
    run.add_argument("--left", type=float, default=540, metavar="S", help="seconds this call may take (default 540)")
    run.add_argument("--min-left", type=float, default=30, metavar="S", help="start no run with less left")
    run.add_argument("--resume", metavar="X.tgz", help="seed a DIR that does not exist from an earlier archive")
    run.add_argument("--out", metavar="FOLDER", help="write FOLDER/NAME.tgz of DIR at the end")
    run.add_argument("--timeout", type=float, default=200, metavar="S", help="each gate run's limit (default 200)")
    run.add_argument("--old-cards", type=Path, default=OLD_CARDS, metavar="DIR", help="oldsearch's cards")
    show = sub.add_parser("table", help="print the markdown table of results folders")
    show.add_argument("folders", type=Path, nargs="+")
    guess = sub.add_parser("predict", help="the committed cards' predictions against the measured steps")
    guess.add_argument("folders", type=Path, nargs="+")
    both = sub.add_parser("figures", help="issue 15: search on the new and the old cards against random, per set")
    both.add_argument("folders", type=Path, nargs="+")
    both.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS), metavar="B")
    both.add_argument("--old-cards", type=Path, default=OLD_CARDS, metavar="DIR")
    args = parser.parse_args(argv)
    if args.command == "run":
        return run_all(args)
    missing = [str(f) for f in args.folders if not f.is_dir()]
    if missing:
        print(f"no such folder: {', '.join(missing)}", file=sys.stderr)
        return 1
    if args.command == "predict":
        print(predict(args.folders))
        return 0
    if args.command == "figures":
        print(figures(args.folders, tuple(args.budgets), args.old_cards))
        return 0
    runs = load(args.folders)
    if not runs:
        print(f"no refine summaries (*.json) in {', '.join(map(str, args.folders))}", file=sys.stderr)
        return 1
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
