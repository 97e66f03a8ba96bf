"""Data facts a kernel states in `requires` about the contents of integer tensors, as ground z3 facts.

`partition(T, n)`: T[0] == 0 <= T[1] <= ... <= T[last] == n; `in_range(T, lo, hi[, ignore])`: lo <= T[...] < hi,
or T[...] == ignore, for every element inside T's extents; `permutation(T, n)`: each of 0..n-1 occurs once in T,
the other elements are >= n (stated through an inverse, position(T[i]) == i where T[i] < n). The universal
statement is never handed to z3 as a quantifier: each query gets the instances of it over the T-applications the
query mentions (plus the two ends), which is sound (they are consequences of the fact) and keeps every query
quantifier-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import z3

from argus.verify.terms import applications


@dataclass(slots=True)
class Partition:
    function: z3.FuncDeclRef
    total: z3.ArithRef  # n
    length: z3.ArithRef  # the tensor's extent: cut points 0 .. length - 1

    def ends(self) -> list[z3.ExprRef]:
        return [self.function(z3.IntVal(0)), self.function(self.length - 1)]

    def inside(self, app: z3.ExprRef) -> z3.BoolRef:
        """T[i] lies in [0, n) where i is a cut point."""
        index = app.arg(0)
        return z3.Implies(z3.And(index >= 0, index <= self.length - 1), z3.And(app >= 0, app <= self.total))

    def ordered(self, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
        """T[i] <= T[j] where i <= j are cut points."""
        ia, ib = a.arg(0), b.arg(0)
        return z3.Implies(z3.And(ia >= 0, ia <= ib, ib <= self.length - 1), a <= b)

    def query_instances(self, apps: list[z3.ExprRef], known: list[z3.ExprRef]) -> list[z3.BoolRef]:
        """For applications a query made of its own (`apps`): each lies in [0, n) where its index is a cut
        point, and is ordered by its index against every other application, the ends and `known` included."""
        facts: list[z3.BoolRef] = []
        for app in apps:
            facts.append(self.inside(app))
            for other in [*self.ends(), *known, *apps]:
                if not app.eq(other):
                    facts += [self.ordered(app, other), self.ordered(other, app)]
        return facts


@dataclass(slots=True)
class Range:
    function: z3.FuncDeclRef
    lo: z3.ArithRef
    hi: z3.ArithRef
    dims: list[z3.ArithRef]  # the tensor's extents
    ignore: z3.ArithRef | None = None  # a value allowed besides the range (`ignore=-100`)

    def instance(self, app: z3.ExprRef) -> z3.BoolRef:
        inside = [z3.And(app.arg(k) >= 0, app.arg(k) < dim) for k, dim in enumerate(self.dims)]
        value = z3.And(self.lo <= app, app < self.hi)
        return z3.Implies(z3.And(*inside), value if self.ignore is None else z3.Or(value, app == self.ignore))


@dataclass(slots=True)
class Permutation:
    """Each of 0..total-1 occurs once in T: on those values T has an inverse (`position`), which is what makes
    two lanes that read different elements store to different rows, without a quantifier or a pair of them."""

    function: z3.FuncDeclRef
    total: z3.ArithRef
    length: z3.ArithRef  # the tensor's extent
    position: z3.FuncDeclRef  # value -> the index that holds it

    def instance(self, app: z3.ExprRef) -> z3.BoolRef:
        index = app.arg(0)
        real = z3.And(app >= 0, z3.Implies(app < self.total, self.position(app) == index))
        return z3.Implies(z3.And(index >= 0, index < self.length), real)


@dataclass(slots=True)
class DataFacts:
    partitions: dict[str, Partition] = field(default_factory=dict)
    ranges: dict[str, list[Range]] = field(default_factory=dict)
    permutations: dict[str, Permutation] = field(default_factory=dict)
    loaded: dict[str, list[z3.ExprRef]] = field(default_factory=dict)  # every T[...] the evaluation created
    cached: list[z3.BoolRef] | None = None  # the instances over `loaded`, built once per kernel

    def note(self, name: str, application: z3.ExprRef) -> None:
        """Remember a data application, so that queries need not search their formulas for them."""
        if name not in self.partitions and name not in self.ranges and name not in self.permutations:
            return  # only tensors with data facts have facts to instantiate
        known = self.loaded.setdefault(name, [])
        if not any(application.eq(a) for a in known):
            known.append(application)
            self.cached = None

    def query_instances(self, formulas: list[z3.BoolRef]) -> list[z3.BoolRef]:
        """The permutation, range and partition instances over the applications a query mentions that the
        evaluation did not create: a race pairs one program's loads with the other's under renamed element
        coordinates, and two lanes reading different elements must be known to read different values there; a
        gathered index broadcast along another axis (`x[rm, c]` with `c = load(idx[rj])`, index_select of
        columns) reads `idx` at coordinates moved from those it was loaded at, and must still be in its stated
        range; a coverage guess reads the cut points of the part that owns a row (`cu[owner(x)]`)."""
        facts: list[z3.BoolRef] = []
        names = [*self.permutations, *self.ranges, *self.partitions]
        for name in dict.fromkeys(names):  # an order of its own: a set's varies from run to run
            known = self.loaded.get(name, [])
            found: list[z3.ExprRef] = []
            for formula in formulas:
                found += [a for a in applications(formula, name) if not any(a.eq(b) for b in known + found)]
            if not found:
                continue
            if name in self.permutations:
                facts += [self.permutations[name].instance(app) for app in found]
            facts += [fact.instance(app) for fact in self.ranges.get(name, []) for app in found]
            if name in self.partitions:
                facts += self.partitions[name].query_instances(found, known)
        return facts

    def instances(self) -> list[z3.BoolRef]:
        """Instances over the applications the evaluation created (a superset of those a query mentions:
        instances about terms a query does not mention constrain nothing it cares about), built once per
        kernel; `query_instances` adds those a query makes of its own."""
        if self.cached is not None:
            return self.cached
        facts: list[z3.BoolRef] = []
        for name, fact in self.partitions.items():
            first_cut, last_cut = apps = fact.ends()
            apps.extend(a for a in self.loaded.get(name, []) if not any(a.eq(b) for b in apps))
            facts += [first_cut == 0, last_cut == fact.total, fact.total >= 0]
            facts += [fact.inside(app) for app in apps]
            facts += [fact.ordered(a, b) for a in apps for b in apps if not a.eq(b)]
        for name, stated in self.ranges.items():
            for fact in stated:
                facts += [fact.instance(app) for app in self.loaded.get(name, [])]
        for name, perm in self.permutations.items():
            facts += [perm.instance(app) for app in self.loaded.get(name, [])]
        self.cached = facts
        return facts
