"""Diagnostics: checked on every edit, verified after a quiet moment, merged per document, published with the
version they were computed for.

Syntax and types are cheap (a few ms for a kernel), so they run as soon as the checking thread is free:
edits that arrive while a check runs are coalesced into one more check of the latest text. The verifier is
expensive, so it waits until `debounceMs` have passed since the latest edit with no newer one (none after open
and save): the time the check of that edit took counts as part of the wait. It runs in two parts: the kernel
as written (its declared tile constants) first, published as soon as it is done; then, when a kernel has
`tune` lists, their other values, merged in and published again for the same version (so a version with tune
lists gets three publications: types, the declared verdicts, all verdicts). Each stage's result carries its
version; a result for a superseded version is never published, and a publication merges only the stages
computed for the document's current version.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from argus.lsp import convert
from argus.lsp.documents import DocumentState, Snapshot, SourceResult

if TYPE_CHECKING:
    from argus.lsp.server import ArgusServer

logger = logging.getLogger(__name__)

TYPES, INVARIANTS, GATE = "types", "invariants", "gate"
STAGES = (TYPES, INVARIANTS, GATE)


def check_text(text: str) -> Any:
    """argus.dsl.check.check_source, imported in the checking thread (the first call pays for the import,
    which warm_up does right after the initialize answer)."""
    from argus.dsl.check import check_source

    return check_source(text)


def warm_up_checker() -> None:
    import argus.dsl.check
    import argus.lsp.quick_fixes
    import argus.lsp.tuning_skills  # noqa: F401


def load_verifier() -> Any:
    """`argus.verify`, or None while that layer is not installed."""
    try:
        import argus.verify as verify
    except ImportError as missing:
        if missing.name is None or not missing.name.startswith("argus.verify"):
            raise
        return None
    return verify if hasattr(verify, "verify_check") else None


class DiagnosticsScheduler:
    def __init__(self, server: ArgusServer):
        self.server = server
        self._verifier: Any = None
        self._verifier_loaded = False
        self._verify_cache: Any = None

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
        """Re-verify every open document under the new settings (time budget, verifier on or off)."""
        for state in self.server.documents:
            if (snapshot := state.current_snapshot()) is not None:
                state.results.pop(INVARIANTS, None)
                self._schedule_verify(state, snapshot, delay=0.0)

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
                await asyncio.wait_for(asyncio.shield(task), timeout=2.0)
        return state.snapshot

    def layouts_for(self, snapshot: Snapshot) -> list[Any]:
        state = self.server.documents.get(snapshot.uri)
        if state is None or state.layouts[0] != snapshot.version:
            return []
        return state.layouts[1]

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
            try:
                check = await loop.run_in_executor(self.server.check_pool, check_text, text)
            except Exception:
                logger.exception("check of %s (version %s) failed", state.uri, version)
                return
            if state.closed:
                return
            if version != state.version:
                continue  # superseded while it ran: check the latest text instead of publishing this one
            positions = self.server.positions(text)
            snapshot = Snapshot(state.uri, version, text, check, positions)
            state.snapshot = snapshot
            diagnostics = [convert.diagnostic(d, state.uri, positions) for d in check.diagnostics]
            state.results[TYPES] = SourceResult(version, diagnostics, list(check.diagnostics))
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
            if self._verifier is not None and hasattr(self._verifier, "VerifyCache"):
                self._verify_cache = self._verifier.VerifyCache()
        return self._verifier

    def _schedule_verify(self, state: DocumentState, snapshot: Snapshot, delay: float) -> None:
        if state.verify_task is not None and not state.verify_task.done():
            state.verify_task.cancel()
        settings = self.server.settings_for(state.uri)
        if not settings.verify_enabled or snapshot.check.module is None:
            return
        state.verify_task = asyncio.create_task(self._verify(state, snapshot, delay, settings.verify_timeout_ms))

    async def _verify(self, state: DocumentState, snapshot: Snapshot, delay: float, timeout_ms: int) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if state.closed or state.version != snapshot.version:
            return
        # the kernel as written first: its verdicts are published without waiting for the tune values'
        declared = await self._run_verifier(state, snapshot, timeout_ms, "declared")
        if declared is None or state.closed or state.version != snapshot.version:
            return  # no verifier, or superseded: a newer version has its own verification coming
        self._publish_invariants(state, snapshot, declared)
        verifier = self.verifier()
        if not hasattr(verifier, "has_tune_values") or not verifier.has_tune_values(snapshot.check):
            return
        tune = await self._run_verifier(state, snapshot, timeout_ms, "tune")
        if tune is None or state.closed or state.version != snapshot.version:
            return
        self._publish_invariants(state, snapshot, verifier.merge_results(declared, tune))

    async def _run_verifier(self, state: DocumentState, snapshot: Snapshot, timeout_ms: int, part: str) -> Any:
        """One part of the verification ("declared" or "tune") in the verifying thread; None when there is no
        verifier, when it failed (logged), or when the version was superseded before the thread got to it."""
        loop = asyncio.get_running_loop()

        def run() -> Any:
            if state.closed or state.version != snapshot.version:
                return None  # superseded while queued: do not spend the thread on it
            verifier = self.verifier()  # imported in the verifying thread, never on the event loop
            if verifier is None:
                return None
            return verifier.verify_check(snapshot.check, timeout_ms=timeout_ms, cache=self._verify_cache, part=part)

        try:
            return await loop.run_in_executor(self.server.verify_pool, run)
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

    def fix_removes(self, text: str, fix: Any, timeout_ms: int) -> bool:
        """Whether the verifier, run on the text with the fix applied, no longer reports the fixed diagnostic
        (same code on the same line) and the text still checks. Runs in the verifying thread."""
        from argus.dsl.check import check_source
        from argus.lsp.tuning_skills import apply_edits

        verifier = self.verifier()
        if verifier is None:
            return False
        edited = check_source(apply_edits(text, fix.edits))
        if edited.has_errors:
            return False
        result = verifier.verify_check(edited, timeout_ms=timeout_ms, cache=self._verify_cache)
        target = fix.diagnostic
        return not any(
            d.code == target.code and d.range.start.line == target.range.start.line for d in result.diagnostics
        )

    # ---- publishing ---------------------------------------------------------------------------------
    def publish(self, state: DocumentState) -> None:
        if state.closed:
            return
        merged: list[types.Diagnostic] = []
        for stage in STAGES:
            result = state.results.get(stage)
            if result is not None and result.version == state.version:
                merged.extend(result.diagnostics)
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=state.uri, diagnostics=merged, version=state.version)
        )
