"""AR321: a sum carried beside a running max is rescaled when the max grows (issue 17, class 6).

An online softmax (flash attention, a logsumexp over column blocks, a cross-entropy over vocabulary blocks)
carries a running max m and sums of exponentials taken under it: l = sum exp(x - m), acc = sum exp(x - m) v.
A block that raises the max to m_new adds terms exp(x - m_new), so the sums must first be multiplied by
exp(m - m_new), or they mix terms taken under two maxima and the output is wrong wherever a later block
holds a larger value. Two mistakes engineers make leave a sum unscaled:

- the rescale is missing for one of the sums (`acc` rescaled by alpha, `l_i = l_i + sum(p)` not);
- the factor is computed after the max was updated (`m_i = m_new`, then `exp(m_i - m_new)`, which is 1);
- the sums are rescaled to the new max, but the loop carries another value on as the max (the block's own),
  so the next block rescales from a max they were not taken under (`carried_max_obligations`).

The check reads the loop body: for a loop that carries a running max (its next value is `maximum(m, x)` of the
carried m), each other carried float whose next value takes in the new max through an `exp` or `exp2` must
take in its own previous value only multiplied by a factor computed from both the old max and the new one
(directly, or as `dot(p, v, acc * alpha[:, None])`). An unscaled use (`l + ...`, a dot accumulating into it)
or a factor that does not depend on the old max is an error. It is decided from the dataflow, not by z3; the
witness z3 gives is the loop's second iteration, the first where a block can raise the max, at the sizes
where that iteration exists.
"""

from __future__ import annotations

import z3

from argus.dsl import ir
from argus.verify.dataflow import PASS_THROUGH, assigned_span, carried_name, upstream
from argus.verify.model import Context, Loop, Obligation
from argus.verify.values import coord_list, coord_ranges, is_float, shape_of

EXPONENTIALS = ("exp", "exp2")


def rescale_obligations(ev, op: ir.Op, loop: Loop, context: Context) -> None:
    """AR321 for the `for` op `op` (its loop `loop`, its body's context `context`)."""
    body = op.regions[0]
    args = body.args[1:]
    for k, (arg, value) in enumerate(zip(args, body.yields, strict=True)):
        if not running_max(arg, value):
            continue
        old, new = arg.id, value.id
        for j, (sum_arg, sum_value) in enumerate(zip(args, body.yields, strict=True)):
            if j == k or not is_float(sum_arg.type):
                continue
            feeds = upstream(sum_value, stop=sum_arg.id)
            if new not in feeds or not any(exponential_of(v, new) for v in feeds.values()):
                continue
            uses = [u for u in uses_of(sum_arg, ev.users) if u.results and u.results[0].id in feeds]
            verdicts = [scaled(u, sum_arg, old, new) for u in uses]
            if not verdicts or any(v is True for v in verdicts):
                continue
            ev.emit(obligation(ev, op, loop, context, k, j, sum_value, verdicts))


def new_maxima(body: ir.Block, arg: ir.Value) -> list[ir.Value]:
    """The values `maximum(arg, x)` the loop body computes from the carried `arg`: its new running max."""
    return [op.results[0] for op in ir.walk_ops(body) if op.results and running_max(arg, op.results[0])]


def carried_max_obligations(ev, op: ir.Op, loop: Loop, context: Context) -> None:
    """AR321 where a loop rescales a carried sum to a new max `m_new = maximum(m, x)` but carries on another
    value as `m` (the block's own max): the next block's factor exp(m - m_new) then starts from a max the sum
    was never taken under."""
    body = op.regions[0]
    args = body.args[1:]
    for k, (arg, value) in enumerate(zip(args, body.yields, strict=True)):
        if not is_float(arg.type) or running_max(arg, value):
            continue
        for new in new_maxima(body, arg):
            if value.id == new.id:
                continue
            for j, (sum_arg, sum_value) in enumerate(zip(args, body.yields, strict=True)):
                if j == k or not is_float(sum_arg.type):
                    continue
                feeds = upstream(sum_value, stop=sum_arg.id)
                if any(exponential_of(v, new.id) for v in feeds.values()):
                    carried = carried_name(op, k, "the running max")
                    why = f"the loop carries another value on as `{carried}`, not `{new.name or 'it'}`"
                    ev.emit(obligation(ev, op, loop, context, k, j, sum_value, [why], carried=True))
                    return


