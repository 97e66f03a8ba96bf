"""Completion of builtins, parameters, sizes, tile constants, dtypes and policy settings; signature help."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.analysis import lookup
from argus.dsl.builtins import BUILTINS, CONSTANTS, DTYPES, METHODS, POLICY_SETTINGS
from argus.dsl.kernel_analysis import constant_text
from argus.lsp.guard import guarded

if TYPE_CHECKING:
    from argus.lsp.documents import Snapshot
    from argus.lsp.server import ArgusServer

KEYWORDS = (
    *("kernel", "tile", "policy", "layout", "requires", "grid"),
    *("for", "in", "if", "else", "invariant", "out", "tune"),
)
SYMBOL_KINDS = {
    "param": types.CompletionItemKind.Variable,
    "size": types.CompletionItemKind.Constant,
    "constant": types.CompletionItemKind.Constant,
    "variable": types.CompletionItemKind.Variable,
    "loop": types.CompletionItemKind.Variable,
}


def register(server: ArgusServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=["."]))
    @guarded(empty=lambda: types.CompletionList(is_incomplete=False, items=[]))
    async def completion(params: types.CompletionParams) -> types.CompletionList:
        found = await server.diagnostics.snapshot_at(params.text_document.uri, params.position)
        if found is None:
            return types.CompletionList(is_incomplete=False, items=[])
        snapshot, position = found
        line, col = snapshot.positions.point(position)
        return types.CompletionList(is_incomplete=False, items=completions(snapshot, line, col))

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","]),
    )
    @guarded()
    async def signature_help(params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        found = await server.diagnostics.snapshot_at(params.text_document.uri, params.position)
        if found is None:
            return None
        snapshot, position = found
        line, col = snapshot.positions.point(position)
        return signature(snapshot.positions.lines, line, col)


def completions(snapshot: Snapshot, line: int, col: int) -> list[types.CompletionItem]:
    lines = snapshot.positions.lines
    before = lines[line][:col] if line < len(lines) else ""
    if re.search(r"\.\s*\w*$", before):  # after a dot: methods only
        return [item(name, types.CompletionItemKind.Method, m.signature, m.doc) for name, m in METHODS.items()]
    items: dict[str, types.CompletionItem] = {}
    found = lookup.kernel_at(snapshot.check, line)
    if found is not None and found[1] is not None:
        kernel = found[1]
        for param in kernel.params:
            items[param.name] = item(param.name, types.CompletionItemKind.Variable, str(param.type), "parameter")
        for size in kernel.sizes:
            items.setdefault(size, item(size, types.CompletionItemKind.Constant, "i32", "problem size"))
        for name, constant in kernel.constants.items():
            shown = f"= {constant_text(constant.value)}"
            items[name] = item(name, types.CompletionItemKind.Constant, shown, "tile constant")
    # values assigned above the cursor in this kernel
    for symbol in snapshot.check.analysis.symbols:
        defined_above = symbol.definition == symbol.span and symbol.span.line <= line
        in_kernel = found is None or found[0].span.line <= symbol.span.line
        if symbol.kind in ("variable", "loop") and defined_above and in_kernel:
            items.setdefault(symbol.name, item(symbol.name, SYMBOL_KINDS[symbol.kind], symbol.type, symbol.kind))
    for name, entry in BUILTINS.items():
        items.setdefault(name, item(name, types.CompletionItemKind.Function, entry.signature, entry.doc, call=True))
    for name, doc in DTYPES.items():
        items.setdefault(name, item(name, types.CompletionItemKind.TypeParameter, "dtype", doc))
    for name, doc in CONSTANTS.items():
        items.setdefault(name, item(name, types.CompletionItemKind.Constant, "f32", doc))
    if re.match(r"\s*policy\b", lines[line] if line < len(lines) else ""):
        for name, doc in POLICY_SETTINGS.items():
            items.setdefault(name, item(name, types.CompletionItemKind.Property, "policy", doc))
    for keyword in KEYWORDS:
        items.setdefault(keyword, item(keyword, types.CompletionItemKind.Keyword, "keyword", ""))
    return list(items.values())


def item(name: str, kind: types.CompletionItemKind, detail: str, doc: str, call: bool = False):
    return types.CompletionItem(
        label=name,
        kind=kind,
        detail=detail,
        documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc) if doc else None,
        insert_text=f"{name}(" if call else None,
    )


def parameters_of(signature_text: str) -> list[str]:
    inner = signature_text[signature_text.index("(") + 1 : signature_text.rindex(")")] if "(" in signature_text else ""
    parts, depth, current = [], 0, ""
    for char in inner:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def signature(lines: list[str], line: int, col: int) -> types.SignatureHelp | None:
    call = lookup.open_call(lines, line, col)
    if call is None:
        return None
    entry = BUILTINS.get(call.name) or METHODS.get(call.name)
    if entry is None:
        return None
    text = entry.signature.split(" -> ")[0].split(" or ")[0]
    params = parameters_of(text)
    active = call.argument
    if call.keyword is not None:
        named = [i for i, p in enumerate(params) if p.split("=")[0].strip("[] ") == call.keyword]
        active = named[0] if named else active
    return types.SignatureHelp(
        signatures=[
            types.SignatureInformation(
                label=entry.signature,
                documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=entry.doc),
                parameters=[types.ParameterInformation(label=p) for p in params],
            )
        ],
        active_signature=0,
        active_parameter=min(active, max(len(params) - 1, 0)),
    )
