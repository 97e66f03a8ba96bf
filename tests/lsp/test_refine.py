"""`argus.refine` in the editor: the loop runs in the background behind cancellable progress, reports each step,
and applies what it kept only to the version it started from; after an edit meanwhile, it offers instead.

The end-to-end runs use the CPU gate (compile, and correct under the Triton interpreter): nothing can be kept
there, since a kernel without a profile cannot be shown faster, so they check the progress, the summary and that
nothing is edited. What happens to a kept result is checked on `decide` and `rebase` with stub outcomes."""

from __future__ import annotations

import asyncio

from lsp_support import EXAMPLES, open_document, published
from lsprotocol import types
from test_gate import descendants

from argus.lsp.refine import RefineOutcome, decide, rebase, step_message

VECTOR_ADD = (EXAMPLES / "vector_add.argus").read_text()


def refine(client, uri: str, options: dict, msg_id: str):
    params = types.ExecuteCommandParams(command="argus.refine", arguments=[uri, None, options])
    return asyncio.ensure_future(
        client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
    )


def record_apply_edits(client) -> list:
    requests = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        requests.append(params)
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not expected in this test")

    return requests


async def test_refine_on_the_cpu_reports_each_step_and_says_why_nothing_was_kept(vscode, uri):
    edits = record_apply_edits(vscode)
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    summary = await refine(vscode, uri, {"budget": 1, "device": "cpu"}, "refine-cpu")
    assert summary["kernel"] == "vector_add" and summary["outcome"] == "none", summary
    assert summary["kept"] == [] and summary["gate_runs"] == 1
    assert summary["message"].startswith("Refine of vector_add: nothing kept (1 step, 1 gate run): ")
    assert "profiling needs a GPU" in summary["message"]
    (reports,) = vscode.progress_reports.values()
    begin, *steps, end = reports
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable
    assert begin.title == "Argus refine vector_add"
    first = steps[0].message.split(" ")[2]
    assert first.endswith(".row")  # whichever row card the search ranks first
    assert [s.message for s in steps] == [f"step 1/1: {first} — not kept (profile)"]
    assert isinstance(end, types.WorkDoneProgressEnd) and end.message == summary["message"]
    assert vscode.messages[-1].message == summary["message"]
    assert edits == []


async def test_cancelling_refine_ends_its_progress_and_its_processes(vscode, uri):
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    server = vscode._server.pid
    running = refine(vscode, uri, {"budget": 2, "device": "cpu"}, "refine-cancel")
    for _ in range(1200):  # the worker and the gate's runner for the kernel as written (60 s on a loaded machine)
        if len(descendants(server)) >= 2:
            break
        await asyncio.sleep(0.05)
    assert len(descendants(server)) >= 2, "refine never started the gate"
    (token,) = vscode.progress_reports
    vscode.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    summary = await asyncio.wait_for(running, 60)  # the worker's grace (10 s), then it is killed
    assert summary["outcome"] == "cancelled"
    assert summary["message"] == "Refine of vector_add cancelled after 0 steps; nothing was changed."
    end = vscode.progress_reports[token][-1]
    assert isinstance(end, types.WorkDoneProgressEnd) and "cancelled" in end.message
    for _ in range(400):
        if not descendants(server):
            break
        await asyncio.sleep(0.05)
    assert not descendants(server), f"processes left running: {descendants(server)}"


async def test_an_unreachable_llm_planner_is_named_in_a_message(vscode, uri):
    open_document(vscode, uri, VECTOR_ADD)
    await published(vscode, uri, 1)
    options = {"planner": "llm", "host": "http://127.0.0.1:9", "budget": 1, "device": "cpu"}
    summary = await refine(vscode, uri, options, "refine-llm")
    assert summary["outcome"] == "unavailable"
    message = vscode.messages[-1]
    assert message.type == types.MessageType.Error and message.message == summary["message"]
    assert "127.0.0.1:9" in message.message


# ---- what a finished refine does to the document --------------------------------------------------------
START = "kernel k(x: f32[N]):\n    policy num_warps = 4\n    y = exp(x)\n"
BEST = "kernel k(x: f32[N]):\n    policy num_warps = 8\n    y = exp2(x * 1.4426950408889634)\n"


