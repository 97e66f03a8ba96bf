"""Document symbols (kernels and their blocks) and go to definition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from argus.analysis import lookup
from argus.analysis.spans import contains
from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.documents import Snapshot
    from argus.lsp.server import ArgusServer


def register(server: ArgusServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded(empty=list)
    async def document_symbols(params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        snapshot = await server.diagnostics.snapshot(params.text_document.uri)
        return [] if snapshot is None else outline(snapshot)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded()
    async def definition(params: types.DefinitionParams) -> types.Location | None:
        snapshot = await server.diagnostics.snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        line, col = snapshot.positions.point(params.position)
        span = definition_span(snapshot, line, col)
        if span is None:
            return None
        return types.Location(uri=snapshot.uri, range=snapshot.positions.range(span))


def definition_span(snapshot: Snapshot, line: int, col: int):
    from argus.dsl import ast  # loaded by the first check, long before any request needs it

    symbol = lookup.symbol_at(snapshot.check, line, col)
    if symbol is not None:
        return symbol.definition
    # `reference NAME`, `inputs NAME`, `sizes NAME` name their kernel
    kernels = {k.name: k for k in snapshot.check.module.kernels}
    for item in snapshot.check.module.items:
        if isinstance(item, ast.PythonBlock | ast.Sizes) and contains(item.kernel_span, line, col):
            kernel = kernels.get(item.kernel)
            return kernel.name_span if kernel else None
    return None


def outline(snapshot: Snapshot) -> list[types.DocumentSymbol]:
    from argus.dsl import ast

    r = snapshot.positions.range
    symbols = []
    for item in snapshot.check.module.items:
        if isinstance(item, ast.Kernel):
            children = [
                types.DocumentSymbol(
                    name=p.name,
                    kind=types.SymbolKind.Variable,
                    range=r(p.span),
                    selection_range=r(p.name_span),
                    detail=("out " if p.is_out else "") + p.dtype.id,
                )
                for p in item.params
            ]
            for stmt in item.body:
                if isinstance(stmt, ast.TileDecl | ast.PolicyDecl):
                    kind = types.SymbolKind.Constant if isinstance(stmt, ast.TileDecl) else types.SymbolKind.Property
                    children += [
                        types.DocumentSymbol(name=s.name, kind=kind, range=r(s.span), selection_range=r(s.name_span))
                        for s in stmt.settings
                    ]
            symbols.append(
                types.DocumentSymbol(
                    name=item.name,
                    kind=types.SymbolKind.Function,
                    detail="kernel",
                    range=r(item.span),
                    selection_range=r(item.name_span),
                    children=children,
                )
            )
        elif isinstance(item, ast.PythonBlock):
            symbols.append(
                types.DocumentSymbol(
                    name=f"{item.kind} {item.kernel}",
                    kind=types.SymbolKind.Method,
                    range=r(item.span),
                    selection_range=r(item.kernel_span),
                )
            )
        elif isinstance(item, ast.Sizes):
            sets = [
                types.DocumentSymbol(
                    name=s.name, kind=types.SymbolKind.Struct, range=r(s.span), selection_range=r(s.name_span)
                )
                for s in item.sets
            ]
            symbols.append(
                types.DocumentSymbol(
                    name=f"sizes {item.kernel}",
                    kind=types.SymbolKind.Namespace,
                    range=r(item.span),
                    selection_range=r(item.kernel_span),
                    children=sets,
                )
            )
    return symbols
