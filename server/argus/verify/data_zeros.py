"""A count that the data can make 0 (AR314): the sum of indicators a loaded mask selects.

`cnt += where(keep, 1.0, 0.0)` over a row's column blocks, then `sum(tot) / sum(cnt)`: a row where `keep` is
false everywhere divides 0 by 0. The verifier assumes loaded data is arbitrary, so such a row is one it must
consider; it does not assume every divisor computed from data can be 0 (a loaded norm, `sum(exp(x))`): only a
sum whose every lane holds 0 or a positive constant (an indicator, a count) and whose lanes the data can all
steer to 0 (a `where` on a loaded mask, or `keep.to(f32)`). Such a sum, and a running sum of them carried by a
loop from 0, holds exactly 0 under a fresh condition that stands for "the data selected nothing"; a division
by it is refuted with that condition true, and `maximum(count, 1.0)` or a `where` guard on it proves it.
"""

from __future__ import annotations

import z3

from argus.verify.padding import REAL, Branch, Leaf, Tree, const, is_zero, leaves
from argus.verify.terms import applies_any

NOTHING_SELECTED = "nothing selected"  # the fresh condition's hint: Shared.fresh names it ?nothing selected#n


def steerable(cond: z3.BoolRef, functions: list[str]) -> tuple[bool, bool]:
    """(the data can make `cond` true in every lane, the data can make it false in every lane). A comparison
    that reads data goes either way; `If(m, d, False)` (a masked load of a bool) can be made false but not
    true where m is false; conditions on coordinates and sizes alone are fixed."""
    if z3.is_true(cond):
        return True, False
    if z3.is_false(cond):
        return False, True
    if not applies_any(cond, functions):
        return False, False
    if z3.is_not(cond):
        t, f = steerable(cond.arg(0), functions)
        return f, t
    if z3.is_and(cond) or z3.is_or(cond):
        parts = [steerable(c, functions) for c in cond.children()]
        if z3.is_and(cond):
            return all(t for t, _ in parts), any(f for _, f in parts)
        return any(t for t, _ in parts), all(f for _, f in parts)
    if z3.is_app_of(cond, z3.Z3_OP_ITE):
        guard, then, orelse = cond.children()
        if not applies_any(guard, functions):  # lanes on either side of a fixed guard
            (t1, f1), (t2, f2) = steerable(then, functions), steerable(orelse, functions)
            return t1 and t2, f1 and f2
        return False, False
    return True, True  # an atom that reads data: `keep(r, c) != 0`, `ids(i) < row`


def vanishes(tree: Tree, functions: list[str]) -> bool:
    """Whether the data can make every lane of `tree` hold exactly 0."""
    if isinstance(tree, Leaf):
        return is_zero(tree.values)
    then, orelse = vanishes(tree.then, functions), vanishes(tree.orelse, functions)
    if then and orelse:
        return True
    if tree.cond is None:
        return False
    can_true, can_false = steerable(tree.cond, functions)
    return (can_true and then) or (can_false and orelse)


def counts(tree: Tree) -> bool:
    """Every lane holds 0 or a positive constant: an indicator or a count, not a data value."""
    return all(leaf.values.finite and leaf.values.lo == leaf.values.hi >= 0 for _, leaf in leaves(tree))


def nothing_selected(ev) -> Tree:
    """Exactly 0 under a fresh condition (the data selected nothing), any real number otherwise."""
    none = ev.shared.fresh(NOTHING_SELECTED, "bool", gap=False)
    return Branch(none, Leaf(const(0.0)), Leaf(REAL))


def counted_sum(ev, tree: Tree | None) -> Tree | None:
    """The lanes of a sum of `tree` (a reduction, or a loop's running sum from 0) when the data can make it 0."""
    if tree is None or not counts(tree):
        return None
    functions = list(ev.shared.functions)
    return nothing_selected(ev) if vanishes(tree, functions) else None


def is_nothing_selected(cond: z3.ExprRef) -> bool:
    return z3.is_const(cond) and str(cond).startswith(f"?{NOTHING_SELECTED}#")
