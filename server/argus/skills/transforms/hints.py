"""Alignment hints: `multiple_of` on a run's start, so Triton can vectorize the accesses it feeds."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform


def factors(expr) -> set[str]:
    if isinstance(expr, ast.BinOp) and expr.op == "*":
        return factors(expr.left) | factors(expr.right)
    return {unparse(expr)}


@dataclass(frozen=True)
class AlignmentHint(Transform):
    name: str = "alignment_hint"
    title: str = "Alignment hint"
    intent: str = "promise (and have the verifier prove) that a run starts at a multiple of its length"
    anchor: str = "`r = start + arange(B)` with start a product that has B as a factor"
    preconditions: tuple[str, ...] = ("start_is_multiple", "verifies", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for stmt in walk(kernel.body):
            match stmt:
                case ast.Assign(
                    targets=[ast.Name(id=run)],
                    value=ast.BinOp(
                        op="+", left=start, right=ast.Call(func=ast.Name(id="arange"), args=[ast.Name(id=length)])
                    ),
                ):
                    pass
                case _:
                    continue
            if isinstance(start, ast.Call) and isinstance(start.func, ast.Name) and start.func.id == "multiple_of":
                continue
            multiple = length in factors(start)
            check = Check("start_is_multiple", multiple, f"`{unparse(start)}` has no factor {length}")
            edit = Edit(start.span, f"multiple_of({doc.source(start.span)}, {length})")
            found.append(
                self.app("forward", kernel, stmt.span, f"Alignment hint on {run}", {"run": run}, [edit], [check])
            )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for node in walk(kernel.body):
            match node:
                case ast.Call(func=ast.Name(id="multiple_of"), args=[_, _]):
                    edit = Edit(node.span, doc.source(node.args[0].span))
                    found.append(self.app("inverse", kernel, node.span, "undo the alignment hint", {}, [edit]))
        return found
