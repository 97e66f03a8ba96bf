"""Turns newlines into _INDENT / _DEDENT tokens, as Python's tokenizer does, and never raises.

Lark's own Indenter raises on an inconsistent dedent; an editor needs the rest of the file, so this one
records the problem, snaps to the nearest enclosing level and goes on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from lark import Token
from lark.lark import PostLex

from argus.dsl.scanner import indentation

OPEN = frozenset({"LPAR", "LSQB", "LBRACE"})
CLOSE = frozenset({"RPAR", "RSQB", "RBRACE"})


@dataclass(frozen=True, slots=True)
class IndentError:
    line: int  # 1-based, as Lark counts
    col: int
    message: str


@dataclass(slots=True)
class Level:
    """An open block. A phantom level (real=False) absorbs an unexpected indent without emitting a token,
    so one misplaced line gives one error and not one per following line."""

    column: int
    real: bool
    aliases: set[int] = field(default_factory=set)


class ArgusIndenter(PostLex):
    always_accept = ("_NL",)

    def __init__(self) -> None:
        self.errors: list[IndentError] = []

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        self.errors = []
        depth = 0
        levels: list[Level] = [Level(0, True)]
        previous = None
        for token in stream:
            if token.type == "_NL":
                if depth > 0:
                    continue
                yield token
                yield from self._indentation(token, previous, levels)
                previous = token
                continue
            if token.type in OPEN:
                depth += 1
            elif token.type in CLOSE and depth > 0:
                depth -= 1
            previous = token
            yield token
        while len(levels) > 1:
            if levels.pop().real:
                line, col = (previous.end_line, previous.end_column) if previous else (1, 1)
                yield Token("_DEDENT", "", 0, line, col)

    def _indentation(self, newline: Token, previous: Token | None, levels: list[Level]) -> Iterator[Token]:
        column = indentation(newline.value.rsplit("\n", 1)[-1])
        column = next((level.column for level in reversed(levels) if column in level.aliases), column)
        line, col = newline.end_line, newline.end_column

        def marker(kind: str) -> Token:
            return Token(kind, "", newline.end_pos, line, col, line, col, newline.end_pos)

        if column > levels[-1].column:
            opens_block = previous is not None and previous.type == "COLON"
            if not opens_block:
                self.errors.append(IndentError(line, col, "unexpected indent"))
            levels.append(Level(column, opens_block))
            if opens_block:
                yield marker("_INDENT")
            return
        # Close the blocks this line is at or left of. A line between two levels stays in the inner block,
        # and its column becomes another name for that block's, so the error is reported once.
        while len(levels) > 1 and column <= levels[-2].column:
            if levels.pop().real:
                yield marker("_DEDENT")
        if column < levels[-1].column:
            self.errors.append(IndentError(line, col, "unindent does not match any outer indentation level"))
            levels[-1].aliases.add(column)
