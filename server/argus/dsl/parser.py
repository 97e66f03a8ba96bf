"""`parse`: Argus source text to a syntax tree and syntax diagnostics. It never raises.

The file is split into top-level items, each parsed on its own (argus.dsl.recovery explains what happens
inside an item), so a broken kernel never hides the next one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.diagnostics import Diagnostic, Position, make
from argus.dsl.item_cache import ItemCache
from argus.dsl.lines import split_lines
from argus.dsl.python_blocks import item_span, parse_python_block
from argus.dsl.recovery import StatementItemParser
from argus.dsl.scanner import split_items
from argus.dsl.spans import Span

ITEM_RULES = {"kernel": "kernel_item", "model": "model_item", "sizes": "sizes_item"}
ITEMS = ItemCache()  # every parse in this process shares it: an editor's next version, the CLI's other files


@dataclass(slots=True)
class ParseResult:
    module: ast.Module
    diagnostics: list[Diagnostic]


def parse(text: str) -> ParseResult:
    """Parse a whole file; syntax problems come back as diagnostics, never as exceptions."""
    lines = split_lines(text)
    diagnostics: list[Diagnostic] = []
    items: list[ast.Item] = []
    for start, stop in split_items(lines):
        key = "\n".join(lines[start:stop])
        cached = ITEMS.get(key, start)
        if cached is not None:
            items.append(cached[0])
            diagnostics.extend(cached[1])
            continue
        found: list[Diagnostic] = []
        try:
            items.append(_parse_item(lines, start, stop, found))
            ITEMS.put(key, start, items[-1], found)
        except RecursionError:
            span = Span(start, 0, start, len(lines[start]))
            diagnostics.append(make("AR001", span, "this item nests too deeply to parse"))
            items.append(ast.ErrorItem(span))
        except Exception as error:  # a parser bug must not take down the editor
            span = Span(start, 0, start, len(lines[start]))
            diagnostics.append(make("AR001", span, f"internal parser error: {error!r}"))
            items.append(ast.ErrorItem(span))
        diagnostics.extend(found)
    for diagnostic in diagnostics:
        _clamp(diagnostic, lines)
    module_span = Span(0, 0, len(lines) - 1, len(lines[-1]))
    return ParseResult(ast.Module(items, module_span), diagnostics)


def _parse_item(lines: list[str], start: int, stop: int, diagnostics: list[Diagnostic]) -> ast.Item:
    word = re.match(r"[A-Za-z_]\w*", lines[start])
    keyword = word.group(0) if word else ""
    if keyword in ITEM_RULES:
        return StatementItemParser(lines, start, stop, ITEM_RULES[keyword], diagnostics).parse()
    if keyword in ("reference", "inputs"):
        return parse_python_block(lines, start, stop, diagnostics)
    first = lines[start]
    span = Span(start, 0, start, len(first.rstrip()))
    shown = first.strip()[:40]
    message = f"expected `kernel`, `model`, `reference`, `inputs` or `sizes` at the top level, found {shown!r}"
    diagnostics.append(make("AR006", span, message))
    return ast.ErrorItem(item_span(lines, start, stop))


def _clamp(diagnostic: Diagnostic, lines: list[str]) -> None:
    """Keep a range inside the text: an error at the end of a line underlines its last character."""

    def inside(position: Position) -> tuple[int, int]:
        line = min(position.line, len(lines) - 1)
        return line, min(position.character, len(lines[line]))

    (start_line, start_col), (end_line, end_col) = inside(diagnostic.range.start), inside(diagnostic.range.end)
    if (start_line, start_col) == (end_line, end_col):
        if start_col > 0:
            start_col -= 1
        elif lines[start_line]:
            end_col = 1
    diagnostic.range.start = Position(line=start_line, character=start_col)
    diagnostic.range.end = Position(line=end_line, character=end_col)
