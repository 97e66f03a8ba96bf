"""Conversions between Argus positions (code-point columns) and LSP ones (the negotiated encoding)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from argus.dsl.spans import Span

if TYPE_CHECKING:  # the language core loads after the initialize answer, in the checking thread
    from argus.dsl import diagnostics as dsl

SEVERITY = {  # keyed by the value of argus.dsl.diagnostics.Severity (a StrEnum)
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


class Positions:
    """Maps between Argus spans and LSP ranges for one version of one document."""

    def __init__(self, lines: Sequence[str], codec: PositionCodec):
        self.lines = lines
        self.codec = codec

    def position(self, line: int, col: int) -> types.Position:
        """The client position of an Argus (line, code-point column), clamped into the document: a range
        outside it is one the client may refuse or show on the wrong line."""
        if not self.lines:
            return types.Position(line=0, character=0)
        if line >= len(self.lines):
            line, col = len(self.lines) - 1, len(self.lines[-1])
        line = max(line, 0)
        text = self.lines[line]
        return types.Position(line=line, character=self.codec.client_num_units(text[: max(col, 0)]))

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.line, span.col), end=self.position(span.end_line, span.end_col))

    def range_of(self, r: dsl.Range) -> types.Range:
        return types.Range(
            start=self.position(r.start.line, r.start.character),
            end=self.position(r.end.line, r.end.character),
        )

    def point(self, position: types.Position) -> tuple[int, int]:
        """(line, code-point column) of a client position, clamped into the document."""
        if not self.lines:
            return 0, 0
        line = min(max(position.line, 0), len(self.lines) - 1)
        text = self.lines[line]
        units = 0
        for col, char in enumerate(text):
            if units >= position.character:
                return line, col
            units += self.codec.client_num_units(char)
        return line, len(text)

    def span(self, r: types.Range) -> Span:
        start = self.point(r.start)
        end = self.point(r.end)
        if end < start:
            start, end = end, start
        return Span(start[0], start[1], end[0], end[1])


def diagnostic(d: dsl.Diagnostic, uri: str, positions: Positions) -> types.Diagnostic:
    from argus.dsl.codes import documentation_url  # the language core loads after the initialize answer

    href = documentation_url(d.code)
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=positions.range_of(r.range)), message=r.message
        )
        for r in d.related
    ]
    return types.Diagnostic(
        range=positions.range_of(d.range),
        message=d.message,
        severity=SEVERITY[str(d.severity)],
        code=d.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=d.source,
        related_information=related or None,
        data={"argus": d.data} if d.data else None,
    )
