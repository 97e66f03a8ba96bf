"""Hover and completion on a string tile constant (examples/fp32_gemm.argus's PREC) show it as Argus writes it,
quoted, with its tune values; the `layout` line's names hover as the parameter and the size they are."""

from __future__ import annotations

from lsp_support import EXAMPLES, open_document, published
from lsprotocol import types

GEMM = (EXAMPLES / "fp32_gemm.argus").read_text()
LINES = GEMM.split("\n")


def at(needle: str, offset: int = 0) -> types.Position:
    """Where `needle` first appears in the kernel's code (the header comment quotes some of it)."""
    line = next(n for n, text in enumerate(LINES) if needle in text and not text.startswith("#"))
    return types.Position(line=line, character=LINES[line].index(needle) + offset)


async def opened(client, uri):
    open_document(client, uri, GEMM)
    await published(client, uri, 1)
    return types.TextDocumentIdentifier(uri=uri)


async def test_hover_on_a_string_constant_shows_its_quoted_value_and_tune_list(vscode, uri):
    doc = await opened(vscode, uri)
    hover = await vscode.text_document_hover_async(types.HoverParams(doc, at('PREC = "tf32x3"')))
    assert 'tile PREC = "tf32x3"' in hover.contents.value
    assert 'tune: "ieee", "tf32x3"' in hover.contents.value


async def test_hover_on_its_use_in_dot_says_it_is_a_string(vscode, uri):
    doc = await opened(vscode, uri)
    hover = await vscode.text_document_hover_async(types.HoverParams(doc, at("input_precision=PREC", offset=16)))
    assert 'tile PREC = "tf32x3"' in hover.contents.value


async def test_completion_shows_the_string_constant_quoted(vscode, uri):
    doc = await opened(vscode, uri)
    result = await vscode.text_document_completion_async(types.CompletionParams(doc, at("acc = dot", offset=4)))
    details = {item.label: item.detail for item in result.items}
    assert details["PREC"] == '= "tf32x3"' and details["BK"] == "= 64"
    assert "layout" in details  # the declaration keyword


async def test_the_names_of_a_layout_line_hover_as_parameter_and_size(vscode, uri):
    doc = await opened(vscode, uri)
    tensor = await vscode.text_document_hover_async(types.HoverParams(doc, at("layout B: K", offset=7)))
    axis = await vscode.text_document_hover_async(types.HoverParams(doc, at("layout B: K", offset=10)))
    assert "f32[K, N]" in tensor.contents.value
    assert "problem size" in axis.contents.value
