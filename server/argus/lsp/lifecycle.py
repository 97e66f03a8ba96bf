"""How the server stops, whatever stops it.

`shutdown` (the request) stops the work and is answered at once: the documents are closed (their checks and
verifications cancelled), every gate run, refinement and refine offer is cancelled (each cancellation stops its
own processes, in the background: SIGTERM, a grace, SIGKILL), the check and verify pools take nothing more, and
argus.lsp.protocol answers the other requests in flight as cancelled.

`exit` (the notification), the end of stdin, a closed stdout, SIGTERM, SIGINT and SIGHUP end the process within
a second: every process below the server (gate runners, their stage workers, refine workers, whatever those
started, in whichever session) is frozen, asked to stop and then killed; the cancelled tasks get a moment to
remove their temporary folders; and the process ends with os._exit, since a verification in a z3 thread cannot be
interrupted and the thread reading stdin never returns. Exit status: 0 after a shutdown, else 1 (LSP); 128 plus
the signal's number for a signal.

The process tree is read from /proc (`ps` where there is none) rather than from a registry the gate and refine
code would keep: it also finds what their children started (a gate runner's stage workers, the compilers those
start), and a process whose parent died before it is still found, since the whole tree is frozen first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from concurrent.futures import Executor
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pygls.io_ import StdoutWriter

from argus.lsp.protocol import ArgusProtocol, serve, stdin_reader

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from argus.lsp.documents import DocumentStore


class Served(Protocol):
    """What serving needs of the server (argus.lsp.server.ArgusServer): its protocol and its lifecycle."""

    protocol: ArgusProtocol
    lifecycle: Lifecycle


logger = logging.getLogger(__name__)

TERM_GRACE_S = 0.3  # for the server's children to handle SIGTERM (a gate runner removes its scratch folder)
TASK_GRACE_S = 0.2  # for cancelled tasks to run their `finally` (the gate's bundle folder)
# While a check thread runs Python, the event loop waits up to sys.getswitchinterval() (5 ms) for the GIL after
# each system call it makes; the /proc walk below makes hundreds (1.9 s for 68 processes, measured), so the end
# asks for the GIL back within 0.1 ms instead.
ENDING_SWITCH_INTERVAL_S = 1e-4
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class Lifecycle:
    def __init__(
        self,
        server: LanguageServer,
        documents: DocumentStore,
        check_pool: Executor,
        verify_pool: Executor,
        request_work: dict[object, list],
    ) -> None:
        self.server = server  # the pygls server, for its protocol
        self.documents = documents
        self.check_pool = check_pool
        self.verify_pool = verify_pool
        self.request_work = request_work  # request id -> the tasks it started, cancelled with the rest
        self.ending = False
        self._tasks: set[asyncio.Task] = set()
        self._end: asyncio.Task | None = None

    def track(self, task: asyncio.Task) -> asyncio.Task:
        """Background work (a gate run, a refinement) that shutdown and exit cancel; returns `task`."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def shutdown(self) -> None:
        for state in self.documents:
            self.documents.close(state.uri)
        for task in self._work():
            task.cancel()
        self.check_pool.shutdown(wait=False, cancel_futures=True)
        self.verify_pool.shutdown(wait=False, cancel_futures=True)

    def _work(self) -> list[asyncio.Task]:
        requested = [task for tasks in self.request_work.values() for task in tasks]
        return [task for task in {*self._tasks, *requested} if not task.done()]

    def exit(self, status: int, why: str) -> None:
        """End the process with `status` (called on the event loop: by a handler, a signal, the reader)."""
        if self.ending:
            return
        self.ending = True
        sys.setswitchinterval(ENDING_SWITCH_INTERVAL_S)
        logger.info("ending: %s", why)
        self._end = asyncio.ensure_future(self._finish(status))

    def client_gone(self, why: str) -> None:
        """The client closed its end without `exit`: say so once, and end as `exit` would."""
        if self.ending:
            return
        shut_down = self.server.protocol.shut_down
        if not shut_down:
            logger.warning("%s without shutdown and exit; ending", why)
        self.exit(0 if shut_down else 1, why)

    async def _finish(self, status: int) -> None:
        try:
            self.server.protocol.output_closed = True  # the client said exit, or is gone: nothing more for it
            stop_processes(children(os.getpid()), TERM_GRACE_S)
            work = self._work()
            for task in work:
                task.cancel()
            if work:
                await asyncio.wait(work, timeout=TASK_GRACE_S)
        finally:
            hard_exit(status)

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for signum in SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # Windows, not the main thread
                loop.add_signal_handler(signum, self.exit, 128 + signum, signal.Signals(signum).name)
        # first in the verifier's thread, before any proof (and off the main thread: z3 takes 0.1 s to import)
        self.verify_pool.submit(leave_sigint_to_python)


