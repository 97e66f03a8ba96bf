"""Finding things at a position: the symbol, the kernel, the word, the call being typed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from argus.analysis.spans import contains

if TYPE_CHECKING:
    from argus.dsl import ast, ir
    from argus.dsl.check import CheckResult
    from argus.dsl.scope import SymbolUse

WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def symbol_at(check: CheckResult, line: int, col: int) -> SymbolUse | None:
    """The innermost symbol whose span holds the position (its end included, where a cursor often sits)."""
    best: SymbolUse | None = None
    for symbol in check.analysis.symbols:
        if contains(symbol.span, line, col):
            size = (symbol.span.end_line - symbol.span.line, symbol.span.end_col - symbol.span.col)
            if best is None or size < (best.span.end_line - best.span.line, best.span.end_col - best.span.col):
                best = symbol
    return best


def kernel_at(check: CheckResult, line: int) -> tuple[ast.Kernel, ir.KernelIR | None] | None:
    for kernel in check.module.kernels:
        if kernel.span.line <= line <= kernel.span.end_line:
            return kernel, check.analysis.kernels.get(kernel.name)
    return None


def word_at(lines: Sequence[str], line: int, col: int) -> str | None:
    if not 0 <= line < len(lines):
        return None
    for match in WORD.finditer(lines[line]):
        if match.start() <= col <= match.end():
            return match.group()
    return None


@dataclass(frozen=True, slots=True)
class OpenCall:
    name: str
    argument: int  # index of the argument the cursor is in
    keyword: str | None  # set when the cursor is after `name=`


def open_call(lines: Sequence[str], line: int, col: int) -> OpenCall | None:
    """The builtin call whose parentheses the cursor is inside, read backwards on the current line."""
    if not 0 <= line < len(lines):
        return None
    text = lines[line][:col]
    depth, commas = 0, 0
    for index in range(len(text) - 1, -1, -1):
        char = text[index]
        if char in ")]":
            depth += 1
        elif char in "([":
            if depth:
                depth -= 1
                continue
            if char == "[":
                return None  # inside a subscript, not an argument list
            match = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", text[:index])
            if match is None:  # a tuple's parenthesis, as in mask=(...): the call is further out
                commas = 0
                continue
            current = text[index + 1 :].rsplit(",", 1)[-1]
            keyword = re.match(r"\s*([A-Za-z_]\w*)\s*=(?!=)", current)
            return OpenCall(match.group(1), commas, keyword.group(1) if keyword else None)
        elif char == "," and depth == 0:
            commas += 1
    return None
