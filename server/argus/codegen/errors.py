"""The one error code generation raises: a message and the Argus span it is about."""

from __future__ import annotations

from argus.dsl.spans import Span


class CodegenError(Exception):
    """A module that does not check clean, or a construct code generation does not support."""

    def __init__(self, message: str, span: Span | None = None):
        super().__init__(message)
        self.message = message
        self.span = span

    def __str__(self) -> str:
        where = f"line {self.span.line + 1}: " if self.span is not None else ""
        return f"{where}{self.message}"
