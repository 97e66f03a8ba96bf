"""Verification of one kernel IR: evaluate two programs symbolically, collect obligations, decide them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

import z3

from argus.dsl import ir
from argus.dsl.checkpoint import checkpoint
from argus.dsl.diagnostics import Diagnostic, Severity, make
from argus.dsl.spans import Span
from argus.verify.carried_tiles import carried_sum_obligations, carried_tile_obligations
from argus.verify.contexts import new_context
from argus.verify.contraction_coverage import contraction_coverage_obligations
from argus.verify.contributions import double_count_obligations
from argus.verify.coverage import coverage_obligations
from argus.verify.evaluate import Evaluator, Shared, Unsupported
from argus.verify.hints import hint_for
from argus.verify.layout_text import layout_text, source_names
from argus.verify.model import Obligation
from argus.verify.races import race_obligations
from argus.verify.solve import DEFAULT_RLIMIT, Prover, Verdict
from argus.verify.walked_axes import walked_axis_obligations

SOURCE = "argus.verify"


class ValueLayout:
    """The layout of one named value, one line of text for hover: index map per tensor axis, mask, tags.

    The text is rendered on first use (a hover asks for one value; rendering all of them would cost as much
    as proving the kernel)."""

    __slots__ = ("_render", "_text", "name", "span")

    def __init__(self, span: Span, name: str, text: str | None = None, render: Callable[[], str] | None = None):
        self.span = span
        self.name = name
        self._text = text
        self._render = render

    @property
    def rendered(self) -> str | None:
        """The text if it was rendered already, else None: what a thread other than the verifier's may read."""
        return self._text

    @property
    def text(self) -> str:
        if self._text is None:
            try:
                self._text = self._render() if self._render is not None else ""
            except Exception as error:  # a hover must never fail because of a rendering bug
                self._text = f"(layout unavailable: {error!r})"
            self._render = None
        return self._text

    def moved(self, span: Span) -> ValueLayout:
        return ValueLayout(span, self.name, self._text, self._render)

    def __repr__(self) -> str:
        return f"ValueLayout({self.span}, {self.name!r}, {self.text!r})"


@dataclass(slots=True)
class VerifyStats:
    obligations: int = 0
    proved: int = 0
    refuted: int = 0
    unknown: int = 0
    milliseconds: float = 0.0
    capped: int = 0  # of the unknown: stopped by the wall-clock safety net, not by the budget (not cached)
    units: int = 0  # z3 resource units the deciding queries used: the same on a loaded or an idle machine

    def add(self, other: VerifyStats) -> None:
        self.obligations += other.obligations
        self.proved += other.proved
        self.refuted += other.refuted
        self.unknown += other.unknown
        self.milliseconds += other.milliseconds
        self.capped += other.capped
        self.units += other.units


@dataclass(slots=True)
class KernelReport:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    layouts: list[ValueLayout] = field(default_factory=list)
    stats: VerifyStats = field(default_factory=VerifyStats)


def merge_reports(declared: KernelReport, tune: KernelReport) -> KernelReport:
    """A kernel's declared-constants report with its tune values' diagnostics that it does not already have."""
    stats = VerifyStats()
    stats.add(declared.stats)
    stats.add(tune.stats)
    return KernelReport(added(declared.diagnostics, tune.diagnostics), list(declared.layouts), stats)


def added(first: list[Diagnostic], more: list[Diagnostic]) -> list[Diagnostic]:
    """`first`, then each of `more` whose code and place are not yet there."""
    seen = {(d.code, d.range.start.line, d.range.start.character) for d in first}
    out = list(first)
    for d in more:
        where = (d.code, d.range.start.line, d.range.start.character)
        if where not in seen:
            seen.add(where)
            out.append(d)
    return out


def program_names(kernel: ir.KernelIR) -> list[str]:
    names = [f"program_id({k})" for k in range(len(kernel.grid))]
    found: set[int] = set()
    for op in ir.walk_ops(kernel.body):
        if op.kind == "program_id" and op.attrs["axis"] not in found and op.result.name:
            names[op.attrs["axis"]] = op.result.name
            found.add(op.attrs["axis"])
    return names


