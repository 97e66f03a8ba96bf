"""The one thread where z3 runs, shared by every document's verification and by quick z3 work.

z3's context is not thread-safe (argus.dsl.checkpoint), so one thread does it all. Two kinds of work:

- a verification (`verify`): long. It is given up at its next checkpoint once its text is no longer current,
  and between two kernels it makes way for another document's verification once it has had its slice, so one
  long file cannot hold up the diagnostics of a short one (the kernels it finished are cached, so it resumes
  where it stopped);
- quick work (`quick`: a hover's layout, a quick fix re-proved, a skill planned): run at the thread's next
  checkpoint, inside whatever verification is running, so it waits for one obligation, not for a whole file.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, TypeVar

from argus.dsl.checkpoint import Kind, Superseded, Yielded, checkpoints, no_checkpoints

T = TypeVar("T")

SLICE_S = 0.25  # a verification may keep the thread this long before it makes way at a kernel boundary


def release_anywhere() -> None:
    """First on the thread: z3's terms may be released from other threads from now on (argus.verify.contexts;
    the event loop drops old versions' layouts, and the cycle collector runs on any thread)."""
    try:
        from argus.verify.contexts import release_anywhere as turn_on
    except ImportError:  # no verifier here: no z3 terms either
        return
    turn_on()


class SolverThread:
    def __init__(self) -> None:
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="argus-verify", initializer=release_anywhere
        )
        self._quick: deque[tuple[Callable[..., Any], tuple[Any, ...], concurrent.futures.Future]] = deque()
        self._lock = threading.Lock()
        self._queued: Counter[str] = Counter()  # verifications waiting for the thread, per document

    # ---- quick work ------------------------------------------------------------------------------------
    async def quick(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the solver thread, as soon as it is free or at the running verification's next
        checkpoint."""
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._quick.append((fn, args, future))
        self.executor.submit(self.run_quick_work)  # for when no verification runs to pick it up
        return await asyncio.wrap_future(future)

    def run_quick_work(self) -> None:
        """Run every quick job waiting (on the solver thread), with checkpoints off inside them."""
        while True:
            try:
                fn, args, future = self._quick.popleft()
            except IndexError:
                return
            if not future.set_running_or_notify_cancel():
                continue
            try:
                with no_checkpoints():
                    result = fn(*args)
            except BaseException as error:  # handed to the waiting coroutine, which re-raises it
                future.set_exception(error)
            else:
                future.set_result(result)

    # ---- verifications ---------------------------------------------------------------------------------
    async def verify(self, uri: str, fn: Callable[[], T], stale: Callable[[], bool]) -> T | None:
        """`fn()` on the solver thread for document `uri`; None once `stale()` says its text is not current."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                self._queued[uri] += 1
            try:
                return await loop.run_in_executor(self.executor, self._run, uri, fn, stale)
            except Yielded:
                continue  # back in the queue, behind the verification that was waiting
            except Superseded:
                return None

    def _run(self, uri: str, fn: Callable[[], T], stale: Callable[[], bool]) -> T:
        with self._lock:
            self._queued[uri] -= 1
            if self._queued[uri] <= 0:
                del self._queued[uri]
        if stale():
            raise Superseded()
        started = time.monotonic()

        def hook(kind: Kind) -> None:
            if stale():
                raise Superseded()
            self.run_quick_work()
            if kind == "kernel" and time.monotonic() - started > SLICE_S and self.others_waiting(uri):
                raise Yielded()

        with checkpoints(hook):
            return fn()

    def others_waiting(self, uri: str) -> bool:
        with self._lock:
            return any(count > 0 for other, count in self._queued.items() if other != uri)
