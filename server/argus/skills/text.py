"""Text edits on a document: applying them, reading the text under a span. Edits are the only way a skill
changes a kernel, so comments and formatting outside the edited spans are kept byte for byte."""

from __future__ import annotations

import functools
from collections.abc import Iterable

from argus.dsl import lines
from argus.dsl.spans import Span
from argus.skills.provider import Edit


@functools.lru_cache(maxsize=16)
def line_starts(text: str) -> tuple[int, ...]:
    """Each line's first offset, then the text's end: a position past the last line clamps to the end. Kept for
    the last few texts: a skill's matcher reads hundreds of spans of one document (a str caches its hash, so a
    hit costs no scan)."""
    return (*lines.line_starts(text), len(text))


def offset(starts: tuple[int, ...], line: int, col: int) -> int:
    return starts[min(line, len(starts) - 1)] + col


def text_at(text: str, span: Span) -> str:
    starts = line_starts(text)
    return text[offset(starts, span.line, span.col) : offset(starts, span.end_line, span.end_col)]


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """The text with every edit applied; edits are on the original text and must not overlap."""
    starts = line_starts(text)
    ordered = sorted(edits, key=lambda e: (e.span.line, e.span.col, e.span.end_line, e.span.end_col), reverse=True)
    for edit in ordered:
        begin = offset(starts, edit.span.line, edit.span.col)
        end = offset(starts, edit.span.end_line, edit.span.end_col)
        text = text[:begin] + edit.new_text + text[end:]
    return text


def whole_lines(span: Span) -> Span:
    """The span's lines, from column 0 to the start of the next line (deleting it removes the lines)."""
    return Span(span.line, 0, span.end_line + 1, 0)
