"""Moving edits made for one version of a text onto a later version, by content.

An edit (a quick fix, a skill, a refined kernel) is computed for the text some version had. By the time it is
applied the user may have typed: lines moved, or the very lines the edit rewrites changed. Applying it by
position then rewrites the wrong text. Here an edit is moved only through lines the user left alone: the lines
it touches must still be there, unchanged and in order, and it lands wherever they are now; otherwise it is
refused (None). Lines are compared without their line breaks and counted as LSP counts them.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from argus.dsl.lines import split_lines
from argus.dsl.spans import Span
from argus.skills.provider import Edit


def common_ends(a: Sequence[object], b: Sequence[object]) -> tuple[int, int]:
    """How many items `a` and `b` share at their start, and then at their end (the two never overlap)."""
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    return head, tail


def untouched_lines(old: str, new: str) -> dict[int, int]:
    """Each line of `old` that is still in `new`, unchanged, mapped to its line number there.

    The common head and tail are matched directly (one edit in a long file costs a scan, not a diff); the
    middle is matched by difflib, without its junk heuristic, which would treat repeated lines such as blank
    ones as noise."""
    a, b = split_lines(old), split_lines(new)
    head, tail = common_ends(a, b)
    where = {i: i for i in range(head)}
    where.update({len(a) - 1 - k: len(b) - 1 - k for k in range(tail)})
    middle = difflib.SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    for block in middle.get_matching_blocks():
        for k in range(block.size):
            where[head + block.a + k] = head + block.b + k
    return where


def touched(span: Span) -> range:
    """The lines whose text an edit of `span` reads or replaces: an edit that ends at column 0 of a later line
    (whole lines deleted or replaced) does not touch that line, but an insertion at column 0 does."""
    last = span.end_line if span.end_col > 0 or span.end_line == span.line else span.end_line - 1
    return range(span.line, last + 1)


def move_span(span: Span, where: dict[int, int]) -> Span | None:
    """`span` in the new text, or None when a line it touches changed or the lines no longer follow each other."""
    lines = touched(span)
    if any(line not in where for line in lines):
        return None
    shift = where[lines[0]] - lines[0]
    if any(where[line] - line != shift for line in lines):
        return None
    return Span(span.line + shift, span.col, span.end_line + shift, span.end_col)


def rebase_edits(old: str, new: str, edits: Iterable[Edit]) -> tuple[Edit, ...] | None:
    """`edits` (made for `old`) moved onto `new`, or None when any of them meets a line that changed."""
    edits = tuple(edits)
    if old == new:
        return edits
    where = untouched_lines(old, new)
    moved = []
    for edit in edits:
        span = move_span(edit.span, where)
        if span is None:
            return None
        moved.append(Edit(span, edit.new_text))
    return tuple(moved)


def rebase_line(old: str, new: str, line: int) -> int | None:
    """Where line `line` of `old` is in `new`, or None when it changed or is gone."""
    if old == new:
        return line
    return untouched_lines(old, new).get(line)


def follow_line(old: str, new: str, line: int) -> int | None:
    """Where line `line` of `old` is in `new`: the same line, or the line edited in its place (a block of lines
    replaced by as many, between lines that are still there); None when it is gone or lines were added or
    removed around it. For a target that is matched again on the new text (a skill checks its preconditions
    there), not for an edit, which needs its line unchanged (`rebase_edits`)."""
    if old == new:
        return line
    where = untouched_lines(old, new)
    if line in where:
        return where[line]
    before = max((i for i in where if i < line), default=-1)
    after = min((i for i in where if i > line), default=len(split_lines(old)))
    new_before = where.get(before, -1)
    new_after = where.get(after, len(split_lines(new)))
    if new_after - new_before != after - before:
        return None
    return new_before + (line - before)
