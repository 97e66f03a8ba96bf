"""The verifier's verdicts on a snapshot, and whether it agrees with a fix. Both run the verifier (z3): a server
calls them on its one solver thread, whose checkpoints (argus.dsl.checkpoint) may stop them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from argus.analysis.quick_fixes import QuickFix
    from argus.dsl.check import CheckResult
    from argus.verify.api import VerifyResult
    from argus.verify.cache import VerifyCache


def verdicts(check: CheckResult, part: str, timeout_ms: int, rlimit: int, cache: VerifyCache | None) -> VerifyResult:
    """argus.verify.api.verify_check of one part ("declared", "tune" or "all") of the check."""
    from argus.verify.api import verify_check

    return verify_check(check, timeout_ms=timeout_ms, rlimit=rlimit, cache=cache, part=part)


def fix_removes(
    text: str, fix: QuickFix, timeout_ms: int, rlimit: int | None = None, cache: VerifyCache | None = None
) -> bool:
    """Whether the verifier, run on the text with the fix applied, no longer reports the fixed diagnostic (same
    code on the same line) and the text still checks."""
    from argus.dsl.check import check_source
    from argus.skills.text import apply_edits
    from argus.verify.api import verify_check
    from argus.verify.solve import DEFAULT_RLIMIT

    edited = check_source(apply_edits(text, fix.edits))
    if edited.has_errors:
        return False
    result = verify_check(
        edited, timeout_ms=timeout_ms, rlimit=DEFAULT_RLIMIT if rlimit is None else rlimit, cache=cache
    )
    target = fix.diagnostic
    return not any(d.code == target.code and d.range.start.line == target.range.start.line for d in result.diagnostics)
