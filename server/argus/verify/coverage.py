"""Coverage: every element of an output is written by some program.

"For every element x there is a program, an iteration and a tile element that writes x" is a ∀∃ claim, which
z3 handles badly. Instead the witness is constructed: each index is solved for the unknowns it is built from
(mixed-radix division of an affine index `pm * BM + i`, a flattened grid axis `zh // H, zh % H`, the owner
of a row in a `partition` of rows), and the remaining ∀ claim, that this guess is a real write of x, is
quantifier-free. When the guess fails the claim is reported not proved (a warning), never refuted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import z3

from argus.dsl.atomics import ACCUMULATING, WRITES
from argus.verify.divisions import has_symbolic_division
from argus.verify.evaluate import Evaluator
from argus.verify.facts import Permutation
from argus.verify.model import Access, Obligation
from argus.verify.terms import applications, applies_any, depends_on, substitute
from argus.verify.values import coord_ranges

TARGETS = [z3.Int(f"x{k}") for k in range(4)]


@dataclass(slots=True)
class CoverageObligation(Obligation):
    """A coverage obligation. `writers`: "some program, iteration and element writes the target", over the
    targets, the sizes and the writers' own variables, for solve.Prover to tell a refuted guess that is a
    real hole (no writer at the witness's sizes: an error) from one the construction merely missed."""

    writers: Callable[[], z3.BoolRef] | None = None  # built when asked: only a refuted claim needs it
    tensor: str = ""
    defined_divisions: bool = False  # a guess through divisions decided first with them defined (Guess.defined)


def coverage_obligations(first: Evaluator, grid: list[z3.ArithRef]) -> list[Obligation]:
    obligations: list[Obligation] = []
    for param in first.kernel.params:
        if not getattr(param.type, "out", False) or getattr(param.type, "inout", False):
            continue  # an in/out tensor keeps its input value where the kernel does not write it
        writes = [a for a in first.accesses if a.tensor == param.name and a.kind in WRITES]
        if not writes:
            continue  # the analyzer already warns (AR408)
        if scatters_through_data(first, writes):
            continue  # a scatter keeps its start where the data names no element: no coverage claim
        dims = first.shared.dims(param)
        targets = TARGETS[: len(dims)]
        assumptions = [z3.And(x >= 0, x < d) for x, d in zip(targets, dims, strict=True)]
        options, axioms, defined = guesses(first, writes, grid, targets)
        assumptions += axioms
        goal = z3.Or(*options) if options else z3.BoolVal(False)
        shown = [
            (f"{param.name} index {d} ({label})", x)
            for d, (x, label) in enumerate(zip(targets, [str(s) for s in param.type.shape], strict=True))
        ]
        obligations.append(
            CoverageObligation(
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
                writers=partial(writers_of, writes, grid, targets),
                tensor=param.name,
                defined_divisions=defined,
            )
        )
    return obligations


def guesses(first: Evaluator, accesses: list[Access], grid: list[z3.ArithRef], targets: list[z3.ArithRef]):
    """Each access's Guess at the targets, as alternatives: their goals, the axioms they need, and whether any
    is decided first with its divisions defined (Guess.defined)."""
    options, axioms, defined = [], [], False
    for access in accesses:
        guess = Guess(first, access, grid, targets)
        if guess.goal is not None:
            options.append(guess.goal)
            axioms += guess.axioms
            defined = defined or guess.defined
    return options, axioms, defined


def scatters_through_data(first: Evaluator, writes: list[Access]) -> bool:
    """Whether every write of an output accumulates (`atomic_add`, `atomic_max`, `atomic_min`) at an index that
    depends on loaded data (`out[idx[i], d]`: a scatter-add, a histogram). Such an output starts at the
    accumulation's identity (0, -inf, inf: the launcher and the gate set it, docs/language.md), and an element
    the data never names keeps it: that is the scatter's meaning (`index_add_`, `bincount`), so the output has
    no coverage claim. An output an accumulating atomic writes at indices of program ids, loops and lanes only
    (split-K's `atomic_add(C[rm, rn], ...)`, row groups' `out[row // ROWS]`) keeps it: there the kernel, not
    the data, decides which elements are written."""
    names = {f.name() for f in first.shared.functions.values()}
    return all(w.kind in ACCUMULATING and any(applies_any(i, names) for i in w.indices) for w in writes)


def writers_of(writes: list[Access], grid: list[z3.ArithRef], targets: list[z3.ArithRef]) -> z3.BoolRef:
    return z3.Or(*[writer(w, grid, targets) for w in writes])


def writer(write: Access, grid: list[z3.ArithRef], targets: list[z3.ArithRef]) -> z3.BoolRef:
    """`write` stores to the target: a program of the grid, an iteration of each enclosing loop (the loop's
    range), an element of the tile under the mask, whose index is the target. Existential in the program
    ids, loop variables and coordinates; once the sizes and the target are numbers, every division in it is
    by a constant, so z3 decides it (solve.Prover.hole)."""
    conditions = [z3.And(p >= 0, p < g) for p, g in zip(write.program, grid, strict=False)]
    conditions += list(write.context.assumptions) + coord_ranges(write.shape)
    conditions += [write.mask] + [i == x for i, x in zip(write.indices, targets, strict=True)]
    return z3.And(*conditions)


@dataclass(slots=True)
class Split:
    """`dividend // divisor` and `dividend % divisor` in a store's index, each made an unknown of its own."""

    dividend: z3.ArithRef
    divisor: z3.ArithRef
    quotient: z3.ArithRef
    remainder: z3.ArithRef

    def rewrite(self, term: z3.ExprRef) -> z3.ExprRef:
        pairs = [(self.dividend / self.divisor, self.quotient), (self.dividend % self.divisor, self.remainder)]
        return substitute(term, pairs)


class Guess:
    """The program, iteration and element that should write target element `targets`, as terms over it."""

    def __init__(self, first: Evaluator, write: Access, grid: list[z3.ArithRef], targets: list[z3.ArithRef]):
        self.axioms: list[z3.BoolRef] = []
        self.goal: z3.BoolRef | None = None
        # whether the guess went through a division the evaluator left rounding toward zero, or one whose
        # divisor depends on another split's quotient: its claim multiplies tile counts by the target's own
        # quotients, which z3 settles with each division defined by a variable pair (divisions.defined)
        self.defined = False
        facts = first.shared.facts.partitions
        unknowns: dict[str, z3.ArithRef] = {str(p): p for p in write.program}
        loop_pairs, ranges = [], []
        self.counts: list[z3.ArithRef] = []  # each loop's iteration count, an unknown (contributions.py reads it)
        for loop in write.context.loops:
            if not z3.is_int_value(loop.step) or loop.step.as_long() <= 0:
                return
            count = z3.Int(f"n_{loop.name}")
            self.counts.append(count)
            unknowns[str(count)] = count
            loop_pairs.append((loop.iv, loop.start + loop.step * count))
            ranges.append(count >= 0)
        counted = frozenset(str(c) for c in self.counts)
        coords = [z3.Int(f"e{k}") for k in range(len(write.shape))]
        unknowns.update({str(c): c for c in coords})

        def through_loops(term: z3.ExprRef) -> z3.ExprRef:
            # innermost loop first: an inner loop's start may use an outer loop's variable (a persistent
            # split-K's `range(ks * BK, K, ...)` with `ks = w % SPLIT` of the tile loop's w)
            for pair in reversed(loop_pairs):
                term = substitute(term, [pair])
            return term

        # Triton's `//` and `%` round toward zero: a divisor the evaluator cannot show positive (a grouped
        # order's `minimum(num_pid_m - first_pid_m, GROUP_M)`) leaves `If(a >= 0, If(b > 0, a / b, ...), ...)`;
        # the guess takes the floored branch, and the goal requires a >= 0 and b > 0 there
        floored = Floored()
        indices = [floored(through_loops(i)) for i in write.indices]
        solved: dict[str, z3.ArithRef] = {}
        # `//` and `%` of unknowns (a grouped order, a flattened grid axis, a persistent loop's tile index
        # decoded by a tile count): each quotient and remainder becomes an unknown
        indices, splits = split_divisions(indices, unknowns)
        for _ in range(2):
            for d, index in enumerate(indices):
                index = known(index, unknowns, solved)
                # simplified so that a loop's `0 + 1 * n_e` is the bare count the owner is solved for
                self.owner(z3.simplify(index), targets[d], unknowns, solved, facts)
                settle_known_splits(splits, unknowns, solved)
                index = known(index, unknowns, solved)
                index = self.permuted(index, targets[d], first.shared.facts.permutations)
                index = known(index, unknowns, solved)
                solve_mixed_radix(index, targets[d], unknowns, solved, counted)
        siblings = remainders_of_siblings(splits, solved, unknowns)
        # then each dividend from its quotient and remainder, innermost split last (its dividend may be the
        # remainder of an outer one: `(t % P) % G`); a sibling's dividend is rebuilt through the other split
        for split in reversed(splits):
            if split in siblings:
                continue
            value = solved.get(str(split.quotient), z3.IntVal(0)) * split.divisor
            value = value + solved.get(str(split.remainder), z3.IntVal(0))
            value = known(value, unknowns, solved)
            dividend = known(split.dividend, unknowns, solved)
            solve_mixed_radix(dividend, value, unknowns, solved, counted)
        for split in siblings:  # its quotient from the rebuilt dividend and the remainder the index gave
            dividend, divisor = known(split.dividend, unknowns, solved), known(split.divisor, unknowns, solved)
            solved[str(split.quotient)] = (dividend - solved[str(split.remainder)]) / divisor
        # a loop over the parts of a partition whose store keeps the rows of part e only (mask
        # `T[e] <= row < T[e + 1]`): the iteration that writes a row is the part that owns it
        mask = rewritten(floored(through_loops(write.mask)), splits)
        mask = known(mask, unknowns, solved)
        mask = z3.simplify(mask)  # `0 + 1 * n_e` -> `n_e`, so the part's index is the loop's count
        for d in range(len(indices)):
            self.owner(mask, targets[d], unknowns, solved, facts)
        pairs = [(unknowns[n], v) for n, v in solved.items()]
        pairs += [(v, z3.IntVal(0)) for n, v in unknowns.items() if n not in solved]

        def at(term: z3.ExprRef) -> z3.ExprRef:
            # the splits' own unknowns stand for the divisions they replace, so that the claim does not
            # divide by a symbolic tile count; `split_conditions` makes that replacement exact
            return substitute(rewritten(by_quotient(floored(through_loops(term)), splits), splits), pairs)

        self.at = at  # a term over the unknowns as the guess makes it, a term over the targets
        self.coords = coords

        conditions = [at(p >= 0) for p in write.program]
        conditions += [at(p < g) for p, g in zip(write.program, grid, strict=False)]
        conditions += [at(r) for r in ranges]
        conditions += [at(c >= 0) for c in coords] + [at(c < n) for c, n in zip(coords, write.shape, strict=True)]
        conditions += [at(a) for a in write.context.assumptions]
        conditions += [at(write.mask)]
        conditions += [at(i) == x for i, x in zip(write.indices, targets, strict=True)]
        conditions += split_conditions(splits, at)
        conditions += [at(c) for c in floored.conditions]
        self.goal = z3.And(*conditions)
        self.defined = bool(floored.conditions) or any(
            depends_on(s.divisor, [v for n, v in unknowns.items() if n.startswith("quotient#")]) for s in splits
        )

    def permuted(self, index: z3.ExprRef, target: z3.ArithRef, facts: dict[str, Permutation]) -> z3.ExprRef:
        """Rows stored through `permutation(T, n)` (`C[T[p], ...]`, fused MoE's sorted ids): the element of T
        that holds row x < n is position(x), so the index T[arg] is solved through arg == position(x)."""
        for fact in facts.values():
            if z3.is_app(index) and index.decl().eq(fact.function):
                position = fact.position(target)
                held = z3.And(fact.function(position) == target, position >= 0, position < fact.length)
                self.axioms.append(z3.Implies(z3.And(target >= 0, target < fact.total), held))
                return index.arg(0) - position + target  # == target exactly when arg == position(x)
        return index

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


class Floored:
    """A term with each of Triton's rounding-toward-zero divisions (terms.trunc_div, trunc_mod) whose signs the
    evaluator could not settle replaced by z3's floored `a / b` and `a % b`, and the conditions that make the
    two equal (a >= 0, and b > 0 for a symbolic divisor) collected in `conditions`: a guess that meets them
    writes where the floored index says. The identity `a - b * (a / b) == a % b` is applied too, so that a
    grouped order's `(pid % P) % group_size_m` is split like any remainder."""

    def __init__(self) -> None:
        self.conditions: list[z3.BoolRef] = []
        self.cache: dict[int, tuple[z3.ExprRef, z3.ExprRef]] = {}  # id -> (term, result): the term kept alive,
        # so that z3 cannot give its id to another term

    def __call__(self, term: z3.ExprRef) -> z3.ExprRef:
        if not has_symbolic_division(term, numerals=True):
            return term
        return self.rebuilt(term)

    def rebuilt(self, t: z3.ExprRef) -> z3.ExprRef:
        key = t.get_id()
        if key in self.cache:
            return self.cache[key][1]
        out = t
        if z3.is_app(t) and t.num_args() > 0:
            children = [self.rebuilt(c) for c in t.children()]
            if any(not c.eq(o) for c, o in zip(children, t.children(), strict=True)):
                out = t.decl()(*children)
            out = self.floor(out)
        self.cache[key] = (t, out)
        return out

    def floor(self, t: z3.ExprRef) -> z3.ExprRef:
        if z3.is_app_of(t, z3.Z3_OP_ITE):
            quotient = truncated_quotient(t)
            if quotient is not None:
                a, b = quotient.arg(0), quotient.arg(1)
                for c in [a >= 0] + ([] if z3.is_int_value(b) else [b > 0]):
                    if not any(c.eq(d) for d in self.conditions):
                        self.conditions.append(c)
                return quotient
        if z3.is_sub(t) and t.num_args() == 2 and z3.is_mul(t.arg(1)) and t.arg(1).num_args() == 2:
            a, (b, q) = t.arg(0), t.arg(1).children()
            if z3.is_idiv(q) and q.arg(0).eq(a) and q.arg(1).eq(b):
                return a % b
        return t


def truncated_quotient(t: z3.ExprRef) -> z3.ExprRef | None:
    """`a / b` when t is terms.trunc_div's `If(a >= 0, a / b, ...)` (b a positive numeral) or
    `If(a >= 0, If(b > 0, a / b, ...), ...)`, else None."""
    cond, then = t.arg(0), t.arg(1)
    if not (z3.is_ge(cond) and z3.is_int_value(cond.arg(1)) and cond.arg(1).as_long() == 0):
        return None
    a = cond.arg(0)
    if z3.is_app_of(then, z3.Z3_OP_ITE):
        inner = then.arg(0)
        if not (z3.is_gt(inner) and z3.is_int_value(inner.arg(1)) and inner.arg(1).as_long() == 0):
            return None
        b, then = inner.arg(0), then.arg(1)
        if z3.is_idiv(then) and then.arg(0).eq(a) and then.arg(1).eq(b):
            return then
        return None
    if z3.is_idiv(then) and then.arg(0).eq(a) and z3.is_int_value(then.arg(1)) and then.arg(1).as_long() > 0:
        return then
    return None


def known(term: z3.ExprRef, unknowns: dict[str, z3.ArithRef], solved: dict[str, z3.ArithRef]) -> z3.ExprRef:
    """`term` with each unknown solved so far replaced by its value (a term over the targets)."""
    return substitute(term, [(unknowns[n], v) for n, v in solved.items()])


def settle_known_splits(splits: list[Split], unknowns: dict[str, z3.ArithRef], solved: dict[str, z3.ArithRef]) -> None:
    """A split whose dividend is known once a partition's owner is solved (`offsets[e] // BM` of an expert's
    first row, with e the owner of the target row) has its quotient and remainder from that dividend, not from
    the mixed radix of the index, which would take them for free digits."""
    pending = [v for n, v in unknowns.items() if n not in solved]
    for split in splits:
        if str(split.quotient) in solved and str(split.remainder) in solved:
            continue
        dividend = known(split.dividend, unknowns, solved)
        divisor = known(split.divisor, unknowns, solved)
        if depends_on(dividend, pending) or depends_on(divisor, pending):
            continue
        solved.setdefault(str(split.quotient), dividend / divisor)
        solved.setdefault(str(split.remainder), dividend % divisor)


def remainders_of_siblings(
    splits: list[Split], solved: dict[str, z3.ArithRef], unknowns: dict[str, z3.ArithRef]
) -> list[Split]:
    """The older Triton tutorial's grouped order takes `pid_m = first_pid_m + pid % group_size_m` beside
    `pid_n = (pid % num_pid_in_group) // group_size_m`: two splits by the same divisor G, one of t (whose
    remainder the row index solves; its quotient no index uses) and one of t's remainder r = t % P (whose
    quotient the column solves; its remainder no index uses). With t = q * P + r, r % G is (t % G - q * P) % G:
    that remainder is solved from the other, and the split of t (its quotient still unknown) is returned, to be
    left out of the dividends' rebuilding and given its quotient from the dividend afterwards. A guess only:
    the goal checks it."""
    siblings = []
    for inner in splits:
        if str(inner.remainder) in solved or str(inner.quotient) not in solved:
            continue
        for outer in splits:  # inner's dividend is outer's remainder
            if not inner.dividend.eq(outer.remainder) or str(outer.quotient) not in solved:
                continue
            for sibling in splits:  # a split of outer's dividend by inner's divisor, its remainder solved
                if sibling is inner or sibling in siblings or str(sibling.quotient) in solved:
                    continue
                if not (sibling.dividend.eq(outer.dividend) and sibling.divisor.eq(inner.divisor)):
                    continue
                if str(sibling.remainder) not in solved:
                    continue
                shift = solved[str(outer.quotient)] * known(outer.divisor, unknowns, solved)
                divisor = known(inner.divisor, unknowns, solved)
                solved[str(inner.remainder)] = (solved[str(sibling.remainder)] - shift) % divisor
                siblings.append(sibling)
                break
    return siblings


def solve_mixed_radix(
    index: z3.ExprRef,
    target: z3.ArithRef,
    unknowns: dict[str, z3.ArithRef],
    solved: dict[str, z3.ArithRef],
    unbounded: frozenset[str] = frozenset(),
) -> None:
    """Solve `index == target` for its unknowns as a mixed-radix numeral: the largest coefficient takes the
    quotient, the next the quotient of the rest, and so on (`pm * BM + i` gives `pm = x // BM`, `i = x % BM`;
    `pid + SMS * n` gives a persistent loop's iteration `n = t // SMS` and its program `pid = t % SMS`).
    A negative coefficient is a reversed axis (`last - program_id(0)`): z3's division keeps the remainder
    non-negative, so the split still holds. Of equal coefficients, an `unbounded` unknown (a loop's iteration
    count) takes the quotient before the others, which a grid axis or a tile bounds: split-K's
    `range(pk * BK, K, SPLIT_K * BK)` at SPLIT_K = 1 is `16 * pk + 16 * n + kk`, and the iteration n, not the
    one split pk, counts the blocks; `row + arange(1)` still gives the row to the program. A guess only: the
    goal checks that it really writes the target."""
    if z3.is_const(index) and str(index) in unknowns and str(index) not in solved:
        solved[str(index)] = target
        return
    linear = linearize(index, {n: v for n, v in unknowns.items() if n not in solved})
    if linear is None:
        return
    coefs, rest = linear
    remainder = target - rest
    for name, coef in sorted(coefs.items(), key=lambda item: radix_order(item, unbounded)):
        if name in solved or (isinstance(coef, int) and coef == 0):
            continue
        solved[name] = remainder / coef
        remainder = remainder - coef * solved[name]


def radix_order(item: tuple[str, int | z3.ArithRef], unbounded: frozenset[str]) -> tuple:
    """A symbolic coefficient first (a chunk of sizes: split-K's `s * k_per + BK * n + kk` with `k_per` a
    multiple of BK computed from K), then the largest numeral; the goal checks the order it assumes."""
    name, coef = item
    if not isinstance(coef, int):
        return (0, 0, False)
    return (1, -abs(coef), name not in unbounded)  # ties keep the index's order (sorted is stable)


def rewritten(term: z3.ExprRef, splits: list[Split]) -> z3.ExprRef:
    for split in splits:
        term = split.rewrite(term)
    return term


def by_quotient(term: z3.ExprRef, splits: list[Split]) -> z3.ExprRef:
    """`u < b * c` as `u // b < c` (and `u >= b * c` as `u // b >= c`) for a split dividend u and its divisor b,
    exact for b > 0, which split_conditions requires. A persistent loop's `t < num_tiles`, with num_tiles
    `per_group * groups` and t rebuilt as `group * per_group + q`, is then `group < groups`: linear, where the
    product made z3's work on the coverage claim swing between 10^5 units and more than the budget of 5 * 10^6
    with the order in which the kernel's other obligations had been decided."""
    if not splits:
        return term
    pairs = []
    for t in subterms(term):
        if not z3.is_app(t) or t.num_args() != 2 or t.decl().kind() not in ORDER:
            continue
        kind, (a, b) = t.decl().kind(), t.children()
        if kind in (z3.Z3_OP_GT, z3.Z3_OP_LE):  # b > a is a < b; b <= a is a >= b
            kind, a, b = (z3.Z3_OP_LT if kind == z3.Z3_OP_GT else z3.Z3_OP_GE), b, a
        if kind not in (z3.Z3_OP_LT, z3.Z3_OP_GE):
            continue
        for split in splits:
            c = cofactor(b, split.divisor) if a.eq(split.dividend) else None
            if c is not None:
                pairs.append((t, split.quotient < c if kind == z3.Z3_OP_LT else split.quotient >= c))
                break
    return substitute(term, pairs)


ORDER = (z3.Z3_OP_LT, z3.Z3_OP_LE, z3.Z3_OP_GT, z3.Z3_OP_GE)


def cofactor(product: z3.ExprRef, factor: z3.ExprRef) -> z3.ExprRef | None:
    """c with product == factor * c syntactically (factor one of the product's factors), else None."""
    if not z3.is_mul(product):
        return None
    factors = list(product.children())
    for k, f in enumerate(factors):
        if f.eq(factor):
            rest = factors[:k] + factors[k + 1 :]
            return rest[0] if len(rest) == 1 else z3.Product(*rest)
    return None


def split_conditions(splits: list[Split], at) -> list[z3.BoolRef]:
    """What makes each split's unknowns the real quotient and remainder at the guess: the dividend is
    quotient * divisor + remainder with 0 <= remainder < divisor (z3's `/` and `%`, floored for a positive
    divisor; the kernel's `//` of a non-negative dividend is the same)."""
    conditions = []
    for split in splits:
        q, r, b = at(split.quotient), at(split.remainder), at(split.divisor)
        conditions += [at(split.dividend) == q * b + r, r >= 0, r < b]
    return conditions


def split_divisions(indices: list[z3.ExprRef], unknowns: dict[str, z3.ArithRef]):
    """Each `u // b` and `u % b` in the indices whose dividend u depends on the unknowns and holds no other
    such division, and whose divisor b does not (a constant or a term over sizes: `q % G` and `q // G` of a
    grouped order, `zh // H` and `zh % H` of a flattened grid axis, `t // per_group` of a 1-D grouped or
    persistent tile index): the quotient and the remainder become unknowns of their own, so the affine
    indices can be solved for them; u is rebuilt as quotient * b + remainder once both are known. Repeated
    until none is left, so `(t % P) % G` is split twice, outside in.

    Returns the rewritten indices and the splits in the order made; their unknowns are added to `unknowns`."""
    splits: list[Split] = []
    if not any(has_symbolic_division(i, numerals=True) for i in indices):
        return indices, splits  # the common case, told by a walk in z3's C API
    for _ in range(8):
        found = None
        for index in indices:
            found = found or next(iter(divisions_of(index, unknowns)), None)
        if found is None:
            break
        u, b = found
        k = len(splits)
        split = Split(u, b, z3.Int(f"quotient#{k}"), z3.Int(f"remainder#{k}"))
        unknowns[str(split.quotient)], unknowns[str(split.remainder)] = split.quotient, split.remainder
        indices = [split.rewrite(i) for i in indices]
        splits.append(split)
    return indices, splits


def divisions_of(term: z3.ExprRef, unknowns: dict[str, z3.ArithRef]) -> list[tuple[z3.ArithRef, z3.ArithRef]]:
    """The (dividend, divisor) pairs of split_divisions in `term`, innermost first."""
    variables = list(unknowns.values())
    # a divisor may use an earlier split's quotient (a grouped order's group size depends on the group,
    # `pid // per_group`), which is solved before the dividends are rebuilt
    free = [v for n, v in unknowns.items() if not n.startswith("quotient#")]
    found = []
    for t in subterms(term):
        if not (z3.is_idiv(t) or z3.is_mod(t)):
            continue
        u, b = t.arg(0), t.arg(1)
        if depends_on(b, free) or not depends_on(u, variables):
            continue
        if any((z3.is_idiv(s) or z3.is_mod(s)) and depends_on(s, variables) for s in subterms(u)):
            continue
        found.append((u, b))
    return found


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
            if z3.is_const(b) and str(b) in names and free_of_unknowns(a) and not z3.is_int_value(a):
                return {str(b): a}, z3.IntVal(0)  # an unknown times a term over sizes (radix_order)
            if z3.is_const(a) and str(a) in names and free_of_unknowns(b):
                return {str(a): b}, z3.IntVal(0)
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
