"""Coverage: every element of an output is written by some program.

"For every element x there is a program, an iteration and a tile element that writes x" is a ∀∃ claim, which
z3 handles badly. Instead the witness is constructed: each index is solved for the unknowns it is built from
(mixed-radix division of an affine index `pm * BM + i`, a flattened grid axis `zh // H, zh % H`, the owner
of a row in a `partition` of rows), and the remaining ∀ claim, that this guess is a real write of x, is
quantifier-free. When the guess fails the claim is reported not proved (a warning), never refuted.
"""

from __future__ import annotations

import z3

from argus.verify.evaluate import Evaluator
from argus.verify.model import Access, Obligation
from argus.verify.terms import applications, depends_on, substitute

TARGETS = [z3.Int(f"x{k}") for k in range(4)]


def coverage_obligations(first: Evaluator, grid: list[z3.ArithRef]) -> list[Obligation]:
    obligations = []
    for param in first.kernel.params:
        if not getattr(param.type, "out", False):
            continue
        writes = [a for a in first.accesses if a.tensor == param.name and a.kind in ("store", "atomic_add")]
        if not writes:
            continue  # the analyzer already warns (AR408)
        dims = first.shared.dims(param)
        targets = TARGETS[: len(dims)]
        assumptions = [z3.And(x >= 0, x < d) for x, d in zip(targets, dims, strict=True)]
        options = []
        for write in writes:
            guess = Guess(first, write, grid, targets)
            if guess.goal is not None:
                options.append(guess.goal)
                assumptions += guess.axioms
        goal = z3.Or(*options) if options else z3.BoolVal(False)
        shown = [
            (f"{param.name} index {d} ({label})", x)
            for d, (x, label) in enumerate(zip(targets, [str(s) for s in param.type.shape], strict=True))
        ]
        obligations.append(
            Obligation(
                "coverage",
                "AR304",
                writes[0].span,
                f"some element of output `{param.name}` may never be written",
                goal,
                assumptions,
                [],
                [],
                [],
                shown,
                hint="" if options else "the verifier found no way to invert the store's index",
            )
        )
    return obligations


class Guess:
    """The program, iteration and element that should write target element `targets`, as terms over it."""

    def __init__(self, first: Evaluator, write: Access, grid: list[z3.ArithRef], targets: list[z3.ArithRef]):
        self.axioms: list[z3.BoolRef] = []
        self.goal: z3.BoolRef | None = None
        facts = first.shared.facts.partitions
        unknowns: dict[str, z3.ArithRef] = {str(p): p for p in write.program}
        loop_pairs, ranges = [], []
        for loop in write.context.loops:
            if not z3.is_int_value(loop.step) or loop.step.as_long() <= 0:
                return
            count = z3.Int(f"n_{loop.name}")
            unknowns[str(count)] = count
            loop_pairs.append((loop.iv, loop.start + loop.step * count))
            ranges.append(count >= 0)
        coords = [z3.Int(f"e{k}") for k in range(len(write.shape))]
        unknowns.update({str(c): c for c in coords})
        indices = [substitute(i, loop_pairs) for i in write.indices]
        solved: dict[str, z3.ArithRef] = {}
        indices, split = split_axes(indices, unknowns)
        # a flattened grid axis: one index is p // b and another p % b
        for d, index in enumerate(indices):
            for d2, other in enumerate(indices):
                p = divided(index, unknowns)
                if p is not None and d != d2 and remainder_of(other, p[0], p[1]):
                    solved.setdefault(str(p[0]), targets[d] * p[1] + targets[d2])
        for _ in range(2):
            for d, index in enumerate(indices):
                index = substitute(index, [(unknowns[n], v) for n, v in solved.items()])
                self.owner(index, targets[d], unknowns, solved, facts)
                index = substitute(index, [(unknowns[n], v) for n, v in solved.items()])
                linear = linearize(index, {n: v for n, v in unknowns.items() if n not in solved})
                if linear is None:
                    continue
                coefs, rest = linear
                remainder = targets[d] - rest
                for name, coef in sorted(coefs.items(), key=lambda item: -abs(item[1])):
                    # a negative coefficient is a reversed axis (`last - program_id(0)`): z3's division
                    # keeps the remainder non-negative, so the mixed-radix split still holds
                    if name in solved or coef == 0:
                        continue
                    solved[name] = remainder / coef
                    remainder = remainder - coef * solved[name]
        for p, quotient, rest, b in split:
            if str(quotient) in solved and str(rest) in solved and str(p) not in solved:
                solved[str(p)] = solved[str(quotient)] * b + solved[str(rest)]
            unknowns.pop(str(quotient), None)
            unknowns.pop(str(rest), None)
            solved.pop(str(quotient), None)
            solved.pop(str(rest), None)
        # a loop over the parts of a partition whose store keeps the rows of part e only (mask
        # `T[e] <= row < T[e + 1]`): the iteration that writes a row is the part that owns it
        mask = substitute(substitute(write.mask, loop_pairs), [(unknowns[n], v) for n, v in solved.items()])
        mask = z3.simplify(mask)  # `0 + 1 * n_e` -> `n_e`, so the part's index is the loop's count
        for d in range(len(indices)):
            self.owner(mask, targets[d], unknowns, solved, facts)
        pairs = [(unknowns[n], v) for n, v in solved.items()]
        pairs += [(v, z3.IntVal(0)) for n, v in unknowns.items() if n not in solved]

        def at(term: z3.ExprRef) -> z3.ExprRef:
            return substitute(substitute(term, loop_pairs), pairs)

        conditions = [at(p >= 0) for p in write.program]
        conditions += [at(p < g) for p, g in zip(write.program, grid, strict=False)]
        conditions += [at(r) for r in ranges]
        conditions += [at(c >= 0) for c in coords] + [at(c < n) for c, n in zip(coords, write.shape, strict=True)]
        conditions += [at(a) for a in write.context.assumptions]
        conditions += [at(write.mask)]
        conditions += [at(i) == x for i, x in zip(write.indices, targets, strict=True)]
        self.goal = z3.And(*conditions)

    def owner(self, index, target, unknowns, solved, facts) -> None:
        """Rows split by `partition(T, n)`: the program p reading T[p] owns row x when T[p] <= x < T[p + 1]."""
        for name, fact in facts.items():
            for app in apps_of(index, name):
                p = app.arg(0)
                if z3.is_const(p) and str(p) in unknowns and str(p) not in solved:
                    owner = z3.Function(f"owner_{name}", z3.IntSort(), z3.IntSort())(target)
                    solved[str(p)] = owner
                    inside = z3.And(target >= fact.function(z3.IntVal(0)), target < fact.function(fact.length - 1))
                    owns = z3.And(
                        owner >= 0,
                        owner < fact.length - 1,
                        fact.function(owner) <= target,
                        target < fact.function(owner + 1),
                    )
                    self.axioms.append(z3.Implies(inside, owns))