def leave_sigint_to_python() -> None:
    """z3 catches SIGINT while it solves (and only cancels its check), so a Ctrl-C or a SIGINT that lands during
    a proof would never reach the handler above; with ctrl_c off it does."""
    try:
        import z3
    except ImportError:  # no verifier here: nothing catches SIGINT but us
        return
    z3.set_param("ctrl_c", False)


def hard_exit(status: int) -> None:
    with contextlib.suppress(Exception):
        logging.shutdown()  # flush the log (stderr, --log-file)
    os._exit(status)


# ---- serving ------------------------------------------------------------------------------------------------
def run_stdio(server: Served) -> int:
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    asyncio.run(_serve_stdio(server))
    return 1  # not reached: the server ends through Lifecycle.exit


async def _serve_stdio(server: Served) -> None:
    server.lifecycle.install_signal_handlers()
    await serve(stdin_reader(sys.stdin.fileno()), server.protocol)
    server.lifecycle.client_gone("the client closed stdin")
    await asyncio.Event().wait()  # until Lifecycle.exit ends the process


def run_tcp(server: Served, host: str, port: int) -> int:
    asyncio.run(_serve_tcp(server, host, port))
    return 1  # not reached


async def _serve_tcp(server: Served, host: str, port: int) -> None:
    """One client: the server ends when its connection does."""
    server.lifecycle.install_signal_handlers()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        server.protocol.set_writer(writer)
        await serve(lambda: reader.read(1 << 16), server.protocol)
        server.lifecycle.client_gone("the client closed the connection")

    listening = await asyncio.start_server(connection, host, port)
    logger.info("listening on %s:%s", host, port)
    async with listening:
        await listening.serve_forever()


# ---- processes ----------------------------------------------------------------------------------------------
def parents() -> dict[int, int]:
    """pid -> parent pid of every living (not zombie) process we can see."""
    proc = Path("/proc")
    if not proc.is_dir():
        return _parents_from_ps()
    found = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] not in ("Z", "X"):
            found[int(entry.name)] = int(fields[1])
    return found


def _parents_from_ps() -> dict[int, int]:
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,stat="], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in out.stdout.splitlines():
        pid, ppid, state = [*line.split(), "", "", ""][:3]
        if pid.isdigit() and ppid.isdigit() and not state.startswith("Z"):
            found[int(pid)] = int(ppid)
    return found


def children(pid: int) -> set[int]:
    return {child for child, parent in parents().items() if parent == pid}


def tree(roots: set[int]) -> set[int]:
    """`roots` and every living process below them."""
    if not roots:
        return set()
    below: dict[int, list[int]] = {}
    alive = parents()
    for child, parent in alive.items():
        below.setdefault(parent, []).append(child)
    found, stack = set(), [pid for pid in roots if pid in alive]
    while stack:
        pid = stack.pop()
        if pid not in found:
            found.add(pid)
            stack.extend(below.get(pid, ()))
    return found


def _signal(pids: Iterable[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def freeze(roots: set[int]) -> set[int]:
    """SIGSTOP `roots` and everything below them until nothing new turns up: a stopped process cannot start
    another, and one whose parent dies later is still in the set."""
    frozen: set[int] = set()
    while fresh := tree(roots | frozen) - frozen:
        _signal(fresh, signal.SIGSTOP)
        frozen |= fresh
    return frozen


def stop_processes(roots: Iterable[int], grace_s: float = 0.0) -> None:
    """End `roots` and every process below them: frozen, then SIGTERM (and SIGCONT, so they can act on it) with
    `grace_s` to go by themselves, then SIGKILL for the rest and for anything they started meanwhile."""
    frozen = freeze(set(roots))
    if not frozen:
        return
    try:
        if grace_s > 0:
            _signal(frozen, signal.SIGTERM)
            _signal(frozen, signal.SIGCONT)
            deadline = time.monotonic() + grace_s
            while (alive := frozen & set(parents())) and time.monotonic() < deadline:
                time.sleep(0.01)
            frozen = freeze(alive)  # the ones still there, and what they started meanwhile
    finally:
        _signal(frozen, signal.SIGKILL)
