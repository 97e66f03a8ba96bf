"""Read a tile once: a later expression that loads the same elements again uses the name the first load was
given (its registers) instead of a second trip to memory."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform


def loaded_tensor(value) -> str | None:
    """The tensor the expression reads when it is a load: `load(T[...], ...)`, converted (`.to(f32)`) or scaled
    by a constant, nothing else (a name computed from a load is a recomputation, not a second read)."""
    match value:
        case ast.Call(func=ast.Name(id="load"), args=[ast.Subscript(value=ast.Name(id=tensor)), *_]):
            return tensor
        case ast.Call(func=ast.Attribute(value=inner, attr="to")):
            return loaded_tensor(inner)
        case ast.BinOp(op="*", left=inner, right=ast.Float() | ast.Int()):
            return loaded_tensor(inner)
    return None


def definitions(kernel: ast.Kernel):
    """(index, name, value, tensor) for every top-level `name = <expression with one load>`, assigned once."""
    body = kernel.body
    counts: dict[str, int] = {}
    for node in walk(body):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                counts[t.id] = counts.get(t.id, 0) + 1
        elif isinstance(node, ast.AugAssign):
            counts[node.target.id] = counts.get(node.target.id, 0) + 2
    for i, stmt in enumerate(body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and counts.get(stmt.targets[0].id) == 1:
            tensor = loaded_tensor(stmt.value)
            if tensor is not None:
                yield i, stmt.targets[0].id, stmt.value, tensor


def top_level_after(kernel: ast.Kernel, index: int) -> list:
    return [s for s in kernel.body[index + 1 :] if isinstance(s, ast.Assign | ast.AugAssign | ast.ExprStmt)]


@dataclass(frozen=True)
class ReuseLoad(Transform):
    name: str = "reuse_load"
    title: str = "Read a tile once"
    intent: str = (
        "use the registers a tile was loaded into instead of loading the same elements again: one read of the "
        "tensor per program instead of two"
    )
    anchor: str = "a load expression written again after `v = load(...)` gave it a name"
    preconditions: tuple[str, ...] = ("not_stored", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for i, name, value, tensor in definitions(kernel):
            text = doc.source(value.span)
            for stmt in top_level_after(kernel, i):
                for node in walk(stmt):
                    if node is value or doc.source(node.span) not in (text, f"({text})"):
                        continue
                    check = Check("not_stored", tensor not in facts.stored, f"{tensor} is also stored by the kernel")
                    title = f"Read {tensor} once (use {name})"
                    found.append(
                        self.app("forward", kernel, node.span, title, {"name": name}, [Edit(node.span, name)], [check])
                    )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for i, name, value, tensor in definitions(kernel):
            text = doc.source(value.span)
            again = f"({text})" if isinstance(value, ast.BinOp | ast.Compare | ast.BoolOp) else text
            uses = [
                node
                for stmt in top_level_after(kernel, i)
                for node in walk(stmt)
                if isinstance(node, ast.Name) and node.id == name
            ]
            for use in uses[1:]:  # the first use reads the registers; every later one could read memory again
                title = f"undo the reuse: load {tensor} again for this use of {name}"
                found.append(self.app("inverse", kernel, use.span, title, {"name": name}, [Edit(use.span, again)]))
        return found
