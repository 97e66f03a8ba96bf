"""Source positions. Lines and columns are 0-based and ends are exclusive, as in LSP."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        if (line, col) < (self.line, self.col):
            return False
        return (line, col) <= (self.end_line, self.end_col)

    def cover(self, other: Span) -> Span:
        start = min((self.line, self.col), (other.line, other.col))
        end = max((self.end_line, self.end_col), (other.end_line, other.end_col))
        return Span(start[0], start[1], end[0], end[1])

    def shifted(self, lines: int) -> Span:
        return Span(self.line + lines, self.col, self.end_line + lines, self.end_col)


def point(line: int, col: int, length: int = 1) -> Span:
    return Span(line, col, line, col + length)
