"""Flash-attention rewrites: a one-pass online softmax instead of two passes over the keys, and no causal mask
on the key blocks left of the diagonal (the loop split of causal attention)."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.text import whole_lines
from argus.skills.transforms.accumulate import loops
from argus.skills.transforms.arith import definitions
from argus.skills.transforms.base import Application, Check, Transform
from argus.skills.transforms.order import is_call

CAUSAL = "rm[:, None] >= rn[None, :]"


def assigned(stmt) -> str | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        return stmt.targets[0].id
    return None


def names_in(node) -> set[str]:
    return {n.id for n in walk(node) if isinstance(n, ast.Name)}


def line_text(doc, node) -> str:
    """The node's whole lines, newline included (comments on them too)."""
    return doc.source(whole_lines(node.span))


def running_max(loop: ast.For) -> tuple[ast.Assign, str, ast.Call] | None:
    """`m_new = maximum(m_i, E)` in the loop's body, with `m_i = m_new` later in it: (statement, m_i, the call)."""
    body = loop.body
    for i, stmt in enumerate(body):
        match stmt:
            case ast.Assign(
                targets=[ast.Name(id=new)], value=ast.Call(func=ast.Name(id="maximum"), args=[ast.Name(id=old), _])
            ) if any(assigned(s) == old and names_in(s.value) == {new} for s in body[i + 1 :]):
                return stmt, old, stmt.value
    return None


def rescales(loop: ast.For, old: str, new: str, carried: set[str]) -> tuple[bool, str]:
    """Every running sum the loop carries is multiplied by `exp(old - new)` (or exp2) before it grows."""
    factors = set()
    for stmt in loop.body:
        match stmt:
            case ast.Assign(
                targets=[ast.Name(id=name)],
                value=ast.Call(
                    func=ast.Name(id="exp" | "exp2"),
                    args=[ast.BinOp(op="-", left=ast.Name(id=a), right=ast.Name(id=b))],
                ),
            ) if (a, b) == (old, new):
                factors.add(name)
    if not factors:
        return False, f"no `exp2({old} - {new})` rescales what was accumulated under the old maximum"
    for name in sorted(carried - {old}):
        scaled = any(
            isinstance(n, ast.BinOp)
            and n.op == "*"
            and isinstance(n.left, ast.Name)
            and n.left.id == name
            and names_in(n.right) & factors
            for stmt in loop.body
            if assigned(stmt) == name
            for n in walk(stmt.value)
        )
        if not scaled:
            return False, f"`{name}` is carried by the loop but never multiplied by {sorted(factors)[0]}"
    return True, ""


def carried_names(kernel: ast.Kernel, loop: ast.For) -> set[str]:
    """Names defined before the loop and assigned in it."""
    before = set()
    for stmt in kernel.body:
        if stmt is loop:
            break
        if isinstance(stmt, ast.Assign):
            before.update(t.id for t in stmt.targets)
    return {assigned(s) for s in loop.body if assigned(s) in before}


