"""`ServerState`: the one object every feature module works with. It holds the open documents, the settings,
the pools and the snapshots' `AnalysisHost`; answers what read-only handlers ask (the snapshot of a version,
its layouts) and publishes diagnostics; and sends to the editor through the pygls server it was made for
(`client`), so that no feature imports `argus.lsp.server`, which only composes them.

A handler that reads takes a `Snapshot` (an immutable `Analysis` and its client positions) from here; one that
changes something (open, change, configuration, a gate run's results) changes the `DocumentState` or the
settings held here, on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from argus.analysis.host import AnalysisHost
from argus.dsl.lines import split_lines
from argus.lsp import convert
from argus.lsp import settings as config
from argus.lsp.convert import Positions
from argus.lsp.documents import DocumentState, DocumentStore, Snapshot, SourceResult
from argus.lsp.lifecycle import Lifecycle
from argus.lsp.solver_thread import SolverThread
from argus.skills.provider import ProviderRegistry

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

    from argus.dsl.diagnostics import Diagnostic
    from argus.verify.kernel import ValueLayout

logger = logging.getLogger(__name__)

TYPES, INVARIANTS, GATE = "types", "invariants", "gate"
STAGES = (TYPES, INVARIANTS, GATE)
CARRIED = (INVARIANTS,)  # stages whose verdicts move with an edit until the new version's arrive
SNAPSHOT_WAIT_S = 1.0  # how long a read-only request waits for the check of the version it was asked about
REFRESH_DELAY_S = 0.02  # publications this close together are one diagnostic refresh (argus.lsp.pull_diagnostics)


def load_verifier() -> None:
    """Import the verifier (and z3, about 0.4 s) ahead of its first use. Call it on the solver thread: the server
    answers initialize without it (tests/lsp/test_startup_imports.py), and its first verification then finds it
    loaded."""
    import argus.verify  # noqa: F401


def render_layouts(layouts: list[ValueLayout]) -> None:
    """Render each layout's text (z3 terms: on the solver thread), giving way at a checkpoint after each."""
    from argus.dsl.checkpoint import checkpoint

    for layout in layouts:
        checkpoint("obligation")
        layout.text  # noqa: B018 (rendering is the point)


