"""`AnalysisHost`: (uri, version, text) in, an immutable `Analysis` out. One per process that analyzes (the
language server has one); it owns what snapshots share across versions, such as the verifier's cache."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from argus.analysis.snapshot import Analysis
from argus.dsl.lines import split_lines

if TYPE_CHECKING:
    from argus.dsl.check import CheckResult
    from argus.verify.cache import VerifyCache


class AnalysisHost:
    def __init__(self) -> None:
        self._verify_cache: VerifyCache | None = None

    def analyze(self, uri: str, version: int, text: str, max_chars: int | None = None) -> Analysis:
        """The snapshot of `text` as version `version` of `uri`. A text over `max_chars` is not checked: it gets
        AR010 instead (checking it would hold a thread for minutes)."""
        return Analysis(uri, version, text, check_text(text, max_chars), split_lines(text), self)

    @property
    def verify_cache(self) -> VerifyCache:
        """The verifier's per-kernel cache every snapshot of this host shares (an unchanged kernel of a new
        version is not verified again). Made on first use, by the thread that verifies: it imports the
        verifier, and z3 with it."""
        if self._verify_cache is None:
            from argus.verify.cache import VerifyCache

            self._verify_cache = VerifyCache()
        return self._verify_cache


def analyze_file(path: str | Path, text: str) -> Analysis:
    """The snapshot of a file's text as a command-line tool sees it (`argus check`, `argus gate`): version 0, a
    host of its own, its verifier cache made on first use."""
    return AnalysisHost().analyze(Path(path).resolve().as_uri(), 0, text)


def check_text(text: str, max_chars: int | None = None) -> CheckResult:
    """argus.dsl.check.check_source, imported on first use (a server loads the language core in its checking
    thread, after the initialize answer); a text over `max_chars` gets AR010 instead."""
    from argus.dsl.check import check_source

    if max_chars is None or len(text) <= max_chars:
        return check_source(text)
    from argus.dsl.diagnostics import make
    from argus.dsl.spans import Span

    empty = check_source("")
    size = f"{len(text) / 1024 / 1024:.1f} MB" if len(text) >= 1024 * 1024 else f"{len(text) / 1024:.0f} KiB"
    message = (
        f"not checked in the editor: the file is {size}, over argus.check.maxFileKiB ({max_chars // 1024} KiB); "
        "`argus check` checks it"
    )
    empty.diagnostics.append(make("AR010", Span(0, 0, 0, 0), message))
    return empty


def too_large(check: CheckResult) -> bool:
    """Whether the check is AR010's stand-in for a file too large to check."""
    return any(d.code == "AR010" for d in check.diagnostics)
