"""How `argus serve` stops: the time to answer `shutdown` in each state, and to end, with every process it started,
after each way of ending. Prints a table.

    .venv/bin/python bench/lsp_shutdown.py [--runs 3] [--patience 30] [--only NAME ...]

Each run starts a server over stdio (pygls' LanguageClient; the client advertises work-done progress), brings it
into a state and times, from the moment the message is written:

  shutdown   until the answer to `shutdown` ("none" when there is none within --patience);
  in flight  whether the gate or refine request of that state was answered within 1 s of the shutdown's answer;
  gone       until the server process and every process it started have ended (found by a marker variable in
             their environment, which every child inherits, in whichever session);
  left       processes with the marker still alive 2 s after the ending was sent;
  log        lines on the server's stderr (traceback: whether one of them starts a traceback).

States, each ended by `shutdown` then `exit`: idle (a small file checked); checking (a 5,000-line file, the
examples again and again with their kernels renamed, still being checked); verifying (the same file, checked,
in the verifier); gate (argus.runGate on the CPU, its runner started); refine (argus.refine on the CPU, the worker
and its gate runner started); progress (a gate run waiting for a progress token the client never creates).
Then the other endings, each with a gate run going: exit without shutdown, stdin closed, SIGTERM, SIGINT.
Whatever is still running after --patience seconds is killed. Medians and maxima over --runs runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import platform
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
from server_load import marked_processes, renamed_examples  # noqa: E402  (shared with the lifecycle tests)

EXAMPLES = ROOT / "examples"
SERVER = [sys.executable, "-m", "argus", "serve"]
MARKER = "ARGUS_SHUTDOWN_BENCH"
GATED = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text().replace("rk + BK", "rk")
VECTOR_ADD = (EXAMPLES / "vector_add.argus").read_text()
OPTIONS = {"argus": {"gate": {"device": "cpu", "timeoutS": 300}}}


@dataclass
class Server:
    client: LanguageClient
    marker: str
    stderr: bytearray = field(default_factory=bytearray)
    published: list[types.PublishDiagnosticsParams] = field(default_factory=list)
    create_requests: int = 0
    running: asyncio.Future | None = None  # the gate or refine request in flight
    recorder: asyncio.Task | None = None

    @property
    def process(self) -> asyncio.subprocess.Process:
        return self.client._server

    def children(self) -> set[int]:
        return marked_processes(MARKER, self.marker) - {self.process.pid}


async def start(answer_progress: bool) -> Server:
    client = LanguageClient("shutdown-bench", "1")
    server = Server(client, uuid.uuid4().hex)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def publish(params: types.PublishDiagnosticsParams) -> None:
        server.published.append(params)

    @client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
    async def create(params: types.WorkDoneProgressCreateParams) -> None:
        server.create_requests += 1
        if not answer_progress:
            await asyncio.Event().wait()

    for method in (types.WINDOW_SHOW_MESSAGE, types.WINDOW_LOG_MESSAGE, types.PROGRESS, "argus/gateResult"):
        client.feature(method)(lambda params: None)
    await client.start_io(*SERVER, env={**os.environ, MARKER: server.marker})
    server.recorder = asyncio.create_task(record_stderr(server))
    capabilities = types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True))
    await client.initialize_async(types.InitializeParams(capabilities=capabilities, initialization_options=OPTIONS))
    client.initialized(types.InitializedParams())
    return server


async def record_stderr(server: Server) -> None:
    while chunk := await server.process.stderr.read(65536):
        server.stderr += chunk


async def until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


def open_document(server: Server, uri: str, text: str) -> None:
    item = types.TextDocumentItem(uri=uri, language_id="argus", version=1, text=text)
    server.client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))


def publications(server: Server, uri: str) -> int:
    return sum(p.uri == uri for p in server.published)


def execute(server: Server, command: str, arguments: list) -> asyncio.Future:
    params = types.ExecuteCommandParams(command=command, arguments=arguments)
    return asyncio.ensure_future(server.client.workspace_execute_command_async(params))


# ---- states -------------------------------------------------------------------------------------------------
URI = "file:///tmp/argus-shutdown-bench.argus"


async def idle(server: Server) -> None:
    open_document(server, URI, VECTOR_ADD)
    await until(lambda: publications(server, URI) >= 1, 30)


async def checking(server: Server) -> None:
    open_document(server, URI, renamed_examples())
    await asyncio.sleep(0.3)


async def verifying(server: Server) -> None:
    open_document(server, URI, renamed_examples())
    await until(lambda: publications(server, URI) >= 1, 60)
    await asyncio.sleep(0.3)


async def gate(server: Server) -> None:
    open_document(server, URI, GATED)
    await until(lambda: publications(server, URI) >= 1, 30)
    server.running = execute(server, "argus.runGate", [URI])
    await until(lambda: len(server.children()) >= 1, 60)


async def refine(server: Server) -> None:
    open_document(server, URI, VECTOR_ADD)
    await until(lambda: publications(server, URI) >= 1, 30)
    server.running = execute(server, "argus.refine", [URI, None, {"budget": 2, "device": "cpu"}])
    await until(lambda: len(server.children()) >= 2, 90)


async def progress(server: Server) -> None:
    open_document(server, URI, GATED)
    await until(lambda: publications(server, URI) >= 1, 30)
    server.running = execute(server, "argus.runGate", [URI])
    await until(lambda: server.create_requests >= 1, 30)


# ---- endings ------------------------------------------------------------------------------------------------
def exit_notification(server: Server) -> None:
    server.client.exit(None)


def close_stdin(server: Server) -> None:
    server.process.stdin.close()


def send(signum: int) -> Callable[[Server], None]:
    return lambda server: server.process.send_signal(signum)


@dataclass(frozen=True)
class Scenario:
    name: str
    state: Callable[[Server], Awaitable[None]]
    shutdown: bool
    end: Callable[[Server], None]


SCENARIOS = [
    Scenario("idle", idle, True, exit_notification),
    Scenario("checking", checking, True, exit_notification),
    Scenario("verifying", verifying, True, exit_notification),
    Scenario("gate", gate, True, exit_notification),
    Scenario("refine", refine, True, exit_notification),
    Scenario("progress", progress, True, exit_notification),
    Scenario("gate, exit without shutdown", gate, False, exit_notification),
    Scenario("gate, stdin closed", gate, False, close_stdin),
    Scenario("gate, SIGTERM", gate, False, send(signal.SIGTERM)),
    Scenario("gate, SIGINT", gate, False, send(signal.SIGINT)),
]


@dataclass
class Run:
    shutdown_ms: float | None  # None: not asked, or no answer
    answered: bool
    in_flight_answered: bool | None  # the gate or refine request: answered after the shutdown (None: none)
    gone_ms: float | None  # None: still there after --patience
    left: int
    log_lines: int
    traceback: bool


async def one_run(scenario: Scenario, patience: float) -> Run:
    server = await start(answer_progress=scenario.name != "progress")
    try:
        await scenario.state(server)
        shutdown_ms, answered = None, True
        if scenario.shutdown:
            began = time.perf_counter()
            try:
                await asyncio.wait_for(server.client.shutdown_async(None), timeout=patience)
                shutdown_ms = 1000 * (time.perf_counter() - began)
            except Exception:
                answered = False
        in_flight = await answer_of(server.running, timeout=1.0) if scenario.shutdown else None
        began = time.perf_counter()
        with contextlib.suppress(Exception):
            scenario.end(server)
        left_at = time.monotonic() + 2.0
        gone = await until(lambda: server.process.returncode is not None and not server.children(), patience)
        gone_ms = 1000 * (time.perf_counter() - began) if gone else None
        await asyncio.sleep(max(0.0, left_at - time.monotonic()))
        left = len(server.children())
    finally:
        for pid in marked_processes(MARKER, server.marker):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.process.wait(), timeout=10)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(server.client.stop(), timeout=5)
    text = server.stderr.decode("utf-8", "replace")
    if server.running is not None and not server.running.done():
        server.running.cancel()
    elif server.running is not None and not server.running.cancelled():
        server.running.exception()  # retrieved: the server was told to stop, an error is the expected answer
    return Run(shutdown_ms, answered, in_flight, gone_ms, left, len(text.splitlines()), "Traceback" in text)


async def answer_of(request: asyncio.Future | None, timeout: float) -> bool | None:
    """Whether `request` got an answer (a result or an error) within `timeout`; None when there is none."""
    if request is None:
        return None
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(request), timeout=timeout)
    return request.done()


def spread(values: list[float | None], patience: float) -> str:
    if any(v is None for v in values):
        return f"> {patience:.0f} s ({sum(v is None for v in values)} of {len(values)})"
    return f"{statistics.median(values):.0f} / {max(values):.0f}"


def row(scenario: Scenario, runs: list[Run], patience: float) -> str:
    if scenario.shutdown:
        unanswered = sum(not r.answered for r in runs)
        shutdown = "none" if unanswered else spread([r.shutdown_ms for r in runs], patience)
        if 0 < unanswered < len(runs):
            shutdown = f"none in {unanswered} of {len(runs)}"
    else:
        shutdown = "—"
    flights = [r.in_flight_answered for r in runs if r.in_flight_answered is not None]
    in_flight = "—" if not flights else ("yes" if all(flights) else f"no in {flights.count(False)} of {len(flights)}")
    gone = spread([r.gone_ms for r in runs], patience)
    left = max(r.left for r in runs)
    log = f"{max(r.log_lines for r in runs)}" + (" (traceback)" if any(r.traceback for r in runs) else "")
    return f"| {scenario.name} | {shutdown} | {in_flight} | {gone} | {left} | {log} |"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--patience", type=float, default=30.0, help="seconds before giving up on an answer or an end")
    parser.add_argument("--only", nargs="*", help="scenario names (default: all)")
    args = parser.parse_args()
    logging.getLogger("pygls").setLevel(logging.CRITICAL)  # the client's own complaints are not the server's
    chosen = [s for s in SCENARIOS if not args.only or s.name in args.only]
    print(f"argus serve on {platform.node()} ({os.cpu_count()} CPUs), Python {platform.python_version()}")
    print(f"{args.runs} runs each; times in ms, median / max, from the message written\n")
    print("| state, ending | shutdown answered | request in flight answered | server and children gone |", end="")
    print(" left after 2 s | stderr lines |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scenario in chosen:
        runs = [await one_run(scenario, args.patience) for _ in range(args.runs)]
        print(row(scenario, runs, args.patience), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
