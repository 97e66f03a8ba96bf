"""The gate from the editor: `argus.runGate` compiles and checks the document's kernels in the background.

The gate runs in its own child process (`argus.gate.run_gate_async`); this module only awaits it, so the
server never imports torch or triton. A run can be cancelled three ways, each of which cancels the task and so
kills the gate's process: `$/cancelRequest` for the executeCommand request, the cancel button of its work-done
progress, or the `argus.cancelGate` command. Results become diagnostics with the source `argus-gate` and a
code lens above each kernel, and every run ends with the notification `argus/gateResult` whatever started it
(`argus.runGate`, `argus.applySkill`, a save): its params are what `argus.runGate` answers, so an editor can show
the last result (VS Code's status bar) without having asked for the run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from argus.lsp import progress
from argus.lsp.documents import DocumentState, Snapshot, SourceResult
from argus.lsp.guard import guarded
from argus.lsp.state import GATE

if TYPE_CHECKING:
    from argus.gate.result import GateResult, Status
    from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)

RUN_GATE = "argus.runGate"
CANCEL_GATE = "argus.cancelGate"
GATE_RESULT = "argus/gateResult"
SOURCE = "argus-gate"


@dataclass(slots=True)
class GateRun:
    version: int
    kernels: list[str]
    device: str
    started: float = field(default_factory=time.monotonic)
    task: asyncio.Task | None = None
    results: list[GateResult] = field(default_factory=list)  # per kernel, as they finish
    error: str | None = None
    cancelled: bool = False
    finished: bool = False

    def summary(self, uri: str) -> dict[str, Any]:
        return {
            "uri": uri,
            "version": self.version,
            "device": self.device,
            "kernels": self.kernels,
            "cancelled": self.cancelled,
            "error": self.error,
            "results": [r.model_dump(mode="json") for r in self.results],
        }


def register(server: ServerState) -> None:
    @server.client.command(RUN_GATE)
    @guarded(empty=lambda: {"error": "internal error; see the server log"})
    async def run_gate(*arguments: Any) -> dict[str, Any]:
        uri, kernel = command_arguments(arguments)
        state = server.documents.get(uri) if uri else None
        if state is None:
            return {"error": f"{uri or 'no document'} is not open"}
        run = await start(server, state, kernel)
        if run.task is None:
            return run.summary(uri)
        request = server.client.protocol.msg_id
        if request is not None:
            server.request_work.setdefault(request, []).append(run.task)
        try:
            await asyncio.shield(run.task)
        except asyncio.CancelledError:
            if not run.task.cancelled():
                # This request was cancelled ($/cancelRequest), and its run with it (request_work). Answer once
                # the run has stopped, so that what the client asks next (the code lens) sees it stopped: under
                # load the error answer once overtook the run's cleanup and the lens still said "running".
                await asyncio.wait({run.task}, timeout=10)
                raise
        finally:
            if request is not None:
                server.request_work.pop(request, None)
        return run.summary(uri)

    @server.client.command(CANCEL_GATE)
    @guarded(empty=lambda: {"cancelled": False})
    async def cancel_gate(*arguments: Any) -> dict[str, Any]:
        uri, _ = command_arguments(arguments)
        state = server.documents.get(uri) if uri else None
        run = state.gate if state is not None else None
        if run is None or run.task is None or run.task.done():
            return {"cancelled": False}
        run.task.cancel()
        return {"cancelled": True}

    @server.client.feature(types.TEXT_DOCUMENT_CODE_LENS)
    @guarded(empty=list)
    async def code_lens(params: types.CodeLensParams) -> list[types.CodeLens]:
        snapshot = await server.snapshot(params.text_document.uri)
        state = server.documents.get(params.text_document.uri)
        if snapshot is None or state is None:
            return []
        return lenses(snapshot, state)


def command_arguments(arguments: tuple[Any, ...]) -> tuple[str | None, str | None]:
    """[uri] or [uri, kernel], or one object {"uri": ..., "kernel": ...}."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        return arguments[0].get("uri"), arguments[0].get("kernel")
    uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
    kernel = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], str) else None
    return uri, kernel


async def start_on_save(server: ServerState, state: DocumentState) -> None:
    await start(server, state, None)