def program_lines(kernel: ir.KernelIR) -> dict[str, int]:
    """The 0-based line of the `program_id(...)` each program id of a counterexample is named after."""
    names = program_names(kernel)
    lines: dict[str, int] = {}
    for op in ir.walk_ops(kernel.body):
        if op.kind == "program_id" and op.attrs["axis"] < len(names):
            lines.setdefault(names[op.attrs["axis"]], op.span.line)
    return lines


def verify_kernel(
    kernel: ir.KernelIR,
    timeout_ms: int,
    variant: str = "",
    rlimit: int = DEFAULT_RLIMIT,
    context: z3.Context | None = None,
) -> KernelReport:
    """Every obligation of one kernel; an internal failure becomes an unknown verdict, never an exception.
    Layouts (hover text) are produced for the declared constants only, not for a tune variant. `rlimit`: z3
    resource units per obligation (what decides); `timeout_ms`: the wall-clock safety net's unit; `context`:
    the z3 context the queries are decided in, a fresh one when None (solve.py says why)."""
    started = time.perf_counter()
    report = KernelReport()
    try:
        obligations, prover, layouts = collect(
            kernel, timeout_ms, with_layouts=not variant, rlimit=rlimit, context=context
        )
    except (Unsupported, z3.Z3Exception, RecursionError, KeyError, ValueError, TypeError, IndexError) as error:
        report.diagnostics.append(unknown_kernel(kernel, f"the verifier cannot model this kernel: {error}"))
        report.stats = VerifyStats(1, 0, 0, 1, (time.perf_counter() - started) * 1000)
        return report
    report.layouts = layouts
    programs = program_lines(kernel)
    mismatched: set[tuple[int, int]] = set()  # dots with a refuted AR310 or AR315: their AR316 is that mistake
    covered: set[str] = set()  # the outputs whose AR304 is proved
    for obligation in obligations:
        checkpoint("obligation")
        report.stats.obligations += 1
        try:
            verdict = echo(obligation, mismatched) or implied(obligation, covered)
            if verdict is None:
                if getattr(obligation, "build", None) is not None:
                    obligation = obligation.build()
                verdict = prover.decide(obligation)
            if verdict.status == "proved" and obligation.code == "AR304":
                covered.add(getattr(obligation, "tensor", ""))
            if verdict.status == "refuted" and obligation.code in ("AR310", "AR315"):
                spans = [obligation.span, *(span for span, _ in obligation.related)]
                mismatched.update((span.line, span.col) for span in spans)
            report.stats.units += verdict.units
            made = (
                None
                if verdict.status in ("proved", "suppressed")
                else diagnostic(obligation, verdict, hint_for(prover, obligation, verdict, kernel), variant, programs)
            )
        except Exception as error:  # one obligation's failure is its own unknown verdict, not the kernel's
            verdict = Verdict("unknown", f"internal verifier error: {error!r}")
            made = diagnostic(obligation, verdict, "", variant)
        if verdict.status == "proved":
            report.stats.proved += 1
            continue
        if verdict.status == "suppressed":
            report.stats.unknown += 1  # undecided, but its cause already has its own diagnostic
            continue
        if verdict.status == "refuted":
            report.stats.refuted += 1
        else:
            report.stats.unknown += 1
            report.stats.capped += verdict.exhausted == "wall"
        report.diagnostics.append(made)
    report.stats.milliseconds = (time.perf_counter() - started) * 1000
    return report


def echo(obligation: Obligation, mismatched: set[tuple[int, int]]) -> Verdict | None:
    """An AR316 claim about a dot whose contraction is refuted (AR310: b read one K block ahead of a also
    leaves a's last block unread) or whose K indices reach an atomic sum twice (AR315: overlapping split-K
    slices) is that mistake again: not decided, not reported."""
    dots = getattr(obligation, "dots", ())
    if any((span.line, span.col) in mismatched for span in dots):
        return Verdict("suppressed", "its dot's K indices are refuted already, which is reported on its own")
    return None


def implied(obligation: Obligation, covered: set[str]) -> Verdict | None:
    """An AR316 claim whose K half holds by its terms (contraction_coverage.k_part_holds) is its output's AR304
    claim for its one write: proved with it, built and decided only when that is not proved."""
    covers = getattr(obligation, "covers", "")
    if covers and covers in covered:
        return Verdict("proved", f"its K indices all reach the dot and AR304 of `{covers}` is proved")
    return None


