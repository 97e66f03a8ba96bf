"""`argus.refine`: the refinement loop for one kernel of an open document, in the background.

    workspace/executeCommand argus.refine [uri, kernel | null, {planner, budget, device, line}?]

The loop (argus.agent.loop.refine) runs in a child process (argus.lsp.refine_worker: its z3 work must not
share the server's z3 context, and it is killed with its gate runs), behind cancellable work-done progress that
reports each step ("step 3/8: exp2.row — kept, 1.12×"). Cancelling it (the progress' cancel button, or
`$/cancelRequest`) sets the event the loop polls and stops a gate run in progress.

When the loop ends, `decide` says what happens to the document:
- nothing kept (or cancelled): nothing changes; a message says why ("profiling needs a GPU ...");
- kept, and the document is still at the version refine started from: the best source is applied as the
  smallest versioned edit through workspace/applyEdit;
- kept, but the user edited meanwhile: nothing is overwritten; a window/showMessageRequest offers "Apply to the
  current text", which merges the refinement's changes into the current text where the user's edits did not
  touch the same lines (`rebase`), and refuses otherwise.
The command answers with the summary when the loop ends (before an offer is answered).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import logging
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from lsprotocol import types
from pygls.uris import to_fs_path

from argus.dsl.lines import split_lines_keepends
from argus.lsp import document_edits, lifecycle, progress
from argus.lsp.guard import guarded
from argus.lsp.settings import GATE_DEVICES, REFINE_PLANNERS
from argus.skills.rebase import untouched_lines

if TYPE_CHECKING:
    from argus.lsp.documents import DocumentState
    from argus.lsp.state import ServerState

logger = logging.getLogger(__name__)

REFINE = "argus.refine"
APPLY_OFFER = "Apply to the current text"
DISCARD_OFFER = "Discard"
CANCEL_GRACE_S = 10.0
OFFERS: set[asyncio.Task] = set()  # offers waiting for the user's answer


# ---- what the loop came to, and what that means for the document (plain functions) -----------------------
@dataclass(frozen=True, slots=True)
class RefineOutcome:
    """The worker's `done` event."""

    kernel: str
    best: str
    kept: tuple[str, ...] = ()
    speedup: float | None = None
    gate_runs: int = 0
    steps: int = 0
    stopped: str = "budget"
    start_ms: float | None = None
    device: str = ""
    start_status: dict[str, Any] = field(default_factory=dict)
    profile_message: str = ""
    last_feedback: str = ""

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> RefineOutcome:
        names = set(cls.__dataclass_fields__)
        given = {k: v for k, v in event.items() if k in names}
        return cls(**{**given, "kept": tuple(given.get("kept") or ())})


@dataclass(frozen=True, slots=True)
class Decision:
    action: Literal["apply", "offer", "none"]
    message: str


def decide(outcome: RefineOutcome, start_text: str, start_version: int, current_version: int) -> Decision:
    """Apply the best source only onto the version refine started from; offer it when the user edited since."""
    runs = f"{outcome.gate_runs} gate run" + ("" if outcome.gate_runs == 1 else "s")
    done = f"{outcome.steps} step" + ("" if outcome.steps == 1 else "s") + f", {runs}"
    name = f"Refine of {outcome.kernel}"
    if outcome.stopped == "cancelled":
        return Decision("none", f"{name} cancelled after {done}; nothing was changed.")
    if outcome.best == start_text or not outcome.kept:
        return Decision("none", f"{name}: nothing kept ({done}): {why_nothing_kept(outcome)}.")
    gain = f"kept {', '.join(outcome.kept)}" + (f" — {outcome.speedup:.2f}×" if outcome.speedup else "")
    if current_version == start_version:
        return Decision("apply", f"{name}: {gain} ({done}); applied.")
    return Decision(
        "offer",
        f"{name}: {gain} ({done}), but the document changed since version {start_version} (now {current_version}):"
        " nothing was overwritten.",
    )


