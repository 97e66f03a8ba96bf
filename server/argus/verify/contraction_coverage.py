"""AR316: every index of a dot's contraction reaches the value stored (issue 17).

A GEMM whose K loop drops a block (`range(0, K - BK, BK)`, a step of `2 * BK`, a loop that starts one block
late after a prologue) writes every element, in bounds and without a race, and its dots pair matching K
indices: nothing else sees that the sums miss K indices. The obligation: for each element x of an output that
a `store` or `atomic_add` writes with a value some `dot`s accumulated (followed back as contributions.py does:
the accumulator, the loop that carries it, `+`, `-`, `*`, casts), and each index k of the contracted dimension
(0 <= k < K, the extent of the loaded tensor's axis), some program, iteration of the loops around a dot and K
lane read k unmasked and write x. For atomics the programs are all those adding into x (split-K's slices);
for atomic_max and atomic_min, whose programs each must bring every k (a max of partial sums is no sum), this
is a necessary condition only: what it refutes is a real miss, a split-K combined by max is not caught.
Where the output has other writes too, x ranges over the elements this write writes (its own program,
iteration and lane a hypothesis), not over the whole output: two stores to two planes each cover one.

The claim is ∀∃, so the reader is constructed as coverage constructs a writer: the write and the K index read
by one dot are one access of rank + 1 (the K lane a coordinate of its own, the dot's loops around it), whose
program, iteration counts and lane coverage.Guess solves from (x, k) (`k0 + kk` with `k0 = start + step * n`
gives `n = (k - start) // step`, `kk = k - start - step * n`); z3 checks that the guess is a real read of k
into x, a quantifier-free claim. Several dots reaching one output (a prologue's or a peeled last block's
dot beside the loop's) are alternatives. A refuted guess is checked as coverage's is (solve.Prover.hole):
with the witness's sizes, element and K index as numbers, "some program, iteration and lane reads k into x"
is a linear query; unsatisfiable makes the diagnostic an error, a reader found makes it AR312.

The common K loop (`range(0, K, BK)` over `k0 + arange(BK)`, masked by `rk < K` or not at all, the output's
only write) is not inverted: its K half holds by its terms (k_part_holds), so the claim is the output's AR304,
proved with it; built and decided as above only when that AR304 is not proved.

A K index a `where` zeroes in a dot's operand for the element (`where(rk[None, :] <= rm[:, None], a, 0.0)`
in tril(A) @ B) adds 0 there whatever the loop reads: the claim is only about the K indices kept
(`kept_indices`), when the condition turns into one on the element and the K index alone.

Not checked: an output with an axis that no operand's rows or columns index (a split-K workspace
`P[ks, m, n]` holds one slice's partial sum: its K range is the slice's), a value no dot inside a loop
contributes to (a single dot over a whole tile), and a dot whose contracted index the evaluator did not record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import z3

from argus.dsl import ir
from argus.dsl.atomics import WRITES
from argus.verify.contributions import carried_args, contributing_dots, lane_access, written_values
from argus.verify.coverage import TARGETS, guesses, writer
from argus.verify.model import Access, Contraction, Obligation
from argus.verify.terms import free_names, substitute


@dataclass(slots=True)
class ContractionCoverageObligation(Obligation):
    """AR316's claim, with coverage's `writers` (here: "some program, iteration and K lane reads the K index
    into the element") for solve.Prover to confirm a refuted guess, and the message of a confirmed one."""

    writers: object = None
    tensor: str = ""
    confirmed_message: str = ""
    dots: list = field(default_factory=list)  # the dots' spans: a refuted AR310 there suppresses this (kernel.echo)
    defined_divisions: bool = False  # decided first with its divisions defined (coverage.Guess.defined)
    covers: str = ""  # the output whose proved AR304 proves this claim too (`implied`); "" when it is built
    build: object = None  # with `covers`: makes the claim itself, for when that AR304 is not proved


def stored_dots(kernel: ir.KernelIR) -> set[int]:
    """The ids (`id(op)`) of the dots whose sums a `store` or an atomic of the kernel writes."""
    carried = carried_args(kernel)
    found: set[int] = set()
    for op in ir.walk_ops(kernel.body):
        if op.kind in WRITES:
            value = ir.memory_access(op).value
            if value is not None:
                found.update(id(dot) for dot in contributing_dots(value, carried))
    return found


def contraction_coverage_obligations(first, grid: list[z3.ArithRef]) -> list[Obligation]:
    """AR316 for each write of a value `dot`s accumulated, one per contracted dimension."""
    kernel = first.kernel
    params = {p.name: p for p in kernel.params}
    carried = carried_args(kernel)
    obligations: list[Obligation] = []
    for write, value in written_values(first):
        groups: dict[int, list[tuple[ir.Op, Contraction, tuple[str, int]]]] = {}
        extents: dict[int, tuple[z3.ArithRef, str]] = {}
        for dot in contributing_dots(value, carried):
            found = first.contractions.get(id(dot))
            for c in [] if found is None else unrolled(found, write):
                key = chosen_key(c, write, params)
                if key is None:
                    continue
                extent = first.shared.dims(params[key[0]])[key[1]]
                groups.setdefault(extent.get_id(), []).append((dot, c, key))
                extents[extent.get_id()] = (extent, c.indices[key][1])
        for k, group in groups.items():
            if any(len(c.loops) > len(write.context.loops) for _, c, _ in group):
                extent, label = extents[k]
                args = (first, write, group, extent, label, grid)
                if sole_write(first, write, params) and any(k_part_holds(write, c, key, extent) for _, c, key in group):
                    obligations.append(implied(*args))
                else:
                    obligations.append(reaches(*args))
    return obligations


UNROLLED = 8  # a loop of at most this many iterations, all of them constants, is one dot per iteration


def unrolled(c: Contraction, write: Access) -> list[Contraction]:
    """The dot as alternatives, one per iteration of each loop around it (and inside the write's loops) that
    runs a few constant iterations: the taps of a convolution (`for t in static_range(KW)`), whose
    variable neither the output's index nor the K index names, so no guess could say which tap reads an
    element (`x[n, c, 2 * l - 1 + t]` masks tap 0 off at l = 0, where tap 1 reads it)."""
    out = [c]
    for depth, loop in enumerate(c.loops):
        if depth < len(write.context.loops):
            continue
        iterations = constant_iterations(loop)
        if iterations is None:
            continue
        out = [instance(each, loop, value) for each in out for value in iterations]
    return out


def constant_iterations(loop) -> list[int] | None:
    ends = [loop.start, loop.stop, loop.step]
    if any(e is None or not z3.is_int_value(z3.simplify(e)) for e in ends):
        return None
    start, stop, step = (z3.simplify(e).as_long() for e in ends)
    values = list(range(start, stop, step)) if step > 0 else []
    return values if 0 < len(values) <= UNROLLED else None


def instance(c: Contraction, loop, value: int) -> Contraction:
    pairs = [(loop.iv, z3.IntVal(value))]
    return Contraction(
        {k: (substitute(term, pairs), label) for k, (term, label) in c.indices.items()},
        [substitute(m, pairs) for m in c.masks],
        [substitute(a, pairs) for a in c.assumptions if not (loop.inside is not None and a.eq(loop.inside))],
        [each for each in c.loops if each is not loop],
        c.lane,
        c.lane_range,
        c.span,
        c.extent,
    )


def sole_write(first, write: Access, params) -> bool:
    """`write` is the only store or atomic_add of its output, over the output's whole extent: AR304's claim
    for the output is then "some program, iteration and element of `write` writes x", AR316's first half."""
    writes = [a for a in first.accesses if a.tensor == write.tensor and a.kind in WRITES]
    dims = first.shared.dims(params[write.tensor]) if write.tensor in params else None
    return (
        writes == [write]
        and dims is not None
        and len(dims) == len(write.dims)
        and all(a.eq(b) for a, b in zip(dims, write.dims, strict=True))
    )


def k_part_holds(write: Access, c: Contraction, key: tuple[str, int], extent: z3.ArithRef) -> bool:
    """AR316's K half, read off the terms: whichever program, iteration and element of `write` writes x, every
    0 <= k < K is read unmasked by the dot's iteration n = k // BK and lane k % BK. It holds when the dot sits
    in one loop inside the write's, `range(0, K, BK)` with BK the dot's K lanes (n * BK <= k < K, so the
    iteration runs and its range fact `0 <= k0 < K, k0 % BK == 0` holds), the contracted index is `k0 + kk`
    (so it is k), each operand mask's conjunct is `k0 + kk < K` (true at k) or one of the write's mask's (true
    where the write writes x), and each condition the dot runs under is the loop's range or one the write
    runs under. coverage.Guess then solves the K lane exactly as said (the largest coefficient, BK of n,
    takes k // BK), so AR316's constructed claim is AR304's for the write and K conjuncts that always hold:
    one is proved exactly when the other is (kernel.verify_kernel decides AR304 first)."""
    loops = write.context.loops
    if len(c.loops) != len(loops) + 1:
        return False
    loop = c.loops[-1]
    inside = loop.inside
    if not (z3.is_int_value(loop.step) and loop.step.as_long() == c.extent > 0):
        return False
    if not (z3.is_int_value(loop.start) and loop.start.as_long() == 0):
        return False
    if inside is None or not z3.is_and(inside) or inside.num_args() != 3:
        return False
    bound = inside.arg(1)
    if not (z3.is_lt(bound) and bound.arg(0).eq(loop.iv) and same(bound.arg(1), extent)):
        return False
    index = c.indices[key][0]
    if not (z3.is_add(index) and index.num_args() == 2):
        return False
    if {index.arg(0).get_id(), index.arg(1).get_id()} != {loop.iv.get_id(), c.lane.get_id()}:
        return False
    kept = {t.get_id() for t in conjuncts(write.mask)}
    for mask in c.masks:
        for t in conjuncts(mask):
            in_k = z3.is_lt(t) and t.arg(0).eq(index) and same(t.arg(1), extent)
            if not in_k and t.get_id() not in kept:
                return False
    known = {a.get_id() for a in write.context.assumptions} | {inside.get_id()}
    return all(a.get_id() in known for a in c.assumptions)


def same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """The same term, up to z3's simplification (a tensor's extent is `K + 0` where the loop stops at `K`)."""
    return a.eq(b) or z3.simplify(a).eq(z3.simplify(b))


def conjuncts(term: z3.BoolRef) -> list[z3.BoolRef]:
    if z3.is_true(term):
        return []
    if z3.is_and(term):
        return [t for child in term.children() for t in conjuncts(child)]
    return [term]


def implied(first, write: Access, group, extent: z3.ArithRef, label: str, grid) -> Obligation:
    """AR316 left to the output's AR304 (k_part_holds): only what kernel.echo and kernel.verify_kernel read,
    the claim itself built (`build`) only when that AR304 is not proved."""
    loop = next(c.loops[-1] for _, c, _ in group if len(c.loops) > len(write.context.loops))
    return ContractionCoverageObligation(
        "contraction_coverage",
        "AR316",
        loop.span,
        "",
        z3.BoolVal(False),
        [],
        [],
        [],
        [],
        dots=[c.span for _, c, _ in group],
        tensor=write.tensor,
        covers=write.tensor,
        build=partial(reaches, first, write, group, extent, label, grid),
    )


def chosen_key(c: Contraction, write: Access, params) -> tuple[str, int] | None:
    """The contracted axis whose index the claim follows (a's, or b's when a's is a carried tile's `If`), or
    None when the write is not one the obligation covers: its loops are not those around the dot, or the
    output has an axis no operand's other axes index (a split-K workspace slice `P[ks, ...]`)."""
    if len(write.context.loops) > len(c.loops):
        return None
    if any(not w.iv.eq(d.iv) for w, d in zip(write.context.loops, c.loops, strict=False)):
        return None
    keys = [k for k in c.indices if k[0] in params]
    if not keys:
        return None
    kept: set[str] = set()
    for tensor in {k[0] for k in keys}:
        contracted = {k[1] for k in keys if k[0] == tensor}
        kept.update(str(d) for n, d in enumerate(params[tensor].type.shape) if n not in contracted)
    if len(write.indices) >= len(TARGETS):
        return None
    # An output axis no operand's other axes index is a split-K slice (`P[ks, m, n]`, whose K range is the
    # slice's) when its index shares a program id or loop variable with the K index the dot reads or the
    # range of the loops that make it; one that does not (a convolution's output position, `y[n, o, l]`
    # against `x[n, c, 2 * l - 1 + t]`) gets every K.
    k_names = reaching_names(c, set().union(*(free_names(c.indices[k][0]) for k in keys)))
    for label, index in zip(write.labels, write.indices, strict=False):
        if label not in kept and free_names(index) & k_names:
            return None
    plain = [k for k in keys if not has_if(c.indices[k][0])]
    return (plain or keys)[0]


def reaching_names(c: Contraction, names: set[str]) -> set[str]:
    """`names` and every name a condition the dot ran under ties to them, transitively: the K index `k0 + kk`
    reaches `ks` through its loop's range `ks * k_per <= k0`."""
    names = set(names)
    grown = True
    while grown:
        grown = False
        for a in c.assumptions:
            found = free_names(a)
            if found & names and not found <= names:
                names |= found
                grown = True
    return names


def has_if(term: z3.ExprRef) -> bool:
    stack, seen = [term], set()
    while stack:
        t = stack.pop()
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        if z3.is_app_of(t, z3.Z3_OP_ITE):
            return True
        stack.extend(t.children())
    return False


def read_access(write: Access, c: Contraction, key: tuple[str, int], carried: set[str]) -> Access:
    """The write and the K index its dot reads as one access: the K lane a coordinate of its own, under the
    write's mask and the operands' masks, in the dot's loops and the write's and the dot's conditions. A
    loop's `invariant` (a condition on the havoc of a carried value, `carried`) is a fact, proved on its own
    (AR306, AR307), not a condition the read must meet: it is left out."""
    seen: set[int] = set()
    assumptions = []
    for a in [*c.assumptions, *write.context.assumptions]:
        if a.get_id() not in seen and not (carried and free_names(a) & carried):
            seen.add(a.get_id())
            assumptions.append(a)
    return lane_access(write, c, key, assumptions)


def reaches(first, write: Access, group, extent: z3.ArithRef, label: str, grid) -> Obligation:
    rank = len(write.indices)  # the output tensor's rank (a scalar index drops a tile axis, not a tensor one)
    targets = TARGETS[: rank + 1]
    carried = set(first.shared.carried)
    reads = [read_access(write, c, key, carried) for _, c, key in group]
    assumptions = [z3.And(x >= 0, x < d) for x, d in zip(targets, [*write.dims, extent], strict=True)]
    if not sole_write(first, write, {p.name: p for p in first.kernel.params}):
        # the claim is about the elements this write writes: complex_gemm's `C[0, ...]` and `C[1, ...]` each
        # reach one plane, which another store's dots fill (its program, iteration and lane stay free, so the
        # hypothesis is universal in them)
        assumptions.append(writer(write, grid, targets[:rank]))
    options, axioms, defined = guesses(first, reads, grid, targets)
    assumptions += axioms + kept_indices(write, group, targets)
    key = group[0][2]
    inner = [c.loops[-1] for _, c, _ in group if len(c.loops) > len(write.context.loops)]
    loop = inner[0]
    shown = [
        (f"{write.tensor} index {d} ({lab})", x) for d, (x, lab) in enumerate(zip(targets, write.labels, strict=False))
    ]
    shown.append((f"{key[0]} index {key[1]} ({label})", targets[rank]))
    related = [(write.span, f"the value written into `{write.tensor}` here misses that {label} index")]
    related += [(c.span, f"a dot whose {label} lanes do not reach it") for _, c, _ in group]
    return ContractionCoverageObligation(
        "contraction_coverage",
        "AR316",
        loop.span,
        f"some {label} index of a contraction may never reach an element of `{write.tensor}`: no iteration of the "
        f"`{loop.name}` loop reads it",
        z3.Or(*options) if options else z3.BoolVal(False),
        assumptions,
        [],
        [],
        [],
        shown,
        related,
        f"each {label} index must reach every output element: the K loop runs over `range(0, {label}, BK)` (or "
        "a prologue's and an epilogue's blocks cover what it does not)",
        writers=partial(readers_of, reads, grid, targets),
        tensor=write.tensor,
        dots=[c.span for _, c, _ in group],
        defined_divisions=defined,
        confirmed_message=f"a {label} index of the contraction never reaches an element of `{write.tensor}`: no "
        f"iteration of the `{loop.name}` loop and no lane of a dot reads it unmasked",
    )


def kept_indices(write: Access, group, targets: list[z3.ArithRef]) -> list[z3.BoolRef]:
    """The (element, K index) pairs some dot of `group` keeps through a `where` on its operand, as a condition
    on `targets`: a triangular product's `rk <= rm` becomes `k <= m`, and only those K indices need reach the
    element (the others add 0). Made by putting the targets for the index terms the condition compares. None
    (no condition: every K index must reach) when a dot keeps every lane or its condition still names a
    lane, a program or a loop variable after that."""
    rank = len(write.indices)
    names = {str(t) for t in targets}
    kept = []
    for _, c, key in group:
        pairs = [(c.indices[key][0], targets[rank])]
        for tile_term, _ in c.tile.values():
            pairs += [(tile_term, targets[d]) for d, index in enumerate(write.indices) if index.eq(tile_term)]
        put = [substitute(condition, pairs) for condition in c.kept]
        if not put or any(not free_names(p) <= names for p in put):
            return []
        kept.append(z3.And(*put))
    return [z3.Or(*kept)] if kept else []


def readers_of(reads: list[Access], grid, targets) -> z3.BoolRef:
    return z3.Or(*[writer(r, grid, targets) for r in reads])
