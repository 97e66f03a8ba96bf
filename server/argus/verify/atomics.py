"""The atomics beyond atomic_add (issue 20 item 3): accesses for the bounds, race and coverage checks, and the
values atomic_xchg and atomic_cas return.

- `atomic_max`, `atomic_min`: accesses like atomic_add's. Two programs meeting at one element with the same
  one of them is no race (races.py: max and min are commutative and associative, so every order leaves the
  same value); with a store, a load or another kind of atomic of the element by another program it is
  (AR302, AR303). Coverage counts them as writes: the launcher starts the output at the identity, so an
  element every program left alone would hold -inf, which AR304 is there to rule out. AR315 (a K index added
  twice) does not apply: max and min are idempotent, taking one contribution twice changes nothing; AR316
  applies as a necessary condition (contraction_coverage.py).
- `atomic_xchg`, `atomic_cas`: plain writes for the race check (AR302 against any write of the element by
  another program, themselves included: the value left and the old values returned depend on the order of
  the programs), and writes for coverage (an atomic_cas whose comparison fails leaves the start, 0, which is
  defined). The old values they return are not modelled: an integer result is an unconstrained integer (one
  per op and program), a float result real numbers in the lanes the mask keeps and whatever memory held in
  the lanes it drops (AR313 where those reach a reduction). Their layout is the access's: the value stands for
  the elements it was read from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ir
from argus.verify.memory import access
from argus.verify.model import Context, Entry, Sym
from argus.verify.padding import REAL, UNDEFINED, Branch, Leaf
from argus.verify.rules import rule
from argus.verify.values import is_float, is_int

if TYPE_CHECKING:
    from argus.verify.evaluate import Evaluator


@rule("atomic_max", "atomic_min")
def accumulate_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    access(ev, op, context)


@rule("atomic_xchg", "atomic_cas")
def exchange_rule(ev: Evaluator, op: ir.Op, context: Context) -> None:
    made = access(ev, op, context)
    term = ev.shared.fresh(f"old value of {op.kind}") if is_int(op.result.type) else None
    layout = {
        (made.tensor, axis): Entry(index, label)
        for axis, (index, label) in enumerate(zip(made.indices, made.labels, strict=True))
    }
    valid = made.mask if op.attrs.get("mask") else None
    lanes = None
    if valid is not None and is_float(op.result.type) and ev.emitting:
        lanes = Branch(valid, Leaf(REAL), Leaf(UNDEFINED, (op.span,)))
    ev.result(op, Sym(made.shape, term, layout, {}, valid, lanes))
