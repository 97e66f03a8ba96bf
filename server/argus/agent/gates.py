"""Gate functions the refinement loop calls: (source, kernel) -> GateResult.

`local_gate` runs the real gate (argus.gate.run_gate, a killable child process). `cached` makes sure one
source is never gated twice in a run. `SharedGate` keeps results on disk (GateStore) for every run of a
session that shares the folder, so a text gated by one refinement is read back by the next. `scripted_profile`
is for tests on a machine without a GPU: it runs the real gate (compile, and correct under the interpreter)
and then fills the profile stage with a timing that a function of the source decides, in the same fields the
runner's profile stage writes, so the loop reads it exactly as it reads a GPU's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from argus.agent.states import analysis_of
from argus.gate.api import STAGES, run_gate
from argus.gate.process import Progress
from argus.gate.result import Ceilings, GateResult, ProfileFacts, Status, Timing
from argus.skills.apply import digest

Gate = Callable[[str, str], GateResult]


def local_gate(
    device: str = "auto",
    timeout_s: float = 120.0,
    stages: Sequence[str] = STAGES,
    on_progress: Progress = None,
    **runner_options,
) -> Gate:
    """The real gate on this machine; `on_progress` gets the runner's progress lines as they come, and
    `runner_options` go to run.py (trials, seed, ceilings_file, ...)."""

    def gate(source: str, kernel: str) -> GateResult:
        check = analysis_of(source).check  # the check the loop examined the text with, not a new one
        return run_gate(
            source, kernel=kernel, device=device, stages=stages, timeout_s=timeout_s, on_progress=on_progress,
            check=check, **runner_options,
        )  # fmt: skip

    return gate


def refine_gate(
    device: str,
    timeout_s: float,
    ceilings_file: str | Path,
    gpu_lock: str | None = None,
    on_progress: Progress = None,
    executor=None,
) -> Gate:
    """The gate a refinement runs every candidate through. The loop compares the kernel's own times, so the
    reference is timed eager only (torch.compile would be compiled and timed again at every run), and the GPU's
    ceilings are measured at the first profile and read from `ceilings_file` after that. With `executor`
    (argus.gate.cluster), the runs go to it; the runner's progress lines then stay on its worker."""
    options = dict(ceilings_file=str(ceilings_file), references="eager", gpu_lock=gpu_lock)
    if executor is not None:
        from argus.gate.cluster import ClusterGate

        return ClusterGate(executor, device=device, timeout_s=timeout_s, **options)
    return local_gate(device, timeout_s, on_progress=on_progress, **options)


def source_key(source: str, kernel: str) -> str:
    return digest(f"{kernel}\0{source}")


Done = Callable[[int, GateResult], None] | None


def gate_width(gate: Gate) -> int:
    """How many gate runs `gate` runs at once: its `width()` where it has `many` (argus.gate.cluster's
    ClusterGate, and the wrappers here around one), else 1."""
    return max(1, gate.width()) if hasattr(gate, "many") and hasattr(gate, "width") else 1


def gate_many(gate: Gate, items: Sequence[tuple[str, str]], on_done: Done = None) -> list[GateResult]:
    """Every (source, kernel)'s result, in order: at once where `gate` has `many`, else one after another."""
    many = getattr(gate, "many", None)
    if many is not None:
        return many(items, on_done)
    results = []
    for index, (source, kernel) in enumerate(items):
        results.append(gate(source, kernel))
        if on_done is not None:
            on_done(index, results[-1])
    return results


