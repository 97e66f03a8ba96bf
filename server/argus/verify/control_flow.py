"""Loops and branches: two passes over a loop body, inductive carried layouts, invariants by induction."""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.claims import tag_reads
from argus.verify.data_zeros import counted_sum
from argus.verify.infinite_rows import later_iterations, mentions, running_maxima
from argus.verify.model import Context, Entry, Key, Loop, Obligation, Sym, ZeroTrip
from argus.verify.padding import REAL, Branch, Leaf, Tree, is_zero, leaves
from argus.verify.padding_checks import lane_tree
from argus.verify.replaced_carries import replaced_accumulator_obligations, replaced_carry_obligations
from argus.verify.rescaled_sums import carried_max_obligations, rescale_obligations
from argus.verify.rules import rule
from argus.verify.terms import (
    free_names,
    is_nonnegative,
    lower_bound,
)
from argus.verify.values import aligned, same_term, shape_of, substitute_all
from argus.verify.walked_sums import walked_sum_obligations

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


def folded(term: z3.ArithRef) -> z3.ArithRef:
    """A term of numbers only as one number: `num_programs(0) * BLOCK` with a grid of constants is `132*256`
    to z3 until simplified, and a loop step that is not a number makes the iteration count a variable of its
    own (`iv == start + step * t`, non-linear), which coverage cannot invert."""
    if z3.is_int_value(term) or free_names(term):
        return term
    simple = z3.simplify(term)
    return simple if z3.is_int_value(simple) else term


@rule("for")
def for_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    start, stop, step = (ev.int_term(ev.get(v)) for v in op.operands[:3])
    step = folded(step)
    inits = [ev.get(v) for v in op.operands[3:]]
    body = op.regions[0]
    iv = z3.Int(f"{op.attrs['var']}@{op.span.line + 1}{ev.suffix}")
    loop = Loop(op.attrs["var"], iv, start, step, op.span)
    if z3.is_int_value(step):
        s = step.as_long()
        if s > 0:
            inside = z3.And(iv >= start, iv < stop, (iv - start) % s == 0)
        else:
            inside = z3.And(iv <= start, iv > stop, (start - iv) % (-s) == 0)
    else:
        t = ev.shared.fresh(f"iteration of {op.attrs['var']}", gap=False)
        inside = z3.And(t >= 0, iv == start + step * t, z3.Or(z3.And(step > 0, iv < stop), z3.And(step < 0, iv > stop)))
    if z3.is_int_value(step) and step.as_long() > 0 and is_nonnegative(start, ev.nonnegative):
        ev.nonnegative.add(str(iv))
    loop.inside, loop.stop = inside, stop
    for value in op.regions[0].args[1:]:
        ev.accumulators[value.id] = loop  # a carried value: `acc + x` in the body accumulates x
    inner = context.child(inside, loop)
    has_invariant = any(o.kind == "invariant" for o in body.ops)
    # pass 1: every carried value havocked, to learn which ones the body leaves unchanged
    carried = op.attrs["carried"]
    havocked = [havoc(ev, init, name, has_invariant) for init, name in zip(inits, carried, strict=True)]
    saved, saved_invariants = ev.recording, ev.invariants
    ev.recording, ev.invariants = False, []
    yields = run_body(ev, body, iv, havocked, inner)
    ev.recording = saved
    args = [refine(ev, init, h, y, loop) for init, h, y in zip(inits, havocked, yields, strict=True)]
    running_max_lanes(ev, body, iv, inits, args, loop, inner)
    # pass 2: the real one, repeated (its records dropped) while a carried layout is not inductive
    for attempt in range(4):
        marks = (len(ev.obligations), len(ev.accesses))
        ev.invariants = []
        yields = run_body(ev, body, iv, args, inner)
        stale = [not_inductive(arg, yielded, loop) for arg, yielded in zip(args, yields, strict=True)]
        if not any(stale):
            break
        del ev.obligations[marks[0] :], ev.accesses[marks[1] :]
        for arg, keys in zip(args, stale, strict=True):
            for key in keys if attempt < 2 else list(arg.layout):
                arg.layout.pop(key, None)  # from the third attempt on: no carried layout at all
    if ev.recording:
        prove_invariants(ev, op, loop, context, inner, inits, args, yields)
        rescale_obligations(ev, op, loop, inner)
        carried_max_obligations(ev, op, loop, inner)
        replaced_carry_obligations(ev, op, loop, inner)
        replaced_accumulator_obligations(ev, op, loop, inner)
        walked_sum_obligations(ev, op, loop, inner)
    ev.invariants = saved_invariants
    stop = ev.int_term(ev.get(op.operands[1]))
    for k, (result, init, arg) in enumerate(zip(op.results, inits, args, strict=True)):
        after = after_loop(ev, init, arg, op.attrs["var"])
        after.lanes = counted_lanes(ev, init, body, k, zero_trip_lanes(ev, init, loop, stop))
        ev.set(result, after, op.span)


