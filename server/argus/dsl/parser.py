"""`parse`: Argus source text to a syntax tree and syntax diagnostics. It never raises.

Recovery works at two levels. The file is split into top-level items, each parsed on its own. Inside an
item, a statement that fails to parse is replaced by a placeholder (`$`, or `$:` when it opens a block) and
the item is parsed again, so every error is reported once and the rest of the item still yields a tree
that later layers and the editor use. A bad kernel parameter is blanked out the same way.
"""

from __future__ import annotations

import ast as pyast
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from argus.dsl import ast
from argus.dsl.build_ast import BuildAst
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.indenter import ArgusIndenter
from argus.dsl.scanner import (
    CLOSERS,
    OPENERS,
    LogicalLine,
    bracket_events,
    indentation,
    is_code,
    logical_lines,
    split_items,
)
from argus.dsl.spans import Span, point

GRAMMAR_PATH = Path(__file__).with_name("argus.lark")
START_RULES = ["kernel_item", "sizes_item", "py_header", "error_item"]
ITEM_RULES = {"kernel": "kernel_item", "sizes": "sizes_item"}
KERNEL_HEADER = re.compile(r"\s*kernel\s+([A-Za-z_]\w*)")

TOKEN_NAMES = {
    "NAME": "a name",
    "INT": "a number",
    "FLOAT": "a number",
    "STRING": "a string",
    "_NL": "end of line",
    "_INDENT": "an indented block",
    "_DEDENT": "end of block",
    "$END": "end of file",
    "COMP_OP": "a comparison",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/', '//' or '%'",
    "AUGOP": "an assignment operator",
    "UNARY_OP": "'-', '+' or '~'",
    "SHIFT_OP": "'<<' or '>>'",
}
EXPRESSION_STARTS = {"NAME", "INT", "FLOAT", "STRING", "LPAR", "LSQB", "UNARY_OP", "TRUE", "FALSE", "NONE", "NOT"}


@dataclass(slots=True)
class ParseResult:
    module: ast.Module
    diagnostics: list[Diagnostic]


class _Parsers(threading.local):
    """One Lark parser per thread: the indenter keeps per-parse state."""

    def __init__(self) -> None:
        self.indenter = ArgusIndenter()
        self.builder = BuildAst()
        self.lark = Lark(
            GRAMMAR_PATH.read_text(),
            parser="lalr",
            lexer="contextual",
            postlex=self.indenter,
            transformer=self.builder,
            maybe_placeholders=True,
            start=START_RULES,
        )
        self.displays = {t.name: _display(t) for t in self.lark.terminals}


def _display(terminal) -> str:
    if terminal.name in TOKEN_NAMES:
        return TOKEN_NAMES[terminal.name]
    if terminal.pattern.type == "str":
        return repr(terminal.pattern.value)
    return terminal.name.lower()


_parsers: _Parsers | None = None
_parsers_lock = threading.Lock()


def _get_parsers() -> _Parsers:
    global _parsers
    with _parsers_lock:
        if _parsers is None:
            _parsers = _Parsers()
        return _parsers


