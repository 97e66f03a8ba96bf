"""The lineage walker: from an expert kernel, apply every applicable inverse transform, gate each candidate,
accept one by the rule below, and go on until nothing simplifies.

Acceptance rule (docs/skills.md, "The walker's rule"):
- a candidate is refused before the gate when a precondition of its rewrite fails (`still_checks`) or the
  verifier finds more errors in the kernel than in the text before it (`verifies`);
- on the CPU the gate runs compile (sm_90) and correct (interpreter, `small` sizes); every candidate is
  gated at the step it first appears (evidence or risk at that text); the first one, in transform-registry
  order and then source order, that passes both is the step; a candidate that passed at an earlier step is
  gated again (on the new text) only when it comes first;
- on a GPU the gate also profiles; every candidate of a step is gated and the one whose removal slows the
  kernel least is the step, so each later step removes an optimization that mattered more;
- a candidate rejected once is not tried again (same transform, same code, same rewrite), and the walk stops
  when no candidate passes or after `max_steps`.
"""

from __future__ import annotations

import difflib
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from argus.gate import GateResult, run_gate
from argus.gate.cluster import ClusterGate
from argus.gate.result import kernel_ms
from argus.skills.context import SiteContext, site_contexts, with_compile
from argus.skills.document import Document
from argus.skills.facts import verify_errors
from argus.skills.lineage.record import Candidate, KernelFactsRecord, Lineage, PreconditionCheck, Step
from argus.skills.text import text_at
from argus.skills.transforms import TRANSFORMS
from argus.skills.transforms.base import Application

CPU_RULE = (
    "cpu: refused before the gate if it would not check or adds verifier errors; otherwise gated (compile for "
    "sm_90, correct under the interpreter at the small sizes) at the step it first appears; the first candidate "
    "in registry and source order that passes is the step (one that passed before is gated again on the new "
    "text only then); no profile, so no slowdown is recorded"
)
GPU_RULE = (
    "gpu: refused before the gate if it would not check or adds verifier errors; every other candidate gated "
    "(compile, correct, profile); the passing candidate with the smallest slowdown is the step"
)

Gate = Callable[[str, str], GateResult]


def cpu_gate(path: str, timeout_s: float = 300, compile_configs: int = 8, executor=None) -> Gate:
    """`executor` (argus.gate.cluster): the step's candidates go to it together."""
    if executor is not None:
        stages = ("compile", "correct")
        return ClusterGate(executor, path=path, device="cpu", stages=stages, timeout_s=timeout_s,
                           compile_configs=compile_configs)  # fmt: skip

    def gate(text: str, kernel: str) -> GateResult:
        return run_gate(
            text, path=path, kernel=kernel, device="cpu", stages=("compile", "correct"), timeout_s=timeout_s,
            compile_configs=compile_configs,
        )  # fmt: skip

    return gate


def cuda_gate(path: str, timeout_s: float = 300, compile_configs: int = 8, executor=None, **runner_options) -> Gate:
    """`runner_options` go to run.py (ceilings_file: the GPU's ceilings measured once for the whole walk)."""
    options = dict(device="cuda", timeout_s=timeout_s, compile_configs=compile_configs, **runner_options)
    if executor is not None:
        return ClusterGate(executor, path=path, **options)

    def gate(text: str, kernel: str) -> GateResult:
        return run_gate(text, path=path, kernel=kernel, **options)

    return gate


@dataclass
class Progress:
    """A one-line progress bar on stderr, redrawn in place when stderr is a terminal."""

    stream: object = field(default_factory=lambda: sys.stderr)
    width: int = 24

    def show(self, step: int, done: int, total: int, what: str) -> None:
        filled = int(self.width * done / total) if total else self.width
        bar = "█" * filled + "░" * (self.width - filled)
        line = f"[lineage] step {step} ▕{bar}▏ {done}/{total} {what}"
        tty = getattr(self.stream, "isatty", lambda: False)()
        self.stream.write(("\r\x1b[K" + line) if tty else line + "\n")
        self.stream.flush()

    def end(self) -> None:
        if getattr(self.stream, "isatty", lambda: False)():
            self.stream.write("\n")


def key(text: str, app: Application) -> tuple:
    """What makes two candidates the same rewrite across steps: transform, the code it rewrites (two identical
    insertions into different loads differ there), replaced text and replacement."""
    return (app.transform, text_at(text, app.anchor), tuple((text_at(text, e.span), e.new_text) for e in app.edits))


def diff(before: str, after: str, path: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), path, path, n=1)
    return "".join(lines)


def candidates(text: str, kernel: str, transforms=None) -> list[Application]:
    """Every inverse application on the kernel, in registry order; `transforms` (names) narrows the registry."""
    doc = Document.parse(text)
    chosen = [t for name, t in TRANSFORMS.items() if transforms is None or name in transforms]
    return [app for t in chosen for app in t.inverse(doc) if app.kernel == kernel]


