"""Diagnostics over stdio: on open, on change (the last version wins), cleared on close."""

from __future__ import annotations

import asyncio

from lsp_support import EXAMPLES, ROOT, open_document, published, replace_all
from lsprotocol import types

from argus.dsl.check import check_source

BROKEN = """kernel add(x: f32[N], y: out f32[N]):
    tile BLOCK = 1024
    grid (cdiv(N, BLOCK),)
    offs = program_id(0) * BLOCK + arange(BLOCK)
    store(y[offs], load(x[offs], mask=offs < N, other=0) + undefined_name, mask=offs < N)
"""


async def test_a_broken_document_gets_its_diagnostics_with_its_version(client, uri):
    open_document(client, uri, BROKEN, version=7)
    params = await published(client, uri, 7)
    codes = {d.code for d in params.diagnostics}
    assert "AR101" in codes  # undefined_name
    undefined = next(d for d in params.diagnostics if d.code == "AR101")
    assert undefined.range.start == types.Position(line=4, character=59)
    assert undefined.source == "argus"


async def test_a_document_that_does_not_parse_still_gets_diagnostics(client, uri):
    open_document(client, uri, "kernel k(x: f32[N]:\n    grid (\n  )) ]]\n")
    params = await published(client, uri, 1)
    assert params.diagnostics
    assert all(d.severity is not None and d.code for d in params.diagnostics)


async def test_diagnostics_are_cleared_when_the_document_closes(client, uri):
    open_document(client, uri, BROKEN)
    await published(client, uri, 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    for _ in range(200):
        last = [p for p in client.published if p.uri == uri][-1]
        if not last.diagnostics:
            break
        await asyncio.sleep(0.01)
    assert list(last.diagnostics) == [] and last.version is None


async def test_200_quick_edits_end_with_the_diagnostics_of_the_last_version(client, uri):
    """Typing `undefined_name` into a clean kernel one character at a time, then deleting it again, then
    retyping it: 200 incremental edits within a second. The last publication must be for the last version and
    match a fresh check of the final text; versions never go backwards."""
    text = (EXAMPLES / "vector_add.argus").read_text()
    open_document(client, uri, text)
    await published(client, uri, 1)
    line_index = next(i for i, line in enumerate(text.split("\n")) if "store(" in line)
    column = len(text.split("\n")[line_index])
    word = " + undefined_name"
    typed = ""
    version = 1
    edits = []
    while len(edits) < 200:
        for char in word:  # type it
            edits.append(("insert", char))
        for _ in word:  # delete it again
            edits.append(("delete", None))
    edits = edits[:200]
    for kind, char in edits:
        version += 1
        position = types.Position(line=line_index, character=column + len(typed))
        if kind == "insert":
            change = types.TextDocumentContentChangePartial(range=types.Range(start=position, end=position), text=char)
            typed += char
        else:
            start = types.Position(line=line_index, character=column + len(typed) - 1)
            change = types.TextDocumentContentChangePartial(range=types.Range(start=start, end=position), text="")
            typed = typed[:-1]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
        await asyncio.sleep(0.004)  # 200 edits in about a second, as a fast typist with key repeat
    final = await published(client, uri, version)
    lines = text.split("\n")
    lines[line_index] += typed
    expected = check_source("\n".join(lines)).diagnostics
    assert [(d.code, d.range.start.line, d.range.start.character) for d in final.diagnostics] == [
        (d.code, d.range.start.line, d.range.start.character) for d in expected
    ]
    await asyncio.sleep(0.3)  # nothing stale may arrive after the last version
    versions = [p.version for p in client.published if p.uri == uri]
    assert versions == sorted(versions)
    assert versions[-1] == version


async def test_invariant_diagnostics_follow_the_types_with_their_counterexample(client, uri):
    text = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
    open_document(client, uri, text)
    types_only = await published(client, uri, 1)
    assert list(types_only.diagnostics) == []  # shapes and dtypes are right
    merged = await published(client, uri, 1, nth=2)
    (bug,) = merged.diagnostics
    assert (bug.code, bug.source, bug.range.start.line) == ("AR310", "argus.verify", 17)
    record = bug.data["argus"]["counterexample"]
    assert record["kind"] == "contraction" and record["values"] == {"a's K index": 0, "b's K index": 64}
    fixed = text.replace("rk + BK", "rk")
    replace_all(client, uri, 2, text, fixed)
    assert list((await published(client, uri, 2, nth=2)).diagnostics) == []


async def test_edits_within_the_debounce_are_verified_once_for_the_last_version(client, uri):
    client.set_configuration({"debounceMs": 400}, section="argus")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"argus": {"debounceMs": 400}})
    )
    text = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
    open_document(client, uri, text)
    await published(client, uri, 1, nth=2)
    fixed = text.replace("rk + BK", "rk")
    replace_all(client, uri, 2, text, fixed)
    replace_all(client, uri, 3, fixed, text)
    await published(client, uri, 3, nth=2)
    assert len([p for p in client.published if p.uri == uri and p.version == 2]) <= 1  # never verified
    assert [d.code for d in client.diagnostics[uri]] == ["AR310"]