def running_max_lanes(
    ev: Evaluator, body: ir.Block, iv: z3.ArithRef, inits: list[Sym], args: list[Sym], loop: Loop, inner: Context
) -> None:
    """The lanes of each running max that starts at -inf (infinite_rows): a trial run of the body with the
    start in the first iteration learns what the first iteration leaves; its records are dropped."""
    running = running_maxima(body, inits) if ev.emitting else []
    if not running:
        return
    for k in running:
        args[k].lanes = later_iterations(None, inits[k].lanes, iv, loop.start)
    marks, saved = (len(ev.obligations), len(ev.accesses)), ev.invariants
    ev.invariants = []
    yields = run_body(ev, body, iv, args, inner)
    del ev.obligations[marks[0] :], ev.accesses[marks[1] :]
    ev.invariants = saved
    for k in running:
        first = yields[k].lanes
        if first is not None and mentions(first, set(ev.shared.carried)):
            first = None  # what another carried value decides at iteration 0 says nothing of later ones
        args[k].lanes = later_iterations(first, inits[k].lanes, iv, loop.start)


def run_body(ev: Evaluator, body: ir.Block, iv: z3.ArithRef, args: list[Sym], context: Context) -> list[Sym]:
    ev.values[body.args[0].id] = Sym((), iv)
    for value, sym in zip(body.args[1:], args, strict=True):
        ev.values[value.id] = sym
    ev.block(body, context)
    return [ev.get(v) for v in body.yields]


def havoc(ev: Evaluator, init: Sym, name: str, has_invariant: bool) -> Sym:
    def fresh(hint: str, sort: str = "int") -> z3.ExprRef:
        var = ev.shared.fresh(f"{name}.{hint}", sort, gap=False)
        ev.shared.carried[str(var)] = has_invariant
        return var

    term = None
    if init.term is not None:
        term = fresh("value", "bool" if z3.is_bool(init.term) else "int")
    tags = {tag: fresh(tag) for tag in init.tags}
    return Sym(init.shape, term, dict(init.layout), tags, None)


def not_inductive(arg: Sym, yielded: Sym, loop: Loop) -> list[Key]:
    """The carried layout entries one iteration does not reproduce for the next (index at iv + step)."""
    stale = []
    for key, entry in arg.layout.items():
        after = yielded.layout.get(key)
        form = entry.later if entry.later is not None else entry.term
        expected = substitute_all(form, [(loop.iv, loop.iv + loop.step)])
        if after is None or not same_term(after.term, expected):
            stale.append(key)
    return stale


def refine(ev: Evaluator, init: Sym, havoc: Sym, yielded: Sym, loop: Loop) -> Sym:
    """The carried value for the real pass: exact where the body leaves it unchanged, havoc elsewhere.

    A carried layout entry is kept when it is the same every iteration, or when it follows the loop
    variable (a tile prefetched for the next iteration, `A[M: ..., K: iv + j]`): the index the body yields
    for iteration iv + step, shifted back to iv; where that does not give the index from before the loop
    at the first value, iteration 0 keeps the one from before the loop (`If(iv == start, ...)`). The real
    pass then checks that the body reproduces it (`not_inductive`)."""
    iv = loop.iv
    term = havoc.term
    if havoc.term is not None and yielded.term is not None:
        if yielded.term.eq(havoc.term):
            term = init.term
        else:
            counter = affine_counter(init, havoc, yielded, loop)
            term = havoc.term if counter is None else counter
    tags = {}
    for name, var in havoc.tags.items():
        tags[name] = init.tags[name] if name in yielded.tags and yielded.tags[name].eq(var) else var
    # a tag set only inside the loop is not carried: iteration 0 does not have it
    layout = {}
    iv_name = str(iv)
    for key, entry in yielded.layout.items():
        first = init.layout.get(key)
        names = free_names(entry.term)
        unchanged = first is not None and same_term(first.term, entry.term)
        invariant = first is None and iv_name not in names and not any(n.startswith("?") for n in names)
        if unchanged or invariant:
            layout[key] = entry
            continue
        if first is None or any(n.startswith("?") for n in names):
            continue
        shifted = substitute_all(entry.term, [(iv, iv - loop.step)])
        if same_term(substitute_all(shifted, [(iv, loop.start)]), first.term):
            layout[key] = Entry(shifted, entry.label, entry.stat, entry.origin)
        else:  # iteration 0 holds what came before the loop (a prologue), later ones what the body fetched
            term = z3.If(iv == loop.start, first.term, shifted)
            layout[key] = Entry(term, entry.label, entry.stat, entry.origin, later=shifted)
    return Sym(init.shape, term, layout, tags, None)


