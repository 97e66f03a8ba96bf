"""Deciding obligations with z3: proved, refuted with a witness, or unknown with the reason.

What decides a verdict is z3's deterministic resource limit (`rlimit`), never the wall clock: an obligation
gets `rlimit` units of z3's work counter (DEFAULT_RLIMIT unless the caller says otherwise), which z3 counts the
same way on an idle and on a loaded machine. The wall clock is only a safety net for a query that z3 works on
so slowly that its units would last for minutes (wall_cap_ms); reaching it is reported as such (its reason
says so, and the report is not cached), distinct from the budget running out.

Queries are decided in a z3 context of the verifier's own, into which the evaluator's terms are translated:
one for a kernel as written, one shared by the tune variants of a kernel (api.verify_tunes). z3's work on a
query depends on the order in which its terms were created, so in the shared main context the units one
obligation took depended on everything verified before it in the process (an obligation of
skills/experts/gemm.argus took 333,361 units verified alone and 1,558,477 after the other 64 files of
bench/verify_rlimit.py). In a context of its own it depends on the kernel only: the same verdict in the CLI,
the editor and the cache, whatever was verified before.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import pairwise

import z3
from z3 import z3core

from argus.verify.divisions import abstracted, defined, has_symbolic_division
from argus.verify.facts import DataFacts
from argus.verify.model import Loop, Obligation
from argus.verify.terms import COORD_NAMES, applications, applies_any, free_names
from argus.verify.visible import preferences
from argus.verify.witness import Access as AccessRecord
from argus.verify.witness import Counterexample

SHRINK_BOUNDS = (4, 16, 64, 256, 1024, 4096)

# z3 resource units per obligation. bench/verify_rlimit.py over every kernel of examples/, skills/experts/
# and tests/verify/corpus/ (docs/verification.md, "Budget"): the costliest obligation any of them proves
# takes 493,977 units, 1/10 of this; at the slowest rate measured for large queries (842 units/ms on the
# 2-core development machine) the budget of a query z3 cannot decide lasts about 6 s.
DEFAULT_RLIMIT = 5_000_000
HOLE_RETRIES = 3  # other sizes tried when a refuted coverage guess's element is written after all
MAX_RLIMIT = 2**32 - 1  # z3's parameter is an unsigned 32-bit number
MAX_PINNED = 64  # the most cut points of a partition a coverage hole's check fixes (Prover.pinned_partitions)
DEFAULT_TIMEOUT_MS = 1000
WALL_CAP_FACTOR = 10  # the safety net is at least this many times timeout_ms ...
WALL_UNITS_PER_MS = 500  # ... and at least the time the budget lasts at this rate (slowest measured: 842)


def wall_cap_ms(timeout_ms: int, rlimit: int = DEFAULT_RLIMIT) -> int:
    """The wall-clock safety net of one query: WALL_CAP_FACTOR x timeout_ms, and never less than the time its
    budget lasts at WALL_UNITS_PER_MS, so that neither a small timeout_ms nor a larger rlimit lets the clock
    decide what the budget would have (10,000 ms for the defaults)."""
    return max(WALL_CAP_FACTOR * max(1, int(timeout_ms)), min(int(rlimit), MAX_RLIMIT) // WALL_UNITS_PER_MS, 1)


def out_of_budget_reason(rlimit: int) -> str:
    """Why an obligation is undecided when z3 used up its resource budget: the budget, not the kernel, and how
    to raise it (the CLI's flag and the editor's setting). The same on any machine, loaded or not."""
    return (
        f"the verifier ran out of its budget of {rlimit:,} z3 resource units before deciding; raise --rlimit, "
        "or argus.verify.rlimit in the editor"
    )


def wall_cap_reason(timeout_ms: int, rlimit: int = DEFAULT_RLIMIT) -> str:
    """Why an obligation is undecided when the wall-clock safety net stopped z3 before its budget ran out: a
    loaded machine or a query z3 works on very slowly, so a rerun may decide it."""
    return (
        f"z3 hit the wall-clock safety net of {wall_cap_ms(timeout_ms, rlimit):,} ms before deciding, with "
        "resource units of its budget left (a heavily loaded machine or a query z3 works on very slowly: a rerun "
        f"may decide it); raise --timeout-ms (the net is at least {WALL_CAP_FACTOR} x it), or "
        "argus.verify.timeoutMs in the editor"
    )


def out_of_time_reason(timeout_ms: int, rlimit: int = DEFAULT_RLIMIT) -> str:
    """The reason of a verdict that reached the wall-clock safety net (wall_cap_reason; the older name)."""
    return wall_cap_reason(timeout_ms, rlimit)


def missed_reason(witness: Counterexample, writer: dict[str, int]) -> str:
    """Why a coverage claim whose constructed writer failed is undecided: the element it names is written."""
    where = ", ".join(f"{k} = {v}" for k, v in witness.values.items())
    sizes = ", ".join(f"{k}={v}" for k, v in witness.sizes.items())
    by = ", ".join(f"{k}={v}" for k, v in writer.items())
    return (
        f"the verifier could not construct the writer of every element: its guess misses {where} at {sizes}, "
        f"which is written ({by}); the store's index is one it cannot invert"
    )


def units(solver: z3.Solver) -> int:
    """z3's resource counter ("rlimit count"), which counts for the whole context of `solver`, not this solver
    alone. Read through the C API from the end of the list, where z3 puts it (4x cheaper than Statistics)."""
    ctx = solver.ctx.ref()
    stats = z3core.Z3_solver_get_statistics(ctx, solver.solver)
    z3core.Z3_stats_inc_ref(ctx, stats)
    try:
        for k in range(z3core.Z3_stats_size(ctx, stats) - 1, -1, -1):
            if z3core.Z3_stats_get_key(ctx, stats, k) == "rlimit count":
                return z3core.Z3_stats_get_uint_value(ctx, stats, k)
        return 0
    finally:
        z3core.Z3_stats_dec_ref(ctx, stats)


@dataclass(slots=True)
class Verdict:
    status: str  # proved | refuted | unknown | suppressed (a consequence of a failure reported elsewhere)
    reason: str = ""
    witness: Counterexample | None = None
    milliseconds: float = 0.0
    exhausted: str = ""  # unknown only because a limit ran out: "rlimit" (the budget) or "wall" (the safety net)
    units: int = 0  # z3 resource units the deciding query used
    confirmed: bool = False  # refuted coverage: no writer at all at the witness's sizes (an error, not a warning)

    @property
    def out_of_time(self) -> bool:
        """Undecided because a limit ran out (budget or safety net): says nothing about the kernel."""
        return bool(self.exhausted)


@dataclass(slots=True)
class Prover:
    sizes: dict[str, z3.ArithRef]
    base: list[z3.BoolRef]  # sizes positive, requires, program ranges of the first instance
    facts: DataFacts
    gaps: set[str]
    carried: dict[str, bool]
    program_names: list[str]
    timeout_ms: int = DEFAULT_TIMEOUT_MS  # only the wall-clock safety net's least unit (wall_cap_ms)
    data_names: list[str] = field(default_factory=list)
    constants: dict[str, int | float] = field(default_factory=dict)
    rlimit: int = DEFAULT_RLIMIT  # z3 resource units per obligation: what decides "out of budget"
    context: z3.Context = field(default_factory=z3.Context)  # where queries are decided (the module docstring)
    _assumed: z3.BoolRef | None = None  # `base` and the data facts as one term of `context`, built once
    _facts_of: list[z3.BoolRef] | None = None  # the list of data-fact instances `_assumed` holds
    _limits: dict[int, z3.ParamsRef] = field(default_factory=dict)  # per share of the budget

    def here(self, term: z3.ExprRef) -> z3.ExprRef:
        """A term of the evaluator's context, in this prover's."""
        return term.translate(self.context)

    def assumed(self) -> z3.BoolRef:
        """`base` and the data facts as one term of this prover's context."""
        instances = self.facts.instances()
        if self._assumed is None or instances is not self._facts_of:
            # one assertion instead of one per fact: z3 flattens the conjunction, and a query pays its
            # per-assertion cost once (moe_gemm's queries each asserted some 50 partition facts)
            self._assumed = self.here(z3.And(*self.base, *instances))
            self._facts_of = instances
        return self._assumed

    def solver(self) -> z3.Solver:
        """A solver in this prover's context holding `base` and the data facts."""
        solver = z3.Solver(ctx=self.context)
        solver.add(self.assumed())
        return solver

    def check(self, solver: z3.Solver, share: int = 1) -> tuple[z3.CheckSatResult, int, str]:
        """`solver.check()` within 1/share of the budget: (answer, units used, "" or the limit that stopped it:
        "rlimit" when the units ran out, "wall" when the safety net did first)."""
        budget = max(1, min(MAX_RLIMIT, int(self.rlimit) // share))
        limits = self._limits.get(share)
        if limits is None:
            limits = self._limits[share] = z3.ParamsRef(ctx=self.context)
            limits.set("rlimit", budget)
            limits.set("timeout", max(1, wall_cap_ms(self.timeout_ms, self.rlimit) // share))
        z3core.Z3_solver_set_params(self.context.ref(), solver.solver, limits.params)
        before = units(solver)
        answer = solver.check()
        used = units(solver) - before
        if answer != z3.unknown:
            return answer, used, ""
        reason = solver.reason_unknown()
        if used >= budget:
            return answer, used, "rlimit"
        if reason in ("timeout", "canceled") or "resource limit" in reason:
            return answer, used, "wall"  # z3 names its own stop either way; the units say which limit it was
        return answer, used, ""

    def decide(self, obligation: Obligation) -> Verdict:
        started = time.perf_counter()
        try:
            verdict = self._decide(obligation)
        except z3.Z3Exception as error:
            verdict = Verdict("unknown", f"the solver failed: {error}")
        verdict.milliseconds = (time.perf_counter() - started) * 1000
        return verdict

    def _decide(self, ob: Obligation) -> Verdict:
        goal = z3.simplify(self.here(ob.goal))
        if z3.is_true(goal):
            return Verdict("proved")
        claim = z3.And(*[self.here(a) for a in ob.assumptions], z3.Not(goal))
        sufficient = getattr(ob, "sufficient", None)  # contributions.DoubleCountObligation: an easier claim
        if sufficient is not None:
            easier = self.solver()
            easier.add(z3.Not(self.here(sufficient)))
            answer, used, _ = self.check(easier, share=2)
            if answer == z3.unsat:
                return Verdict("proved", units=used)
        divides = getattr(ob, "divides", False)  # races.PairObligation: an index divides by a tile count
        linear = self.proved_linear(claim) if divides else Verdict("unknown")
        if linear.status == "proved":
            return linear
        if getattr(ob, "defined_divisions", False):  # coverage.Guess through a divisor it could not show positive
            linear = self.proved_defined(claim)
            if linear.status == "proved":
                return linear
        solver = self.solver()
        solver.add(claim)
        if self.facts.permutations or self.facts.ranges or self.facts.partitions:
            solver.add(*[self.here(f) for f in self.facts.query_instances([ob.goal, *ob.assumptions])])
        answer, used, exhausted = self.check(solver)
        used += linear.units
        if exhausted == "rlimit" and not divides and has_symbolic_division(claim):
            linear = self.proved_linear(claim)  # out of budget anyway: the linear form may still settle it
            used += linear.units
            if linear.status == "proved":
                return Verdict("proved", units=used)
        if answer == z3.unsat:
            return Verdict("proved", units=used)
        if answer == z3.unknown:
            if exhausted == "rlimit":
                return Verdict("unknown", out_of_budget_reason(self.rlimit), exhausted="rlimit", units=used)
            if exhausted == "wall":
                return Verdict("unknown", wall_cap_reason(self.timeout_ms, self.rlimit), exhausted="wall", units=used)
            reason = solver.reason_unknown()
            if "nonlinear" in reason or "incomplete" in reason:
                reason = f"a non-linear term ({reason})"
            return Verdict("unknown", reason, units=used)
        names = free_names(claim)
        if any(n.startswith("?missing tag") for n in names):
            return Verdict(
                "suppressed", "it reads a tag that is not set, which is reported on its own (AR308)", units=used
            )
        gaps = sorted(n for n in names if n in self.gaps)
        if gaps:
            what = ", ".join(g.split("#")[0].lstrip("?") for g in gaps[:3])
            return Verdict("unknown", f"it depends on values the verifier does not model ({what})", units=used)
        loose = sorted(n for n in names if n in self.carried and not self.carried[n])
        if loose:
            what = ", ".join(n.split("#")[0].lstrip("?") for n in loose[:3])
            return Verdict("unknown", f"it depends on loop-carried {what}, which no `invariant` describes", units=used)
        model = self.small_model(solver, ob)
        witness = self.witness(ob, model, claim)
        writers = getattr(ob, "writers", None)  # coverage.CoverageObligation
        if writers is None:
            return Verdict("refuted", witness=witness, units=used)
        hole, writer = self.hole(ob, writers(), model, claim)
        missed = (witness, writer)
        for _ in range(HOLE_RETRIES):
            if hole != "written":
                break
            # the guess failed, but a program does write that element: a wrong guess, or a guess wrong at these
            # sizes only while a real hole lies at others (a decode wrong for non-square tile grids misses
            # elements at N = 1 too): another failure at other sizes, shrunk again
            seen = [self.here(s) == model.eval(self.here(s), model_completion=True) for s in self.sizes.values()]
            solver.add(z3.Not(z3.And(*seen)))
            answer, more, _ = self.check(solver, share=4)
            used += more
            if answer != z3.sat:
                break
            model = self.small_model(solver, ob)
            witness = self.witness(ob, model, claim)
            hole, writer = self.hole(ob, writers(), model, claim)
        if hole == "written":  # not a hole wherever the verifier looked: the construction missed the writer
            return Verdict("unknown", missed_reason(*missed), units=used)
        return Verdict("refuted", witness=witness, units=used, confirmed=hole == "confirmed")

    def hole(
        self, ob: Obligation, writers: z3.BoolRef, model: z3.ModelRef, claim: z3.BoolRef
    ) -> tuple[str, dict[str, int]]:
        """Whether the element a refuted coverage claim names is really written by nobody at the witness's
        sizes: "confirmed" (no program, iteration and element writes it: the query for one is unsatisfiable),
        "written" (one does, shown as {name: value}, without loaded data or values the verifier does not
        model: the construction of writers missed it), or "open" (undecided, or a writer that needs such
        values). With the sizes and the target numbers, the query is linear; a quarter of the budget."""
        solver = self.solver()
        solver.add(self.here(writers))
        fixed = [self.here(s) == model.eval(self.here(s), model_completion=True) for s in self.sizes.values()]
        fixed += [self.here(x) == model.eval(self.here(x), model_completion=True) for _, x in ob.shown]
        solver.add(*fixed)
        pins = self.pinned_partitions(writers, model, claim)
        if pins:  # pinned only where some partition completes the witness's cut points: else unsat proves nothing
            alone = self.solver()
            alone.add(*fixed, *pins)
            if self.check(alone, share=4)[0] == z3.sat:
                solver.add(*pins)
        answer, _, _ = self.check(solver, share=4)
        if answer == z3.unsat:
            return "confirmed", {}
        if answer != z3.sat:
            return "open", {}
        names = free_names(self.here(writers))
        if any(n in self.gaps or n in self.carried for n in names) or applies_any(writers, self.data_names):
            return "open", {}
        found = solver.model()
        programs = {f"pid{k}": name for k, name in enumerate(self.program_names)}
        shown = {}
        for d in found.decls():
            name, value = d.name(), found[d]
            if d.arity() or not z3.is_int_value(value):
                continue
            if name in programs or "@" in name or (name[:1] == "e" and name[1:].isdigit()):
                label = programs.get(name) or name.split("@")[0]
                label = COORD_NAMES[int(name[1:])] if name[:1] == "e" and name[1:].isdigit() else label
                shown[label] = value.as_long()
        return "written", shown

    def pinned_partitions(self, writers: z3.BoolRef, model: z3.ModelRef, claim: z3.BoolRef) -> list[z3.BoolRef]:
        """Each `partition` tensor the writers read, made a whole array at the witness's sizes: its cut points
        0 = T[0] <= ... <= T[L - 1] = n, equal to the witness's where its claim read them. Without it a writer
        may pick cut points of its own, and a hole of a schedule that depends on the data (an exact per-expert
        tile slot) stays "open"; with it, no writer means none for any data that completes the witness's."""
        pins: list[z3.BoolRef] = []
        for name, fact in self.facts.partitions.items():
            if not applies_any(writers, [name]):
                continue
            length = model.eval(self.here(fact.length), model_completion=True)
            total = model.eval(self.here(fact.total), model_completion=True)
            if not (z3.is_int_value(length) and z3.is_int_value(total)) or not 0 < length.as_long() <= MAX_PINNED:
                continue
            function = self.here(fact.function(z3.IntVal(0))).decl()
            cuts = [function(z3.IntVal(k, ctx=self.context)) for k in range(length.as_long())]
            pins += [cuts[0] == 0, cuts[-1] == total] + [a <= b for a, b in pairwise(cuts)]
            for app in applications(claim, name):
                at = model.eval(app.arg(0), model_completion=True)
                if z3.is_int_value(at) and 0 <= at.as_long() < length.as_long():
                    pins.append(cuts[at.as_long()] == model.eval(app, model_completion=True))
        return pins

    def proved_linear(self, claim: z3.BoolRef) -> Verdict:
        """The claim proved with its divisions by symbolic divisors made linear (divisions.abstracted), within
        half the budget; else unknown with the units spent: the abstraction has no such division, or has
        a model, which may be spurious, so the original query decides. A persistent GEMM's store race
        (`t // (GROUP_M * cdiv(N, BN))`) took over 5,000,000 units as written and 41,942 so."""
        abstract = abstracted(z3.And(self.assumed(), claim))
        if abstract is None:
            return Verdict("unknown")
        solver = z3.Solver(ctx=self.context)
        solver.add(abstract)
        answer, used, _ = self.check(solver, share=2)
        return Verdict("proved" if answer == z3.unsat else "unknown", units=used)

    def proved_defined(self, claim: z3.BoolRef) -> Verdict:
        """The claim proved with every division a variable pair under its definition (divisions.defined), within
        half the budget; else unknown with the units spent, and the original query decides."""
        abstract = defined(z3.And(self.assumed(), claim))
        if abstract is None:
            return Verdict("unknown")
        solver = z3.Solver(ctx=self.context)
        solver.add(abstract)
        answer, used, _ = self.check(solver, share=2)
        return Verdict("proved" if answer == z3.unsat else "unknown", units=used)

    def small_model(self, solver: z3.Solver, ob: Obligation | None = None) -> z3.ModelRef:
        """A model with small sizes when there is one: counterexamples should be runnable on a laptop, and
        show their failure (visible.preferences: a softmax of two columns, not one). The preferences a model
        can meet are kept, in their order; then each bound is tried under them. Each query gets a quarter of
        the budget (they are easy: bench/verify_rlimit.py's `shrink` queries)."""
        model = solver.model()
        kept: list[z3.BoolRef] = []
        for condition in [] if ob is None else preferences(ob, self.sizes, self.constants):
            solver.push()
            solver.add(*kept, self.here(condition))
            answer, _, _ = self.check(solver, share=4)
            if answer == z3.sat:
                kept.append(self.here(condition))
                model = solver.model()
            solver.pop()
        if not self.sizes:
            return model
        sizes = [self.here(s) for s in self.sizes.values()]
        for bound in SHRINK_BOUNDS:
            solver.push()
            solver.add(*kept, *[s <= bound for s in sizes])
            answer, _, _ = self.check(solver, share=4)
            if answer == z3.sat:
                model = solver.model()
                solver.pop()
                break
            solver.pop()
        return model

    def witness(self, ob: Obligation, model: z3.ModelRef, claim: z3.BoolRef) -> Counterexample:
        """The counterexample record; `claim` is in this prover's context, the obligation's terms are not."""

        def value(term: z3.ExprRef, translate: bool = True):
            result = model.eval(self.here(term) if translate else term, model_completion=True)
            if z3.is_int_value(result):
                return result.as_long()
            if z3.is_true(result) or z3.is_false(result):
                return z3.is_true(result)
            return str(result)

        data = {}
        for name in self.data_names:
            for app in applications(claim, name):
                args = ", ".join(str(value(a, False)) for a in app.children())
                data[f"{name}[{args}]"] = value(app, False)
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