def kept(**changes) -> RefineOutcome:
    fields = {"kernel": "k", "best": BEST, "kept": ("num_warps.row", "exp2.row"), "speedup": 1.12, "gate_runs": 3}
    return RefineOutcome(**{**fields, "steps": 4, **changes})


def test_a_kept_result_is_applied_to_the_version_refine_started_from():
    decision = decide(kept(), START, start_version=3, current_version=3)
    assert decision.action == "apply"
    assert decision.message == "Refine of k: kept num_warps.row, exp2.row — 1.12× (4 steps, 3 gate runs); applied."


def test_a_kept_result_is_offered_when_the_document_changed_meanwhile():
    decision = decide(kept(), START, start_version=3, current_version=5)
    assert decision.action == "offer"
    assert "changed since version 3 (now 5): nothing was overwritten" in decision.message


def test_nothing_kept_changes_nothing_and_says_why():
    status = {"compile": "passed", "correct": "passed", "profile": "skipped"}
    cpu = kept(
        best=START, kept=(), speedup=None, device="cpu", profile_message="profiling needs a GPU", start_status=status
    )
    decision = decide(cpu, START, 3, 3)
    assert decision.action == "none"
    assert "profiling needs a GPU (gate on cpu), and without a timing nothing can be kept as faster" in decision.message
    cancelled = decide(kept(stopped="cancelled"), START, 3, 3)
    assert cancelled.action == "none"
    assert cancelled.message == "Refine of k cancelled after 4 steps, 3 gate runs; nothing was changed."


def test_an_offer_merges_into_lines_the_user_left_alone_and_refuses_otherwise():
    elsewhere = "# a note\n" + START
    assert rebase(START, BEST, elsewhere) == "# a note\n" + BEST
    same_line = START.replace("num_warps = 4", "num_warps = 2")
    assert rebase(START, BEST, same_line) is None


def test_each_step_reads_as_one_progress_line():
    kept_step = {"index": 2, "label": "exp2.row", "kept": True, "speedup": 1.12}
    assert step_message(kept_step, 8) == "step 3/8: exp2.row — kept, 1.12×"
    refused = {"index": 0, "label": "num_warps.row", "kept": False, "stage": "profile"}
    assert step_message(refused, 1) == "step 1/1: num_warps.row — not kept (profile)"


class StubServer:
    """What `finish` needs of the server: the document, applyEdit, messages (a client with documentChanges)."""

    def __init__(self, state, answer: str | None = None):
        from pygls.workspace.position_codec import PositionCodec

        self.state, self.answer, self.codec = state, answer, PositionCodec()
        self.edits, self.messages, self.requests = [], [], []
        self.documents = self
        self.client_name = "Visual Studio Code"

        class Untracked:  # the server's Lifecycle.track, which ends background work at shutdown
            track = staticmethod(lambda task: task)

        self.lifecycle = Untracked()

    def get(self, uri):
        return self.state

    def positions(self, text):
        from argus.lsp.convert import Positions

        return Positions(text.splitlines(), self.codec)

    def client_supports(self, *path):
        return True

    async def workspace_apply_edit_async(self, params):
        self.edits.append(params.edit)
        (change,) = params.edit.document_changes
        assert change.text_document.version == self.state.version
        changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in change.edits]
        self.state.edit(self.state.version + 1, changes, self.codec)  # the client's didChange
        return types.ApplyWorkspaceEditResult(applied=True)

    def window_show_message(self, params):
        self.messages.append(params.message)

    async def window_show_message_request_async(self, params):
        self.requests.append(params)
        return types.MessageActionItem(title=self.answer) if self.answer else None


class RacingStub(StubServer):
    """A client that gets a keystroke in just before the refined kernel's edit and then skips the edit for the
    newer buffer while answering applied, as Neovim does."""

    async def workspace_apply_edit_async(self, params):
        self.edits.append(params.edit)
        start = types.Position(line=0, character=0)
        keystroke = types.TextDocumentContentChangePartial(range=types.Range(start, start), text="# typed\n")
        self.state.edit(self.state.version + 1, [keystroke], self.codec)
        return types.ApplyWorkspaceEditResult(applied=True)


