"""Hover, completion, signature help, symbols, definition and semantic tokens on the matmul example."""

from __future__ import annotations

import asyncio
import re

from lsp_support import EXAMPLES, open_document, published, replace_all
from lsprotocol import types

MATMUL = (EXAMPLES / "matmul.argus").read_text()
LINES = MATMUL.split("\n")


def at(needle: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    """The position of the `occurrence`-th `needle` in the matmul example, plus `offset` columns."""
    count = 0
    for line, text in enumerate(LINES):
        start = text.find(needle)
        while start >= 0:
            if count == occurrence:
                return types.Position(line=line, character=start + offset)
            count += 1
            start = text.find(needle, start + 1)
    raise AssertionError(needle)


async def opened(client, uri):
    open_document(client, uri, MATMUL)
    await published(client, uri, 1)
    return types.TextDocumentIdentifier(uri=uri)


async def test_hover_on_a_loaded_tile_shows_dtype_and_symbolic_shape(client, uri):
    doc = await opened(client, uri)
    hover = await client.text_document_hover_async(types.HoverParams(doc, at("a = load", offset=0)))
    assert "f16[BM, BK]" in hover.contents.value
    assert "`[128, 64]`" in hover.contents.value  # the shape with the tile constants' values


async def test_hover_shows_the_verifiers_layout_of_the_value(client, uri):
    doc = await opened(client, uri)
    await published(client, uri, 1, nth=2)  # the verifier's result, layouts included
    # hover waits only briefly for a layout to be rendered on the solver thread and answers without it rather
    # than late; on a loaded machine (that thread busy with the tune values) a later hover brings it
    deadline = asyncio.get_running_loop().time() + 10.0
    while True:
        hover = await client.text_document_hover_async(types.HoverParams(doc, at("rm = pm")))
        if "layout and tags" in hover.contents.value or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.1)
    assert "layout and tags" in hover.contents.value
    # rm = pm * BM + arange(BM): 128 times the program id, plus the lane (the verifier's own wording)
    assert re.search(r"128\s*\*\s*(pm|pid0)", hover.contents.value)


async def test_hover_while_the_verifier_works_on_tune_values_still_renders_the_layout(client, uri):
    """Right after the kernel's own verdicts are published, the verifier goes on with BN's other tune value; a
    hover then must not render its layout (z3 terms) beside that thread's work, which corrupted both."""
    doc = await opened(client, uri)
    text = MATMUL
    for version in range(2, 12):
        new = text.replace("0.7071067811865476", f"0.70710678118654{version:02d}")
        replace_all(client, uri, version, text, new)
        text = new
        await published(client, uri, version, nth=2)  # the kernel as written; its tune value is verified next
        hover = await client.text_document_hover_async(types.HoverParams(doc, at("rm = pm")))
        assert "layout unavailable" not in hover.contents.value


async def test_hover_on_a_builtin_shows_its_signature_and_doc(client, uri):
    doc = await opened(client, uri)
    hover = await client.text_document_hover_async(types.HoverParams(doc, at("dot(", offset=1)))
    assert "dot(a, b, acc=None" in hover.contents.value
    assert "Matrix product" in hover.contents.value


async def test_hover_on_a_tune_listed_constant_shows_its_tune_values(client, uri):
    doc = await opened(client, uri)
    hover = await client.text_document_hover_async(types.HoverParams(doc, at("BN = 256")))
    assert "tile BN = 256" in hover.contents.value and "tune: 128, 256" in hover.contents.value


async def test_completion_offers_parameters_constants_dtypes_and_builtins(client, uri):
    doc = await opened(client, uri)
    result = await client.text_document_completion_async(types.CompletionParams(doc, at("acc = dot", offset=4)))
    labels = {item.label for item in result.items}
    assert {"A", "bias", "BK", "K", "f16", "bf16", "dot", "load", "rk"} <= labels


async def test_completion_after_a_dot_offers_methods(client, uri):
    doc = await opened(client, uri)
    result = await client.text_document_completion_async(types.CompletionParams(doc, at(".to(f16)", offset=1)))
    assert [item.label for item in result.items] == ["to"]


async def test_signature_help_follows_the_argument_under_the_cursor(client, uri):
    doc = await opened(client, uri)
    params = types.SignatureHelpParams(doc, at("other=0)", offset=6))
    help_ = await client.text_document_signature_help_async(params)
    signature = help_.signatures[0]
    assert signature.label.startswith("load(")
    assert signature.parameters[help_.active_parameter].label == "other=None"


async def test_document_symbols_list_kernels_and_their_blocks(client, uri):
    doc = await opened(client, uri)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(doc))
    assert [s.name for s in symbols] == ["matmul", "reference matmul", "sizes matmul"]
    children = [c.name for c in symbols[0].children]
    assert children[:4] == ["A", "B", "bias", "C"] and "BK" in children and "num_stages" in children


async def test_go_to_definition_jumps_from_a_use_to_the_assignment(client, uri):
    doc = await opened(client, uri)
    location = await client.text_document_definition_async(types.DefinitionParams(doc, at("rk < K")))
    assert location.range.start == at("rk = k0")


async def test_semantic_tokens_are_sorted_and_cover_the_resolved_names(client, uri):
    doc = await opened(client, uri)
    tokens = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(doc))
    data = tokens.data
    assert len(data) % 5 == 0 and len(data) > 100
    line = start = 0
    decoded = []
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, token_type, _ = data[i : i + 5]
        assert delta_line >= 0 and length > 0
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        decoded.append((LINES[line][start : start + length], token_type))
    legend = ["parameter", "variable", "function", "type", "enumMember", "property", "macro"]
    kinds = {text: legend[t] for text, t in decoded}
    assert kinds["A"] == "parameter" and kinds["dot"] == "function" and kinds["f32"] == "type"
    assert kinds["BK"] == "macro" and kinds["acc"] == "variable" and kinds["K"] == "enumMember"
