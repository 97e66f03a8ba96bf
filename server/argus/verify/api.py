"""`verify_check`: the verifier's one entry point, for the CLI, the language server and the agent.

A kernel is verified in two parts: `declared`, the kernel as written (its declared tile constants), and
`tune`, each other value of each `tune` list (the others at their defaults). `part="all"` (the default, what
`argus check` uses) is both, merged. The language server asks for the parts one after the other, so the
verdicts on the kernel as written reach the editor without waiting for the tune values'; `merge_results` puts
the two together exactly as `part="all"` would have.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from argus.dsl import ast, ir
from argus.dsl.check import CheckResult
from argus.dsl.checkpoint import checkpoint
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.kernel_analysis import KernelAnalyzer
from argus.verify.cache import VerifyCache, kernel_key
from argus.verify.contexts import new_context
from argus.verify.kernel import (
    KernelReport,
    ValueLayout,
    VerifyStats,
    added,
    merge_reports,
    unknown_kernel,
    verify_kernel,
)
from argus.verify.solve import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS

PARTS = ("all", "declared", "tune")


@dataclass(slots=True)
class VerifyResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    layouts: list[ValueLayout] = field(default_factory=list)
    stats: VerifyStats = field(default_factory=VerifyStats)


def verify_check(
    check: CheckResult,
    *,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    rlimit: int = DEFAULT_RLIMIT,
    cache: VerifyCache | None = None,
    part: str = "all",
) -> VerifyResult:
    """Verify every kernel of a checked file that has no errors; never raises.

    `rlimit`: z3 resource units per obligation, what decides whether an obligation is settled or out of
    budget, the same on any machine under any load. `timeout_ms`: not a budget any more, the least unit of
    the wall-clock safety net (solve.wall_cap_ms: at least WALL_CAP_FACTOR x timeout_ms, and at least as long
    as the budget lasts at WALL_UNITS_PER_MS), whose hit the verdict reports as such.
    `part`: "all" (the declared tile constants and every other tune value, merged), "declared" (the kernel as
    written, with its layouts) or "tune" (only the other tune values; `merge_results(declared, tune)` equals
    "all")."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, not {part!r}")
    budget = Budget(int(timeout_ms), int(rlimit))
    started = time.perf_counter()
    result = VerifyResult()
    kernels = {k.name: k for k in check.module.kernels}
    for name, kernel in check.analysis.kernels.items():
        if has_errors(check, kernel):
            continue
        checkpoint("kernel")
        report = verify_cached(kernel, kernels.get(name), budget, cache, part)
        result.diagnostics.extend(report.diagnostics)
        result.layouts.extend(report.layouts)
        result.stats.add(report.stats)
    result.diagnostics.sort(key=position)
    result.stats.milliseconds = (time.perf_counter() - started) * 1000
    return result


def merge_results(declared: VerifyResult, tune: VerifyResult) -> VerifyResult:
    """The declared part's result with the tune part's diagnostics that it does not already have (same code
    at the same place): what `verify_check(part="all")` returns for the same file."""
    merged = VerifyResult(stats=VerifyStats())
    merged.diagnostics = added(declared.diagnostics, tune.diagnostics)
    merged.diagnostics.sort(key=position)
    merged.layouts = [*declared.layouts, *tune.layouts]
    merged.stats.add(declared.stats)
    merged.stats.add(tune.stats)
    return merged


def has_tune_values(check: CheckResult) -> bool:
    """Whether `part="tune"` has anything to verify: a kernel without errors with a tune value other than its
    declared one."""
    return any(
        not has_errors(check, kernel)
        and any(v != c.value for c in kernel.constants.values() if not isinstance(c.value, str) for v in c.tune)
        for kernel in check.analysis.kernels.values()
    )


def position(d: Diagnostic) -> tuple[int, int, str]:
    return (d.range.start.line, d.range.start.character, d.code)


def has_errors(check: CheckResult, kernel: ir.KernelIR) -> bool:
    first, last = kernel.span.line, kernel.span.end_line
    return any(d.severity.value == "error" and first <= d.range.start.line <= last for d in check.diagnostics)


@dataclass(frozen=True, slots=True)
class Budget:
    """Per obligation: `rlimit` z3 resource units (what decides), and the wall-clock safety net's unit."""

    timeout_ms: int = DEFAULT_TIMEOUT_MS
    rlimit: int = DEFAULT_RLIMIT


def verify_cached(
    kernel: ir.KernelIR, source: ast.Kernel | None, budget: Budget, cache: VerifyCache | None, part: str = "all"
) -> KernelReport:
    key = kernel_key(kernel, budget.timeout_ms, budget.rlimit)
    if cache is not None:
        hit = cache.get(key, kernel.span.line, part)
        if hit is not None:
            return hit
    if part == "all":
        parts = {"declared": guarded(kernel, source, budget, "declared")}
        parts["tune"] = guarded(kernel, source, budget, "tune")
        report = merge_reports(parts["declared"], parts["tune"])
    else:
        parts = {part: guarded(kernel, source, budget, part)}
        report = parts[part]
    if cache is not None:
        for name, part_report in parts.items():
            if not part_report.stats.capped:  # the safety net stopped z3: a rerun at rest may decide it
                cache.put(key, kernel.span.line, part_report, name)
    return report


def guarded(kernel: ir.KernelIR, source: ast.Kernel | None, budget: Budget, part: str) -> KernelReport:
    try:
        if part == "declared":
            return verify_kernel(kernel, budget.timeout_ms, rlimit=budget.rlimit)
        return verify_tunes(kernel, source, budget)
    except Exception as error:  # a verifier bug must not take down the editor or the CLI
        return KernelReport([unknown_kernel(kernel, f"internal verifier error: {error!r}")])


def verify_tunes(kernel: ir.KernelIR, source: ast.Kernel | None, budget: Budget) -> KernelReport:
    """Each other value of each `tune` list (the others at their defaults): the tool offers retuning, so a value
    it may pick must be as safe as the declared one. No layouts (hover shows the kernel as written)."""
    report = KernelReport()
    if source is None:
        return report
    context = None  # one z3 context for all the variants, made when the first needs it (solve.py says why)
    for name, constant in kernel.constants.items():
        if isinstance(constant.value, str):
            continue  # a dot input precision: it changes no index, so nothing here to verify again
        for value in constant.tune:
            if value == constant.value or isinstance(value, str):
                continue  # a string in a number's tune list is AR409 already (argus.dsl.declarations)
            checkpoint("kernel")
            variant = variant_ir(source, {name: value})
            if variant is None:
                continue
            context = context or new_context()
            what = f"with {name} = {value} from its tune list"
            extra = verify_kernel(variant, budget.timeout_ms, what, rlimit=budget.rlimit, context=context)
            report.stats.add(extra.stats)
            report.diagnostics = added(report.diagnostics, extra.diagnostics)
    return report


def variant_ir(source: ast.Kernel, overrides: dict[str, int | float]) -> ir.KernelIR | None:
    diagnostics: list[Diagnostic] = []
    kernel = KernelAnalyzer(source, diagnostics, [], overrides).run()
    if any(d.severity.value == "error" for d in diagnostics):
        return None  # this tune value does not even type-check (e.g. a dot dimension below 16)
    return kernel
