"""Over stdio: every published diagnostic, the checker's and the verifier's, links to its code's section of
docs/diagnostics.md (`codeDescription.href`, which VS Code shows as a link on the code)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from lsp_support import ROOT, open_document, published

from argus.dsl.codes import anchor

# An undefined name (AR101, the checker's) in one kernel, an unmasked load (AR301, the verifier's) in another.
TEXT = """kernel bad(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i], mask=i < N, other=0) + nope, mask=i < N)

kernel unmasked(x: f32[N], y: out f32[N]):
    tile B = 128
    grid (cdiv(N, B),)
    i = program_id(0) * B + arange(B)
    store(y[i], load(x[i]), mask=i < N)
"""


async def test_every_diagnostic_links_to_its_section(vscode, uri):
    open_document(vscode, uri, TEXT)
    merged = await published(vscode, uri, 1, nth=2)
    assert {"AR101", "AR301"} <= {d.code for d in merged.diagnostics}
    for d in merged.diagnostics:
        link = urlparse(d.code_description.href)
        assert (Path(unquote(link.path)), link.fragment) == (ROOT / "docs" / "diagnostics.md", anchor(d.code))
