"""What a gate result says about a candidate, as feedback a planner can act on: the compile error, the first
mismatching element, or why there is no timing. Also the rewards the trajectory log records."""

from __future__ import annotations

from typing import Any

from argus.agent.plan import Feedback
from argus.gate.result import GateResult, Status, kernel_ms

FAILURE_REWARD = -1.0  # a proposal that broke something: refused, did not parse, check, verify, compile or match
NEUTRAL_REWARD = 0.0  # correct but not kept: slower, or no timing to compare
FAILURE_STAGES = ("parse", "apply", "check", "verify", "compile", "correct")


def reward_of(feedback: Feedback | None, speedup: float | None) -> float:
    if feedback is None:
        return speedup if speedup is not None else 1.0
    if feedback.stage in FAILURE_STAGES or feedback.data.get("status") == "error":
        return FAILURE_REWARD
    return NEUTRAL_REWARD


def correct_and_compiled(result: GateResult) -> bool:
    return result.compile.status == Status.passed and result.correct.status == Status.passed and not result.errors


def _errors(result: GateResult) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json", exclude_defaults=True) for e in result.errors]


def gate_failure(result: GateResult) -> Feedback | None:
    """Feedback for a candidate the gate broke on (compile, correct, or a profile that crashed); None when
    it compiled and was correct and the profile either passed or did not run."""
    compile_, correct, profile = result.compile, result.correct, result.profile
    if compile_.status != Status.passed:
        first = result.errors[0].message if result.errors else ""
        message = compile_.message or first or f"compile {compile_.status.value}"
        return Feedback("compile", message, {"status": compile_.status.value, "errors": _errors(result)})
    if correct.status != Status.passed:
        facts = correct.facts
        data: dict[str, Any] = {"status": correct.status.value, "errors": _errors(result)}
        if facts is not None:
            data["first_mismatch"] = None if facts.first_mismatch is None else facts.first_mismatch.model_dump()
            data["max_abs_error"], data["max_rel_error"] = facts.max_abs_error, facts.max_rel_error
            data["tolerance"], data["sizes"] = facts.tolerance, facts.sizes
        message = correct.message or (result.errors[0].message if result.errors else "the correct stage did not run")
        return Feedback("correct", message, data)
    if profile.status in (Status.failed, Status.error) or result.errors:
        message = profile.message or (result.errors[0].message if result.errors else "profile failed")
        return Feedback("profile", message, {"status": Status.error.value, "errors": _errors(result)})
    return None


def no_timing(result: GateResult, current_ms: float | None) -> Feedback:
    """A correct candidate that cannot be compared: no profile ran (a CPU), or the current state has none."""
    if kernel_ms(result) is None:
        why = result.profile.message or "the profile stage did not run"
        if result.device == "cpu" and "GPU" not in why:
            why += ", and profiling needs a GPU"
        why = f"correct, but not timed ({why}): it cannot be kept as faster"
        return Feedback("profile", why, {"status": result.profile.status.value, "device": result.device})
    data = {"ms": kernel_ms(result), "current_ms": current_ms}
    return Feedback("profile", "the current state has no timing to compare with", data)
