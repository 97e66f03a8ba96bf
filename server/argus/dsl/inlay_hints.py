"""Inlay hints as plain data in Argus spans: what the editor writes into the text without changing it.

After each assignment target that holds a tile, its dtype and symbolic shape (`a: f16[BM, BK]`, as rust-analyzer
writes a binding's type); at the end of that statement, where the verifier computed the value's layout, a short
summary of it: which tensor elements the tile's elements stand for (`(i, j) → A[M: 128*pm + i, K: k0 + j]`),
with the whole layout (mask and tags too) as its tooltip. The language server turns these into LSP hints.

Layouts come from the verifier, a layer above this one, so they are passed in: anything with a `span`, a
`name` and a `text` (argus.verify's ValueLayout). Reading `text` may render z3 terms; the caller decides where
that may run.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

from argus.dsl import ast
from argus.dsl.check import CheckResult
from argus.dsl.spans import Span

TILE_TYPE = re.compile(r"^\w+\[.+\]$")
MAX_LAYOUT_LABEL = 60  # a hint longer than this hides the code it sits in; the tooltip has the rest


class Layout(Protocol):
    span: Span
    name: str

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class InlayHint:
    line: int
    col: int
    label: str
    kind: str  # "type": after an assignment target; "layout": at the end of its statement
    tooltip: str = ""


def inlay_hints(check: CheckResult, within: Span, layouts: Sequence[Layout] = ()) -> list[InlayHint]:
    """The hints whose position lies inside `within` (the part of the document the editor shows)."""
    types = tile_types(check)
    hints: list[InlayHint] = []
    for stmt in assignments(check.module):
        tiles = [(target, types[target.span]) for target in stmt.targets if target.span in types]
        for target, type_text in tiles:
            hints.append(InlayHint(target.span.end_line, target.span.end_col, f": {type_text}", "type"))
        hints += layout_hints(stmt, [target for target, _ in tiles], layouts)
    return sorted((h for h in hints if inside(within, h.line, h.col)), key=lambda h: (h.line, h.col, h.kind))


def tile_types(check: CheckResult) -> dict[Span, str]:
    """The type the analyzer gave each assignment target that holds a tile (`f16[BM, BK]`), by its span."""
    return {
        symbol.span: symbol.type
        for symbol in check.analysis.symbols
        if symbol.kind == "variable" and symbol.definition == symbol.span and TILE_TYPE.match(symbol.type)
    }


def assignments(module: ast.Module) -> Iterator[ast.Assign]:
    for kernel in module.kernels:
        for stmt in ast.walk_stmts(kernel.body):
            if isinstance(stmt, ast.Assign):
                yield stmt


def layout_hints(stmt: ast.Assign, targets: list[ast.Name], layouts: Sequence[Layout]) -> list[InlayHint]:
    """One hint at the end of the statement, naming the target when the statement assigns several."""
    parts, tooltips = [], []
    for target in targets:
        layout = layout_of(target, stmt, layouts)
        summary = layout_summary(layout.text) if layout is not None else None
        if summary is None:
            continue
        parts.append(summary if len(stmt.targets) == 1 else f"{target.id}: {summary}")
        tooltips.append(f"{target.id}: {layout.text}")
    if not parts:
        return []
    span = stmt.span
    return [InlayHint(span.end_line, span.end_col, shortened("; ".join(parts)), "layout", "\n".join(tooltips))]


def layout_of(target: ast.Name, stmt: ast.Assign, layouts: Sequence[Layout]) -> Layout | None:
    """The verifier's layout of the value assigned here: its span is the assigned expression, which starts on
    the statement's line."""
    return next((x for x in layouts if x.name == target.id and x.span.line == stmt.span.line), None)


def layout_summary(text: str) -> str | None:
    """`(i, j) → A[M: 128*pm + i, K: k0 + j]` from the layout `[128x64] (i, j) -> A[M: 128*pm + i, K: k0 + j];
    mask ...; tags ...`: where the elements come from, without the mask and the tags. None when the layout
    says nothing about where (`no tensor index`, a scalar)."""
    head, arrow, rest = text.partition(" -> ")
    coords = head[head.find("(") :] if "(" in head else ""
    if not arrow or not coords:
        return None
    parts = [part for part in rest.split("; ") if not part.startswith(("mask ", "tags "))]
    where = "; ".join(part.removeprefix("value ") for part in parts)
    if not where or where == "no tensor index":
        return None
    return f"{coords} → {where}"


def shortened(label: str) -> str:
    return label if len(label) <= MAX_LAYOUT_LABEL else label[: MAX_LAYOUT_LABEL - 1].rstrip() + "…"


def inside(span: Span, line: int, col: int) -> bool:
    return (span.line, span.col) <= (line, col) <= (span.end_line, span.end_col)
