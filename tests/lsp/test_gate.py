"""The gate from the editor: `argus.runGate` on the CPU, its diagnostics and code lens, and cancellation that
kills the gate's processes."""

from __future__ import annotations

import asyncio
import os
import re
from pathlib import Path

from lsp_support import EXAMPLES, open_document, published, record_gate_results
from lsprotocol import types

BUGGY = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()
FIXED = BUGGY.replace("rk + BK", "rk")


def descendants(pid: int) -> set[int]:
    """Every living process below `pid`, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = set(), [pid]
    while stack:
        for child in children.get(stack.pop(), []):
            found.add(child)
            stack.append(child)
    return found


def run_gate(client, uri: str, msg_id: str):
    params = types.ExecuteCommandParams(command="argus.runGate", arguments=[uri])
    return asyncio.ensure_future(
        client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
    )


async def test_a_gate_run_reports_its_stages_as_diagnostics_and_a_code_lens(vscode, uri):
    notifications = record_gate_results(vscode)
    open_document(vscode, uri, BUGGY)
    await published(vscode, uri, 1)
    result = await run_gate(vscode, uri, "gate-run")
    # argus/gateResult, sent before the answer, says the same (the status bar ends the same from either)
    (notified,) = notifications
    assert (notified.uri, notified.version, notified.kernels, notified.cancelled) == (uri, 1, result["kernels"], False)
    assert [(r.kernel, r.correct.status) for r in notified.results] == [("matmul_next_k", "failed")]
    (kernel,) = result["results"]
    assert kernel["compile"]["status"] == "passed"
    assert kernel["correct"]["status"] == "failed"  # B one block ahead: the numbers are wrong, as verified
    assert kernel["correct"]["facts"]["first_mismatch"] is not None
    gate = [d for d in vscode.diagnostics[uri] if d.source == "argus-gate"]
    assert [d.code for d in gate] == ["AR502"]
    lenses = await vscode.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    title = lenses[0].command.title
    assert re.match(r"✓ compile \(\d+ KiB smem, \d+ B spilled\) ✗ correct \(first mismatch C\[", title)
    reports = next(iter(vscode.progress_reports.values()))
    assert [type(r).__name__ for r in (reports[0], reports[-1])] == ["WorkDoneProgressBegin", "WorkDoneProgressEnd"]


async def test_cancelling_a_running_gate_kills_its_processes(client, uri):
    open_document(client, uri, FIXED)
    await published(client, uri, 1)
    server = client._server.pid
    running = run_gate(client, uri, "gate-cancel")
    for _ in range(300):  # the gate's process starts
        if descendants(server):
            break
        await asyncio.sleep(0.05)
    assert descendants(server), "the gate never started a process"
    if client.kind == "vscode":  # the cancel button of the progress notification
        (token,) = client.progress_reports
        client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
        result = await running
        assert result["cancelled"] is True and result["results"] == []
    else:  # $/cancelRequest for the executeCommand request
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="gate-cancel"))
        try:
            await running
            raise AssertionError("a cancelled request must answer with an error")
        except Exception as error:
            assert "cancel" in str(error).lower()
    for _ in range(400):  # killed at once; reaped within 20 s even on a loaded 2-core machine
        if not descendants(server):
            break
        await asyncio.sleep(0.05)
    assert not descendants(server), f"gate processes left running: {descendants(server)}"
    # The run's task clears its state once the cancellation reaches it, which under load can come after the
    # cancel's answer: the lens flips back within moments, as the editor's next code-lens request sees.
    for _ in range(200):
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
        if lenses[0].command.title == "▶ Run gate":
            break
        await asyncio.sleep(0.05)
    assert lenses[0].command.title == "▶ Run gate"
    assert os.path.exists(f"/proc/{server}")  # the server itself lives on


async def test_with_gate_on_save_a_save_starts_a_run_that_cancel_gate_stops(vscode, uri):
    vscode.set_configuration({"gate": {"onSave": True}}, section="argus")
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    settings = types.ExecuteCommandParams(command="argus.settings", arguments=[uri])
    for _ in range(100):
        if (await vscode.workspace_execute_command_async(settings))["gate"]["onSave"]:
            break
        await asyncio.sleep(0.02)
    open_document(vscode, uri, FIXED)
    await published(vscode, uri, 1)
    server = vscode._server.pid
    vscode.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri)))
    for _ in range(300):
        if descendants(server):
            break
        await asyncio.sleep(0.05)
    assert descendants(server), "saving did not start the gate"
    cancel = types.ExecuteCommandParams(command="argus.cancelGate", arguments=[uri])
    assert await vscode.workspace_execute_command_async(cancel) == {"cancelled": True}
    for _ in range(100):
        if not descendants(server):
            break
        await asyncio.sleep(0.05)
    assert not descendants(server)


async def test_a_gate_run_of_a_file_with_a_model_gates_the_model_and_lenses_it(vscode, uri):
    notifications = record_gate_results(vscode)
    text = (EXAMPLES / "long_softmax.argus").read_text()
    open_document(vscode, uri, text)
    await published(vscode, uri, 1)
    result = await run_gate(vscode, uri, "gate-model")
    (notified,) = notifications
    assert notified.kernels == ["long_softmax"]  # its two kernels have no reference of their own: the model covers them
    (model,) = result["results"]
    assert (model["kernel"], model["compile"]["status"], model["correct"]["status"]) == (
        "long_softmax",
        "passed",
        "passed",
    )
    assert [launch["kernel"] for launch in model["compile"]["facts"]["launches"]] == [
        "softmax_partials",
        "softmax_apply",
    ]
    lenses = await vscode.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert [lens.range.start.line for lens in lenses] == [text.splitlines().index(next(
        line for line in text.splitlines() if line.startswith("model long_softmax(")))]  # fmt: skip
    assert lenses[0].command.title.startswith("✓ compile") and "✓ correct" in lenses[0].command.title
