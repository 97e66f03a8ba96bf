"""`reference` and `inputs` items: an Argus header, then a Python body checked by Python's own parser."""

from __future__ import annotations

import ast as pyast
import warnings

from lark.exceptions import UnexpectedInput

from argus.dsl import ast
from argus.dsl.build_ast import token_span
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.grammar import PARSERS, error_message
from argus.dsl.scanner import code_length, indentation, is_code, logical_lines
from argus.dsl.spans import Span, point


def item_span(lines: list[str], start: int, stop: int) -> Span:
    """From the item's first line to the end of its last line of code (comments left out)."""
    last = max((k for k in range(start, stop) if is_code(lines[k])), default=start)
    return Span(start, 0, last, code_length(lines[last]))


def parse_python_block(lines: list[str], start: int, stop: int, diagnostics: list[Diagnostic]) -> ast.Item:
    statements, _ = logical_lines(lines, start, stop)
    header = statements[0]
    text = "\n" * start + "\n".join(lines[header.start : header.end]) + "\n"
    span = item_span(lines, start, stop)
    try:
        kind, name, params, _ = PARSERS.lark.parse(text, start="py_header")
    except UnexpectedInput as error:
        line, col = (error.line - 1, error.column - 1) if error.line > 0 else (start, 0)
        diagnostics.append(make("AR001", point(line, max(col, 0)), error_message(error)))
        return ast.ErrorItem(span)
    body_lines = lines[header.end : stop]
    first_code = next((line for line in body_lines if is_code(line)), None)
    # Dedent by the first line of code: a bracketed continuation may sit further left, as Python allows.
    indent = indentation(first_code) if first_code is not None else 0
    prefix = first_code[: len(first_code) - len(first_code.lstrip())] if first_code is not None else ""
    body = "\n".join(line[len(prefix) :] if line.startswith(prefix) else line.lstrip() for line in body_lines)
    block = ast.PythonBlock(str(kind), str(name), token_span(name), params, body, header.end, indent, span)
    if first_code is None:
        end_line = header.end - 1
        message = f"`{kind} {name}` has no body"
        diagnostics.append(make("AR007", Span(start, 0, end_line, code_length(lines[end_line])), message))
        return block
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # Python's SyntaxWarnings are not the user's concern here
            pyast.parse(body)
    except SyntaxError as error:
        line = header.end + (error.lineno or 1) - 1
        col = len(prefix) + max((error.offset or 1) - 1, 0)
        diagnostics.append(make("AR007", point(line, col), f"Python syntax error: {error.msg}"))
    return block
