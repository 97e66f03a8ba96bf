"""Parsing a kernel, model or sizes item with error recovery.

A statement that fails to parse is replaced by a placeholder (`$`, or `$:` when it opens a block) and the
item is parsed again, so every error is reported once and the rest of the item still yields a tree. A bad
kernel parameter is blanked out the same way. Replacements keep every other character where it was, so
positions in the tree are positions in the user's text.
"""

from __future__ import annotations

import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from argus.dsl import ast
from argus.dsl.diagnostics import Diagnostic, make
from argus.dsl.grammar import PARSERS, error_message, expected_text, is_missing_colon
from argus.dsl.python_blocks import item_span, last_character
from argus.dsl.scanner import (
    CLOSERS,
    OPENERS,
    BracketError,
    LogicalLine,
    block_keyword,
    bracket_events,
    code_length,
    is_code,
    leading_space,
    logical_lines,
    missing_colon_message,
    with_colon,
)
from argus.dsl.spans import Span, point

KERNEL_HEADER = re.compile(r"\s*(kernel|model)\s+([A-Za-z_]\w*)")
ASSIGNED = re.compile(r"\s*(?:for\s+)?([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*(?:=(?!=)|[-+*/%&|]=|//=|\bin\b)")
EMPTY_BODY = {"kernel_item": "    pass", "model_item": "    pass", "sizes_item": "    $"}
# Items with a `NAME(params):` header and a body of statements: a kernel, and a model (its launches).
HEADED_RULES = ("kernel_item", "model_item")


def assigned_names(line: str) -> list[str]:
    """The names a (broken) statement seems to assign: `x, y = ...`, `acc += ...`, `for k in ...`."""
    match = ASSIGNED.match(line)
    return [name.strip() for name in match.group(1).split(",")] if match else []