@dataclass(frozen=True)
class OnlineSoftmax(Transform):
    """A max pre-pass over the keys followed by `m_new = m_i` -> the running max `m_new = maximum(m_i, E)`."""

    name: str = "online_softmax"
    title: str = "One-pass online softmax"
    intent: str = (
        "keep a running row max and rescale the running sums when it grows, so the keys are read once instead "
        "of once for the max and once more for the sums"
    )
    anchor: str = (
        "a loop over key blocks that only computes the row max `m_i = maximum(m_i, E)`, followed by the loop that "
        "uses it as `m_new = m_i`"
    )
    preconditions: tuple[str, ...] = ("rescales_running_sums", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        body = kernel.body
        for i, first in enumerate(body[:-1]):
            main = body[i + 1]
            if not (isinstance(first, ast.For) and isinstance(main, ast.For) and first.body):
                continue
            last = first.body[-1]
            match last:
                case ast.Assign(
                    targets=[ast.Name(id=old)],
                    value=ast.Call(func=ast.Name(id="maximum"), args=[ast.Name(id=again), expr]),
                ) if again == old:
                    pass
                case _:
                    continue
            uses = [
                s
                for s in main.body
                if isinstance(s, ast.Assign) and isinstance(s.value, ast.Name) and s.value.id == old
            ]
            if not uses or assigned(uses[0]) == old:
                continue
            redefined = {assigned(s) for s in main.body} | {old}
            if not all(assigned(s) in redefined for s in first.body):  # the pass only computes the max
                continue
            use = uses[0]
            new = assigned(use)
            holds, found_text = rescales(main, old, new, carried_names(kernel, main))
            edits = [
                Edit(whole_lines(first.span), ""),
                Edit(use.value.span, f"maximum({old}, {doc.source(expr.span)})"),
            ]
            found.append(
                self.app(
                    "forward",
                    kernel,
                    first.span,
                    f"One-pass online softmax (running max {old})",
                    {"max": old},
                    edits,
                    [Check("rescales_running_sums", holds, found_text)],
                )
            )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for loop in kernel.body:
            if not isinstance(loop, ast.For):
                continue
            site = running_max(loop)
            if site is None:
                continue
            stmt, old, call = site
            earlier = [s for s in kernel.body[: kernel.body.index(loop)] if isinstance(s, ast.For)]
            if any(assigned(s) == old for s in walk(earlier)):
                continue  # sums accumulated under an earlier loop's max: a pass that moves the max first breaks them
            expr = call.args[1]
            needed = names_in(expr)  # the statements the max needs, in the loop's order
            keep = []
            for s in reversed(loop.body[: loop.body.index(stmt)]):
                if assigned(s) in needed:
                    keep.append(s)
                    needed |= names_in(s.value)
            header = doc.text.splitlines(keepends=True)[loop.span.line]
            prepass = header + "".join(line_text(doc, s) for s in reversed(keep))
            indent = " " * loop.body[0].span.col
            prepass += f"{indent}{old} = maximum({old}, {doc.source(expr.span)})\n"
            edits = [
                Edit(Span(loop.span.line, 0, loop.span.line, 0), prepass),
                Edit(call.span, old),
            ]
            title = f"undo the online softmax: a pass for the row max {old} first"
            found.append(self.app("inverse", kernel, loop.span, title, {"max": old}, edits))
        return found


def left_of_diagonal(kernel: ast.Kernel, loop: ast.For, facts) -> tuple[bool, str]:
    """Every key block of the loop lies left of the row block: the loop ends where `rm` starts, its step is the
    key block, and that end is a multiple of the key block."""
    match loop.iter:
        case ast.Call(func=ast.Name(id="range"), args=[_, end, step]):
            pass
        case _:
            return False, "the loop is not `range(start, end, step)`"
    defs = definitions(kernel)
    rm, rn = defs.get("rm"), defs.get("rn")
    if not (isinstance(rm, ast.BinOp) and rm.op == "+" and is_call(rm.right, "arange")):
        return False, "rm is not a run `start + arange(BM)`"
    if not (
        isinstance(rn, ast.BinOp)
        and rn.op == "+"
        and isinstance(rn.left, ast.Name)
        and rn.left.id == loop.var.id
        and is_call(rn.right, "arange")
        and unparse(rn.right.args[0]) == unparse(step)
    ):
        return False, f"rn is not `{loop.var.id} + arange(step)` of this loop"
    if unparse(end) != unparse(rm.left):
        return False, f"the loop ends at `{unparse(end)}`, not where the row block starts (`{unparse(rm.left)}`)"
    block = unparse(step)
    multiple = isinstance(end, ast.BinOp) and end.op == "*" and isinstance(end.right, ast.Name)
    if not multiple or not (end.right.id == block or (end.right.id, block) in facts.divisible):
        return False, f"`{unparse(end)}` is not shown to be a multiple of {block} (`requires ... % {block} == 0`)"
    return True, ""


@dataclass(frozen=True)
class CausalSplit(Transform):
    """`qk = where(rm[:, None] >= rn[None, :], X, -inf)` in the loop over the key blocks left of the diagonal
    -> `qk = X`: only the diagonal block's loop pays for the mask."""

    name: str = "causal_split"
    title: str = "Causal mask only on the diagonal block"
    intent: str = (
        "run the key blocks left of the diagonal without the causal mask (every score there counts) and mask only "
        "the diagonal block: no compare and select per score in the bulk of the loop"
    )
    anchor: str = (
        "`where(rm[:, None] >= rn[None, :], X, -inf)` in a loop whose key blocks end where the row block starts"
    )
    preconditions: tuple[str, ...] = ("blocks_left_of_diagonal", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for loop in loops(kernel):
            for stmt in loop.body:
                match stmt:
                    case ast.Assign(
                        value=ast.Call(func=ast.Name(id="where"), args=[cond, kept, ast.UnaryOp() | ast.Name()])
                    ) if doc.source(cond.span) == CAUSAL:
                        pass
                    case _:
                        continue
                holds, found_text = left_of_diagonal(kernel, loop, facts)
                edit = Edit(stmt.value.span, doc.source(kept.span))
                title = f"Drop the causal mask left of the diagonal ({assigned(stmt)})"
                check = Check("blocks_left_of_diagonal", holds, found_text)
                found.append(self.app("forward", kernel, stmt.span, title, {}, [edit], [check]))
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for loop in loops(kernel):
            if not left_of_diagonal(kernel, loop, facts)[0]:
                continue
            scores = next(
                (s for s in loop.body if assigned(s) and is_call(s.value, "dot") and len(s.value.args) == 2), None
            )
            if scores is None:
                continue
            edit = Edit(scores.value.span, f"where({CAUSAL}, {doc.source(scores.value.span)}, -inf)")
            title = f"undo the causal split: mask {assigned(scores)} left of the diagonal too"
            found.append(self.app("inverse", kernel, scores.span, title, {}, [edit]))
        return found
