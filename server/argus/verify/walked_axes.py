"""AR316 without a dot: a loop that accumulates what it loads reads every index of the axis it walks.

An RMSNorm whose sum-of-squares loop is `range(0, N - BN, BN)` stops one block early: every access is in
bounds, nothing races, every output element is written, and no dot contracts anything, so neither AR304 nor
the dot half of AR316 sees that the last columns never reach the sum. The obligation: for a `for` loop whose
carried value is updated by `acc + x`, `maximum(acc, x)` or `minimum(acc, x)` with x computed in the body from
loads through elementwise ops and reductions (no `dot`: contraction_coverage.py owns those), each such load
that walks an axis of its tensor block by block (the index along it is `a * iv + lane + b`, a > 0 a number,
`lane` one tile axis, b and the loop's start and stop over sizes only, the stop naming that axis's extent)
reads every index 0 <= x < extent of that axis in some iteration and lane, unmasked by the conditions on the
walk (the mask's conjuncts over the loop variable and the lane alone).

The claim is ∀∃; the reader is constructed: iteration n = (x - b - a * start) // (a * step), lane x - a * iv_n -
b; z3 checks that it is a real read of x. A refuted guess is checked as coverage's is (solve.Prover.hole): with
the witness's sizes and x as numbers, "some iteration and lane reads x" is a linear query; unsatisfiable makes
it an error, a reader found an AR312.

Left out, so that a kernel meaning less is not blamed: a loop whose range depends on program ids or data
(split rows, causal bounds), an index whose offset does (a block of rows per program walks the columns: the
columns are the walked axis, the rows are not), a window loop whose stop does not name the axis's extent
(a convolution's taps over x's length; its taps over a filter `w: f32[5]` walk w, when the stop and the
extent are both numbers), and loads that only reach the accumulator through a `dot`.
"""

from __future__ import annotations

from functools import partial

import z3

from argus.dsl import ir
from argus.verify.contraction_coverage import ContractionCoverageObligation, conjuncts
from argus.verify.dataflow import accumulates
from argus.verify.model import Access, Loop, Obligation
from argus.verify.terms import COORDS, depends_on, free_names, slope, substitute

ELEMENTWISE = ("binary", "unary", "cast", "math", "where", "reduce", "expand_dims", "broadcast_to")
WALK = z3.Int("walked#x")  # the index along the walked axis the claim is about


def walked_axis_obligations(first) -> list[Obligation]:
    """AR316 for each load an accumulating loop walks along an axis, one per walked axis."""
    loops = accumulated_loads(first.kernel)
    sizes = set(first.shared.sizes)
    # the tile constant a width is declared as, for the hint (`range(0, N, BN)`, not `range(0, N, 256)`)
    widths = {c.value: name for name, c in reversed(first.kernel.constants.items()) if isinstance(c.value, int)}
    obligations: list[Obligation] = []
    for access in first.accesses:
        loop_op = loops.get(id(access.op)) if access.kind == "load" else None
        if loop_op is None or not access.context.loops or access.context.loops[-1].span != loop_op.span:
            continue
        loop = access.context.loops[-1]
        for axis in range(len(access.indices)):
            made = walked(access, axis, loop, sizes, widths)
            if made is not None:
                obligations.append(made)
    return obligations


def accumulated_loads(kernel: ir.KernelIR) -> dict[int, ir.Op]:
    """The loads (by `id`) whose values a loop's carried accumulator takes in, each with that `for` op: from
    the body's yield of `acc + x` (or maximum, minimum) back through elementwise ops and reductions to loads in
    the body. An accumulation that meets a `dot` on the way is left out whole."""
    found: dict[int, ir.Op] = {}
    for op in ir.walk_ops(kernel.body):
        if op.kind != "for":
            continue
        body = op.regions[0]
        for arg, yielded in zip(body.args[1:], body.yields, strict=True):
            update = yielded.op
            if update is None or not accumulates(update):
                continue
            if arg.id not in [v.id for v in update.operands]:
                continue
            loads = loads_behind([v for v in update.operands if v.id != arg.id], body)
            if loads is not None:
                found.update((id(load), op) for load in loads)
    return found


