"""What a gate run tells the user reads as text, not as Python: no message the server shows or sends for a run
(window/showMessage, progress, `argus-gate` diagnostics, the code lens, the strings of `argus/gateResult` and of
`argus.runGate`'s answer, which VS Code's status bar and tooltip show) nor the CLI's report of the same results
holds the repr of a dict or a list (`sizes {'M': 96, ...}` was one)."""

from __future__ import annotations

import asyncio
import re

from lsp_support import EXAMPLES, open_document, published, record_gate_results
from lsprotocol import types

from argus.gate.report import render
from argus.gate.result import GateResult

BUGGY = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()

# {'M': 1}, {"M": 1}, {}, ['a'], [{...}], dict(...), and a list of numbers not written as an index (C[0, 3] is one)
PYTHON_REPR = re.compile(r"""\{\s*['"]|\{\s*\}|\[\s*['"{]|\bdict\(|(?<![\w\]])\[\s*-?\d""")


def python_reprs(texts: list[str]) -> list[str]:
    return [t for t in texts if PYTHON_REPR.search(t)]


def test_the_pattern_finds_python_reprs_and_not_indices():
    assert python_reprs(["seed 7, sizes {'M': 96, 'N': 128}", "trials [{'M': 1}]", "seeds [1, 2]", "got {}"]) == [
        "seed 7, sizes {'M': 96, 'N': 128}",
        "trials [{'M': 1}]",
        "seeds [1, 2]",
        "got {}",
    ]
    assert python_reprs(["`C[0, 3]` is 1.0 (sizes M=96, N=128)", "first mismatch C[2, 5]", "A[rm, k]"]) == []


def strings(value, keys=("message", "error", "detail")) -> list[str]:
    """The strings under `keys` anywhere in a notification's params (pygls objects) or an answer (dicts)."""
    if hasattr(value, "_asdict"):
        value = value._asdict()
    if isinstance(value, dict):
        found = [v for k, v in value.items() if k in keys and isinstance(v, str)]
        return found + [s for v in value.values() for s in strings(v, keys)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in strings(v, keys)]
    return []


async def test_no_gate_message_holds_a_python_dict_or_list(vscode, uri):
    notifications = record_gate_results(vscode)
    open_document(vscode, uri, BUGGY)
    await published(vscode, uri, 1)
    params = types.ExecuteCommandParams(command="argus.runGate", arguments=[uri])
    answer = await asyncio.wait_for(vscode.workspace_execute_command_async(params), 300)
    (kernel,) = answer["results"]
    assert kernel["correct"]["status"] == "failed"  # B one block ahead: a wrong element, at known sizes

    diagnostics = [d for d in vscode.diagnostics[uri] if d.source == "argus-gate"]
    lenses = await vscode.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    progress = [r.message for reports in vscode.progress_reports.values() for r in reports if r.message]
    shown = {
        "showMessage": [m.message for m in vscode.messages],
        "progress": progress,
        "diagnostics": [d.message for d in diagnostics],
        "code lens": [lens.command.title for lens in lenses if lens.command],
        "argus/gateResult": strings(notifications),
        "argus.runGate": strings(answer),
        "argus gate (CLI report)": [render(GateResult.model_validate(r)) for r in answer["results"]],
    }
    assert all(shown[k] for k in ("progress", "diagnostics", "code lens", "argus/gateResult", "argus.runGate"))
    assert {where: python_reprs(texts) for where, texts in shown.items() if python_reprs(texts)} == {}
    # what the user reads about the wrong element: where, the values, the seed and the sizes, as text
    (ar502,) = [d.message for d in diagnostics if d.code == "AR502"]
    assert re.search(r"`C\[\d+, \d+\]` is .+, the reference gives .+ seed \d+, sizes M=\d+, N=\d+, K=\d+\)", ar502)
