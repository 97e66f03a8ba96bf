"""Deciding obligations with z3: proved, refuted with a witness, or unknown with the reason."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import z3

from argus.verify.facts import DataFacts
from argus.verify.model import Loop, Obligation
from argus.verify.terms import applications, free_names
from argus.verify.witness import Access as AccessRecord
from argus.verify.witness import Counterexample

SHRINK_BOUNDS = (4, 16, 64, 256, 1024, 4096)


def out_of_time_reason(timeout_ms: int) -> str:
    """Why an obligation is undecided when z3 ran out of time: the budget, not the kernel, and how to raise it
    (the CLI's flag and the editor's setting)."""
    return (
        f"the verifier ran out of its {timeout_ms} ms budget before deciding; raise --timeout-ms, "
        "or argus.verify.timeoutMs in the editor"
    )


@dataclass(slots=True)
class Verdict:
    status: str  # proved | refuted | unknown | suppressed (a consequence of a failure reported elsewhere)
    reason: str = ""
    witness: Counterexample | None = None
    milliseconds: float = 0.0
    out_of_time: bool = False  # unknown only because z3's budget ran out: says nothing about the kernel


@dataclass(slots=True)
class Prover:
    sizes: dict[str, z3.ArithRef]
    base: list[z3.BoolRef]  # sizes positive, requires, program ranges of the first instance
    facts: DataFacts
    gaps: set[str]
    carried: dict[str, bool]
    program_names: list[str]
    timeout_ms: int = 1000
    data_names: list[str] = field(default_factory=list)
    constants: dict[str, int | float] = field(default_factory=dict)

    def decide(self, obligation: Obligation) -> Verdict:
        started = time.perf_counter()
        try:
            verdict = self._decide(obligation)
        except z3.Z3Exception as error:
            verdict = Verdict("unknown", f"the solver failed: {error}")
        verdict.milliseconds = (time.perf_counter() - started) * 1000
        return verdict

    def _decide(self, ob: Obligation) -> Verdict:
        goal = z3.simplify(ob.goal)
        if z3.is_true(goal):
            return Verdict("proved")
        solver = z3.Solver()
        solver.set("timeout", max(1, int(self.timeout_ms)))
        claim = z3.And(*ob.assumptions, z3.Not(goal))
        solver.add(*self.base)
        solver.add(claim)
        solver.add(*self.facts.instances())
        answer = solver.check()
        if answer == z3.unsat:
            return Verdict("proved")
        if answer == z3.unknown:
            reason = solver.reason_unknown()
            if reason in ("timeout", "canceled"):
                return Verdict("unknown", out_of_time_reason(self.timeout_ms), out_of_time=True)
            if "nonlinear" in reason or "incomplete" in reason:
                reason = f"a non-linear term ({reason})"
            return Verdict("unknown", reason)
        names = free_names(claim)
        if any(n.startswith("?missing tag") for n in names):
            return Verdict("suppressed", "it reads a tag that is not set, which is reported on its own (AR308)")
        gaps = sorted(n for n in names if n in self.gaps)
        if gaps:
            what = ", ".join(g.split("#")[0].lstrip("?") for g in gaps[:3])
            return Verdict("unknown", f"it depends on values the verifier does not model ({what})")
        loose = sorted(n for n in names if n in self.carried and not self.carried[n])
        if loose:
            what = ", ".join(n.split("#")[0].lstrip("?") for n in loose[:3])
            return Verdict("unknown", f"it depends on loop-carried {what}, which no `invariant` describes")
        model = self.small_model(solver)
        return Verdict("refuted", witness=self.witness(ob, model, claim))

    def small_model(self, solver: z3.Solver) -> z3.ModelRef:
        """A model with small sizes when there is one: counterexamples should be runnable on a laptop."""
        model = solver.model()
        if not self.sizes:
            return model
        for bound in SHRINK_BOUNDS:
            solver.push()
            solver.add(*[s <= bound for s in self.sizes.values()])
            solver.set("timeout", max(1, int(self.timeout_ms) // 4))
            if solver.check() == z3.sat:
                model = solver.model()
                solver.pop()
                break
            solver.pop()
        return model

    def witness(self, ob: Obligation, model: z3.ModelRef, claim: z3.BoolRef) -> Counterexample:
        def value(term: z3.ExprRef):
            result = model.eval(term, model_completion=True)
            if z3.is_int_value(result):
                return result.as_long()
            if z3.is_true(result) or z3.is_false(result):
                return z3.is_true(result)
            return str(result)

        data = {}
        for name in self.data_names:
            for app in applications(claim, name):
                args = ", ".join(str(value(a)) for a in app.children())
                data[f"{name}[{args}]"] = value(app)
        second = None
        if ob.second is not None:
            second = AccessRecord(
                line=ob.second.span.line,
                character=ob.second.span.col,
                what=ob.second.what,
                program=self.programs(ob.second.program, value),
                iteration=self.iterations(ob.second.loops, value),
                element={name: value(c) for name, c in ob.second.coords},
            )
        return Counterexample(
            kind=ob.kind,
            line=ob.span.line,
            character=ob.span.col,
            program=self.programs(ob.program, value),
            iteration=self.iterations(ob.loops, value),
            element={name: value(c) for name, c in ob.coords},
            sizes={name: value(s) for name, s in self.sizes.items()},
            values={name: value(t) for name, t in ob.shown},
            data=data,
            second=second,
        )

    def programs(self, program: list[z3.ArithRef], value) -> dict[str, int]:
        return {name: value(p) for name, p in zip(self.program_names, program, strict=False)}

    @staticmethod
    def iterations(loops: list[Loop], value) -> dict[str, int]:
        shown: dict[str, int] = {}
        for loop in loops:
            iv, start, step = value(loop.iv), value(loop.start), value(loop.step)
            shown[loop.name] = iv
            if isinstance(iv, int) and isinstance(start, int) and isinstance(step, int) and step:
                shown[f"{loop.name} iteration"] = (iv - start) // step
        return shown
