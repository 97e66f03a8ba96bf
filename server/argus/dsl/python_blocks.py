"""`reference` and `inputs` items: an Argus header, then a Python body checked by Python's own parser."""

from __future__ import annotations

import ast as pyast
import warnings

from lark.exceptions import UnexpectedInput

from argus.dsl import ast
from argus.dsl.build_ast import token_span
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.grammar import PARSERS, error_message, is_missing_colon
from argus.dsl.scanner import (
    LogicalLine,
    code_length,
    indentation,
    is_code,
    logical_lines,
    missing_colon_message,
    with_colon,
)
from argus.dsl.spans import Span, point


def item_span(lines: list[str], start: int, stop: int) -> Span:
    """From the item's first line to the end of its last line of code (comments left out)."""
    last = max((k for k in range(start, stop) if is_code(lines[k])), default=start)
    return Span(start, 0, last, code_length(lines[last]))


def last_character(lines: list[str], line: int) -> Span:
    """The last character of a line's code: where a missing ':' or closer belongs, comment or not."""
    return point(line, max(code_length(lines[line]) - 1, 0))


def parse_python_block(lines: list[str], start: int, stop: int, diagnostics: list[Diagnostic]) -> ast.Item:
    statements, _ = logical_lines(lines, start, stop)
    header = statements[0]
    span = item_span(lines, start, stop)
    try:
        kind, name, params, tolerance, _ = parse_header(lines, header, diagnostics)
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
    block = ast.PythonBlock(str(kind), str(name), token_span(name), params, body, header.end, indent, span, tolerance)
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


def parse_header(lines: list[str], header: LogicalLine, diagnostics: list[Diagnostic]) -> tuple:
    """`reference NAME(params):`; a header that lacks only its ':' is reported once and read with it, so the
    block still counts as the kernel's reference (no AR107 for a kernel that has one)."""
    header_lines = lines[header.start : header.end]
    try:
        return PARSERS.lark.parse(header_text(header.start, header_lines), start="py_header")
    except UnexpectedInput as error:
        last = header.end - 1
        if not (header.header and is_missing_colon(error) and error.line - 1 == last):
            raise
        keyword = header_lines[0].split(None, 1)[0].split("(", 1)[0]
        patched = [*header_lines[:-1], with_colon(header_lines[-1])]
        parsed = PARSERS.lark.parse(header_text(header.start, patched), start="py_header")
        diagnostics.append(make("AR001", last_character(lines, last), missing_colon_message(keyword)))
        return parsed


def header_text(start: int, header_lines: list[str]) -> str:
    return "\n" * start + "\n".join(header_lines) + "\n"
