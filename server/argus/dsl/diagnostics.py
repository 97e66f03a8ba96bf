"""Diagnostics: what every layer reports, in the shape LSP and `argus check --json` use."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from argus.dsl.codes import CODES
from argus.dsl.spans import Span


class Severity(StrEnum):
    error = "error"
    warning = "warning"
    information = "information"
    hint = "hint"


class Position(BaseModel):
    line: int = Field(description="0-based line")
    character: int = Field(description="0-based column")


class Range(BaseModel):
    start: Position
    end: Position

    @classmethod
    def of(cls, span: Span) -> Range:
        return cls(
            start=Position(line=span.line, character=span.col),
            end=Position(line=span.end_line, character=span.end_col),
        )


class Related(BaseModel):
    """Another place that explains the diagnostic (the second access of a race, where a value came from)."""

    range: Range
    message: str


class Diagnostic(BaseModel):
    code: str
    severity: Severity
    message: str
    range: Range
    source: str = "argus"
    related: list[Related] = Field(default_factory=list)
    data: dict[str, Any] = Field(default_factory=dict)

    @property
    def line(self) -> int:
        return self.range.start.line

    def text_line(self, path: str) -> str:
        """`path:line:col: severity[CODE]: message`, with 1-based line and column like compilers print."""
        start = self.range.start
        return f"{path}:{start.line + 1}:{start.character + 1}: {self.severity.value}[{self.code}]: {self.message}"


def make(
    code: str,
    span: Span,
    message: str,
    *,
    severity: Severity | None = None,
    related: list[tuple[Span, str]] = (),
    **data: Any,
) -> Diagnostic:
    """A diagnostic with a registered code; the severity defaults to the code's own."""
    info = CODES[code]
    return Diagnostic(
        code=code,
        severity=severity or Severity(info.severity),
        message=message,
        range=Range.of(span),
        related=[Related(range=Range.of(s), message=m) for s, m in related],
        data=data,
    )


def shifted_diagnostic(d: Diagnostic, delta: int) -> Diagnostic:
    """A copy of `d` with its range and related places `delta` lines further down (its data copied as is)."""

    def move(r: Range) -> Range:
        return Range(
            start=Position(line=r.start.line + delta, character=r.start.character),
            end=Position(line=r.end.line + delta, character=r.end.character),
        )

    related = [Related(range=move(r.range), message=r.message) for r in d.related]
    return d.model_copy(update={"range": move(d.range), "related": related, "data": dict(d.data)})
