"""One call for every consumer (CLI, language server, gate): parse, then analyze, never raising."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.analyze import Analysis, analyze
from argus.dsl.diagnostics import Diagnostic
from argus.dsl.parser import parse


@dataclass(slots=True)
class CheckResult:
    module: ast.Module
    analysis: Analysis
    diagnostics: list[Diagnostic]

    @property
    def has_errors(self) -> bool:
        return any(d.severity.value == "error" for d in self.diagnostics)


def check_source(text: str) -> CheckResult:
    parsed = parse(text)
    analysis = analyze(parsed.module)
    diagnostics = sorted(
        parsed.diagnostics + analysis.diagnostics,
        key=lambda d: (d.range.start.line, d.range.start.character, d.code),
    )
    return CheckResult(parsed.module, analysis, diagnostics)
