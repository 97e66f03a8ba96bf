"""Source positions. Lines and columns are 0-based and ends are exclusive, as in LSP."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    def cover(self, other: Span) -> Span:
        start = min((self.line, self.col), (other.line, other.col))
        end = max((self.end_line, self.end_col), (other.end_line, other.end_col))
        return Span(start[0], start[1], end[0], end[1])


def point(line: int, col: int, length: int = 1) -> Span:
    return Span(line, col, line, col + length)
