"""Lines as the Language Server Protocol counts them: only `\\n`, `\\r\\n` and `\\r` end a line.

Python's `str.splitlines` also breaks at form feeds, U+2028 and a dozen other characters, so a comment holding
one of them would put every later line of a file at a different number in Argus than in the editor. Everything
that turns text into line numbers (the parser, the language server's copy of a document, edits) goes through
these functions instead.
"""

from __future__ import annotations

import re

LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their line breaks; a text ending in a break has an empty last line."""
    return LINE_BREAK.split(text)


def split_lines_keepends(text: str) -> list[str]:
    """The lines of `text` with their line breaks; no empty last line (as `splitlines(keepends=True)`)."""
    pieces: list[str] = []
    start = 0
    for found in LINE_BREAK.finditer(text):
        pieces.append(text[start : found.end()])
        start = found.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def line_starts(text: str) -> list[int]:
    """The offset of each line's first character; one entry per line of `split_lines`."""
    return [0, *(found.end() for found in LINE_BREAK.finditer(text))]
