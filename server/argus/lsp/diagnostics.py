"""Diagnostics: checked on every edit, verified after a quiet moment, merged per document, published with the
version they were computed for.

Syntax and types are cheap (a few ms for a kernel; an unchanged item is not even re-parsed), so they run as
soon as a checking thread is free: edits that arrive while a check runs are coalesced into one more check of
the latest text. The verifier is expensive, so it waits until `debounceMs` have passed since the latest edit
with no newer one (none after open and save): the time the check of that edit took counts as part of the
wait. It runs in two parts: the kernel as written (its declared tile constants) first, published as soon as it
is done; then, when a kernel has `tune` lists, their other values, merged in and published again for the same
version (so a version with tune lists gets three publications: types, the declared verdicts, all verdicts).

A verification runs on the solver thread (argus.lsp.solver_thread): given up as soon as its version is not
the latest, and making way between kernels for another document's, so a long file does not hold up a short
one. Until the new version's verdicts arrive, the previous version's are published moved with the edit: a
verdict whose lines the edit left alone stays where those lines went, one on an edited line goes (so
invariant diagnostics do not blink off at every keystroke). The verifier's layouts (hover, inlay hints) move
the same way, and are rendered on the solver thread once a version's verdicts are out, so a hover finds them
ready.

A file larger than `check.maxFileKiB` is not checked here (AR010, once, at its first line): checking it would
hold a thread for minutes and its memory for as long as it is open; `argus check` checks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from argus.analysis.host import AnalysisHost, too_large
from argus.lsp import convert
from argus.lsp.convert import Positions
from argus.lsp.documents import DocumentState, Snapshot, SourceResult

if TYPE_CHECKING:
    from argus.lsp.server import ArgusServer

logger = logging.getLogger(__name__)

TYPES, INVARIANTS, GATE = "types", "invariants", "gate"
STAGES = (TYPES, INVARIANTS, GATE)
CARRIED = (INVARIANTS,)  # stages whose verdicts move with an edit until the new version's arrive
SNAPSHOT_WAIT_S = 1.0  # how long a read-only request waits for the check of the version it was asked about


def warm_up_checker() -> None:
    import argus.analysis.quick_fixes
    import argus.analysis.tuning_skills
    import argus.dsl.check  # noqa: F401


def load_verifier() -> Any:
    """`argus.verify`, or None while that layer is not installed."""
    try:
        import argus.verify as verify
    except ImportError as missing:
        if missing.name is None or not missing.name.startswith("argus.verify"):
            raise
        return None
    return verify if hasattr(verify, "verify_check") else None


def render_layouts(layouts: list[Any]) -> None:
    """Render each layout's text (z3 terms: on the solver thread), giving way at a checkpoint after each."""
    from argus.dsl.checkpoint import checkpoint

    for layout in layouts:
        checkpoint("obligation")
        layout.text  # noqa: B018 (rendering is the point)