async def test_a_race_names_the_second_access_as_related_information(client, uri):
    text = (ROOT / "tests" / "verify" / "corpus" / "race_overlapping_blocks.argus").read_text()
    open_document(client, uri, text)
    merged = await published(client, uri, 1, nth=2)
    (race,) = [d for d in merged.diagnostics if d.code == "AR302"]
    (second,) = race.related_information  # the same store, run by another program
    assert (second.location.uri, second.location.range.start.line) == (uri, 7)
    assert "store" in second.message
    assert race.data["argus"]["counterexample"]["second"] is not None


# A store without a mask (out of bounds as written) whose tune value BLOCK = 512 also makes programs overlap.
RETUNED_RACE = """kernel scale(x: f32[N], y: out f32[N]):
    tile BLOCK = 256 tune [256, 512], STEP = 256
    grid (cdiv(N, STEP),)
    offs = program_id(0) * STEP + arange(BLOCK)
    v = load(x[offs], mask=offs < N, other=0)
    store(y[offs], v * 2.0)
"""


def verified(params) -> list:
    """The verifier's diagnostics of a publication (the kernel has no `reference`: the checker warns, AR107)."""
    return [d for d in params.diagnostics if d.source == "argus.verify"]


async def test_the_kernel_as_written_is_published_before_its_tune_values_for_the_same_version(client, uri):
    open_document(client, uri, RETUNED_RACE)
    declared = await published(client, uri, 1, nth=2)
    assert [(d.code, "variant" in d.data["argus"]) for d in verified(declared)] == [("AR301", False)]
    merged = await published(client, uri, 1, nth=3)
    assert [(d.code, d.range.start.line) for d in verified(merged)] == [("AR301", 5), ("AR302", 5)]
    race = verified(merged)[1]
    assert race.data["argus"]["variant"] == "with BLOCK = 512 from its tune list"
    assert race.data["argus"]["counterexample"]["kind"] == "race_store"
    checker = [d.code for d in (await published(client, uri, 1)).diagnostics]
    assert checker and [d.code for d in merged.diagnostics if d.source != "argus.verify"] == checker  # still merged


async def test_a_violation_only_a_tune_value_has_arrives_for_the_same_version(client, uri):
    as_written_clean = RETUNED_RACE.replace("store(y[offs], v * 2.0)", "store(y[offs], v * 2.0, mask=offs < N)")
    open_document(client, uri, BROKEN)
    await published(client, uri, 1)
    replace_all(client, uri, 2, BROKEN, as_written_clean)
    assert verified(await published(client, uri, 2, nth=2)) == []  # the kernel as written is clean
    (race,) = verified(await published(client, uri, 2, nth=3))
    assert (race.code, race.data["argus"]["verdict"]) == ("AR302", "refuted")
    assert "BLOCK = 512" in race.message


async def test_without_tune_values_the_verifier_publishes_once(client, uri):
    text = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text().replace(" tune [32, 64]", "")
    open_document(client, uri, text)
    (bug,) = verified(await published(client, uri, 1, nth=2))
    assert bug.code == "AR310"
    await asyncio.sleep(0.5)
    assert len([p for p in client.published if p.uri == uri and p.version == 1]) == 2