@dataclass
class CachedGate:
    """A gate that remembers its results: `runs` counts the calls that reached the wrapped gate.

    `prefetch` gates texts before anyone asks for them, together where the wrapped gate runs several at once;
    a call for a prefetched text takes its result then and counts as a run, as the gate run it would have
    started (so a budget is spent as without prefetching). `ahead` holds those not asked for yet."""

    gate: Gate
    results: dict[str, GateResult] = field(default_factory=dict)
    runs: int = 0
    ahead: dict[str, GateResult] = field(default_factory=dict)
    prefetched: int = 0  # texts gated ahead of their call, used or not

    def __call__(self, source: str, kernel: str) -> GateResult:
        key = source_key(source, kernel)
        if key not in self.results:
            self.runs += 1
            found = self.ahead.pop(key, None)
            self.results[key] = found if found is not None else self.gate(source, kernel)
        return self.results[key].model_copy(deep=True)  # callers may annotate their copy

    def seen(self, source: str, kernel: str) -> bool:
        """Gated already, or ahead of its call: a call for it starts no gate run."""
        key = source_key(source, kernel)
        return key in self.results or key in self.ahead

    def width(self) -> int:
        return gate_width(self.gate)

    def prefetch(self, items: Sequence[tuple[str, str]]) -> int:
        """Gate the texts not seen yet, at once where the wrapped gate can; how many were gated."""
        fresh: dict[str, tuple[str, str]] = {}
        for source, kernel in items:
            key = source_key(source, kernel)
            if not self.seen(source, kernel):
                fresh.setdefault(key, (source, kernel))
        if not fresh:
            return 0
        for key, result in zip(fresh, gate_many(self.gate, list(fresh.values())), strict=True):
            self.ahead[key] = result
        self.prefetched += len(fresh)
        return len(fresh)


def cached(gate: Gate) -> CachedGate:
    return gate if isinstance(gate, CachedGate) else CachedGate(gate)


# Results that say the gate could not finish (a time-out, a crash, out of memory) are not kept: under a loaded
# machine they may say more about the neighbours than about the text.
UNSTORED_CODES = frozenset({"AR504", "AR505", "AR506"})


class GateStore:
    """Gate results on disk: FOLDER/<key>.json, one GateResult a file, the key the SHA-256 of the kernel's name,
    the device asked for, the stages and the exact source. Written atomically (a temporary file, then
    os.replace), so any number of processes can share the folder; a reader sees a whole result or none."""

    def __init__(self, folder: str | Path, device: str, stages: Sequence[str] = STAGES) -> None:
        self.folder = Path(folder)
        self.device = device
        self.stages = tuple(stages)
        self.folder.mkdir(parents=True, exist_ok=True)

    def key(self, source: str, kernel: str) -> str:
        named = json.dumps([kernel, self.device, list(self.stages), source], ensure_ascii=False)
        return hashlib.sha256(named.encode("utf-8")).hexdigest()

    def path(self, source: str, kernel: str) -> Path:
        return self.folder / f"{self.key(source, kernel)}.json"

    def get(self, source: str, kernel: str) -> GateResult | None:
        try:
            return GateResult.model_validate_json(self.path(source, kernel).read_text(encoding="utf-8"))
        except (OSError, ValueError):  # absent, or not a result (a file left by something else)
            return None

    def put(self, source: str, kernel: str, result: GateResult) -> bool:
        """Keep `result` unless it says the gate could not finish; True when it was written."""
        if not storable(result):
            return False
        target = self.path(source, kernel)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.stem[:16]}.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(result.model_dump_json())
            os.chmod(temporary, 0o644)  # mkstemp's 0600, as any other result file would be
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return True

    @contextlib.contextmanager
    def claim(self, source: str, kernel: str) -> Iterator[None]:
        """While one process gates a text, another that asks for the same text waits for its result instead
        of gating it too (an advisory lock on FOLDER/<key>.lock; where locks do not work, both gate it)."""
        try:
            import fcntl
        except ImportError:  # not POSIX
            yield
            return
        try:
            handle = open(self.folder / f"{self.key(source, kernel)}.lock", "a")  # noqa: SIM115
        except OSError:
            yield
            return
        with handle:
            with contextlib.suppress(OSError):
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield  # the lock goes with the file's closing (or with the process)


def storable(result: GateResult) -> bool:
    if any(error.code in UNSTORED_CODES for error in result.errors):
        return False
    return all(stage.status != Status.error for stage in result.stages.values())