async def start(server: ServerState, state: DocumentState, kernel: str | None) -> GateRun:
    """Start a gate run of the latest version; a run already going for this document is cancelled."""
    snapshot = await server.snapshot(state.uri)
    settings = server.settings_for(state.uri)
    run = GateRun(snapshot.version if snapshot else state.version, [], settings.gate_device)
    if snapshot is None:
        run.error = "the document has not been checked yet"
        notify_result(server, state.uri, run)
        return run
    analysis = snapshot.check.analysis
    names = list(analysis.gated)  # every model, and each kernel but those a model covers
    if kernel is not None:
        names = [n for n in [*analysis.kernels, *analysis.models] if n == kernel]
    run.kernels = names
    if snapshot.check.has_errors:
        run.error = "fix the errors first: the gate runs only kernels that check"
    elif not names:
        run.error = f"no kernel named {kernel}" if kernel else "the document has no kernel"
    if run.error is not None:
        server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=run.error))
        notify_result(server, state.uri, run)
        return run
    previous = state.gate
    if previous is not None and previous.task is not None and not previous.task.done():
        previous.task.cancel()
    state.gate = run
    run.task = server.lifecycle.track(asyncio.create_task(execute(server, state, snapshot, run)))
    return run


async def execute(server: ServerState, state: DocumentState, snapshot: Snapshot, run: GateRun) -> None:
    # imported with the first run, not at start-up (pydantic and the code generator)
    from argus.gate.api import run_gate_async

    settings = server.settings_for(state.uri)
    stages = ("compile", "correct") if settings.gate_device == "cpu" else ("compile", "correct", "profile")
    token = await begin_progress(server, run)
    refresh_lenses(server)
    try:
        for index, kernel in enumerate(run.kernels):
            report_progress(server, token, f"{kernel}: {', '.join(stages)}", index, len(run.kernels))
            result = await run_gate_async(
                snapshot.text,
                path=to_fs_path(snapshot.uri),
                kernel=kernel,
                device=settings.gate_device,
                stages=stages,
                timeout_s=settings.gate_timeout_s,
                check=snapshot.check,  # the snapshot's own check: the gate does not check the text again
            )
            run.results.append(result)
    except asyncio.CancelledError:
        run.cancelled = True
        raise
    except Exception as error:
        logger.exception("gate run of %s failed", state.uri)
        run.error = f"the gate failed: {error}"
    finally:
        run.finished = True
        end_progress(server, token, run)
        if not state.closed:
            state.results[GATE] = SourceResult(snapshot.version, gate_diagnostics(snapshot, run))
            server.publish(state)
        refresh_lenses(server)
        if state.gate is run:  # a run that a newer one replaced says nothing: the newer one will
            notify_result(server, state.uri, run)


def notify_result(server: ServerState, uri: str, run: GateRun) -> None:
    """`argus/gateResult` with the run's summary, the same object `argus.runGate` answers."""
    try:
        server.client.protocol.notify(GATE_RESULT, run.summary(uri))
    except Exception:  # a client gone meanwhile: the run's other results stand
        logger.exception("could not send %s for %s", GATE_RESULT, uri)


# ---- progress -------------------------------------------------------------------------------------------
async def begin_progress(server: ServerState, run: GateRun) -> str | None:
    begin = types.WorkDoneProgressBegin(title="Argus gate", message=", ".join(run.kernels), cancellable=True)
    return await progress.begin_cancellable(server, "gate", begin, run.task)


def report_progress(server: ServerState, token: str | None, message: str, done: int, total: int) -> None:
    if token is not None:
        percentage = int(100 * done / max(total, 1))
        server.client.work_done_progress.report(
            token, types.WorkDoneProgressReport(message=message, percentage=percentage)
        )


def end_progress(server: ServerState, token: str | None, run: GateRun) -> None:
    message = "cancelled" if run.cancelled else run.error or "; ".join(lens_title(r) for r in run.results)
    progress.end(server, token, message)


def refresh_lenses(server: ServerState) -> None:
    if server.client_supports("workspace", "code_lens", "refresh_support"):
        server.client.workspace_code_lens_refresh(None)


