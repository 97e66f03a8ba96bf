"""The Lark parser built from dsl_grammar/argus.lark, and syntax-error messages in words."""

from __future__ import annotations

import threading
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from argus.dsl.build_ast import BuildAst
from argus.dsl.indenter import ArgusIndenter

GRAMMAR_PATH = Path(__file__).with_name("argus.lark")
START_RULES = ["kernel_item", "model_item", "sizes_item", "py_header"]

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
INTERNAL_TOKENS = {"DOLLAR"}  # the recovery placeholder: never something a user should type


class Parsers(threading.local):
    """Per thread (the indenter and the tree builder keep per-parse state), built on first use."""

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
    if terminal.pattern.type == "str":
        return repr(terminal.pattern.value)
    return terminal.name.lower()


PARSERS = Parsers()


def error_message(error: UnexpectedInput) -> str:
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
        return f"unexpected {found}" + expected_text(error.expected)
    return str(error).split("\n", 1)[0]


def is_missing_colon(error: UnexpectedInput) -> bool:
    """The line ended where the grammar still wanted the ':' that opens a block."""
    return isinstance(error, UnexpectedToken) and error.token.type == "_NL" and "COLON" in error.expected


def expected_text(expected: set[str]) -> str:
    names = set(expected) - INTERNAL_TOKENS
    if not names:
        return ""
    shown: list[str] = []
    if len(names & EXPRESSION_STARTS) >= 3:
        shown.append("an expression")
        names -= EXPRESSION_STARTS
    shown += sorted({TOKEN_NAMES.get(name) or PARSERS.displays.get(name, name.lower()) for name in names})
    if len(shown) > 6:
        shown = [*shown[:6], "..."]
    return "; expected " + ", ".join(shown)
