"""`verify_check`: the verifier's one entry point, for the CLI, the language server and the agent."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from argus.dsl import ast, ir
from argus.dsl.check import CheckResult
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.kernel_analysis import KernelAnalyzer
from argus.verify.cache import VerifyCache, kernel_key
from argus.verify.kernel import KernelReport, ValueLayout, VerifyStats, unknown_kernel, verify_kernel


@dataclass(slots=True)
class VerifyResult:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    layouts: list[ValueLayout] = field(default_factory=list)
    stats: VerifyStats = field(default_factory=VerifyStats)


def verify_check(check: CheckResult, *, timeout_ms: int = 1000, cache: VerifyCache | None = None) -> VerifyResult:
    """Verify every kernel of a checked file that has no errors; never raises."""
    started = time.perf_counter()
    result = VerifyResult()
    kernels = {k.name: k for k in check.module.kernels}
    for name, kernel in check.analysis.kernels.items():
        if has_errors(check, kernel):
            continue
        try:
            report = verify_cached(kernel, kernels.get(name), timeout_ms, cache)
        except Exception as error:  # a verifier bug must not take down the editor or the CLI
            report = KernelReport([unknown_kernel(kernel, f"internal verifier error: {error!r}")])
        result.diagnostics.extend(report.diagnostics)
        result.layouts.extend(report.layouts)
        result.stats.add(report.stats)
    result.diagnostics.sort(key=lambda d: (d.range.start.line, d.range.start.character, d.code))
    result.stats.milliseconds = (time.perf_counter() - started) * 1000
    return result


def has_errors(check: CheckResult, kernel: ir.KernelIR) -> bool:
    first, last = kernel.span.line, kernel.span.end_line
    return any(d.severity.value == "error" and first <= d.range.start.line <= last for d in check.diagnostics)


def verify_cached(kernel: ir.KernelIR, source: ast.Kernel | None, timeout_ms: int, cache: VerifyCache | None):
    key = kernel_key(kernel, timeout_ms)
    if cache is not None:
        hit = cache.get(key, kernel.span.line)
        if hit is not None:
            return hit
    report = verify_with_tunes(kernel, source, timeout_ms)
    if cache is not None:
        cache.put(key, kernel.span.line, report)
    return report


def verify_with_tunes(kernel: ir.KernelIR, source: ast.Kernel | None, timeout_ms: int) -> KernelReport:
    """The declared tile constants, then each other value of each `tune` list (the others at their defaults):
    the tool offers retuning, so a value it may pick must be as safe as the declared one."""
    report = verify_kernel(kernel, timeout_ms)
    seen = {(d.code, d.range.start.line, d.range.start.character) for d in report.diagnostics}
    if source is None:
        return report
    for name, constant in kernel.constants.items():
        for value in constant.tune:
            if value == constant.value:
                continue
            variant = variant_ir(source, {name: value})
            if variant is None:
                continue
            extra = verify_kernel(variant, timeout_ms, f"with {name} = {value} from its tune list")
            report.stats.add(extra.stats)
            for d in extra.diagnostics:
                where = (d.code, d.range.start.line, d.range.start.character)
                if where not in seen:
                    seen.add(where)
                    report.diagnostics.append(d)
    return report


def variant_ir(source: ast.Kernel, overrides: dict[str, int | float]) -> ir.KernelIR | None:
    diagnostics: list[Diagnostic] = []
    kernel = KernelAnalyzer(source, diagnostics, [], overrides).run()
    if any(d.severity.value == "error" for d in diagnostics):
        return None  # this tune value does not even type-check (e.g. a dot dimension below 16)
    return kernel
