"""How a dot accumulates: into its accumulator operand (one wgmma chain), and in f32."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.unparse import unparse
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.arith import calls
from argus.skills.transforms.base import Application, Check, Transform


def loops(kernel: ast.Kernel) -> list[ast.For]:
    return [n for n in walk(kernel.body) if isinstance(n, ast.For)]


def in_loops(kernel: ast.Kernel) -> list:
    """Every node inside some loop, once (a statement of a nested loop is inside two)."""
    seen: dict[int, object] = {}
    for loop in loops(kernel):
        for node in walk(loop.body):
            seen.setdefault(id(node), node)
    return list(seen.values())


@dataclass(frozen=True)
class DotAccumulator(Transform):
    name: str = "dot_accumulator"
    title: str = "dot with accumulator"
    intent: str = "`acc = dot(a, b, acc)` accumulates inside the MMA instead of a separate add of a fresh tile"
    anchor: str = "`acc += dot(a, b)` or `acc = acc + dot(a, b)` in a loop"
    preconditions: tuple[str, ...] = ("loop_has_dot", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for stmt in in_loops(kernel):
            if isinstance(stmt, ast.AugAssign | ast.Assign):
                match stmt:
                    case ast.AugAssign(
                        target=ast.Name(id=acc), op="+", value=ast.Call(func=ast.Name(id="dot"), args=[a, b])
                    ):
                        pass
                    case ast.Assign(
                        targets=[ast.Name(id=acc)],
                        value=ast.BinOp(
                            op="+", left=ast.Name(id=left), right=ast.Call(func=ast.Name(id="dot"), args=[a, b])
                        ),
                    ) if left == acc:
                        pass
                    case _:
                        continue
                new = f"{acc} = dot({doc.source(a.span)}, {doc.source(b.span)}, {acc}{keywords(doc, stmt.value)})"
                check = Check("loop_has_dot", True)
                found.append(
                    self.app(
                        "forward",
                        kernel,
                        stmt.span,
                        "dot with accumulator",
                        {"acc": acc},
                        [Edit(stmt.span, new)],
                        [check],
                    )
                )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for stmt in in_loops(kernel):
            if isinstance(stmt, ast.Assign):
                match stmt:
                    case ast.Assign(
                        targets=[ast.Name(id=acc)], value=ast.Call(func=ast.Name(id="dot"), args=[a, b, ast.Name(id=c)])
                    ) if c == acc:
                        kws = keywords(doc, stmt.value)
                        new = f"{acc} += dot({doc.source(a.span)}, {doc.source(b.span)}{kws})"
                        title = "undo dot accumulation: add the product separately"
                        found.append(
                            self.app("inverse", kernel, stmt.span, title, {"acc": acc}, [Edit(stmt.span, new)])
                        )
        return found


def keywords(doc, expr) -> str:
    """`, input_precision=PREC` and the dot's other keywords as written (both forms keep them)."""
    call = expr.right if isinstance(expr, ast.BinOp) else expr
    return "".join(f", {doc.source(k.span)}" for k in call.keywords)


def accumulators(kernel: ast.Kernel) -> set[str]:
    """Names passed as a dot's accumulator inside a loop."""
    names = set()
    for loop in loops(kernel):
        for call in (n for n in walk(loop.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)):
            if call.func.id == "dot" and len(call.args) == 3 and isinstance(call.args[2], ast.Name):
                names.add(call.args[2].id)
        for stmt in walk(loop.body):
            if isinstance(stmt, ast.AugAssign) and unparse(stmt.value).startswith("dot("):
                names.add(stmt.target.id)
    return names


def zeros_inits(kernel: ast.Kernel) -> list[tuple[str, ast.Call]]:
    found = []
    for stmt in walk(kernel.body):
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            value = stmt.value
            match value:
                case ast.Call(func=ast.Name(id="zeros"), args=[_, ast.Name()]):
                    found.append((stmt.targets[0].id, value))
    return found


@dataclass(frozen=True)
class F32Accumulation(Transform):
    name: str = "f32_accumulation"
    title: str = "f32 accumulation"
    intent: str = "accumulate a dot over K in f32: an f16 accumulator loses the low bits of every partial sum"
    anchor: str = "`acc = zeros(shape, f16)` used as a dot accumulator"
    preconditions: tuple[str, ...] = ("accumulator_feeds_dot", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        feeds = accumulators(kernel)
        found = []
        for name, call in zeros_inits(kernel):
            dtype = call.args[1]
            if dtype.id not in ("f16", "bf16"):
                continue
            check = Check("accumulator_feeds_dot", name in feeds, f"{name} is no dot's accumulator in a loop")
            edit = Edit(dtype.span, "f32")
            found.append(
                self.app(
                    "forward",
                    kernel,
                    call.span,
                    f"f32 accumulation ({name})",
                    {"acc": name, "from": dtype.id},
                    [edit],
                    [check],
                )
            )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        feeds = accumulators(kernel)
        found = []
        for name, call in zeros_inits(kernel):
            if call.args[1].id == "f32" and name in feeds:
                edit = Edit(call.args[1].span, "f16")
                title = f"undo f32 accumulation: {name} in f16"
                found.append(self.app("inverse", kernel, call.span, title, {"acc": name, "from": "f16"}, [edit]))
        return found


__all__ = ["DotAccumulator", "F32Accumulation", "calls"]