# ---- results as diagnostics and lenses ------------------------------------------------------------------
def gate_diagnostics(snapshot: Snapshot, run: GateRun) -> list[types.Diagnostic]:
    kernels = {k.name: k for k in [*snapshot.check.module.kernels, *snapshot.check.module.models]}
    lines = snapshot.positions.lines
    found = []
    for result in run.results:
        kernel = kernels.get(result.kernel)
        for error in result.errors:
            if error.line is not None and 1 <= error.line <= len(lines):
                line = error.line - 1
                text = lines[line]
                start = len(text) - len(text.lstrip())
                end = len(text)
                if error.column is not None and error.end_column is not None and error.column <= error.end_column:
                    start, end = min(error.column - 1, len(text)), min(error.end_column - 1, len(text))  # a tune value
                r = types.Range(
                    start=snapshot.positions.position(line, start), end=snapshot.positions.position(line, end)
                )
            elif kernel is not None:
                r = snapshot.positions.range(kernel.name_span)
            else:
                r = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))
            message = error.message + (f"\n{error.detail.strip()}" if error.detail.strip() else "")
            found.append(
                types.Diagnostic(
                    range=r,
                    message=message,
                    severity=types.DiagnosticSeverity.Error,
                    code=error.code,
                    source=SOURCE,
                    data={"argus": {"stage": error.stage, "kernel": result.kernel}},
                )
            )
    return found


def mark(status: Status) -> str:
    return {"passed": "✓", "failed": "✗", "error": "✗", "skipped": "–"}.get(str(status), "?")


def lens_title(result: GateResult) -> str:
    parts = []
    compile_ = result.compile
    if str(compile_.status) != "skipped":
        facts = compile_.facts
        note = ""
        if facts is not None and facts.shared_memory_bytes is not None:
            spills = facts.spill_stores_bytes or 0
            note = f" ({facts.shared_memory_bytes / 1024:.0f} KiB smem, {spills} B spilled)"
        parts.append(f"{mark(compile_.status)} compile{note}")
    correct = result.correct
    if str(correct.status) != "skipped":
        facts = correct.facts
        note = ""
        if facts is not None and facts.first_mismatch is not None:
            mismatch = facts.first_mismatch
            element = ", ".join(str(i) for i in mismatch.index)
            note = f" (first mismatch {mismatch.output}[{element}])"
        elif facts is not None and facts.max_rel_error is not None:
            note = f" ({facts.trials} trials, max rel err {facts.max_rel_error:.1e})"
        parts.append(f"{mark(correct.status)} correct{note}")
    title = " ".join(parts)
    profile = result.profile
    if str(profile.status) == "passed" and profile.facts is not None:
        facts = profile.facts
        rate = f"{facts.tflops:.0f} TFLOP/s" if facts.bound == "compute" else f"{facts.gb_per_s:.0f} GB/s"
        title += f" · {facts.kernel.ms_median:.2f} ms · {rate} · {facts.percent_of_ceiling:.0f}% of peak"
    if result.errors and not parts:
        title = f"✗ {result.errors[0].code}: {result.errors[0].message}"
    return title or "gate: nothing ran"


def lenses(snapshot: Snapshot, state: DocumentState) -> list[types.CodeLens]:
    run: GateRun | None = state.gate
    found = []
    analysis = snapshot.check.analysis
    # a kernel a model launches without a reference of its own is gated through the model: no lens of its own
    covered = {name for model in analysis.models.values() for name in model.kernels} - set(analysis.gated)
    for kernel in [*snapshot.check.module.kernels, *snapshot.check.module.models]:
        if kernel.name in covered:
            continue
        r = snapshot.positions.range(kernel.name_span)
        line_range = types.Range(start=types.Position(line=r.start.line, character=0), end=r.start)
        arguments = [snapshot.uri, kernel.name]
        if run is not None and kernel.name in run.kernels and not run.finished:
            found.append(lens(line_range, "⏳ gate running… (click to cancel)", CANCEL_GATE, [snapshot.uri]))
            continue
        result = next((x for x in (run.results if run else []) if x.kernel == kernel.name), None)
        if result is not None:
            stale = "" if run.version == state.version else " (before your last edit)"
            found.append(lens(line_range, lens_title(result) + stale, RUN_GATE, arguments))
        else:
            found.append(lens(line_range, "▶ Run gate", RUN_GATE, arguments))
    return found


def lens(r: types.Range, title: str, command: str, arguments: list[Any]) -> types.CodeLens:
    return types.CodeLens(range=r, command=types.Command(title=title, command=command, arguments=arguments))