class StatementItemParser:
    def __init__(self, lines: list[str], start: int, stop: int, rule: str, diagnostics: list[Diagnostic]):
        self.lines = lines
        self.start, self.stop = start, stop
        self.rule = rule
        self.diagnostics = diagnostics
        self.work = list(lines[start:stop])
        self.statements, bracket_errors = logical_lines(lines, start, stop)
        self.blanked: set[int] = set()
        self.broken_params: list[str] = []
        self.nameless = False
        self.empty_body = False
        self.prechecked = False
        self.keyword = "model" if rule == "model_item" else "kernel"
        for error in bracket_errors:
            if error.unclosed:
                self.report("AR003", point(error.line, error.col), f"'{error.char}' was never closed")
            else:
                self.report("AR004", point(error.line, error.col), f"unmatched '{error.char}'")
            index = self.statement_at(error.line)
            if index == 0 and self.rule in HEADED_RULES and self.repair_header_brackets(error):
                continue
            self.recover(index)

    def report(self, code: str, span: Span, message: str) -> None:
        self.diagnostics.append(make(code, span, message))

    def text(self) -> str:
        return "\n" * self.start + "\n".join(self.work) + "\n"

    def parse(self) -> ast.Item:
        for _ in range(len(self.statements) + 4):
            PARSERS.builder.problems.clear()
            try:
                item = PARSERS.lark.parse(self.text(), start=self.rule)
            except UnexpectedInput as error:
                if not self.prechecked and self.rule in HEADED_RULES:
                    # Find the statements that fail on their own in one pass: many broken lines (a pasted
                    # Triton kernel) would otherwise cost one parse of the whole item each.
                    self.prechecked = True
                    if self.precheck():
                        continue
                if not self.report_and_recover(error):
                    break
                continue
            return self.finish(item)
        return ast.ErrorItem(item_span(self.lines, self.start, self.stop))

    def finish(self, item: ast.Item) -> ast.Item:
        self.restore_error_spans(item)
        for code, span, message in PARSERS.builder.problems:
            self.report(code, span, message)
        for problem in PARSERS.indenter.errors:
            line = problem.line - 1
            if self.statement_at(line) not in self.blanked:
                self.report("AR005", Span(line, 0, line, problem.col - 1), problem.message)
        if isinstance(item, ast.Kernel | ast.Model):
            item.broken_params = self.broken_params
            if self.empty_body:
                item.body = []
            if self.nameless:
                item.name = ""
                item.name_span = Span(self.start, 0, self.start, len(self.keyword))
            widen(item.body)
        if isinstance(item, ast.Kernel | ast.Model | ast.Sizes):
            item.span = item_span(self.lines, self.start, self.stop)
        return item

    def restore_error_spans(self, item: ast.Item) -> None:
        """A placeholder statement takes the span of the text it replaced."""
        if not isinstance(item, ast.Kernel | ast.Model):
            return
        spans = {}
        for index in self.blanked:
            statement = self.statements[index]
            last = statement.end - 1
            while last > statement.start and not is_code(self.lines[last]):
                last -= 1
            indent = len(leading_space(self.lines[statement.start]))
            spans[statement.start] = Span(statement.start, indent, last, code_length(self.lines[last]))
        for stmt in ast.walk_stmts(item.body):
            if isinstance(stmt, ast.ErrorStmt) and stmt.span.line in spans:
                stmt.span = spans[stmt.span.line]
                stmt.names = assigned_names(self.lines[stmt.span.line])

    def statement_at(self, line: int) -> int:
        """Index of the logical line holding a physical line (or the last one before it)."""
        found = 0
        for index, statement in enumerate(self.statements):
            if statement.start <= line:
                found = index
            if statement.start <= line < statement.end:
                return index
        return found

    def precheck(self) -> bool:
        """Parse each statement of the body alone; report and blank those that fail."""
        found = False
        for index, statement in enumerate(self.statements[1:], start=1):
            if index in self.blanked:
                continue
            first = self.lines[statement.start].lstrip()
            if first.startswith(("elif", "else")):
                continue  # these only parse after their `if`
            body = self.lines[statement.start : statement.end]
            if statement.header:
                body = [*body, leading_space(self.lines[statement.start]) + "    pass"]
            text = "kernel _():\n" + "\n" * (statement.start - 1) + "\n".join(body) + "\n"
            try:
                PARSERS.lark.parse(text, start="kernel_item")
            except UnexpectedInput as error:
                line = getattr(error, "line", -1) - 1
                if line < statement.start or line >= statement.end:
                    continue  # an error the context causes: the whole-item parse will find it
                if self.add_missing_colon(error, index):
                    found = True
                    continue
                code = "AR002" if isinstance(error, UnexpectedCharacters) else "AR001"
                self.report(code, self.error_span(error, line), error_message(error))
                self.recover(index)
                found = True
        return found

    @staticmethod
    def error_span(error: UnexpectedInput, line: int) -> Span:
        col = max(error.column - 1, 0)
        token = getattr(error, "token", None)
        length = len(token) if token and token.type != "_NL" else 1
        return point(line, col, max(length, 1))

    def report_and_recover(self, error: UnexpectedInput) -> bool:
        expected = getattr(error, "expected", set())
        if isinstance(error, UnexpectedEOF) or (isinstance(error, UnexpectedToken) and error.token.type == "$END"):
            if self.statements and self.opens_block(len(self.statements) - 1):
                return self.missing_block(len(self.statements) - 1)
            index = len(self.statements) - 1
            line = self.statements[index].end - 1 if self.statements else self.start
            span = point(line, code_length(self.lines[line]))
            message = "unexpected end of file" + expected_text(expected)
        else:
            line = error.line - 1
            index = self.statement_at(line)
            if self.add_missing_colon(error, index):
                return True
            statement = self.statements[index]
            at_start = line == statement.start and error.column - 1 == len(leading_space(self.lines[line]))
            if at_start and index > 0 and self.opens_block(index - 1):
                return self.missing_block(index - 1)
            span = self.error_span(error, line)
            message = error_message(error)
        if not self.statements or index in self.blanked:
            return False
        self.report("AR002" if isinstance(error, UnexpectedCharacters) else "AR001", span, message)
        return self.recover(index, (span.line, span.col))

    def add_missing_colon(self, error: UnexpectedInput, index: int) -> bool:
        """A block header whose only fault is the ':' it lacks gets one, reported once at the header's end.

        Blanking the header instead would lose what it declares (a kernel's parameters, a loop variable, an
        `if` whose `elif` then dangles) and every later use of those would be an error of its own."""
        if not self.statements or not is_missing_colon(error):
            return False
        statement = self.statements[index]
        last = statement.end - 1
        keyword = block_keyword(self.lines[statement.start])
        if not statement.header or keyword is None or error.line - 1 != last:
            return False
        row = self.work[last - self.start]
        if row[: code_length(row)].endswith(":"):
            return False  # the ':' is there already: something else is wrong
        self.report("AR001", last_character(self.lines, last), missing_colon_message(keyword))
        self.work[last - self.start] = with_colon(row)
        return True

    def opens_block(self, index: int) -> bool:
        """A statement that ends with ':' but has no deeper line after it."""
        statement = self.statements[index]
        if statement.header or index in self.blanked:
            return False
        last = self.work[statement.end - 1 - self.start]
        return last[: code_length(last)].endswith(":")

    def missing_block(self, index: int) -> bool:
        """A header (`for ...:`, `if ...:`, the kernel itself) followed by no indented block."""
        statement = self.statements[index]
        last = statement.end - 1
        self.report("AR001", point(last, max(code_length(self.lines[last]) - 1, 0)), "expected an indented block")
        if index == 0:
            if self.empty_body:
                return False
            self.empty_body = True
            self.work.append(EMPTY_BODY[self.rule])
            return True
        return self.recover(index)

    def recover(self, index: int, where: tuple[int, int] | None = None) -> bool:
        if index in self.blanked:
            return False
        statement = self.statements[index]
        if index == 0 and self.rule in HEADED_RULES:
            if where is not None and (
                self.blank_parameter(statement, where) or self.blank_header_tail(statement, where)
            ):
                return True
            return self.replace_kernel_header(statement)
        if index == 0:
            return False
        self.blank(index)
        if block_keyword(self.lines[statement.start]) in ("if", "elif") and statement.header:
            self.blank_rest_of_chain(index)
        return True

    def blank(self, index: int) -> None:
        statement = self.statements[index]
        self.blanked.add(index)
        indent = leading_space(self.lines[statement.start])
        self.set_lines(statement, [indent + ("$:" if statement.header else "$")])

    def blank_rest_of_chain(self, index: int) -> None:
        """The `elif` and `else` clauses after a broken `if` (or `elif`) header become placeholders too, with no
        report of their own: alone they would dangle, an error for each that the user did not make."""
        indent = self.statements[index].indent
        for later in range(index + 1, len(self.statements)):
            statement = self.statements[later]
            if statement.indent > indent:
                continue  # the body of the clause before
            if statement.indent < indent or block_keyword(self.lines[statement.start]) not in ("elif", "else"):
                return
            if later not in self.blanked:
                self.blank(later)

    def repair_header_brackets(self, error: BracketError) -> bool:
        """A kernel header's bracket slip costs only that bracket: a stray closer is blanked, an unclosed
        opener is closed at the end of the header, so the parameters stay declared for the body."""
        statement = self.statements[0]
        row = self.work[error.line - self.start]
        if not error.unclosed:
            self.work[error.line - self.start] = row[: error.col] + " " + row[error.col + 1 :]
            return True
        last = statement.end - 1
        closers = "".join(OPENERS[ch] for ch in reversed(self.unclosed_openers(statement)))
        if not closers:
            return False
        row = self.work[last - self.start]
        end = code_length(row)
        if not row[:end].endswith(":"):
            return False  # no `:` either (`kernel k(` while typing): the bracket is the one slip to report
        self.work[last - self.start] = row[: end - 1] + closers + row[end - 1 :]
        return True

    def unclosed_openers(self, statement: LogicalLine) -> list[str]:
        stack: list[str] = []
        for line in range(statement.start, statement.end):
            for _, ch in bracket_events(self.work[line - self.start]):
                if ch in OPENERS:
                    stack.append(ch)
                elif stack and stack[-1] == CLOSERS[ch]:
                    stack.pop()
        return stack

    def blank_header_tail(self, statement: LogicalLine, where: tuple[int, int]) -> bool:
        """An error after the closed parameter list (`)):`, `);`) blanks what follows the `)` up to the ':'."""
        close_at = self.parameter_list_end(statement)
        last = statement.end - 1
        if close_at is None or close_at[0] != last or where <= close_at:
            return False
        row = self.work[last - self.start]
        end = code_length(row)
        tail = row[close_at[1] + 1 : end]
        if not tail.strip() or tail.strip() == ":":
            return False
        self.work[last - self.start] = row[: close_at[1] + 1] + " " * (len(tail) - 1) + ":" + row[end:]
        return True

    def parameter_list_end(self, statement: LogicalLine) -> tuple[int, int] | None:
        """(line, col) of the ')' that closes the kernel's parameter list."""
        depth = 0
        for line in range(statement.start, statement.end):
            for col, ch in bracket_events(self.work[line - self.start]):
                depth += 1 if ch in OPENERS else -1
                if depth == 0:
                    return (line, col)
        return None

    def set_lines(self, statement: LogicalLine, replacement: list[str]) -> None:
        count = statement.end - statement.start
        replacement = replacement + [""] * (count - len(replacement))
        self.work[statement.start - self.start : statement.end - self.start] = replacement

    def replace_kernel_header(self, statement: LogicalLine) -> bool:
        """`kernel NAME():` (or `model NAME():`) in place of a header that does not parse, the name where the user
        wrote it."""
        self.blanked.add(0)
        original = self.lines[statement.start]
        match = KERNEL_HEADER.match(original)
        self.nameless = match is None
        # Whatever looks like a parameter (`x: ...`) stays declared, of unknown type, for the body.
        inside = original[original.find("(") + 1 :] if "(" in original else ""
        self.broken_params += [n for n in re.findall(r"([A-Za-z_]\w*)\s*:", inside) if n not in self.broken_params]
        header = original[: match.end(2)] + "():" if match else f"{self.keyword} _():"
        self.set_lines(statement, [header])
        return True

    def blank_parameter(self, statement: LogicalLine, where: tuple[int, int]) -> bool:
        """Blank the parameter holding the error (with its comma), keeping every other column in place."""
        brackets = [
            (line, col, ch)
            for line in range(statement.start, statement.end)
            for col, ch in bracket_events(self.work[line - self.start])
        ]
        depth = 0
        open_at = close_at = None
        for line, col, ch in brackets:
            if ch in OPENERS:
                depth += 1
                if depth == 1 and open_at is None:
                    open_at = (line, col)
            elif ch in CLOSERS:
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


def widen(stmts: list[ast.Stmt]) -> None:
    """A compound statement's span reaches the end of its last nested statement (placeholders included)."""
    for stmt in stmts:
        children = []
        if isinstance(stmt, ast.For | ast.ErrorStmt):
            children = stmt.body
        elif isinstance(stmt, ast.If):
            children = stmt.body + stmt.orelse
        if children:
            widen(children)
            stmt.span = stmt.span.cover(children[-1].span)
