"""One long document does not hold up another's diagnostics, and read-only requests do not queue behind
proofs (issue 22: a 20,000-line file delayed a small file's diagnostics by 9.6 s; hover p95 300 ms)."""

from __future__ import annotations

import asyncio
import time

from lsp_support import EXAMPLES, open_document, published
from lsprotocol import types
from server_load import many_kernels_file

NEXT_K = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
LONG = many_kernels_file()  # 58 kernels with four-value tune lists: seconds of verification
OFFS = [n for n, line in enumerate(LONG.split("\n")) if line.startswith("    offs = ")]


def arrival(client, uri: str, version: int, nth: int) -> int | None:
    """The index of the `nth` publication for (uri, version) among all publications so far."""
    found = [i for i, p in enumerate(client.published) if p.uri == uri and p.version == version]
    return found[nth - 1] if len(found) >= nth else None


async def test_a_small_documents_verdicts_do_not_wait_for_a_long_documents_verification(vscode, tmp_path):
    long, small = (tmp_path / "long.argus").as_uri(), (tmp_path / "small.argus").as_uri()
    open_document(vscode, long, LONG)
    await published(vscode, long, 1)  # checked; its verification (seconds: 58 kernels, 4 tune values) starts
    open_document(vscode, small, NEXT_K)
    verdicts = await published(vscode, small, 1, nth=2, timeout=60)
    assert [d.code for d in verdicts.diagnostics] == ["AR310"]
    finished = await published(vscode, long, 1, nth=3, timeout=120)  # the long one still gets all its verdicts
    assert list(finished.diagnostics) == []
    assert arrival(vscode, small, 1, 2) < arrival(vscode, long, 1, 2)  # before even its declared part


async def test_hover_answers_while_the_verifier_works_on_a_long_document(vscode, tmp_path):
    uri = (tmp_path / "long.argus").as_uri()
    open_document(vscode, uri, LONG)
    await published(vscode, uri, 1, nth=2, timeout=60)  # the kernels as written: layouts to show from now on
    doc = types.TextDocumentIdentifier(uri)
    during = []  # the time of each hover answered while the verification still ran
    for line in OFFS[:24]:  # `offs = ...` of each kernel, while the tune values are verified
        started = time.perf_counter()
        hover = await vscode.text_document_hover_async(types.HoverParams(doc, types.Position(line, 5)))
        if arrival(vscode, uri, 1, 3) is None:
            during.append(time.perf_counter() - started)
        assert hover is not None and "offs" in hover.contents.value
        await asyncio.sleep(0.02)
    assert len(during) >= 5, f"the verification ended after {len(during)} hovers: too few measured"
    assert sorted(during)[len(during) // 2] < 0.2, during  # not queued behind a proof
