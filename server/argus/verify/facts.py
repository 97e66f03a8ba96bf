"""Data facts a kernel states in `requires` about the contents of integer tensors, as ground z3 facts.

`partition(T, n)`: T[0] == 0 <= T[1] <= ... <= T[last] == n. The universal statement is never handed to
z3 as a quantifier: each query gets the instances of it over the T-applications the query mentions (plus
the two ends), which is sound (they are consequences of the fact) and keeps every query quantifier-free.
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


@dataclass(slots=True)
class DataFacts:
    partitions: dict[str, Partition] = field(default_factory=dict)

    def instances(self, formulas: list[z3.BoolRef]) -> list[z3.BoolRef]:
        facts: list[z3.BoolRef] = []
        for name, fact in self.partitions.items():
            last = fact.length - 1
            first_cut, last_cut = fact.function(z3.IntVal(0)), fact.function(last)
            apps = [first_cut, last_cut]
            for formula in formulas:
                apps.extend(a for a in applications(formula, name) if not any(a.eq(b) for b in apps))
            facts += [first_cut == 0, last_cut == fact.total, fact.total >= 0]
            for app in apps:
                index = app.arg(0)
                facts.append(z3.Implies(z3.And(index >= 0, index <= last), z3.And(app >= 0, app <= fact.total)))
            for a in apps:
                for b in apps:
                    if a.eq(b):
                        continue
                    ia, ib = a.arg(0), b.arg(0)
                    facts.append(z3.Implies(z3.And(ia >= 0, ia <= ib, ib <= last), a <= b))
        return facts