def running_max(arg: ir.Value, value: ir.Value) -> bool:
    op = value.op
    return op is not None and op.kind == "math" and op.attrs.get("fn") == "maximum" and arg in op.operands


def uses_of(value: ir.Value, users: dict[int, list[ir.Op]]) -> list[ir.Op]:
    """The ops that take `value` in, looking through casts and broadcasts."""
    found, stack, seen = [], [value], set()
    while stack:
        v = stack.pop()
        for op in users.get(v.id, []):
            if id(op) in seen:
                continue
            seen.add(id(op))
            if op.kind in PASS_THROUGH and op.results:
                stack.append(op.results[0])
            else:
                found.append(op)
    return found


def exponential_of(value: ir.Value, new: int) -> bool:
    op = value.op
    return op is not None and op.kind == "math" and op.attrs.get("fn") in EXPONENTIALS and new in upstream(value)


def scaled(use: ir.Op, sum_arg: ir.Value, old: int, new: int) -> bool | str:
    """True where this use multiplies the carried sum by a factor of the old and the new max, or is one this
    check does not judge (a `where`, a math function); otherwise why the sum goes unscaled."""
    if use.kind == "binary" and use.attrs.get("op") == "*":
        factor = next((o for o in use.operands if o.id != sum_arg.id and sum_arg.id not in upstream(o)), None)
        if factor is None:
            return True  # not a product with something else: not judged
        # the old max other than through the new one (which is computed from it)
        if new in upstream(factor) and old in upstream(factor, stop=new):
            return True
        return "its factor is computed from the new max only (the old one was overwritten before it)"
    if use.kind == "binary" and use.attrs.get("op") in ("+", "-"):
        return "it is added to without a rescale"
    if use.kind == "dot" and len(use.operands) > 2 and sum_arg.id in upstream(use.operands[2]):
        return "the dot accumulates into it without a rescale"
    return True  # a use this check does not judge (a where, a math function): no claim


def obligation(
    ev, op: ir.Op, loop: Loop, context: Context, k: int, j: int, value: ir.Value, verdicts, carried: bool = False
) -> Obligation:
    """AR321 for the sum `j` beside the running max `k`: `verdicts` holds why the sum goes unscaled; with
    `carried`, the error is that the max carried on is not the new one (at the line that assigns it)."""
    m_name = carried_name(op, k, "the running max")
    s_name = carried_name(op, j, "the sum")
    why = next(v for v in verdicts if isinstance(v, str))
    if not carried:
        message = f"`{s_name}` sums exponentials taken under the running max `{m_name}` but is not rescaled when "
        message += f"`{m_name}` grows: {why}"
        hint = f"multiply `{s_name}` by exp(old max - new max) before adding this block's terms "
        hint += f"(`alpha = exp({m_name} - m_new)` computed before `{m_name}` is updated)"
    else:
        message = f"`{s_name}` is rescaled to the new max but {why}: the next block's factor exp({m_name} - ...) "
        message += "starts from a max the sum was not taken under"
        hint = f"carry the new max on: `{m_name} = m_new` (the maximum of `{m_name}` and this block's max)"
    shape = shape_of(value.type)
    # the second iteration, a whole block of it (a block of one lane rarely holds the row's max)
    second = [loop.iv == loop.start + loop.step]
    if loop.stop is not None and z3.is_int_value(loop.step) and loop.step.as_long() > 0:
        second.append(loop.iv + loop.step <= loop.stop)
    if carried:  # the line where the body last assigns the max
        update = assigned_span(op, k)
    else:
        update = value.op.span if value.op is not None else op.span
    return Obligation(
        "rescale",
        "AR321",
        update,
        message,
        z3.BoolVal(False),
        [*context.assumptions, *second, *coord_ranges(shape)],
        context.loops,
        ev.program,
        coord_list(shape),
        [(f"the iteration where a block can first raise `{m_name}`: {loop.name}", loop.iv)],
        [(op.span, f"the loop that carries `{m_name}` and `{s_name}`")],
        hint,
    )
