"""Semantic tokens for the names the analyzer resolved: what TextMate's grammar cannot know (a parameter
versus a local value, a size versus a tile constant)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.documents import Snapshot
    from argus.lsp.state import ServerState

TOKEN_TYPES = ["parameter", "variable", "function", "type", "enumMember", "property", "macro"]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]
KIND_TO_TOKEN = {
    "param": ("parameter", 0),
    "size": ("enumMember", 1 << 1),  # problem sizes: runtime, but fixed for a launch
    "constant": ("macro", 1 << 1),  # tile constants: compile time
    "variable": ("variable", 0),
    "loop": ("variable", 0),
    "builtin": ("function", 1 << 2),
    "dtype": ("type", 1 << 2),
    "policy": ("property", 1 << 1),
}
LEGEND = types.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)


def register(server: ServerState) -> None:
    @server.client.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, LEGEND)
    @guarded(empty=lambda: types.SemanticTokens(data=[]))
    async def semantic_tokens(params: types.SemanticTokensParams) -> types.SemanticTokens:
        snapshot = await server.snapshot(params.text_document.uri)
        return types.SemanticTokens(data=[] if snapshot is None else encode(snapshot))


def encode(snapshot: Snapshot) -> list[int]:
    """The LSP relative encoding: per token (Δline, Δstart, length, type, modifiers), sorted, no overlaps."""
    tokens: dict[tuple[int, int], tuple[int, int, int]] = {}
    for symbol in snapshot.check.analysis.symbols:
        span = symbol.span
        if span.line != span.end_line or span.end_col <= span.col or symbol.kind not in KIND_TO_TOKEN:
            continue
        token_type, modifiers = KIND_TO_TOKEN[symbol.kind]
        if symbol.definition == span:
            modifiers |= 1
        start = snapshot.positions.position(span.line, span.col)
        end = snapshot.positions.position(span.line, span.end_col)
        tokens[(start.line, start.character)] = (
            end.character - start.character,
            TOKEN_TYPES.index(token_type),
            modifiers,
        )
    data: list[int] = []
    previous_line, previous_start, previous_end = 0, 0, -1
    for (line, start), (length, token_type, modifiers) in sorted(tokens.items()):
        if line == previous_line and start < previous_end:
            continue  # overlapping spans: keep the first
        delta_line = line - previous_line
        delta_start = start - previous_start if delta_line == 0 else start
        data += [delta_line, delta_start, length, token_type, modifiers]
        previous_line, previous_start, previous_end = line, start, start + length
    return data
