"""`Analysis`: one version of one document, checked, and every editor question about it answered as plain data.

A snapshot never changes once made (what it computes on request is memoized in it, keyed by the question), so
a request that reads one never sees a half-applied edit, and answers for an older version are answers about
that version's text. Positions are Argus positions: 0-based lines, code-point columns (argus.dsl.spans.Span).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from argus.analysis import completion, hover, lookup, outline

if TYPE_CHECKING:
    from argus.analysis.completion import Completion, Signature
    from argus.analysis.outline import OutlineItem
    from argus.dsl import ast, ir
    from argus.dsl.check import CheckResult
    from argus.dsl.kernel_analysis import SymbolUse
    from argus.dsl.spans import Span


@dataclass(frozen=True, slots=True, eq=False)
class Analysis:
    uri: str
    version: int
    text: str
    check: CheckResult
    lines: Sequence[str]  # as the parser numbers them (argus.dsl.lines.split_lines)

    # ---- lookups ------------------------------------------------------------------------------------
    def symbol_at(self, line: int, col: int) -> SymbolUse | None:
        return lookup.symbol_at(self.check, line, col)

    def kernel_at(self, line: int) -> tuple[ast.Kernel, ir.KernelIR | None] | None:
        return lookup.kernel_at(self.check, line)

    # ---- hover --------------------------------------------------------------------------------------
    def hover(self, line: int, col: int, layouts: Sequence[Any] = ()) -> str | None:
        """Markdown for (line, col), or None; `layouts` are the verifier's value layouts for this text, of which
        only those already rendered are shown."""
        return hover.hover_text(self, line, col, self.symbol_at(line, col), layouts)

    def layouts_at(self, line: int, col: int, layouts: Sequence[Any]) -> list[Any]:
        """The layouts a hover at (line, col) would show, rendered or not (the caller renders them first)."""
        symbol = self.symbol_at(line, col)
        return hover.layouts_of(symbol, layouts) if symbol is not None else []

    # ---- completion ---------------------------------------------------------------------------------
    def completions(self, line: int, col: int) -> list[Completion]:
        """What may be typed at (line, col): only methods after a dot, else the names in scope and the
        language's own."""
        return completion.completions(self, line, col)

    def signature(self, line: int, col: int) -> Signature | None:
        """The builtin call the cursor is inside and the parameter it is at."""
        return completion.signature(self.lines, line, col)

    # ---- navigation ---------------------------------------------------------------------------------
    def definition(self, line: int, col: int) -> Span | None:
        return outline.definition(self, line, col)

    def outline(self) -> list[OutlineItem]:
        return outline.outline(self)