@dataclass
class SharedGate:
    """A gate that reads a text's result from `store` when some run gated it before, and otherwise gates it
    and keeps the result there. `hits` counts the results read back; `served` says whether this process got
    a text's result from the store. The loop counts a result read back as a gate run all the same (runs with
    and without a store compare at equal budgets) and marks its step `cached`."""

    gate: Gate
    store: GateStore
    hits: int = 0
    from_store: set[str] = field(default_factory=set)

    def __call__(self, source: str, kernel: str) -> GateResult:
        found = self.store.get(source, kernel)
        if found is None:
            with self.store.claim(source, kernel):
                found = self.store.get(source, kernel)  # gated by another process while this one waited
                if found is None:
                    result = self.gate(source, kernel)
                    self.store.put(source, kernel, result)
                    self.from_store.discard(self.store.key(source, kernel))
                    return result
        self.hits += 1
        self.from_store.add(self.store.key(source, kernel))
        return found

    def served(self, source: str, kernel: str) -> bool:
        return self.store.key(source, kernel) in self.from_store

    def width(self) -> int:
        return gate_width(self.gate)

    def many(self, items: Sequence[tuple[str, str]], on_done: Done = None) -> list[GateResult]:
        """As one call each, the texts the store lacks gated together: claimed first (in the order of their
        keys, so two processes claiming overlapping batches never wait on each other in a circle)."""
        results: list[GateResult | None] = [None] * len(items)

        def found(index: int, result: GateResult) -> None:
            self.hits += 1
            self.from_store.add(self.store.key(*items[index]))
            results[index] = result
            if on_done is not None:
                on_done(index, result)

        missing = []
        for index, (source, kernel) in enumerate(items):
            stored = self.store.get(source, kernel)
            if stored is None:
                missing.append(index)
            else:
                found(index, stored)
        with contextlib.ExitStack() as claims:
            keys = {self.store.key(*items[i]): i for i in missing}  # a text twice is claimed once
            for key in sorted(keys):
                claims.enter_context(self.store.claim(*items[keys[key]]))
            waited = []
            for index in missing:
                stored = self.store.get(*items[index])  # gated by another process while this one waited
                if stored is None:
                    waited.append(index)
                else:
                    found(index, stored)

            def done(position: int, result: GateResult) -> None:
                if on_done is not None:
                    on_done(waited[position], result)

            for index, result in zip(waited, gate_many(self.gate, [items[i] for i in waited], done), strict=True):
                self.store.put(*items[index], result)
                self.from_store.discard(self.store.key(*items[index]))
                results[index] = result
        return results  # type: ignore[return-value]


# What the scripted profile says it measured against: an H200's order of magnitude, marked as scripted.
SCRIPTED_CEILINGS = Ceilings(device="scripted", copy_gb_per_s=4000.0, gemm_fp16_tflops=700.0, gemm_bf16_tflops=700.0)


def scripted_timing(ms: float, sizes: dict[str, int] | None = None) -> ProfileFacts:
    timing = Timing(ms_median=ms, ms_p10=ms, ms_p90=ms, trials=100)
    return ProfileFacts(
        sizes=sizes or {},
        kernel=timing,
        flops=0.0,
        bytes=0.0,
        tflops=0.0,
        gb_per_s=0.0,
        ceilings=SCRIPTED_CEILINGS,
        bound="memory",
        percent_of_ceiling=0.0,
        percent_of_bandwidth=0.0,
        percent_of_compute=0.0,
        notes=["scripted timing: argus.agent.gates.scripted_profile, not a measurement"],
    )


def scripted_profile(gate: Gate, ms_of: Callable[[str], float]) -> Gate:
    """The real gate, then a profile stage that reports `ms_of(source)` for a source that compiled and was
    correct (the runner profiles only those too)."""

    def profiled(source: str, kernel: str) -> GateResult:
        result = gate(source, kernel)
        if result.compile.status == Status.passed and result.correct.status == Status.passed and not result.errors:
            sizes = result.correct.facts.sizes[0] if result.correct.facts and result.correct.facts.sizes else None
            result.profile.status = Status.passed
            result.profile.message = ""
            result.profile.facts = scripted_timing(float(ms_of(source)), sizes)
        return result

    return profiled
