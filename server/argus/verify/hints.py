"""Hints for a failed or undecided obligation: a `requires` condition that would settle it."""

from __future__ import annotations

import z3

from argus.verify.model import Obligation
from argus.verify.terms import free_names

MAX_CANDIDATES = 12


def hint_for(prover, ob: Obligation, verdict) -> str:
    """What the diagnostic of an obligation that was not proved suggests: a `requires` that would prove it, else
    the obligation's own hint.

    Nothing for an obligation z3 ran out of its budget (or of the wall-clock safety net) on: a narrower claim is
    easier, so some condition always "proves" it within the budget, and the hint would blame a kernel that may
    well be right (`requires M <= BK` on a correct matmul at 1 ms). The honest answer there is a larger budget,
    which the verdict's reason says."""
    if verdict.out_of_time:
        return ""
    hint = ""
    if verdict.status in ("refuted", "unknown") and ob.kind in ("in_bounds", "coverage"):
        hint = suggest_requires(prover, ob)
    return hint or ob.hint


def suggest_requires(prover, ob: Obligation) -> str:
    """The first of `S % C == 0` and `S <= C` (S a size the claim mentions, C a tile constant) that proves it."""
    mentioned = free_names(z3.And(*ob.assumptions, ob.goal))
    sizes = [(name, term) for name, term in prover.sizes.items() if name in mentioned]
    candidates = []
    for name, term in sizes:
        for constant, value in prover.constants.items():
            if isinstance(value, int) and value > 1:
                candidates.append((f"{name} % {constant} == 0", term % value == 0))
                candidates.append((f"{name} <= {constant}", term <= value))
    if not candidates:
        return ""
    claim = prover.here(z3.And(*ob.assumptions, z3.Not(ob.goal)))
    for text, condition in candidates[:MAX_CANDIDATES]:
        solver = prover.solver()
        solver.add(claim, prover.here(condition))
        answer, _, _ = prover.check(solver, share=4)  # a quarter of the budget each, like the shrinking queries
        if answer == z3.unsat:
            return f"`requires {text}` would prove it"
    return ""
