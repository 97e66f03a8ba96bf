"""The server's view of each open document: its latest text, the analysis of the latest checked version, and
the diagnostics of each source, every one tagged with the version it was computed for."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from argus.dsl.check import CheckResult
    from argus.lsp.convert import Positions


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One version of a document and its check result: read-only handlers work on this, never on a text that
    a concurrent edit might change under them."""

    uri: str
    version: int
    text: str
    check: CheckResult
    positions: Positions


@dataclass(slots=True)
class SourceResult:
    version: int
    diagnostics: list[types.Diagnostic]
    raw: list[Any] = field(default_factory=list)  # the Argus diagnostics they came from, in the same order


@dataclass(slots=True)
class DocumentState:
    uri: str
    version: int
    text: str
    snapshot: Snapshot | None = None
    results: dict[str, SourceResult] = field(default_factory=dict)  # stage -> result
    layouts: tuple[int, list[Any]] = (-1, [])  # (version, verifier ValueLayouts)
    gate: Any = None  # argus.lsp.gate.GateRun of the latest gate run
    check_task: asyncio.Task | None = None
    urgent: bool = False  # the next verification runs at once (open, save) instead of after the debounce
    changed_at: float = 0.0  # time.monotonic() of the latest didChange: the debounce counts from it
    verify_task: asyncio.Task | None = None
    closed: bool = False
    verified_fixes: dict = field(default_factory=dict)  # (version, title, edits) -> the verifier agrees

    def current_snapshot(self) -> Snapshot | None:
        """The snapshot if it is of the latest version, else None."""
        return self.snapshot if self.snapshot is not None and self.snapshot.version == self.version else None

    def cancel_tasks(self) -> None:
        for task in (self.check_task, self.verify_task):
            if task is not None and not task.done():
                task.cancel()


class DocumentStore:
    def __init__(self) -> None:
        self._documents: dict[str, DocumentState] = {}

    def open(self, uri: str, version: int, text: str) -> DocumentState:
        previous = self._documents.get(uri)
        if previous is not None:
            previous.closed = True
            previous.cancel_tasks()
        state = DocumentState(uri, version, text)
        self._documents[uri] = state
        return state

    def get(self, uri: str) -> DocumentState | None:
        return self._documents.get(uri)

    def close(self, uri: str) -> DocumentState | None:
        state = self._documents.pop(uri, None)
        if state is not None:
            state.closed = True
            state.cancel_tasks()
        return state

    def __iter__(self):
        return iter(list(self._documents.values()))