class ServerState:
    def __init__(self, client: LanguageServer) -> None:
        self.client = client  # the pygls server: what a feature sends to the editor goes through it
        self.documents = DocumentStore()
        self.analysis_host = AnalysisHost()  # every version's Analysis, and what they share (argus.analysis)
        self.client_name = ""  # clientInfo.name from initialize ("Neovim", "Visual Studio Code", ...)
        self.initial_settings = config.Settings()
        self.global_settings = config.Settings()
        self.folder_settings: dict[str, config.Settings] = {}
        # Two checking threads (each document is checked by one at a time, so a long file cannot hold up a
        # short one's squiggles); the one solver thread for everything z3 does (argus.lsp.solver_thread).
        self.check_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="argus-check")
        self.solver = SolverThread()
        self.verify_pool = self.solver.executor
        self.skills = ProviderRegistry()
        self.request_work: dict[object, list] = {}  # request id -> asyncio tasks it started
        self.lifecycle = Lifecycle(client, self.documents, self.check_pool, self.verify_pool, self.request_work)
        self.on_first_code_action: Callable[[], None] | None = None  # set by argus.lsp.code_actions
        self._refresh: asyncio.Task | None = None

    # ---- settings and the client ------------------------------------------------------------------------
    def settings_for(self, uri: str) -> config.Settings:
        folder = max((f for f in self.folder_settings if uri.startswith(f)), key=len, default=None)
        return self.folder_settings[folder] if folder is not None else self.global_settings

    def positions(self, text: str) -> Positions:
        return Positions(split_lines(text), self.client.workspace.position_codec)

    def client_supports(self, *path: str) -> bool:
        """Whether the client's capabilities have a truthy value at `path` (snake_case attribute names)."""
        node: object = self.client.client_capabilities
        for name in path:
            node = getattr(node, name, None)
            if node is None:
                return False
        return bool(node)

    def window_show_message(self, params: types.ShowMessageParams) -> None:
        self.client.window_show_message(params)

    async def window_show_message_request_async(self, params: types.ShowMessageRequestParams) -> Any:
        return await self.client.window_show_message_request_async(params)

    async def workspace_apply_edit_async(self, params: types.ApplyWorkspaceEditParams) -> Any:
        return await self.client.workspace_apply_edit_async(params)

    def cancel_work_of_request(self, msg_id: object) -> None:
        for task in self.request_work.pop(msg_id, []):
            task.cancel()

    # ---- what read-only handlers see ----------------------------------------------------------------
    async def snapshot(self, uri: str) -> Snapshot | None:
        """The latest checked version of an open document, waiting briefly for a check in progress."""
        state = self.documents.get(uri)
        if state is None:
            return None
        task = state.check_task
        if task is not None and not task.done() and state.current_snapshot() is None:
            # on a time-out, answer from the previous version rather than not at all
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), timeout=SNAPSHOT_WAIT_S)
        return state.snapshot

    async def snapshot_at(self, uri: str, position: types.Position) -> tuple[Snapshot, types.Position] | None:
        """A snapshot to answer a request about `position` of the latest version, and the position in it: the
        latest version's once checked; while that check runs, the previous one, if the line asked about is
        unchanged since (its text, so its columns, are the same), so hover and completion never queue behind
        a check; else the latest, waited for as `snapshot` does."""
        state = self.documents.get(uri)
        if state is None:
            return None
        current = state.current_snapshot()
        if current is None and state.snapshot is not None:
            from argus.skills.rebase import rebase_line

            line = rebase_line(state.text, state.snapshot.text, position.line)
            if line is not None:
                return state.snapshot, types.Position(line=line, character=position.character)
        snapshot = current or await self.snapshot(uri)
        return (snapshot, position) if snapshot is not None else None

    def layouts_for(self, snapshot: Snapshot) -> list[ValueLayout]:
        """The verifier's layouts for `snapshot`: its own, or those of the latest verified version moved onto
        its text (the ones on lines the edits since left alone)."""
        state = self.documents.get(snapshot.uri)
        if state is None:
            return []
        version, layouts = state.layouts
        if version == snapshot.version or not layouts:
            return layouts if version == snapshot.version else []
        base = state.text_of(version)
        return carried(
            state,
            ("layouts", version, snapshot.version),
            lambda: moved_layouts(layouts, base, snapshot.text) if base is not None else [],
        )

    async def render(self, layouts: list[ValueLayout], wait_s: float) -> None:
        """Render those of `layouts` not rendered yet, as quick work on the solver thread (z3 terms: only that
        thread may touch them), waiting at most `wait_s`: a caller that cannot wait answers with the ones
        ready (`layout.rendered`), and the rest are there for the next request."""
        pending = [layout for layout in layouts if layout.rendered is None]
        if pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.solver.quick(render_layouts, pending), wait_s)

    # ---- publishing ---------------------------------------------------------------------------------
    def current(self, state: DocumentState) -> list[types.Diagnostic]:
        """The diagnostics of the current version: each stage's own, or a carried stage's previous verdicts
        moved with the edits."""
        merged: list[types.Diagnostic] = []
        for stage in STAGES:
            result = state.results.get(stage)
            if result is None:
                continue
            if result.version == state.version:
                merged.extend(result.diagnostics)
            elif stage in CARRIED:
                merged.extend(self._carried(state, stage, result))
        return merged

    def _carried(self, state: DocumentState, stage: str, result: SourceResult) -> list[types.Diagnostic]:
        def move() -> list[types.Diagnostic]:
            base = state.text_of(result.version)
            moved = moved_diagnostics(result.raw, base, state.text) if base is not None else []
            positions = self.positions(state.text)
            return [convert.diagnostic(d, state.uri, positions) for d in moved]

        return carried(state, (stage, result.version, state.version), move)

    def publish(self, state: DocumentState) -> None:
        if state.closed:
            return
        state.publications += 1
        if state.pulled:  # the client pulls this document (argus.lsp.pull_diagnostics): tell it to pull again
            if self._refresh is None or self._refresh.done():
                self._refresh = asyncio.get_running_loop().create_task(self._refresh_pulled())
            return
        self.client.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=self.current(state), version=state.version)
        )

    async def _refresh_pulled(self) -> None:
        """Ask a pulling client to pull again, once for a burst of publications."""
        await asyncio.sleep(REFRESH_DELAY_S)
        with contextlib.suppress(Exception):  # a client that fails a refresh pulls on its next edit anyway
            await self.client.workspace_diagnostic_refresh_async(None)


def carried(state: DocumentState, key: tuple[str, int, int], move: Callable[[], list[Any]]) -> list[Any]:
    """What `move()` makes for `key` (kind, from version, to version), made once: the document keeps one
    entry per kind, the latest asked for (publications and hovers ask again and again for the same one)."""
    if key not in state.carried:
        state.carried = {**{k: v for k, v in state.carried.items() if k[0] != key[0]}, key: move()}
    return state.carried[key]


def moved_diagnostics(diagnostics: list[Diagnostic], base: str, text: str) -> list[Diagnostic]:
    """The Argus diagnostics of `base` whose lines are unchanged in `text`, moved to where those lines are;
    related information on changed lines is dropped, a diagnostic on a changed line goes."""
    from argus.dsl.diagnostics import Position, Range
    from argus.dsl.spans import Span
    from argus.skills.rebase import move_span, untouched_lines

    where = untouched_lines(base, text)

    def move(r: Range) -> Range | None:
        span = move_span(Span(r.start.line, r.start.character, r.end.line, r.end.character), where)
        if span is None:
            return None
        return Range(
            start=Position(line=span.line, character=span.col), end=Position(line=span.end_line, character=span.end_col)
        )

    moved = []
    for d in diagnostics:
        at = move(d.range)
        if at is None:
            continue
        related = [r.model_copy(update={"range": to}) for r in d.related if (to := move(r.range)) is not None]
        moved.append(d.model_copy(update={"range": at, "related": related}))
    return moved


def moved_layouts(layouts: list[ValueLayout], base: str, text: str) -> list[ValueLayout]:
    from argus.skills.rebase import move_span, untouched_lines

    where = untouched_lines(base, text)
    moved = []
    for layout in layouts:
        span = move_span(layout.span, where)
        if span is not None:
            moved.append(layout.moved(span))
    return moved
