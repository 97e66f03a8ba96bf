"""Completion and signature help: the snapshot's answers (argus.analysis.completion) as LSP items."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.analysis.completion import Completion, Signature
    from argus.lsp.state import ServerState

ITEM_KINDS = {  # keyed by argus.analysis.completion.CompletionKind's values
    "variable": types.CompletionItemKind.Variable,
    "constant": types.CompletionItemKind.Constant,
    "method": types.CompletionItemKind.Method,
    "function": types.CompletionItemKind.Function,
    "dtype": types.CompletionItemKind.TypeParameter,
    "property": types.CompletionItemKind.Property,
    "keyword": types.CompletionItemKind.Keyword,
}


def register(server: ServerState) -> None:
    @server.client.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    @guarded(empty=lambda: types.CompletionList(is_incomplete=False, items=[]))
    async def completion(params: types.CompletionParams) -> types.CompletionList:
        found = await server.snapshot_at(params.text_document.uri, params.position)
        if found is None:
            return types.CompletionList(is_incomplete=False, items=[])
        snapshot, position = found
        line, col = snapshot.positions.point(position)
        return types.CompletionList(
            is_incomplete=False, items=[item(c) for c in snapshot.analysis.completions(line, col)]
        )

    @server.client.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]),
    )
    @guarded()
    async def signature_help(params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        found = await server.snapshot_at(params.text_document.uri, params.position)
        if found is None:
            return None
        snapshot, position = found
        line, col = snapshot.positions.point(position)
        found_signature = snapshot.analysis.signature(line, col)
        return None if found_signature is None else signature_help_of(found_signature)


def item(completion: Completion) -> types.CompletionItem:
    doc = completion.doc
    return types.CompletionItem(
        label=completion.label,
        kind=ITEM_KINDS[completion.kind.value],
        detail=completion.detail,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc) if doc else None,
        insert_text=f"{completion.label}(" if completion.call else None,
    )


def signature_help_of(signature: Signature) -> types.SignatureHelp:
    return types.SignatureHelp(
        signatures=[
            types.SignatureInformation(
                label=signature.label,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=signature.doc),
                parameters=[types.ParameterInformation(label=p) for p in signature.parameters],
            )
        ],
        active_signature=0,
        active_parameter=signature.active,
    )
