"""Tags, tag assertions, invariants and compiler hints: the claims a kernel states about itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

import z3

from argus.dsl import ir
from argus.verify.model import Context, Obligation, Sym
from argus.verify.rules import rule
from argus.verify.terms import (
    COORDS,
    move_coords,
    trunc_mod,
)
from argus.verify.values import coord_list, coord_ranges

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


@rule("hint")
def hint_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    n, fn = op.attrs["n"], op.attrs["fn"]
    term = ev.int_term(x)
    goal, ranges, claim = HINT_GOALS[fn](term, x.shape, n, ev.nonnegative)
    ev.emit(
        Obligation(
            "hint",
            "AR309",
            op.span,
            f"compiler hint not established: {claim}",
            goal,
            context.assumptions + ranges,
            context.loops,
            ev.program,
            coord_list(x.shape),
            [("x", term)],
        )
    )
    ev.result(op, x)


@rule("tag")
def tag_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    tags = dict(x.tags)
    for name, value in zip(op.attrs["names"], op.operands[1:], strict=True):
        tags[name] = ev.int_term(ev.get(value))
    ev.result(op, Sym(x.shape, x.term, x.layout, tags, x.valid, x.lanes))


@rule("tag_read")
def tag_read_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    name = op.attrs["name"]
    if name in x.tags:
        ev.result(op, Sym((), x.tags[name]))
        return
    known = ", ".join(sorted(x.tags)) or "none"
    what = op.operands[0].name or "the value"
    ev.emit(
        Obligation(
            "tag_missing",
            "AR308",
            op.span,
            f"`{what}` has no tag `{name}` here (its tags: {known})",
            z3.BoolVal(False),
            list(context.assumptions),
            context.loops,
            ev.program,
        )
    )
    ev.result(op, Sym((), ev.shared.fresh(f"missing tag {name}")))


@rule("assert_tag")
def assert_tag_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    x = ev.get(op.operands[0])
    what = op.operands[0].name or "the value"
    for name, value in zip(op.attrs["names"], op.operands[1:], strict=True):
        expected = ev.int_term(ev.get(value))
        if name not in x.tags:
            goal, shown = z3.BoolVal(False), [("expected", expected)]
            message = f"`{what}` has no tag `{name}` here (its tags: {', '.join(sorted(x.tags)) or 'none'})"
            kind, code = "tag_missing", "AR308"
        else:
            goal, shown = x.tags[name] == expected, [(f"{what}.{name}", x.tags[name]), ("expected", expected)]
            message, kind, code = (
                f"tag assertion fails: {what}.{name} differs from the stated value",
                "tag",
                "AR305",
            )
        ev.emit(
            Obligation(
                kind,
                code,
                op.span,
                message,
                goal,
                list(context.assumptions),
                context.loops,
                ev.program,
                [],
                shown,
                ev.shared.origins.sites(op.operands[0], name) if ev.recording else [],
            )
        )


@rule("assert")
def assert_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    cond = ev.get(op.operands[0])
    ev.emit(
        Obligation(
            "tag",
            "AR305",
            op.span,
            "tag assertion fails",
            ev.bool_term(cond),
            context.assumptions + coord_ranges(cond.shape),
            context.loops,
            ev.program,
            coord_list(cond.shape),
            tag_reads(op, ev),
            ev.shared.origins.reads(op.operands[0]) if ev.recording else [],
        )
    )


@rule("invariant")
def invariant_rule(ev: Evaluator, op: ir.Op, context: Context) -> Context:
    cond = ev.get(op.operands[0])
    term = ev.bool_term(cond)
    if cond.shape:
        term = z3.ForAll(
            [COORDS[k] for k in range(len(cond.shape))], z3.Implies(z3.And(*coord_ranges(cond.shape)), term)
        )
    ev.invariants.append((op, term))
    return context.child(term)


def tag_reads(op: ir.Op, ev: Evaluator) -> list[tuple[str, z3.ExprRef]]:
    """The tag values a condition reads, for the witness: `a.k`, `b.k`."""
    shown = []
    stack, seen = [op.operands[0]], set()
    while stack:
        value = stack.pop()
        if value.id in seen or value.op is None:
            continue
        seen.add(value.id)
        if value.op.kind == "tag_read":
            source = value.op.operands[0].name or "value"
            sym = ev.values.get(value.id)
            if sym is not None and sym.term is not None:
                shown.append((f"{source}.{value.op.attrs['name']}", sym.term))
            continue
        stack.extend(value.op.operands)
    return shown


def multiple_of_goal(term: z3.ArithRef, shape: tuple[int, ...], n: int, nonnegative) -> tuple:
    """Triton's reading (its axis info's divisibility): the first value of every run of consecutive values along
    the last axis is a multiple of n, so `multiple_of(pid * BM + arange(BM), BM)` holds; values that are not
    consecutive (`arange(B) * 4`) are each a run of one, so each must be a multiple."""
    multiple = trunc_mod(term, z3.IntVal(n), nonnegative) == 0
    last = len(shape) - 1
    if last < 0:
        goal = multiple
    else:
        before = move_coords(term, {last: COORDS[last] - 1})
        starts_a_run = z3.Or(COORDS[last] == 0, before + 1 != term)
        goal = z3.Implies(starts_a_run, multiple)
    claim = f"multiple_of(x, {n}): each run of consecutive values starts at a multiple of {n}"
    return goal, coord_ranges(shape), claim


def max_contiguous_goal(term: z3.ArithRef, shape: tuple[int, ...], n: int, nonnegative) -> tuple:
    """Runs of n consecutive values along the last axis."""
    last = len(shape) - 1
    if last < 0:
        goal, ranges = z3.BoolVal(True), []
    else:
        nxt = move_coords(term, {last: COORDS[last] + 1})
        inside = z3.And(trunc_mod(COORDS[last], z3.IntVal(n)) != n - 1, COORDS[last] + 1 < shape[last])
        goal = z3.Implies(inside, nxt == term + 1)
        ranges = coord_ranges(shape)
    return goal, ranges, f"max_contiguous(x, {n}): runs of {n} consecutive values"


# The verifier's rule for each hint built-in (the `fn` of a hint op): (term, shape, n, nonnegative) ->
# (the goal, the element ranges it is asked over, the claim as the message says it).
HINT_GOALS = {"multiple_of": multiple_of_goal, "max_contiguous": max_contiguous_goal}