def loads_behind(values: list[ir.Value], body: ir.Block) -> list[ir.Op] | None:
    """The loads of `body` that `values` are computed from through elementwise ops; None when a `dot` is."""
    inside = {id(op) for op in body.ops}
    loads: list[ir.Op] = []
    stack, seen = list(values), set()
    while stack:
        v = stack.pop()
        if v.id in seen or v.op is None or id(v.op) not in inside:
            continue
        seen.add(v.id)
        op = v.op
        if op.kind == "dot":
            return None
        if op.kind == "load":
            loads.append(op)
        elif op.kind in ELEMENTWISE:
            stack += op.operands
    return loads


def walked(access: Access, axis: int, loop: Loop, sizes: set[str], widths: dict[int, str]) -> Obligation | None:
    """The claim for one axis of one load, or None when the index is not a block walk of the loop."""
    iv, index, stop = loop.iv, access.indices[axis], loop.stop
    if stop is None or not depends_on(index, [iv]) or not z3.is_int_value(loop.step) or loop.step.as_long() <= 0:
        return None
    extent = access.dims[axis]
    if not (free_names(loop.start) | free_names(stop) | free_names(extent)) <= sizes:
        return None
    numerals = z3.is_int_value(z3.simplify(stop)) and z3.is_int_value(z3.simplify(extent))
    if not numerals and not free_names(stop) & free_names(extent):
        return None  # a window (a convolution's taps over x's length), not a walk along the axis
    coefficient = slope(index, iv)
    if coefficient is None or coefficient.as_long() <= 0:
        return None
    slopes = [slope(index, COORDS[k]) for k in range(len(access.shape))]
    lane = next((k for k, step in enumerate(slopes) if step is not None and step.as_long() == 1), None)
    if lane is None and depends_on(index, list(COORDS[: len(access.shape)])):
        return None
    # an index no lane moves walks one index an iteration: a filter's taps (`load(w[j])` in
    # `static_range(KS)`), the planes of a split-K workspace summed by `for s in range(S): P[s, rm, rn]`
    e, width = (COORDS[lane], access.shape[lane]) if lane is not None else (z3.IntVal(0), 1)
    offset = z3.simplify(substitute(index, [(iv, z3.IntVal(0)), (e, z3.IntVal(0))]))
    rebuilt = coefficient * iv + e + offset
    if not free_names(offset) <= sizes or not z3.is_true(z3.simplify(index == rebuilt)):
        return None
    walk_mask = z3.And(*[c for c in conjuncts(access.mask) if free_names(c) <= sizes | {str(iv), str(e)}])
    reads = z3.And(loop.inside, e >= 0, e < width, index == WALK, walk_mask)
    stride = coefficient.as_long() * loop.step.as_long()
    n = (WALK - offset - coefficient * loop.start) / stride
    at = loop.start + loop.step * n
    guess = substitute(reads, [(iv, at), (e, WALK - coefficient * at - offset)])
    label, tile = access.labels[axis], widths.get(width, str(width))
    hint = (
        f"the loop must walk all of {label}: `range(0, {label}, {tile})` over `{loop.name} + arange({tile})` masked "
        f"by `< {label}`"
    )
    along = f"axis {axis} (of {label})" if label.isdigit() else label  # `w: f32[5]` has no name for it
    if lane is None:
        hint = f"the loop must read every index of `{access.tensor}` along {along}: `range({label})`"
    shown = [(f"{access.tensor} index {axis} ({label})", WALK)]
    what = f"the `{loop.name}` loop, which accumulates what it loads from `{access.tensor}`"
    return ContractionCoverageObligation(
        "walked_axis",
        "AR316",
        loop.span,
        f"some index of `{access.tensor}` along {along} may never be read by {what}",
        guess,
        [z3.And(WALK >= 0, extent > WALK)],
        [],
        [],
        [],
        shown,
        [(access.span, f"the load whose {label} indices the loop walks")],
        hint,
        writers=partial(lambda r: r, reads),
        tensor=access.tensor,
        confirmed_message=f"an index of `{access.tensor}` along {along} is never read by {what}: the reduction "
        "misses it",
    )