def collect(
    kernel: ir.KernelIR,
    timeout_ms: int,
    with_layouts: bool = True,
    rlimit: int = DEFAULT_RLIMIT,
    context: z3.Context | None = None,
):
    shared = Shared(kernel)
    first = Evaluator(shared, "", record_obligations=True)
    requires, grid = first.launch()
    second = Evaluator(shared, "'", record_obligations=False)
    sizes = list(shared.sizes.values())
    base = [s >= 1 for s in sizes] + requires + first.program_ranges(grid)
    first.body_run()
    second.body_run()
    obligations: list[Obligation] = list(first.obligations)
    obligations += race_obligations(first, second, second.program_ranges(grid), grid)
    obligations += double_count_obligations(first, second, grid)
    obligations += coverage_obligations(first, grid)
    obligations += contraction_coverage_obligations(first, grid)
    obligations += carried_tile_obligations(first)
    obligations += carried_sum_obligations(first, grid)
    obligations += walked_axis_obligations(first)
    prover = Prover(
        shared.sizes,
        base,
        shared.facts,
        shared.gaps,
        shared.carried,
        program_names(kernel),
        timeout_ms,
        sorted(shared.functions),
        {name: c.value for name, c in kernel.constants.items()},
        rlimit,
        context if context is not None else new_context(),
    )
    layouts = []
    if with_layouts:
        names = source_names(kernel, first.suffix)
        layouts = [
            ValueLayout(span, name, render=partial(layout_text, sym, names))
            for span, name, sym in first.layouts.values()
        ]
    return obligations, prover, layouts


def diagnostic(
    ob: Obligation, verdict: Verdict, hint: str, variant: str, programs: dict[str, int] | None = None
) -> Diagnostic:
    """A refuted obligation's message says what is wrong on its first line, then gives the counterexample one
    part a line (witness.Counterexample.report); an undecided one is one line with its reason. `programs`: the
    line each program id is read at (program_lines)."""
    suffix = f" [{variant}]" if variant else ""
    if verdict.status == "refuted":
        witness = verdict.witness
        related = list(ob.related)
        if witness.second is not None and ob.second is not None:
            related.append((ob.second.span, f"the other program's {ob.second.what}: {witness.second.who()}"))
        loops = {loop.name: loop.span.line for loop in [*ob.loops, *(ob.second.loops if ob.second else [])]}
        parts = witness.report(programs, loops) + ([f"hint: {hint}"] if hint else [])
        first, severity = ob.message, None
        if verdict.confirmed:  # coverage: no program writes the element at these sizes (Prover.hole)
            first = (
                getattr(ob, "confirmed_message", "")
                or f"an element of output `{getattr(ob, 'tensor', '')}` is never written"
            )
            severity = Severity.error
        message = f"{first}{suffix}" + "".join(f"\n  {part}" for part in parts)
        d = make(
            ob.code,
            ob.span,
            message,
            severity=severity,
            related=related,
            verdict="refuted",
            counterexample=witness.model_dump(),
        )
        d.data["kind"] = ob.kind
        if variant:
            d.data["variant"] = variant
    else:
        message = f"not proved: {ob.message}{suffix} ({verdict.reason})"
        if hint:
            message += f"; {hint}"
        d = make("AR312", ob.span, message, related=list(ob.related), verdict="unknown", reason=verdict.reason)
        d.data.update(obligation=ob.code, kind=ob.kind, hint=hint)
        if verdict.exhausted:
            d.data["limit"] = verdict.exhausted  # "rlimit": the budget ran out; "wall": the safety net did
    if hint.startswith("`requires "):
        d.data["requires"] = hint.split("`")[1].removeprefix("requires ")
    d.source = SOURCE
    return d


def unknown_kernel(kernel: ir.KernelIR, reason: str) -> Diagnostic:
    d = make("AR312", kernel.span, f"not proved: {reason}", severity=Severity.warning, verdict="unknown", reason=reason)
    d.source = SOURCE
    return d