class DiagnosticsScheduler:
    def __init__(self, server: ArgusServer):
        self.server = server
        self._verifier: Any = None
        self._verifier_loaded = False
        # the snapshots' host, whose verifier cache every verification shares (a bare one without a server)
        self.host = server.analysis_host if server is not None else AnalysisHost()

    # ---- events -------------------------------------------------------------------------------------
    def opened(self, state: DocumentState) -> None:
        self._schedule_check(state, urgent=True)

    def changed(self, state: DocumentState) -> None:
        state.changed_at = time.monotonic()  # the debounce counts from the edit, not from the end of its check
        self._schedule_check(state, urgent=False)

    def saved(self, state: DocumentState) -> None:
        self._schedule_check(state, urgent=True)

    def closed(self, uri: str) -> None:
        self.server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def settings_changed(self) -> None:
        """Check and verify every open document again under the new settings (time budget, verifier on or
        off, size limit)."""
        for state in self.server.documents:
            state.results.pop(INVARIANTS, None)
            self._schedule_check(state, urgent=True)

    def warm_up(self) -> None:
        """Load the language core (and the verifier, when it is on) in their threads while the editor finishes
        starting."""
        self.server.check_pool.submit(warm_up_checker)
        if self.server.global_settings.verify_enabled:
            self.server.verify_pool.submit(self.verifier)

    # ---- what read-only handlers see ----------------------------------------------------------------
    async def snapshot(self, uri: str) -> Snapshot | None:
        """The latest checked version of an open document, waiting briefly for a check in progress."""
        state = self.server.documents.get(uri)
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
        state = self.server.documents.get(uri)
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

    def layouts_for(self, snapshot: Snapshot) -> list[Any]:
        """The verifier's layouts for `snapshot`: its own, or those of the latest verified version moved onto
        its text (the ones on lines the edits since left alone)."""
        state = self.server.documents.get(snapshot.uri)
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

    async def render(self, layouts: list[Any], wait_s: float) -> None:
        """Render those of `layouts` not rendered yet, as quick work on the solver thread (z3 terms: only that
        thread may touch them), waiting at most `wait_s`: a caller that cannot wait answers with the ones
        ready (`layout.rendered`), and the rest are there for the next request."""
        pending = [layout for layout in layouts if layout.rendered is None]
        if pending:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.server.solver.quick(render_layouts, pending), wait_s)

    # ---- checking -----------------------------------------------------------------------------------
    def _schedule_check(self, state: DocumentState, urgent: bool) -> None:
        state.urgent = state.urgent or urgent
        if state.check_task is not None and not state.check_task.done():
            return  # the running check compares versions when it ends and checks the latest text again
        state.check_task = asyncio.create_task(self._check_latest(state))

    async def _check_latest(self, state: DocumentState) -> None:
        loop = asyncio.get_running_loop()
        while True:
            version, text = state.version, state.text
            max_chars = self.server.settings_for(state.uri).max_file_kib * 1024
            analyze = self.server.analysis_host.analyze
            try:
                analysis = await loop.run_in_executor(
                    self.server.check_pool, analyze, state.uri, version, text, max_chars
                )
            except Exception:
                logger.exception("check of %s (version %s) failed", state.uri, version)
                return
            if state.closed:
                return
            if version != state.version:
                continue  # superseded while it ran: check the latest text instead of publishing this one
            check = analysis.check
            positions = Positions(analysis.lines, self.server.workspace.position_codec)
            snapshot = Snapshot(analysis, positions)
            state.snapshot = snapshot
            diagnostics = [convert.diagnostic(d, state.uri, positions) for d in check.diagnostics]
            state.results[TYPES] = SourceResult(version, diagnostics, list(check.diagnostics))
            if too_large(check):  # nothing to verify, and no earlier verdicts to carry
                state.results.pop(INVARIANTS, None)
                self.publish(state)
                return
            self.publish(state)
            urgent, state.urgent = state.urgent, False
            quiet = time.monotonic() - state.changed_at
            delay = 0.0 if urgent else max(0.0, self.server.settings_for(state.uri).debounce_ms / 1000 - quiet)
            self._schedule_verify(state, snapshot, delay)
            return

    # ---- verifying ----------------------------------------------------------------------------------
    def verifier(self) -> Any:
        if not self._verifier_loaded:
            self._verifier_loaded = True
            try:
                self._verifier = load_verifier()
            except Exception:
                logger.exception("the verifier failed to load; invariants are off")
        return self._verifier

    def _schedule_verify(self, state: DocumentState, snapshot: Snapshot, delay: float) -> None:
        if state.verify_task is not None and not state.verify_task.done():
            state.verify_task.cancel()
        settings = self.server.settings_for(state.uri)
        if not settings.verify_enabled or snapshot.check.module is None:
            state.results.pop(INVARIANTS, None)
            return
        budget = {"timeout_ms": settings.verify_timeout_ms, "rlimit": settings.verify_rlimit}
        state.verify_task = asyncio.create_task(self._verify(state, snapshot, delay, budget))

    async def _verify(self, state: DocumentState, snapshot: Snapshot, delay: float, budget: dict) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if state.closed or state.version != snapshot.version:
            return
        # the kernel as written first: its verdicts are published without waiting for the tune values'
        declared = await self._run_verifier(state, snapshot, budget, "declared")
        if declared is None or state.closed or state.version != snapshot.version:
            return  # no verifier, or superseded: a newer version has its own verification coming
        self._publish_invariants(state, snapshot, declared)
        verifier = self.verifier()
        if hasattr(verifier, "has_tune_values") and verifier.has_tune_values(snapshot.check):
            tune = await self._run_verifier(state, snapshot, budget, "tune")
            if tune is None or state.closed or state.version != snapshot.version:
                return
            self._publish_invariants(state, snapshot, verifier.merge_results(declared, tune))
        layouts = list(getattr(declared, "layouts", []) or [])
        await self.server.solver.verify(state.uri, lambda: render_layouts(layouts), stale(state, snapshot))

    async def _run_verifier(self, state: DocumentState, snapshot: Snapshot, budget: dict, part: str) -> Any:
        """One part of the verification ("declared" or "tune") on the solver thread; None when there is no
        verifier, when it failed (logged), or when the version was superseded before or while it ran.
        `budget`: verify_check's timeout_ms and rlimit."""

        def run() -> Any:
            if self.verifier() is None:  # imported on the solver thread, never on the event loop
                return None
            return snapshot.analysis.verdicts(part, budget["timeout_ms"], budget["rlimit"])

        try:
            return await self.server.solver.verify(state.uri, run, stale(state, snapshot))
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("verification (%s) of %s (version %s) failed", part, state.uri, snapshot.version)
            return None

    def _publish_invariants(self, state: DocumentState, snapshot: Snapshot, result: Any) -> None:
        diagnostics = [convert.diagnostic(d, state.uri, snapshot.positions) for d in result.diagnostics]
        state.results[INVARIANTS] = SourceResult(snapshot.version, diagnostics, list(result.diagnostics))
        state.layouts = (snapshot.version, list(getattr(result, "layouts", []) or []))
        self.publish(state)

    def fix_removes(self, text: str, fix: Any, timeout_ms: int, rlimit: int | None = None) -> bool:
        """Whether the verifier, run on the text with the fix applied, no longer reports the fixed diagnostic
        (argus.analysis.verdicts.fix_removes, sharing the snapshots' cache). Runs on the solver thread."""
        from argus.analysis.verdicts import fix_removes

        if self.verifier() is None:
            return False
        return fix_removes(text, fix, timeout_ms, rlimit, cache=self.host.verify_cache)

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
            positions = self.server.positions(state.text)
            return [convert.diagnostic(d, state.uri, positions) for d in moved]

        return carried(state, (stage, result.version, state.version), move)

    def publish(self, state: DocumentState) -> None:
        if state.closed:
            return
        state.publications += 1
        if state.pulled:  # the client pulls this document (argus.lsp.pull_diagnostics): tell it to pull again
            self.server.refresher.published(state)
            return
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=self.current(state), version=state.version)
        )


def carried(state: DocumentState, key: tuple[str, int, int], move: Callable[[], list[Any]]) -> list[Any]:
    """What `move()` makes for `key` (kind, from version, to version), made once: the document keeps one
    entry per kind, the latest asked for (publications and hovers ask again and again for the same one)."""
    if key not in state.carried:
        state.carried = {**{k: v for k, v in state.carried.items() if k[0] != key[0]}, key: move()}
    return state.carried[key]


def stale(state: DocumentState, snapshot: Snapshot):
    return lambda: state.closed or state.version != snapshot.version


def moved_diagnostics(diagnostics: list[Any], base: str, text: str) -> list[Any]:
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


def moved_layouts(layouts: list[Any], base: str, text: str) -> list[Any]:
    from argus.skills.rebase import move_span, untouched_lines

    where = untouched_lines(base, text)
    moved = []
    for layout in layouts:
        span = move_span(layout.span, where)
        if span is not None:
            moved.append(layout.moved(span))
    return moved
