"""How the server ends, over stdio with pytest-lsp's client: `shutdown` is answered at once whatever is running
(a check, a verification of a big file, a gate run, a refinement, a progress token the client has not created
yet), and `exit`, the end of stdin, SIGTERM or SIGINT end the process within a second or two, leaving no process
it started (gate runners, refine workers, their children) and no traceback behind.

Every process the server starts inherits its environment, so a marker variable set for the server finds them all
in /proc, even those that left the server's process tree or its session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest
from lsp_support import EXAMPLES, initialize, make_client, open_document, published
from lsprotocol import types
from pygls.client import JsonRPCClient
from pytest_lsp import LanguageClient
from server_load import marked_processes, renamed_examples

SERVER = [sys.executable, "-m", "argus", "serve"]
MARKER = "ARGUS_LIFECYCLE_TEST"
GATED = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text().replace("rk + BK", "rk")
VECTOR_ADD = (EXAMPLES / "vector_add.argus").read_text()
SHUTDOWN_ANSWER_S = 1.0
GONE_S = 2.0


@dataclass
class Session:
    client: LanguageClient
    marker: str
    stderr: bytearray = field(default_factory=bytearray)

    @property
    def process(self) -> asyncio.subprocess.Process:
        return self.client._server

    def children(self) -> set[int]:
        return marked_processes(MARKER, self.marker) - {self.process.pid}

    def stderr_text(self) -> str:
        return self.stderr.decode("utf-8", "replace")


async def record_stderr(session: Session) -> None:
    while chunk := await session.process.stderr.read(65536):
        session.stderr += chunk


async def never_create(client: LanguageClient, params: types.WorkDoneProgressCreateParams) -> None:
    """A client slow to answer `window/workDoneProgress/create` (here: never)."""
    client.never_answered.append(params)
    await asyncio.Event().wait()


@contextlib.asynccontextmanager
async def serving(answer_progress: bool = True, gate_on_save: bool = False) -> AsyncIterator[Session]:
    """A server started with a marker in its environment and initialized by VS Code; its stderr recorded rather
    than forwarded (pytest-lsp's start_io would forward it). Whatever the test leaves, the server and every
    marked process are killed afterwards."""
    client = make_client()
    client.never_answered = []
    client.set_configuration({"gate": {"device": "cpu", "onSave": gate_on_save, "timeoutS": 300}}, section="argus")
    if not answer_progress:
        client.protocol.fm.features.pop(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)(never_create)
    marker = uuid.uuid4().hex
    await JsonRPCClient.start_io(client, *SERVER, env={**os.environ, MARKER: marker})
    session = Session(client, marker)
    recorder = asyncio.create_task(record_stderr(session))
    try:
        await initialize(client, "vscode")
        yield session
    finally:
        for pid in marked_processes(MARKER, marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        await session.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(client.stop(), timeout=5)
        recorder.cancel()


async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        await asyncio.sleep(0.05)


def execute(client: LanguageClient, command: str, arguments: list, msg_id: str) -> asyncio.Future:
    params = types.ExecuteCommandParams(command=command, arguments=arguments)
    return asyncio.ensure_future(
        client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)
    )


# ---- the states the server can be in when it is told to stop ----------------------------------------------
async def idle(session: Session, uri: str) -> list[asyncio.Future]:
    open_document(session.client, uri, VECTOR_ADD)
    await published(session.client, uri, 1)
    return []


def publications(session: Session, uri: str) -> int:
    return sum(p.uri == uri for p in session.client.published)


async def checking(session: Session, uri: str) -> list[asyncio.Future]:
    open_document(session.client, uri, renamed_examples())
    await asyncio.sleep(0.3)
    assert publications(session, uri) == 0, "the check of 5,000 lines (seconds) is over already"
    return []


async def verifying(session: Session, uri: str) -> list[asyncio.Future]:
    open_document(session.client, uri, renamed_examples())
    await published(session.client, uri, 1, timeout=60)  # checked; the verifier starts at once (just opened)
    await asyncio.sleep(0.3)
    assert publications(session, uri) == 1, "the verification of 5,000 lines (half a minute) is over already"
    return []


async def gate_running(session: Session, uri: str) -> list[asyncio.Future]:
    open_document(session.client, uri, GATED)
    await published(session.client, uri, 1)
    running = execute(session.client, "argus.runGate", [uri], "gate")
    await until(lambda: len(session.children()) >= 1, 60, "the gate's runner starting")
    return [running]


async def refine_running(session: Session, uri: str) -> list[asyncio.Future]:
    open_document(session.client, uri, VECTOR_ADD)
    await published(session.client, uri, 1)
    running = execute(session.client, "argus.refine", [uri, None, {"budget": 2, "device": "cpu"}], "refine")
    await until(lambda: len(session.children()) >= 2, 60, "the refine worker starting its gate run")
    return [running]


async def progress_not_created(session: Session, uri: str) -> list[asyncio.Future]:
    """A gate run waiting for the client to create its progress token (this client never answers)."""
    open_document(session.client, uri, GATED)
    await published(session.client, uri, 1)
    running = execute(session.client, "argus.runGate", [uri], "gate")
    await until(lambda: bool(session.client.never_answered), 10, "the server asking for a progress token")
    return [running]


STATES = {
    "idle": idle,
    "checking": checking,
    "verifying a big file": verifying,
    "gate running": gate_running,
    "refine running": refine_running,
    "progress token not created": progress_not_created,
}


def assert_no_traceback_storm(session: Session) -> None:
    text = session.stderr_text()
    assert "Traceback" not in text, text[-4000:]
    assert len(text.splitlines()) <= 2, text[-4000:]


async def assert_gone_with_children(session: Session, started: float, code: int) -> None:
    assert await asyncio.wait_for(session.process.wait(), timeout=GONE_S) == code
    left = GONE_S - (time.monotonic() - started)
    await until(lambda: not session.children(), max(left, 0.05), "every child process ending")


# ---- the tests ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("state", list(STATES))
async def test_shutdown_is_answered_at_once_and_exit_leaves_nothing_running(state: str, uri: str):
    async with serving(answer_progress=state != "progress token not created") as session:
        in_flight = await STATES[state](session, uri)
        await asyncio.wait_for(session.client.shutdown_async(None), timeout=SHUTDOWN_ANSWER_S)
        # the requests in flight are answered too (cancelled): a client must not wait for them forever
        for request in in_flight:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(request, timeout=SHUTDOWN_ANSWER_S)
            assert request.done(), f"a request in flight was never answered ({state})"
        started = time.monotonic()
        session.client.exit(None)
        await assert_gone_with_children(session, started, code=0)
        assert_no_traceback_storm(session)


async def test_exit_without_shutdown_ends_the_server_with_status_1_while_a_gate_runs(uri: str):
    async with serving() as session:
        await gate_running(session, uri)
        started = time.monotonic()
        session.client.exit(None)
        await assert_gone_with_children(session, started, code=1)
        assert_no_traceback_storm(session)


async def test_the_end_of_stdin_ends_the_server_and_its_gate_run(uri: str):
    async with serving() as session:
        await gate_running(session, uri)
        started = time.monotonic()
        session.process.stdin.close()
        await assert_gone_with_children(session, started, code=1)
        assert_no_traceback_storm(session)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_a_signal_ends_the_server_and_its_refine_run(signum: int, uri: str):
    async with serving() as session:
        await refine_running(session, uri)
        started = time.monotonic()
        session.process.send_signal(signum)
        await assert_gone_with_children(session, started, code=128 + signum)
        assert_no_traceback_storm(session)


async def test_sigint_during_a_proof_ends_the_server(uri: str):
    """z3 takes SIGINT for itself while it solves (it only cancels its check) unless told to leave it alone."""
    async with serving() as session:
        await verifying(session, uri)
        started = time.monotonic()
        session.process.send_signal(signal.SIGINT)
        await assert_gone_with_children(session, started, code=128 + signal.SIGINT)
        assert_no_traceback_storm(session)


async def test_exit_while_verifying_a_big_file_does_not_wait_for_the_verifier(uri: str):
    async with serving() as session:
        await verifying(session, uri)
        await asyncio.wait_for(session.client.shutdown_async(None), timeout=SHUTDOWN_ANSWER_S)
        started = time.monotonic()
        session.client.exit(None)
        await assert_gone_with_children(session, started, code=0)
        assert_no_traceback_storm(session)


# ---- work that no request is waiting for ------------------------------------------------------------------
async def test_shutdown_stops_a_gate_run_started_by_a_save(uri: str):
    async with serving(gate_on_save=True) as session:
        open_document(session.client, uri, GATED)
        await published(session.client, uri, 1)
        session.client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
        await until(lambda: len(session.children()) >= 1, 60, "the gate's runner starting")
        await asyncio.wait_for(session.client.shutdown_async(None), timeout=SHUTDOWN_ANSWER_S)
        # no exit yet: the run is cancelled, and its cancellation ends the runner (SIGTERM, then a grace)
        await until(lambda: not session.children(), 10, "the gate's processes ending after shutdown")


async def test_a_refine_worker_stops_its_gate_run_when_the_server_is_killed(uri: str):
    async with serving() as session:
        await refine_running(session, uri)
        session.process.kill()  # nothing to handle: the worker sees the end of its stdin
        await until(lambda: not session.children(), 15, "the refine worker and its gate run ending")