def finished_job(version: int):
    from argus.lsp.refine import RefineJob

    return RefineJob("file:///k.argus", "k", version, START, "search", 8, "cuda", "", "", 300.0)


def done_event(**changes) -> dict:
    event = {"event": "done", "kernel": "k", "best": BEST, "kept": ["num_warps.row", "exp2.row"], "speedup": 1.12}
    return {**event, "gate_runs": 3, "steps": 4, "stopped": "budget", **changes}


async def test_finish_applies_a_versioned_edit_when_the_document_did_not_change():
    from argus.lsp.documents import DocumentState
    from argus.lsp.refine import finish

    state = DocumentState("file:///k.argus", 3, START)
    server = StubServer(state)
    summary = await finish(server, finished_job(3), None, done_event())
    assert summary["outcome"] == "apply"
    (edit,) = server.edits
    (change,) = edit.document_changes
    assert change.text_document.version == 3
    assert [e.new_text for e in change.edits] == ["8\n    y = exp2(x * 1.4426950408889634"]
    assert server.messages == [summary["message"]] and server.requests == []


async def test_finish_overwrites_nothing_after_an_edit_and_offers_the_result():
    from argus.lsp.documents import DocumentState
    from argus.lsp.refine import OFFERS, finish

    state = DocumentState("file:///k.argus", 5, "# mine\n" + START)
    server = StubServer(state, answer=None)  # the user dismisses the offer
    summary = await finish(server, finished_job(3), None, done_event())
    assert summary["outcome"] == "offer"
    await asyncio.gather(*OFFERS)
    (request,) = server.requests
    assert [a.title for a in request.actions] == ["Apply to the current text", "Discard"]
    assert server.edits == [] and state.text == "# mine\n" + START


async def test_an_accepted_offer_merges_the_result_into_the_current_text():
    from argus.lsp.documents import DocumentState
    from argus.lsp.refine import OFFERS, finish

    state = DocumentState("file:///k.argus", 5, "# mine\n" + START)
    server = StubServer(state, answer="Apply to the current text")
    await finish(server, finished_job(3), None, done_event())
    await asyncio.gather(*OFFERS)
    (edit,) = server.edits
    (change,) = edit.document_changes
    assert change.text_document.version == 5 and change.edits[0].range.start.line == 2
    assert server.messages[-1] == "Refine of k: applied."


def test_the_refine_settings_are_read_under_argus_refine_and_checked():
    from argus.lsp.settings import Settings, apply

    wire = {"argus": {"refine": {"planner": "llm", "budget": 2, "device": "cuda", "model": "m", "host": "h"}}}
    settings = apply(Settings(), wire)
    assert (settings.refine_planner, settings.refine_budget, settings.refine_device) == ("llm", 2, "cuda")
    assert settings.to_wire()["refine"] == wire["argus"]["refine"]
    assert apply(Settings(), {"refine": {"planner": "gpt", "budget": -1, "device": "tpu"}}) == Settings()


async def test_a_kept_result_for_a_document_closed_meanwhile_changes_nothing_and_says_so():
    from argus.lsp.refine import finish

    server = StubServer(None)
    summary = await finish(server, finished_job(3), None, done_event())
    assert summary["outcome"] == "none"
    closed = "kept num_warps.row, exp2.row, but the document was closed; nothing was changed."
    assert summary["message"] == f"Refine of k: {closed}"
    assert server.edits == [] and server.requests == [] and server.messages == [summary["message"]]


async def test_a_result_whose_edit_lost_a_race_with_a_keystroke_is_offered_again():
    from argus.lsp.documents import DocumentState
    from argus.lsp.refine import OFFERS, finish

    state = DocumentState("file:///k.argus", 3, START)
    server = RacingStub(state, answer=None)
    summary = await finish(server, finished_job(3), None, done_event())
    assert summary["outcome"] == "offer" and "skipped" in summary["message"], summary
    await asyncio.gather(*OFFERS)
    (request,) = server.requests  # offered again on the current text, not discarded
    assert request.actions[0].title == "Apply to the current text"
    assert state.text == "# typed\n" + START