def affine_counter(init: Sym, havoc: Sym, yielded: Sym, loop: Loop) -> z3.ArithRef | None:
    """A carried integer the body advances by the same amount c every iteration (`k_off += BK`): its value
    at iteration iv, `init + (iv - start) / step * c` (the division exact), or None.

    Pass 1 ran the body with every carried value havocked, so the yield minus the havoc is c exactly when it
    mentions no havoc (no carried value, no value the body makes up each iteration) and not the loop
    variable: it is then the same number every iteration, and by induction the value after k iterations is
    init + k * c."""
    if init.term is None or z3.is_bool(init.term) or z3.is_bool(yielded.term):
        return None
    step = loop.step
    c = z3.simplify(yielded.term - havoc.term)
    names = free_names(c)
    if str(loop.iv) in names or any(n.startswith("?") for n in names):
        return None
    if z3.is_int_value(c) and c.as_long() == 0:
        return init.term
    offset = loop.iv - loop.start
    if same_term(c, step):
        moved = offset
    elif not z3.is_int_value(step) or step.as_long() == 0:
        return None
    elif step.as_long() == 1:
        moved = c * offset
    elif z3.is_int_value(c) and c.as_long() % step.as_long() == 0:
        moved = (c.as_long() // step.as_long()) * offset
    else:
        moved = c * (offset / step)  # exact: iv - start is a multiple of the step inside the loop
    return init.term + moved


def after_loop(ev: Evaluator, init: Sym, arg: Sym, var: str) -> Sym:
    term = arg.term
    if term is not None and (init.term is None or not term.eq(init.term)):
        term = ev.shared.fresh(f"{var}-loop result", "bool" if z3.is_bool(term) else "int")
    tags = {}
    for name, value in arg.tags.items():
        if init.tags.get(name) is not None and value.eq(init.tags[name]):
            tags[name] = value
        else:
            tags[name] = ev.shared.fresh(f"tag {name} after the {var} loop")
    return Sym(arg.shape, term, dict(arg.layout), tags, None)


def zero_trip_lanes(ev: Evaluator, init: Sym, loop: Loop, stop: z3.ArithRef) -> Tree | None:
    """What the lanes of a float carried value hold after its loop, when that matters to a division
    (AR314): its value before the loop where the loop runs no iteration, any real number otherwise. Only for
    a value that starts at exactly 0 somewhere (`l_i = zeros(...)`, a running sum), the one start a
    division cannot take; every other carried value keeps no lanes after the loop, as before."""
    if not ev.emitting or init.term is not None or init.lanes is None:
        return None
    if not any(is_zero(leaf.values) for _, leaf in leaves(init.lanes)):
        return None
    step = loop.step
    if z3.is_int_value(step) and step.as_long() > 0 and surely_runs(ev, loop.start, stop):
        return None  # `range(0, N, BK)`: the branch would only follow the value through the kernel for nothing
    if z3.is_int_value(step):
        none = loop.start >= stop if step.as_long() > 0 else loop.start <= stop
    else:
        none = z3.Not(z3.Or(z3.And(step > 0, loop.start < stop), z3.And(step < 0, loop.start > stop)))
    if z3.is_false(z3.simplify(none)):
        return None
    ev.zero_trips[none.get_id()] = ZeroTrip(loop, stop)
    return Branch(none, init.lanes, Leaf(REAL))


def counted_lanes(ev: Evaluator, init: Sym, body: ir.Block, k: int, after: Tree | None) -> Tree | None:
    """A running count from 0 (`cnt += where(keep, 1.0, 0.0)`): 0 after the loop too where the data selects
    nothing in any iteration (data_zeros.py), beside `after` (its value where the loop runs no iteration)."""
    if not ev.emitting or init.lanes is None or not all(is_zero(leaf.values) for _, leaf in leaves(init.lanes)):
        return after
    update = body.yields[k].op
    if update is None or update.kind != "binary" or update.attrs.get("op") != "+":
        return after
    added = [v for v in update.operands if v.id != body.args[1 + k].id]
    if len(added) != 1 or added[0].id not in ev.values:
        return after
    data = counted_sum(ev, lane_tree(ev, ev.get(added[0])))
    if data is None:
        return after
    if isinstance(after, Branch):  # the loop may run no iteration: the count stays 0 there as well
        return Branch(after.cond, after.then, data)
    return data


def surely_runs(ev: Evaluator, start: z3.ArithRef, stop: z3.ArithRef) -> bool:
    """A syntactic proof that stop > start, a number (terms.lower_bound, each size at least 1): the loop
    `range(0, N, BN)` or `range(0, (pid + 1) * BM, BN)` runs at least once in every program. It makes no
    z3 term (a new term would move the ids, and so the order, of every term z3 simplifies after it)."""
    if not z3.is_int_value(start):
        return False
    bound = lower_bound(stop, ev.nonnegative, ev.shared.sizes.keys())
    return bound is not None and bound > start.as_long()


def is_havoc(term: z3.ExprRef) -> bool:
    """A carried value's havoc variable (not its value before the loop, nor an inferred affine counter)."""
    return z3.is_const(term) and term.decl().kind() == z3.Z3_OP_UNINTERPRETED and str(term).startswith("?")


def prove_invariants(
    ev: Evaluator,
    op: ir.Op,
    loop: Loop,
    outer: Context,
    inner: Context,
    inits: list[Sym],
    args: list[Sym],
    yields: list[Sym],
) -> None:
    if not ev.invariants:
        return
    entry_pairs = [(loop.iv, loop.start)]
    step_pairs = [(loop.iv, loop.iv + loop.step)]
    for init, arg, yielded in zip(inits, args, yields, strict=True):
        if arg.term is not None and init.term is not None and is_havoc(arg.term):
            entry_pairs.append((arg.term, init.term))
            if yielded.term is not None:
                step_pairs.append((arg.term, yielded.term))
        for name, var in arg.tags.items():
            if init.tags.get(name) is not None and var.eq(init.tags[name]):
                continue
            entry_pairs.append((var, init.tags.get(name, ev.shared.fresh(f"unset tag {name}"))))
            step_pairs.append((var, yielded.tags.get(name, ev.shared.fresh(f"unset tag {name}"))))
    runs = z3.Or(
        z3.And(loop.step > 0, loop.start < ev.int_term(ev.get(op.operands[1]))),
        z3.And(loop.step < 0, loop.start > ev.int_term(ev.get(op.operands[1]))),
    )
    stop = ev.int_term(ev.get(op.operands[1]))
    nxt = loop.iv + loop.step
    has_next = z3.Or(z3.And(loop.step > 0, nxt < stop), z3.And(loop.step < 0, nxt > stop))
    # the body's assumptions: the loop range and every invariant, as the body saw them
    body_facts = list(inner.assumptions) + [t for _, t in ev.invariants]
    for inv, term in ev.invariants:
        reads = tag_reads(inv, ev)
        related = [(op.span, "the loop"), *ev.shared.origins.reads(inv.operands[0])]
        ev.emit(
            Obligation(
                "invariant_entry",
                "AR306",
                inv.span,
                "loop invariant does not hold on entry to the loop",
                substitute_all(term, entry_pairs),
                [*outer.assumptions, runs],
                outer.loops,
                ev.program,
                [],
                [(f"{loop.name} (first value)", loop.start)]
                + [(f"{name} on entry", substitute_all(t, entry_pairs)) for name, t in reads],
                related,
            )
        )
        ev.emit(
            Obligation(
                "invariant_step",
                "AR307",
                inv.span,
                "loop invariant is not preserved by an iteration",
                substitute_all(term, step_pairs),
                [*body_facts, has_next],
                inner.loops,
                ev.program,
                [],
                [(f"{loop.name} (next value)", nxt)]
                + [(f"{name} after the iteration", substitute_all(t, step_pairs)) for name, t in reads],
                related,
            )
        )


@rule("if")
def if_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    cond = ev.bool_term(ev.get(op.operands[0])) if op.operands else ev.shared.fresh("if", "bool")
    then_block, else_block = op.regions
    ev.block(then_block, context.child(cond))
    then_values = [ev.get(v) for v in then_block.yields]
    ev.block(else_block, context.child(z3.Not(cond)))
    else_values = [ev.get(v) for v in else_block.yields]
    for result, a, b in zip(op.results, then_values, else_values, strict=True):
        shape = shape_of(result.type)
        a, b = aligned(a, shape), aligned(b, shape)
        term = None
        if a.term is not None and b.term is not None:
            if z3.is_bool(a.term) == z3.is_bool(b.term):
                term = z3.If(cond, a.term, b.term)
            else:
                term = z3.If(cond, ev.int_term(a), ev.int_term(b))
        layout = {k: e for k, e in a.layout.items() if k in b.layout and b.layout[k].term.eq(e.term)}
        tags = {n: z3.If(cond, t, b.tags[n]) for n, t in a.tags.items() if n in b.tags}
        ev.set(result, Sym(shape, term, layout, tags), op.span)
