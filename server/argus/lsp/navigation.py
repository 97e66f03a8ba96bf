"""Document symbols and go to definition: the snapshot's outline and definitions (argus.analysis.outline) as
LSP symbols and locations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.analysis.outline import OutlineItem
    from argus.lsp.convert import Positions
    from argus.lsp.state import ServerState

SYMBOL_KINDS = {  # keyed by argus.analysis.outline.OutlineKind's values
    "kernel": types.SymbolKind.Function,
    "model": types.SymbolKind.Module,
    "parameter": types.SymbolKind.Variable,
    "tile constant": types.SymbolKind.Constant,
    "policy setting": types.SymbolKind.Property,
    "block": types.SymbolKind.Method,
    "sizes": types.SymbolKind.Namespace,
    "size set": types.SymbolKind.Struct,
}


def register(server: ServerState) -> None:
    @server.client.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded(empty=list)
    async def document_symbols(params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        snapshot = await server.snapshot(params.text_document.uri)
        if snapshot is None:
            return []
        return [symbol(item, snapshot.positions) for item in snapshot.analysis.outline()]

    @server.client.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded()
    async def definition(params: types.DefinitionParams) -> types.Location | None:
        snapshot = await server.snapshot(params.text_document.uri)
        if snapshot is None:
            return None
        line, col = snapshot.positions.point(params.position)
        span = snapshot.analysis.definition(line, col)
        if span is None:
            return None
        return types.Location(uri=snapshot.uri, range=snapshot.positions.range(span))


def symbol(item: OutlineItem, positions: Positions) -> types.DocumentSymbol:
    children = None if item.children is None else [symbol(child, positions) for child in item.children]
    return types.DocumentSymbol(
        name=item.name,
        kind=SYMBOL_KINDS[item.kind.value],
        range=positions.range(item.span),
        selection_range=positions.range(item.selection),
        detail=item.detail,
        children=children,
    )