def why_nothing_kept(outcome: RefineOutcome) -> str:
    status = outcome.start_status
    failed = [stage for stage in ("compile", "correct") if status.get(stage) not in (None, "passed")]
    if failed:
        return f"the kernel as written does not pass the gate ({failed[0]} {status[failed[0]]})"
    if outcome.start_ms is None:
        why = outcome.profile_message or "the kernel was not profiled"
        return f"{why} (gate on {outcome.device or 'this machine'}), and without a timing nothing can be kept as faster"
    if outcome.steps == 0:
        return "the planner found nothing to propose for this kernel"
    return f"no proposal was correct and faster (the last: {outcome.last_feedback})"


def step_message(event: dict[str, Any], budget: int) -> str:
    """The progress line of a step, e.g. `step 3/8: exp2.row — kept, 1.12×`."""
    number = event["index"] + 1
    if event.get("kept"):
        verdict = "kept" + (f", {event['speedup']:.2f}×" if event.get("speedup") else "")
    else:
        verdict = f"not kept ({event.get('stage') or 'refused'})"
    return f"step {number}/{max(budget, number)}: {event['label']} — {verdict}"


def rebase(start: str, best: str, current: str) -> str | None:
    """`current` with the changes that turn `start` into `best`, where the user's edits (start → current) left
    those lines alone; None when a change of the refinement meets one of the user's."""
    start_lines, best_lines, current_lines = (split_lines_keepends(t) for t in (start, best, current))
    where = untouched_lines(start, current)  # line of start -> the same, untouched line of current
    refined = difflib.SequenceMatcher(None, start_lines, best_lines, autojunk=False).get_opcodes()
    merged = list(current_lines)
    for tag, i1, i2, j1, j2 in reversed(refined):
        if tag == "equal":
            continue
        # the changed lines and one line on each side (the place an insertion goes) must be untouched
        around = range(max(i1 - 1, 0), min(i2 + 1, len(start_lines)))
        if any(i not in where for i in around) or any(where[i] - where[around[0]] != i - around[0] for i in around):
            return None
        at = where[i1] if i1 < len(start_lines) else len(current_lines)
        end = at + (i2 - i1)
        merged[at:end] = best_lines[j1:j2]
    return "".join(merged)


# ---- the command ----------------------------------------------------------------------------------------
@dataclass(slots=True)
class RefineJob:
    uri: str
    kernel: str
    version: int
    text: str
    planner: str
    budget: int
    device: str
    model: str
    host: str
    timeout_s: float
    task: asyncio.Task | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)

    def request(self) -> dict[str, Any]:
        return {
            "source": self.text,
            "kernel": self.kernel,
            "path": to_fs_path(self.uri),
            "planner": self.planner,
            "budget": self.budget,
            "device": self.device,
            "model": self.model,
            "host": self.host,
            "timeout_s": self.timeout_s,
        }


def register(server: ServerState) -> None:
    @server.client.command(REFINE)
    @guarded(empty=lambda: {"error": "internal error; see the server log"})
    async def refine_command(*arguments: Any) -> dict[str, Any]:
        job = await prepare(server, arguments)
        if isinstance(job, str):
            server.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=job))
            return {"error": job}
        job.task = server.lifecycle.track(asyncio.create_task(run(server, job)))
        request = server.client.protocol.msg_id
        if request is not None:
            server.request_work.setdefault(request, []).append(job.task)
        try:
            return await asyncio.shield(job.task)
        finally:
            if request is not None:
                server.request_work.pop(request, None)


