"""Data-flow invariants: layout algebra, tags and z3 proofs with counterexamples (docs/verification.md)."""

from argus.verify.api import VerifyResult, has_tune_values, merge_results, verify_check
from argus.verify.cache import VerifyCache
from argus.verify.kernel import ValueLayout, VerifyStats
from argus.verify.solve import DEFAULT_RLIMIT, DEFAULT_TIMEOUT_MS, WALL_CAP_FACTOR

__all__ = [
    "DEFAULT_RLIMIT",
    "DEFAULT_TIMEOUT_MS",
    "WALL_CAP_FACTOR",
    "ValueLayout",
    "VerifyCache",
    "VerifyResult",
    "VerifyStats",
    "has_tune_values",
    "merge_results",
    "verify_check",
]