def parse(text: str) -> ParseResult:
    """Parse a whole file; syntax problems come back as diagnostics, never as exceptions."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    end = Span(len(lines) - 1, 0, len(lines) - 1, len(lines[-1]))
    diagnostics: list[Diagnostic] = []
    items: list[ast.Item] = []
    for start, stop in split_items(lines):
        try:
            items.append(_parse_item(lines, start, stop, diagnostics))
        except RecursionError:
            span = Span(start, 0, start, len(lines[start]))
            diagnostics.append(make("AR001", span, "this item nests too deeply to parse"))
            items.append(ast.ErrorItem(span))
        except Exception as error:  # a parser bug must not take down the editor
            span = Span(start, 0, start, len(lines[start]))
            diagnostics.append(make("AR001", span, f"internal parser error: {error!r}"))
            items.append(ast.ErrorItem(span))
    return ParseResult(ast.Module(items, Span(0, 0, end.end_line, end.end_col)), diagnostics)


def _item_span(lines: list[str], start: int, stop: int) -> Span:
    last = max((k for k in range(start, stop) if is_code(lines[k])), default=start)
    return Span(start, 0, last, len(lines[last]))


def _parse_item(lines: list[str], start: int, stop: int, diagnostics: list[Diagnostic]) -> ast.Item:
    word = re.match(r"[A-Za-z_]\w*", lines[start])
    keyword = word.group(0) if word else ""
    if keyword in ITEM_RULES:
        return _StatementItem(lines, start, stop, ITEM_RULES[keyword], diagnostics).parse()
    if keyword in ("reference", "inputs"):
        return _parse_python_block(lines, start, stop, diagnostics)
    first = lines[start]
    span = Span(start, 0, start, len(first.rstrip()))
    shown = first.strip()[:40]
    diagnostics.append(
        make("AR006", span, f"expected `kernel`, `reference`, `inputs` or `sizes` at the top level, found {shown!r}")
    )
    return ast.ErrorItem(_item_span(lines, start, stop))


class _StatementItem:
    """A kernel or sizes item, parsed again after each failing statement is replaced by a placeholder."""

    def __init__(self, lines: list[str], start: int, stop: int, rule: str, diagnostics: list[Diagnostic]):
        self.lines = lines
        self.start, self.stop = start, stop
        self.rule = rule
        self.diagnostics = diagnostics
        self.work = list(lines[start:stop])
        self.statements, bracket_errors = logical_lines(lines, start, stop)
        self.blanked: set[int] = set()
        self.broken_params: list[str] = []
        for error in bracket_errors:
            if error.unclosed:
                message = f"'{error.char}' was never closed"
                self.diagnostics.append(make("AR003", point(error.line, error.col), message))
            else:
                message = f"unmatched '{error.char}'"
                self.diagnostics.append(make("AR004", point(error.line, error.col), message))
            self._recover(self._statement_at(error.line))

    def parse(self) -> ast.Item:
        parsers = _get_parsers()
        for _ in range(len(self.statements) + 3):
            text = "\n" * self.start + "\n".join(self.work) + "\n"
            parsers.builder.warnings.clear()
            try:
                item = parsers.lark.parse(text, start=self.rule)
            except UnexpectedInput as error:
                if not self._report_and_recover(error, parsers):
                    break
                continue
            self._restore_error_spans(item)
            for span, message in parsers.builder.warnings:
                self.diagnostics.append(make("AR008", span, message))
            if isinstance(item, ast.Kernel):
                item.broken_params = self.broken_params
            for problem in parsers.indenter.errors:
                line = problem.line - 1
                if self._statement_at(line) not in self.blanked:
                    self.diagnostics.append(make("AR005", Span(line, 0, line, problem.col - 1), problem.message))
            return item
        return ast.ErrorItem(_item_span(self.lines, self.start, self.stop))

    def _restore_error_spans(self, item: ast.Item) -> None:
        """A placeholder statement takes the span of the text it replaced."""
        if not isinstance(item, ast.Kernel):
            return
        spans = {}
        for index in self.blanked:
            statement = self.statements[index]
            last = statement.end - 1
            while last > statement.start and not is_code(self.lines[last]):
                last -= 1
            spans[statement.start] = Span(statement.start, statement.indent, last, len(self.lines[last].rstrip()))
        for stmt in ast.walk_stmts(item.body):
            if isinstance(stmt, ast.ErrorStmt) and stmt.span.line in spans:
                stmt.span = spans[stmt.span.line]
                stmt.names = _assigned_names(self.lines[stmt.span.line])

    def _statement_at(self, line: int) -> int:
        """Index of the logical line holding a physical line (or the last one before it)."""
        found = 0
        for index, statement in enumerate(self.statements):
            if statement.start <= line:
                found = index
            if statement.start <= line < statement.end:
                return index
        return found

    def _report_and_recover(self, error: UnexpectedInput, parsers: _Parsers) -> bool:
        if isinstance(error, UnexpectedEOF) or (isinstance(error, UnexpectedToken) and error.token.type == "$END"):
            index = len(self.statements) - 1
            statement = self.statements[index] if self.statements else None
            line = statement.end - 1 if statement else self.start
            col = len(self.lines[line].rstrip())
            message = "unexpected end of file"
            if isinstance(error, UnexpectedToken):
                message += _expected_text(error.expected, parsers.displays)
        else:
            line, col = error.line - 1, max(error.column - 1, 0)
            index = self._statement_at(line)
            message = _error_message(error, parsers.displays)
        if not self.statements or index in self.blanked:
            return False
        code = "AR002" if isinstance(error, UnexpectedCharacters) else "AR001"
        length = len(error.token) if isinstance(error, UnexpectedToken) and error.token else 1
        self.diagnostics.append(make(code, point(line, col, max(length, 1)), message))
        return self._recover(index, (line, col))

    def _recover(self, index: int, where: tuple[int, int] | None = None) -> bool:
        if index in self.blanked:
            return False
        statement = self.statements[index]
        if index == 0 and self.rule == "kernel_item":
            if where is not None and self._blank_parameter(statement, where):
                return True
            return self._replace_kernel_header(statement)
        if index == 0:
            return False
        self.blanked.add(index)
        placeholder = " " * statement.indent + ("$:" if statement.header else "$")
        self._set_lines(statement, [placeholder])
        return True

    def _set_lines(self, statement: LogicalLine, replacement: list[str]) -> None:
        count = statement.end - statement.start
        replacement = replacement + [""] * (count - len(replacement))
        self.work[statement.start - self.start : statement.end - self.start] = replacement

    def _replace_kernel_header(self, statement: LogicalLine) -> bool:
        self.blanked.add(0)
        match = KERNEL_HEADER.match(self.lines[statement.start])
        name = match.group(1) if match else "_"
        self._set_lines(statement, [f"kernel {name}():"])
        return True

    def _blank_parameter(self, statement: LogicalLine, where: tuple[int, int]) -> bool:
        """Blank the parameter holding the error (with its comma), keeping every other column in place."""
        chars = [
            (line, col)
            for line in range(statement.start, statement.end)
            for col, ch in bracket_events(self.work[line - self.start])
            if ch in OPENERS or ch in CLOSERS
        ]
        depth = 0
        open_at = close_at = None
        for line, col in chars:
            ch = self.work[line - self.start][col]
            if ch in OPENERS:
                depth += 1
                if depth == 1 and open_at is None:
                    open_at = (line, col)
            else:
                depth -= 1
                if depth == 0 and open_at is not None:
                    close_at = (line, col)
                    break
        if open_at is None or close_at is None or not (open_at < where <= close_at):
            return False
        # Walk the parameter list, cutting at commas at depth 1.
        pieces: list[list[tuple[int, int]]] = [[]]
        depth = 0
        for line in range(open_at[0], close_at[0] + 1):
            text = self.work[line - self.start]
            first = open_at[1] + 1 if line == open_at[0] else 0
            last = close_at[1] if line == close_at[0] else len(text)
            for col in range(first, last):
                ch = text[col]
                if ch == "#":
                    break
                depth += ch in OPENERS
                depth -= ch in CLOSERS
                pieces[-1].append((line, col))
                if ch == "," and depth == 0:
                    pieces.append([])
        pieces[-1].append(close_at)  # an error at ')' belongs to the last parameter
        for piece in pieces:
            if piece and piece[0] <= where <= piece[-1]:
                text = "".join(self.work[line - self.start][col] for line, col in piece)
                # A missing comma puts two parameters in one piece: keep every `name:` it holds.
                self.broken_params += re.findall(r"([A-Za-z_]\w*)\s*:", text) or re.findall(r"[A-Za-z_]\w*", text)[:1]
                for line, col in piece:
                    if (line, col) == close_at:
                        continue
                    row = self.work[line - self.start]
                    self.work[line - self.start] = row[:col] + " " + row[col + 1 :]
                return True
        return False


ASSIGNED = re.compile(r"\s*(?:for\s+)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?:=(?!=)|[-+*/%&|]=|//=|\bin\b)")


def _assigned_names(line: str) -> list[str]:
    match = ASSIGNED.match(line)
    return [name.strip() for name in match.group(1).split(",")] if match else []


def _error_message(error: UnexpectedInput, displays: dict[str, str]) -> str:
    if isinstance(error, UnexpectedCharacters):
        if error.char in "\"'":
            return "unterminated string"
        return f"unexpected character {error.char!r}"
    if isinstance(error, UnexpectedToken):
        token: Token = error.token
        if token.type in ("NAME", "INT", "FLOAT", "STRING"):
            found = f"{'name' if token.type == 'NAME' else 'value'} {str(token)!r}"
        elif token.type in TOKEN_NAMES:
            found = TOKEN_NAMES[token.type]
        else:
            found = repr(str(token))
        return f"unexpected {found}" + _expected_text(error.expected, displays)
    return str(error).split("\n", 1)[0]


def _expected_text(expected: set[str], displays: dict[str, str]) -> str:
    if not expected:
        return ""
    names = set(expected)
    shown: list[str] = []
    if names & EXPRESSION_STARTS and len(names & EXPRESSION_STARTS) >= 3:
        shown.append("an expression")
        names -= EXPRESSION_STARTS
    shown += sorted({displays.get(name, name) for name in names})
    if len(shown) > 6:
        shown = [*shown[:6], "..."]
    return "; expected " + ", ".join(shown)


def _parse_python_block(lines: list[str], start: int, stop: int, diagnostics: list[Diagnostic]) -> ast.Item:
    statements, _ = logical_lines(lines, start, stop)
    header = statements[0]
    text = "\n" * start + "\n".join(lines[header.start : header.end]) + "\n"
    span = _item_span(lines, start, stop)
    try:
        kind, name, params, _ = _get_parsers().lark.parse(text, start="py_header")
    except UnexpectedInput as error:
        line, col = (error.line - 1, error.column - 1) if error.line > 0 else (start, 0)
        diagnostics.append(make("AR001", point(line, max(col, 0)), _error_message(error, _get_parsers().displays)))
        return ast.ErrorItem(span)
    body_lines = lines[header.end : stop]
    code_lines = [line for line in body_lines if is_code(line)]
    indent = min((indentation(line) for line in code_lines), default=0)
    body = "\n".join(line[indent:] if is_code(line) else line.strip() for line in body_lines)
    params_nodes = None if params is None else params
    block = ast.PythonBlock(str(kind), str(name), _token_span(name), params_nodes, body, header.end, indent, span)
    if not code_lines:
        end_line = header.end - 1
        diagnostics.append(
            make("AR007", Span(start, 0, end_line, len(lines[end_line])), f"`{kind} {name}` has no body")
        )
        return block
    try:
        pyast.parse(body)
    except SyntaxError as error:
        line = header.end + (error.lineno or 1) - 1
        col = indent + max((error.offset or 1) - 1, 0)
        diagnostics.append(make("AR007", point(line, col), f"Python syntax error: {error.msg}"))
    return block


def _token_span(token: Token) -> Span:
    return Span(token.line - 1, token.column - 1, token.end_line - 1, token.end_column - 1)
