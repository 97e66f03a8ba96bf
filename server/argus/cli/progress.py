"""What a long gate run is doing, on stderr, while it runs.

On a terminal, one status line rewritten in place: the run, the gate's latest progress line and the seconds so
far, redrawn every half second (a stage can take many seconds without a word). Anywhere else (a pipe, a log
file, CI), one line when each stage starts, and nothing in between: no carriage returns in a log.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from argus.cli import stop_if_interrupted

REDRAW_S = 0.5
CLEAR = "\r\x1b[K"
# The runner's line when a kernel's stage starts ("softmax: correct"), and when it measures the GPU's ceilings.
STAGE = re.compile(r"^\S+: (compile|correct|profile)$")
CEILINGS = "measuring the ceilings"


class GateProgress:
    def __init__(self, prefix: str, stream: TextIO | None = None) -> None:
        self.prefix = prefix
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.lock = threading.Lock()
        self.label = ""  # which run: "the start", "gate run 3 of 8"
        self.latest = ""  # the gate's latest line
        self.started = 0.0
        self.shown = False  # a status line is on the terminal now

    @contextmanager
    def run(self, label: str) -> Iterator[None]:
        """While one gate run lasts: progress lines belong to `label`; on a terminal, the status line is kept
        fresh until the run ends, and removed then."""
        with self.lock:
            self.label, self.latest, self.started = label, "starting", time.perf_counter()
        stop = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(stop,), daemon=True) if self.live else None
        if ticker is not None:
            ticker.start()
        try:
            yield
        finally:
            stop.set()
            if ticker is not None:
                ticker.join()
            with self.lock:
                self._clear()
                self.label = ""

    def line(self, text: str) -> None:
        """One of the gate's progress lines (on_progress of argus.gate)."""
        with self.lock:
            self.latest = text
            if self.live:
                self._draw()
            elif STAGE.match(text) or text.startswith(CEILINGS):
                stage = STAGE.match(text).group(1) if STAGE.match(text) else "ceilings"
                self._print(f"{self.prefix} {self.label}: {stage} ({self._elapsed():.1f} s)")

    def say(self, text: str) -> None:
        """A line of the caller's own (a step's verdict): printed above the status line, which is redrawn."""
        with self.lock:
            self._clear()
            self._print(text)
            if self.label and self.live:
                self._draw()

    def _tick(self, stop: threading.Event) -> None:
        while not stop.wait(REDRAW_S):
            with self.lock:
                self._draw()

    def _elapsed(self) -> float:
        return time.perf_counter() - self.started

    def _draw(self) -> None:
        status = f"{self.prefix} {self.label}: {self.latest} {self._elapsed():.1f} s"
        self._write(CLEAR + status)
        self.shown = True

    def _clear(self) -> None:
        if self.shown:
            self._write(CLEAR)
            self.shown = False

    def _print(self, text: str) -> None:
        self._write(text + "\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass  # stderr went away: progress is not worth failing the run for

    def count(self, done: int, total: int) -> None:
        """Of a batch of gate runs (a run named by `run`), `done` of `total` have ended: a bar."""
        filled = int(BAR * done / total) if total else BAR
        bar = f"▕{'█' * filled}{'░' * (BAR - filled)}▏ {done}/{total}"
        with self.lock:
            self.latest = bar
            if self.live:
                self._draw()
            else:
                self._print(f"{self.prefix} {self.label}: {bar} ({self._elapsed():.1f} s)")


BAR = 24  # the width of a batch's progress bar


class ProgressGate:
    """`gate` (source, kernel) -> result, each call inside a progress run named by `labels(call number)`; a
    batch (`many`, where `gate` runs several at once) is one run named `labels(first call, count)`, with a bar
    over its runs as they end."""

    def __init__(self, gate: Callable, progress: GateProgress, labels: Callable[..., str]) -> None:
        self.gate, self.progress, self.labels, self.calls = gate, progress, labels, 0

    def __call__(self, source: str, kernel: str):
        stop_if_interrupted()  # a Ctrl-C the verifier of the last candidate lost: no more gate runs
        with self.progress.run(self.labels(self.calls)):
            self.calls += 1
            return self.gate(source, kernel)

    def width(self) -> int:
        from argus.agent.gates import gate_width

        return gate_width(self.gate)

    def many(self, items, on_done=None):
        from argus.agent.gates import gate_many

        stop_if_interrupted()
        if len(items) == 1:
            return [self(*items[0])]
        ended = 0

        def done(index: int, result) -> None:
            nonlocal ended
            ended += 1
            self.progress.count(ended, len(items))
            if on_done is not None:
                on_done(index, result)

        with self.progress.run(self.labels(self.calls, len(items))):
            self.calls += len(items)
            return gate_many(self.gate, items, done)


def with_progress(gate: Callable, progress: GateProgress, labels: Callable[..., str]) -> ProgressGate:
    return ProgressGate(gate, progress, labels)
