"""The document's outline (kernels with their parameters, tile constants and policy settings; models with
their parameters; reference, inputs and sizes blocks) and go to definition, as plain data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from argus.analysis import lookup
from argus.analysis.spans import contains

if TYPE_CHECKING:
    from argus.analysis.snapshot import Analysis
    from argus.dsl.spans import Span


class OutlineKind(StrEnum):
    KERNEL = "kernel"
    MODEL = "model"
    PARAMETER = "parameter"
    TILE_CONSTANT = "tile constant"
    POLICY_SETTING = "policy setting"
    BLOCK = "block"  # reference NAME, inputs NAME
    SIZES = "sizes"
    SIZE_SET = "size set"


@dataclass(frozen=True, slots=True)
class OutlineItem:
    name: str
    kind: OutlineKind
    span: Span  # the whole item
    selection: Span  # its name
    detail: str | None = None
    children: tuple[OutlineItem, ...] | None = None


def definition(analysis: Analysis, line: int, col: int) -> Span | None:
    """Where the symbol at (line, col) is defined; `reference NAME`, `inputs NAME`, `sizes NAME` name their
    kernel or model."""
    from argus.dsl import ast  # loaded by the first check, long before any request needs it

    symbol = lookup.symbol_at(analysis.check, line, col)
    if symbol is not None:
        return symbol.definition
    module = analysis.check.module
    owners: list[ast.Kernel | ast.Model] = [*module.kernels, *module.models]
    kernels = {k.name: k for k in owners}
    for item in analysis.check.module.items:
        if isinstance(item, ast.PythonBlock | ast.Sizes) and contains(item.kernel_span, line, col):
            kernel = kernels.get(item.kernel)
            return kernel.name_span if kernel else None
    return None


def outline(analysis: Analysis) -> list[OutlineItem]:
    from argus.dsl import ast

    items = []
    for item in analysis.check.module.items:
        if isinstance(item, ast.Kernel):
            children = [
                OutlineItem(
                    p.name, OutlineKind.PARAMETER, p.span, p.name_span, (p.mode + " " if p.mode else "") + p.dtype.id
                )
                for p in item.params
            ]
            for stmt in item.body:
                if isinstance(stmt, ast.TileDecl | ast.PolicyDecl):
                    kind = OutlineKind.TILE_CONSTANT if isinstance(stmt, ast.TileDecl) else OutlineKind.POLICY_SETTING
                    children += [OutlineItem(s.name, kind, s.span, s.name_span) for s in stmt.settings]
            items.append(
                OutlineItem(item.name, OutlineKind.KERNEL, item.span, item.name_span, "kernel", tuple(children))
            )
        elif isinstance(item, ast.Model):
            children = [
                OutlineItem(
                    p.name, OutlineKind.PARAMETER, p.span, p.name_span, (p.mode + " " if p.mode else "") + p.dtype.id
                )
                for p in item.params
            ]
            items.append(OutlineItem(item.name, OutlineKind.MODEL, item.span, item.name_span, "model", tuple(children)))
        elif isinstance(item, ast.PythonBlock):
            items.append(OutlineItem(f"{item.kind} {item.kernel}", OutlineKind.BLOCK, item.span, item.kernel_span))
        elif isinstance(item, ast.Sizes):
            sets = tuple(OutlineItem(s.name, OutlineKind.SIZE_SET, s.span, s.name_span) for s in item.sets)
            items.append(
                OutlineItem(f"sizes {item.kernel}", OutlineKind.SIZES, item.span, item.kernel_span, children=sets)
            )
    return items
