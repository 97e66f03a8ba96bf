"""The server's view of each open document: its latest text, the texts of its recent versions, the analysis of
the latest checked version, and the diagnostics of each source, every one tagged with the version it was
computed for."""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace.position_codec import PositionCodec

from argus.lsp.text_sync import apply_change

if TYPE_CHECKING:
    from argus.analysis.snapshot import Analysis
    from argus.dsl.check import CheckResult
    from argus.lsp.convert import Positions


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One version of a document, its `Analysis` and the client positions of its text: read-only handlers work
    on this, never on a text that a concurrent edit might change under them."""

    analysis: Analysis
    positions: Positions

    @property
    def uri(self) -> str:
        return self.analysis.uri

    @property
    def version(self) -> int:
        return self.analysis.version

    @property
    def text(self) -> str:
        return self.analysis.text

    @property
    def check(self) -> CheckResult:
        return self.analysis.check


@dataclass(slots=True)
class SourceResult:
    version: int
    diagnostics: list[types.Diagnostic]
    raw: list[Any] = field(default_factory=list)  # the Argus diagnostics they came from, in the same order


class VersionHistory:
    """The texts of a document's recent versions, newest last, so that an edit, a diagnostic or a light-bulb
    target computed for an older version can be moved onto the current text by content (argus.skills.rebase)
    instead of applied by position. Bounded by count and by characters: the newest version is always kept,
    older ones go first."""

    def __init__(self, max_versions: int = 64, max_chars: int = 4_000_000) -> None:
        self.max_versions = max_versions
        self.max_chars = max_chars
        self._texts: OrderedDict[int, str] = OrderedDict()
        self._chars = 0

    def add(self, version: int, text: str) -> None:
        previous = self._texts.pop(version, None)
        if previous is not None:
            self._chars -= len(previous)
        self._texts[version] = text
        self._chars += len(text)
        while len(self._texts) > 1 and (len(self._texts) > self.max_versions or self._chars > self.max_chars):
            _, dropped = self._texts.popitem(last=False)
            self._chars -= len(dropped)

    def get(self, version: int) -> str | None:
        return self._texts.get(version)


@dataclass(slots=True)
class DocumentState:
    uri: str
    version: int
    text: str
    history: VersionHistory = field(default_factory=VersionHistory)
    # the text after each content change of the latest didChanges, oldest first: an editor may send its own
    # edit and a keystroke in one didChange, and whether our edit landed first is told only by the steps
    steps: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=64))
    snapshot: Snapshot | None = None
    results: dict[str, SourceResult] = field(default_factory=dict)  # stage -> result
    layouts: tuple[int, list[Any]] = (-1, [])  # (version, verifier ValueLayouts)
    gate: Any = None  # argus.lsp.gate.GateRun of the latest gate run
    check_task: asyncio.Task | None = None
    urgent: bool = False  # the next verification runs at once (open, save) instead of after the debounce
    changed_at: float = 0.0  # time.monotonic() of the latest didChange: the debounce counts from it
    verify_task: asyncio.Task | None = None
    closed: bool = False
    carried: dict = field(default_factory=dict)  # (stage, from version, to version) -> moved verdicts or layouts
    publications: int = 0  # how many times its diagnostics changed: the resultId of a pull (lsp/pull_diagnostics)
    pulled: bool = False  # the client pulls this document's diagnostics: refresh it instead of pushing

    def __post_init__(self) -> None:
        self.history.add(self.version, self.text)

    def edit(self, version: int, changes: Sequence[types.TextDocumentContentChangeEvent], codec: PositionCodec) -> None:
        """Apply a `didChange`: its changes in order, then its version."""
        for change in changes:
            self.text = apply_change(self.text, change, codec)
            self.steps.append((version, self.text))
        self.version = version
        self.history.add(version, self.text)

    def text_of(self, version: int) -> str | None:
        """The text of `version`, while the history still holds it."""
        return self.history.get(version)

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