async def prepare(server: ServerState, arguments: tuple[Any, ...]) -> RefineJob | str:
    """The job for [uri, kernel | null, options?] (or one object {uri, kernel, options}), or why there is none."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        given = arguments[0]
        arguments = (given.get("uri"), given.get("kernel"), given.get("options"))
    uri = arguments[0] if arguments and isinstance(arguments[0], str) else None
    kernel = arguments[1] if len(arguments) > 1 and isinstance(arguments[1], str) else None
    options = arguments[2] if len(arguments) > 2 and isinstance(arguments[2], dict) else {}
    state = server.documents.get(uri) if uri else None
    if state is None:
        return f"argus.refine: {uri or 'no document'} is not open"
    snapshot = await server.snapshot(uri)
    if snapshot is None or snapshot.version != state.version:
        return "argus.refine: the document has not been checked yet; try again in a moment"
    if snapshot.check.has_errors:
        return "argus.refine: fix the errors first: refine starts only from a kernel that checks"
    kernels = [k for k in snapshot.check.module.kernels if k.name in snapshot.check.analysis.kernels]
    if kernel is None:  # the kernel at the cursor (options.line, 0-based), else the first one
        line = options.get("line")
        at = [k for k in kernels if isinstance(line, int) and k.span.line <= line <= k.span.end_line]
        kernel = (at or kernels)[0].name if kernels else None
    if kernel is None or kernel not in {k.name for k in kernels}:
        return f"argus.refine: no kernel named {kernel}" if kernel else "argus.refine: the document has no kernel"
    settings = server.settings_for(uri)
    planner = options.get("planner", settings.refine_planner)
    budget = options.get("budget", settings.refine_budget)
    device = options.get("device") or settings.refine_device or settings.gate_device
    if planner not in REFINE_PLANNERS or not isinstance(budget, int) or budget < 0:
        return f"argus.refine: planner is search or llm and budget a count of gate runs; got {planner!r}, {budget!r}"
    if device not in GATE_DEVICES:
        return f"argus.refine: device is auto, cpu or cuda; got {device!r}"
    return RefineJob(
        uri, kernel, snapshot.version, snapshot.text, planner, budget, device,
        options.get("model") or settings.refine_model, options.get("host") or settings.refine_host,
        settings.gate_timeout_s,
    )  # fmt: skip


async def run(server: ServerState, job: RefineJob) -> dict[str, Any]:
    final: dict[str, Any] = {"event": "error", "message": "the refine worker ended without a result"}
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "argus.lsp.refine_worker",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=64 * 1024 * 1024,  # one line carries the refined source
        start_new_session=True,  # a Ctrl-C meant for the server's terminal is not the worker's to act on
    )  # fmt: skip
    drain = asyncio.create_task(log_stderr(worker))
    token = None
    try:
        token = await begin_progress(server, job)
        worker.stdin.write((json.dumps(job.request()) + "\n").encode())
        await worker.stdin.drain()
        async for raw in worker.stdout:
            try:
                event = json.loads(raw)
            except ValueError:
                event = None
            if not isinstance(event, dict) or "event" not in event:
                logger.warning("refine worker: not an event line: %r", raw[:200])
                continue
            if event["event"] == "step":
                job.steps.append(event)
                report(server, token, step_message(event, job.budget), job)
            elif event["event"] != "started":
                final = event
    except asyncio.CancelledError:
        final = {"event": "cancelled"}
        await stop(worker)
    finally:
        if worker.returncode is None:  # its gate runner too, which is in a session of its own
            lifecycle.stop_processes([worker.pid])
        await worker.wait()
        drain.cancel()
    return await finish(server, job, token, final)


async def stop(worker: asyncio.subprocess.Process) -> None:
    """Ask the worker to stop (the loop's cancel event; a gate run is interrupted), then kill it if it lingers."""
    with contextlib.suppress(ConnectionError, RuntimeError):
        worker.stdin.write(b"cancel\n")
        await worker.stdin.drain()
    try:
        await asyncio.wait_for(worker.wait(), CANCEL_GRACE_S)
    except TimeoutError:
        logger.warning("the refine worker did not stop within %.0f s; killing it", CANCEL_GRACE_S)


async def log_stderr(worker: asyncio.subprocess.Process) -> None:
    async for raw in worker.stderr:
        logger.info("refine worker: %s", raw.decode("utf-8", "replace").rstrip())


async def finish(server: ServerState, job: RefineJob, token: str | None, final: dict[str, Any]) -> dict[str, Any]:
    state = server.documents.get(job.uri)
    summary: dict[str, Any] = {"uri": job.uri, "kernel": job.kernel, "version": job.version, "steps": job.steps}
    kind = types.MessageType.Info
    if final["event"] == "done":
        outcome = RefineOutcome.from_event(final)
        current = state.version if state is not None else job.version
        decision = decide(outcome, job.text, job.version, current)
        summary |= {"kept": list(outcome.kept), "speedup": outcome.speedup, "gate_runs": outcome.gate_runs}
        summary |= {"stopped": outcome.stopped, "outcome": decision.action, "message": decision.message}
        if decision.action != "none" and state is None:
            closed = f"kept {', '.join(outcome.kept)}, but the document was closed; nothing was changed."
            summary |= {"outcome": "none", "message": f"Refine of {job.kernel}: {closed}"}
            kind = types.MessageType.Warning
        elif decision.action == "apply":
            failure = await document_edits.apply(
                server, job.uri, job.version, job.text, outcome.best, f"Refine {job.kernel}"
            )
            if failure is not None:  # the user typed while it was on its way: offer it, as after any edit
                decision = Decision("offer", decision.message.removesuffix(" applied.") + f" not applied: {failure}.")
                summary |= {"outcome": "offer", "message": decision.message}
        if decision.action == "offer" and state is not None:
            task = server.lifecycle.track(asyncio.create_task(offer(server, state, job, outcome, decision.message)))
            OFFERS.add(task)  # the loop keeps only a weak reference to a task
            task.add_done_callback(OFFERS.discard)
    elif final["event"] == "cancelled":
        done = len(job.steps)
        message = f"Refine of {job.kernel} cancelled after {done} step{'' if done == 1 else 's'}; nothing was changed."
        summary |= {"outcome": "cancelled", "message": message}
    elif final["event"] == "unavailable":
        hint = " (in the editor: the settings argus.refine.planner, argus.refine.host and argus.refine.model)"
        summary |= {"outcome": "unavailable", "message": f"Refine of {job.kernel}: {final['message']}{hint}"}
        kind = types.MessageType.Error
    else:
        summary |= {"outcome": "error", "message": f"Refine of {job.kernel} failed: {final.get('message')}"}
        kind = types.MessageType.Error
    progress.end(server, token, summary["message"])
    if summary["outcome"] != "offer":  # the offer is its own message, with its buttons
        server.window_show_message(types.ShowMessageParams(type=kind, message=summary["message"]))
    return summary


async def offer(server: ServerState, state: DocumentState, job: RefineJob, outcome: RefineOutcome, why: str) -> None:
    """Ask before touching a document the user edited since refine began; merge only where nobody else did."""
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Info,
        message=f"{why} Apply the refined kernel's changes to the current text?",
        actions=[types.MessageActionItem(title=APPLY_OFFER), types.MessageActionItem(title=DISCARD_OFFER)],
    )
    try:
        answer = await server.window_show_message_request_async(params)
    except Exception:
        logger.exception("window/showMessageRequest failed")
        return
    if answer is None or answer.title != APPLY_OFFER or state.closed:
        return
    version, text = state.version, state.text
    merged = rebase(job.text, outcome.best, text)
    if merged is None:
        message = f"Refine of {job.kernel}: your edits touch the lines it changed; nothing was changed."
    else:
        failure = await document_edits.apply(server, job.uri, version, text, merged, f"Refine {job.kernel}")
        message = f"Refine of {job.kernel}: " + (f"not applied: {failure}." if failure else "applied.")
    server.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=message))


# ---- progress -------------------------------------------------------------------------------------------
async def begin_progress(server: ServerState, job: RefineJob) -> str | None:
    title = f"Argus refine {job.kernel}"
    message = f"{job.planner} planner, budget {job.budget} gate runs on {job.device}: gating the kernel as written"
    begin = types.WorkDoneProgressBegin(title=title, message=message, cancellable=True, percentage=0)
    return await progress.begin_cancellable(server, "refine", begin, job.task)


def report(server: ServerState, token: str | None, message: str, job: RefineJob) -> None:
    if token is None:
        return
    used = sum(step.get("gate_runs", 0) for step in job.steps)
    percentage = min(100, int(100 * used / max(job.budget, 1)))
    server.client.work_done_progress.report(token, types.WorkDoneProgressReport(message=message, percentage=percentage))