def walk(
    expert: Path,
    kernel: str,
    gate: Gate,
    *,
    device: str,
    profiled: bool,
    max_steps: int = 20,
    progress: Progress | None = None,
    relative_to: Path | None = None,
    transforms=None,
) -> Lineage:
    started = time.perf_counter()
    text = expert.read_text(encoding="utf-8")
    shown = str(expert.resolve().relative_to(relative_to)) if relative_to else str(expert)
    record = Lineage(
        id=f"{expert.stem}.{kernel}",
        expert=shown,
        kernel=kernel,
        device=device,
        profiled=profiled,
        rule=GPU_RULE if profiled else CPU_RULE,
    )
    record.baseline = gate(text, kernel)
    tried: dict[tuple, str] = {}  # rewrite key -> its verdict when it was first gated
    base_verify = verify_errors(Document.parse(text).check, kernel_node(text, kernel))
    base_time = kernel_ms(record.baseline)
    base_gate = record.baseline  # the gate run on `text`: its compile facts go into the step's context
    for index in range(1, max_steps + 1):
        step = Step(index=index, text_before=text, facts=facts_record(text, kernel, base_verify))
        step.context = contexts(text, kernel, base_gate)
        fresh = [app for app in candidates(text, kernel, transforms) if tried.get(key(text, app)) != "rejected"]
        gated = gate_step(index, text, fresh, tried, kernel, gate, base_verify, shown, profiled, progress)
        passing: list[tuple[Candidate, str, float | None]] = []
        for number, (candidate, after) in sorted(gated.items()):
            tried[key(text, fresh[number - 1])] = "rejected" if candidate.verdict == "rejected" else "passed"
            step.candidates.append(candidate)
            if candidate.verdict == "passed":
                t = kernel_ms(candidate.gate)
                if profiled and base_time and t:
                    candidate.slowdown = round(t / base_time, 4)
                passing.append((candidate, after, t))
        if progress is not None:
            progress.show(index, len(fresh), len(fresh), "done")
        if passing:
            chosen = min(passing, key=lambda p: p[0].slowdown or 0.0) if profiled else passing[0]
            chosen[0].verdict = "accepted"
            step.accepted, step.text_after = chosen[0].id, chosen[1]
            text, base_time, base_gate = chosen[1], chosen[2], chosen[0].gate
            base_verify = verify_errors(Document.parse(text).check, kernel_node(text, kernel))
        record.steps.append(step)
        if not passing:
            break
    if progress is not None:
        progress.end()
    record.final_text = text
    record.seconds = round(time.perf_counter() - started, 1)
    return record


def facts_record(text: str, kernel: str, verify: int) -> KernelFactsRecord:
    f = Document.parse(text).facts[kernel]
    return KernelFactsRecord(
        constants=f.constants,
        policy=f.policy,
        tune=f.tune,
        divisible=sorted(list(p) for p in f.divisible),
        bounded=sorted(list(p) for p in f.bounded),
        stage_bytes=f.stage_bytes,
        stages=f.stages,
        dot_in_loop=f.dot_in_loop,
        loaded=sorted(f.loaded),
        stored=sorted(f.stored),
        verify_errors=verify,
    )


def contexts(text: str, kernel: str, gate: GateResult | None = None) -> list[SiteContext] | None:
    """The sites of `kernel` in `text` (argus.skills.context), with the gate's compile facts; None when the text
    does not give the kernel an IR."""
    try:
        found = site_contexts(Document.parse(text), kernel, gate)
    except Exception:  # the context describes a text; a text it cannot describe records none
        return None
    return found or None


def annotate(record: Lineage) -> Lineage:
    """A copy of a record with every step's and candidate's context filled in from its texts (the candidate's
    text rebuilt by its transform and title where the record does not hold it): what an older record, walked
    before contexts were recorded, gains without walking again."""
    from argus.skills.lineage.bundle import rebuild

    record = record.model_copy(deep=True)
    before = record.baseline
    for step in record.steps:
        step.context = contexts(step.text_before, record.kernel, before)
        for candidate in step.candidates:
            if candidate.verdict == "accepted" and step.text_after is not None:
                text = step.text_after
            else:
                text = rebuild(step.text_before, record.kernel, candidate.transform, candidate.title)
            candidate.context = contexts(text, record.kernel, candidate.gate) if text is not None else None
        before = next((c.gate for c in step.candidates if c.id == step.accepted), None)
    return record


def kernel_node(text: str, kernel: str):
    doc = Document.parse(text)
    return next(k for k in doc.kernels() if k.name == kernel)


