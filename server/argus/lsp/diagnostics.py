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
import logging
import time
from typing import TYPE_CHECKING

from lsprotocol import types

from argus.analysis.host import AnalysisHost, too_large
from argus.lsp import convert
from argus.lsp.convert import Positions
from argus.lsp.documents import DocumentState, Snapshot, SourceResult
from argus.lsp.state import GATE, INVARIANTS, STAGES, TYPES, load_verifier, render_layouts

if TYPE_CHECKING:
    from argus.analysis.quick_fixes import QuickFix
    from argus.lsp.state import ServerState
    from argus.verify.api import VerifyResult

__all__ = ["GATE", "INVARIANTS", "STAGES", "TYPES", "DiagnosticsScheduler", "load_verifier"]

logger = logging.getLogger(__name__)


def warm_up_checker() -> None:
    import argus.analysis.quick_fixes
    import argus.analysis.tuning_skills
    import argus.dsl.check  # noqa: F401


class DiagnosticsScheduler:
    """Checks and verifies the documents of `server` (the server's state) as they change, and publishes
    through it. Made without one (`server=None`), it only re-verifies fixes (`fix_removes`)."""

    def __init__(self, server: ServerState | None):
        self.server = server
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
        self.server.client.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

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
            self.server.verify_pool.submit(load_verifier)

    # ---- checking -----------------------------------------------------------------------------------
    def _schedule_check(self, state: DocumentState, urgent: bool) -> None:
        state.urgent = state.urgent or urgent
        if state.check_task is not None and not state.check_task.done():
            return  # the running check compares versions when it ends and checks the latest text again
        state.check_task = asyncio.create_task(self._check_latest(state))

    async def _check_latest(self, state: DocumentState) -> None:
        loop = asyncio.get_running_loop()
        server = self.server
        while True:
            version, text = state.version, state.text
            max_chars = server.settings_for(state.uri).max_file_kib * 1024
            try:
                analysis = await loop.run_in_executor(
                    server.check_pool, self.host.analyze, state.uri, version, text, max_chars
                )
            except Exception:
                logger.exception("check of %s (version %s) failed", state.uri, version)
                return
            if state.closed:
                return
            if version != state.version:
                continue  # superseded while it ran: check the latest text instead of publishing this one
            check = analysis.check
            positions = Positions(analysis.lines, server.client.workspace.position_codec)
            snapshot = Snapshot(analysis, positions)
            state.snapshot = snapshot
            diagnostics = [convert.diagnostic(d, state.uri, positions) for d in check.diagnostics]
            state.results[TYPES] = SourceResult(version, diagnostics, list(check.diagnostics))
            if too_large(check):  # nothing to verify, and no earlier verdicts to carry
                state.results.pop(INVARIANTS, None)
                server.publish(state)
                return
            server.publish(state)
            urgent, state.urgent = state.urgent, False
            quiet = time.monotonic() - state.changed_at
            delay = 0.0 if urgent else max(0.0, server.settings_for(state.uri).debounce_ms / 1000 - quiet)
            self._schedule_verify(state, snapshot, delay)
            return

    # ---- verifying ----------------------------------------------------------------------------------
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
            return  # failed, or superseded: a newer version has its own verification coming
        self._publish_invariants(state, snapshot, declared)
        # the verifier is loaded now (the declared part ran it on the solver thread): no import on the event loop
        from argus.verify.api import has_tune_values, merge_results

        if has_tune_values(snapshot.check):
            tune = await self._run_verifier(state, snapshot, budget, "tune")
            if tune is None or state.closed or state.version != snapshot.version:
                return
            self._publish_invariants(state, snapshot, merge_results(declared, tune))
        layouts = list(declared.layouts)
        await self.server.solver.verify(state.uri, lambda: render_layouts(layouts), stale(state, snapshot))

    async def _run_verifier(
        self, state: DocumentState, snapshot: Snapshot, budget: dict, part: str
    ) -> VerifyResult | None:
        """One part of the verification ("declared" or "tune") on the solver thread; None when it failed (logged)
        or when the version was superseded before or while it ran. `budget`: verify_check's timeout_ms and
        rlimit."""

        def run() -> VerifyResult:
            return snapshot.analysis.verdicts(part, budget["timeout_ms"], budget["rlimit"])

        try:
            return await self.server.solver.verify(state.uri, run, stale(state, snapshot))
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("verification (%s) of %s (version %s) failed", part, state.uri, snapshot.version)
            return None

    def _publish_invariants(self, state: DocumentState, snapshot: Snapshot, result: VerifyResult) -> None:
        diagnostics = [convert.diagnostic(d, state.uri, snapshot.positions) for d in result.diagnostics]
        state.results[INVARIANTS] = SourceResult(snapshot.version, diagnostics, list(result.diagnostics))
        state.layouts = (snapshot.version, list(result.layouts))
        self.server.publish(state)

    def fix_removes(self, text: str, fix: QuickFix, timeout_ms: int, rlimit: int | None = None) -> bool:
        """Whether the verifier, run on the text with the fix applied, no longer reports the fixed diagnostic
        (argus.analysis.verdicts.fix_removes, sharing the snapshots' cache). Runs on the solver thread."""
        from argus.analysis.verdicts import fix_removes

        return fix_removes(text, fix, timeout_ms, rlimit, cache=self.host.verify_cache)


def stale(state: DocumentState, snapshot: Snapshot):
    return lambda: state.closed or state.version != snapshot.version
