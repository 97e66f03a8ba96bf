"""One call for every consumer (CLI, language server, gate): parse, then analyze, never raising."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
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


@contextmanager
def gc_paused() -> Iterator[None]:
    """Checking allocates many small objects and frees them all at once: collecting midway is wasted work
    (about a quarter of the time on a 2,000-line file). Cycles left behind are collected afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def check_source(text: str) -> CheckResult:
    with gc_paused():
        parsed = parse(text)
        analysis = analyze(parsed.module)
    diagnostics = sorted(
        parsed.diagnostics + analysis.diagnostics,
        key=lambda d: (d.range.start.line, d.range.start.character, d.code),
    )
    return CheckResult(parsed.module, analysis, diagnostics)