def gate_step(index, text, fresh, tried, kernel, gate, base_verify, path, profiled, progress) -> dict:
    """The step's candidates that the rule gates (or refuses before the gate), by number: (candidate, text after).

    A gate with `many` (argus.gate.cluster.ClusterGate) gates a batch at once, so the record is the one the
    candidates gated one by one in order would give: on a GPU every candidate is gated; on the CPU every one not
    seen at an earlier step, then those seen before them, `width` at a time, up to the first that passes (one
    after it would not have been gated: a later batch member's result is dropped)."""
    seen, keys = [], set()
    for app in fresh:  # a rewrite seen at an earlier step, or earlier in this one
        seen.append(key(text, app) in tried or key(text, app) in keys)
        keys.add(key(text, app))
    numbers = range(1, len(fresh) + 1)
    shown = [0]

    def done(app: Application) -> None:
        if progress is not None:
            progress.show(index, shown[0], len(fresh), app.title)
            shown[0] += 1

    args = (index, text, fresh, kernel, gate, base_verify, path, done)
    gated = try_candidates([n for n in numbers if profiled or not seen[n - 1]], *args)
    if profiled:
        return gated
    first = min((n for n, (c, _) in gated.items() if c.verdict == "passed"), default=len(fresh) + 1)
    again = [n for n in numbers if seen[n - 1] and n < first]
    width = getattr(gate, "width", lambda: 1)()
    while again:
        batch, again = again[:width], again[width:]
        found = try_candidates(batch, *args)
        passed = [n for n in batch if found[n][0].verdict == "passed"]
        gated |= {n: found[n] for n in batch if not passed or n <= passed[0]}
        if passed:
            break
    return gated


def try_candidates(numbers, index, text, fresh, kernel, gate, base_verify, path, done) -> dict:
    """Candidates `numbers` of the step, their gate runs in one batch: {number: (candidate, text after)}."""
    made = {n: prepare_candidate(f"s{index}.c{n}", text, fresh[n - 1], kernel, base_verify, path) for n in numbers}
    waiting = [n for n in numbers if made[n][2]]
    items = [(made[n][1], kernel) for n in waiting]
    for result, n in zip(gate_all(gate, items, lambda i, _: done(fresh[waiting[i] - 1])), waiting, strict=True):
        finish_candidate(made[n][0], result)
    return {n: (candidate, after) for n, (candidate, after, _) in made.items()}


def gate_all(gate: Gate, items: list[tuple[str, str]], on_done) -> list[GateResult]:
    """A gate with `many` gates them all at once; a plain one, one after another."""
    many = getattr(gate, "many", None)
    if many is not None:
        return many(items, on_done)
    results = []
    for i, (text, kernel) in enumerate(items):
        results.append(gate(text, kernel))
        on_done(i, results[-1])
    return results


def try_candidate(cid: str, text: str, app: Application, kernel: str, gate: Gate, base_verify: int, path: str):
    candidate, after, gated = prepare_candidate(cid, text, app, kernel, base_verify, path)
    if gated:
        finish_candidate(candidate, gate(after, kernel))
    return candidate, after


def prepare_candidate(cid: str, text: str, app: Application, kernel: str, base_verify: int, path: str):
    """The candidate with its checks before the gate, the text after it, and whether the gate is to run."""
    started = time.perf_counter()
    after = app.result(text)
    candidate = Candidate(
        id=cid,
        transform=app.transform,
        title=app.title,
        params=app.params,
        anchor_line=app.anchor.line + 1,
        diff=diff(text, after, path),
        checks=[PreconditionCheck(name=c.name, holds=c.holds, found=c.found) for c in app.checks],
        verdict="rejected",
        context=contexts(after, kernel),
    )
    if app.failed is not None:
        candidate.reason = f"{app.failed.name}: {app.failed.found}"
    else:
        doc = Document.parse(after)
        node = next((k for k in doc.kernels() if k.name == kernel), None)
        candidate.verify_errors = verify_errors(doc.check, node) if node is not None else None
        holds = candidate.verify_errors is not None and candidate.verify_errors <= base_verify
        found = "" if holds else f"{candidate.verify_errors} verifier errors, {base_verify} before"
        candidate.checks.append(PreconditionCheck(name="verifies", holds=holds, found=found))
        if not holds:
            candidate.reason = f"verifies: {found}"
    candidate.seconds = round(time.perf_counter() - started, 1)
    return candidate, after, app.failed is None and not candidate.reason


def finish_candidate(candidate: Candidate, result: GateResult) -> None:
    """The candidate's verdict from its gate run; its seconds gain the run's own."""
    candidate.gate = result
    candidate.context = with_compile(candidate.context, result)
    if result.passed:
        candidate.verdict = "passed"
    else:
        candidate.reason = gate_reason(result)
    candidate.seconds = round(candidate.seconds + result.seconds, 1)


def gate_reason(result: GateResult) -> str:
    for name, stage in result.stages.items():
        if stage.status not in ("passed", "skipped"):
            return f"{name}: {stage.message}"
    if result.errors:
        return f"{result.errors[0].code}: {result.errors[0].message}"
    return "the gate did not pass"
