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


def cpu_gate(path: str, timeout_s: float = 300, compile_configs: int = 8) -> Gate:
    def gate(text: str, kernel: str) -> GateResult:
        return run_gate(
            text, path=path, kernel=kernel, device="cpu", stages=("compile", "correct"), timeout_s=timeout_s,
            compile_configs=compile_configs,
        )  # fmt: skip

    return gate


def cuda_gate(path: str, timeout_s: float = 300, compile_configs: int = 8) -> Gate:
    def gate(text: str, kernel: str) -> GateResult:
        return run_gate(
            text, path=path, kernel=kernel, device="cuda", timeout_s=timeout_s, compile_configs=compile_configs
        )

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
        passing: list[tuple[Candidate, str, float | None]] = []
        for number, app in enumerate(fresh, 1):
            seen = key(text, app) in tried
            if not profiled and (passing and seen):
                continue  # on the CPU a candidate that passed before is gated again only to become the step
            if progress is not None:
                progress.show(index, number - 1, len(fresh), app.title)
            candidate, after = try_candidate(f"s{index}.c{number}", text, app, kernel, gate, base_verify, shown)
            tried[key(text, app)] = "rejected" if candidate.verdict == "rejected" else "passed"
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


def try_candidate(cid: str, text: str, app: Application, kernel: str, gate: Gate, base_verify: int, path: str):
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
        else:
            candidate.gate = gate(after, kernel)
            candidate.context = with_compile(candidate.context, candidate.gate)
            if candidate.gate.passed:
                candidate.verdict = "passed"
            else:
                candidate.reason = gate_reason(candidate.gate)
    candidate.seconds = round(time.perf_counter() - started, 1)
    return candidate, after


def gate_reason(result: GateResult) -> str:
    for name, stage in result.stages.items():
        if stage.status not in ("passed", "skipped"):
            return f"{name}: {stage.message}"
    if result.errors:
        return f"{result.errors[0].code}: {result.errors[0].message}"
    return "the gate did not pass"
