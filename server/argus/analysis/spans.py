"""Where a position falls: the two span tests every lookup and the code actions share."""

from __future__ import annotations

from argus.dsl.spans import Span


def contains(span: Span, line: int, col: int) -> bool:
    """Whether (line, col) lies in `span`, its end included (where a cursor often sits)."""
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)


def overlaps(a: Span, b: Span) -> bool:
    return (a.line, a.col) <= (b.end_line, b.end_col) and (b.line, b.col) <= (a.end_line, a.end_col)