def split_axes(indices: list[z3.ExprRef], unknowns: dict[str, z3.ArithRef]):
    """A grid axis split in two inside the indices, `p // b` somewhere and `p % b` elsewhere (a grouped program
    order: `pm = group * G + q % G`, `pn = q // G`). Each part becomes an unknown of its own, so the affine
    indices can be solved for it; p is rebuilt as quotient * b + remainder once both are known.

    Returns the rewritten indices and (p, quotient, remainder, b) per split axis; the parts are added to
    `unknowns` for the caller to remove."""
    divs: dict[tuple[str, str], tuple[z3.ArithRef, z3.ArithRef]] = {}
    mods: set[tuple[str, str]] = set()
    for index in indices:
        for t in subterms(index):
            if (z3.is_idiv(t) or z3.is_mod(t)) and z3.is_const(t.arg(0)) and str(t.arg(0)) in unknowns:
                key = (str(t.arg(0)), str(t.arg(1)))
                if z3.is_idiv(t):
                    divs[key] = (t.arg(0), t.arg(1))
                else:
                    mods.add(key)
    split = []
    for key, (p, b) in divs.items():
        if key not in mods or not z3.is_int_value(b):
            continue
        quotient, rest = z3.Int(f"{p}_div_{b}"), z3.Int(f"{p}_mod_{b}")
        unknowns[str(quotient)], unknowns[str(rest)] = quotient, rest
        indices = [substitute(i, [(p / b, quotient), (p % b, rest)]) for i in indices]
        split.append((p, quotient, rest, b))
    return indices, split


def subterms(term: z3.ExprRef) -> list[z3.ExprRef]:
    seen: set[int] = set()
    found: list[z3.ExprRef] = []
    stack = [term]
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        found.append(t)
        if z3.is_app(t):
            stack.extend(t.children())
    return found


def apps_of(term: z3.ExprRef, name: str) -> list[z3.ExprRef]:
    return applications(term, name)


def divided(term: z3.ExprRef, unknowns: dict[str, z3.ArithRef]):
    if z3.is_idiv(term) and z3.is_const(term.arg(0)) and str(term.arg(0)) in unknowns:
        return term.arg(0), term.arg(1)
    return None


def remainder_of(term: z3.ExprRef, p: z3.ArithRef, b: z3.ArithRef) -> bool:
    return z3.is_mod(term) and term.arg(0).eq(p) and term.arg(1).eq(b)


def linearize(term: z3.ExprRef, unknowns: dict[str, z3.ArithRef]):
    """term == sum(coef * unknown) + rest with integer coefficients, or None when an unknown is not linear."""
    names = set(unknowns)
    variables = list(unknowns.values())

    def free_of_unknowns(t) -> bool:
        return not depends_on(t, variables)

    def walk(t):
        if z3.is_const(t) and str(t) in names:
            return {str(t): 1}, z3.IntVal(0)
        if free_of_unknowns(t):
            return {}, t
        if z3.is_add(t) or z3.is_sub(t):
            parts = [walk(c) for c in t.children()]
            if any(p is None for p in parts):
                return None
            coefs: dict[str, int] = {}
            rest = parts[0][1]
            for k, v in parts[0][0].items():
                coefs[k] = coefs.get(k, 0) + v
            sign = -1 if z3.is_sub(t) else 1
            for part in parts[1:]:
                for k, v in part[0].items():
                    coefs[k] = coefs.get(k, 0) + sign * v
                rest = rest + sign * part[1]
            return coefs, rest
        if z3.is_mul(t) and t.num_args() == 2:
            a, b = t.arg(0), t.arg(1)
            if z3.is_int_value(b):
                a, b = b, a
            if z3.is_int_value(a):
                inner = walk(b)
                if inner is None:
                    return None
                c = a.as_long()
                return {k: c * v for k, v in inner[0].items()}, c * inner[1]
            return None
        if t.decl().kind() == z3.Z3_OP_UMINUS:
            inner = walk(t.arg(0))
            return None if inner is None else ({k: -v for k, v in inner[0].items()}, -inner[1])
        return None

    return walk(term)
