"""Arithmetic rewrites: exp through exp2 with log2(e) folded, and one reciprocal per row instead of a division
per element."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl import ast
from argus.dsl.spans import Span
from argus.skills.facts import walk
from argus.skills.provider import Edit
from argus.skills.transforms.base import Application, Check, Transform

LOG2E = "1.4426950408889634"  # exp(x) == exp2(x * log2(e))
LN2 = "0.6931471805599453"  # exp2(x) == exp(x * ln(2))
LOOSE = ("+", "-", "<", "<=", ">", ">=", "==", "!=", "and", "or", "&", "|", "^", "<<", ">>")


def calls(kernel: ast.Kernel, name: str) -> list[ast.Call]:
    return [
        n for n in walk(kernel.body) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name
    ]


def strip_factor(text: str, factor: str) -> str | None:
    """`x * factor` -> `x`, `(a - b) * factor` -> `a - b`; None when the text is not such a product."""
    suffix = f" * {factor}"
    if not text.endswith(suffix):
        return None
    inner = text[: -len(suffix)]
    if inner.startswith("(") and inner.endswith(")") and balanced(inner[1:-1]):
        return inner[1:-1]
    return inner


def balanced(text: str) -> bool:
    depth = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def times(arg: ast.Expr, text: str, factor: str) -> str:
    loose = isinstance(arg, ast.BinOp | ast.Compare | ast.BoolOp) and arg.op in LOOSE
    return f"({text}) * {factor}" if loose else f"{text} * {factor}"


@dataclass(frozen=True)
class Exp2(Transform):
    name: str = "exp2"
    title: str = "exp through exp2"
    intent: str = "exp2 is one MUFU instruction; exp is exp2 plus a multiply, which folds into an existing scale"
    anchor: str = "an `exp(x)` call"
    preconditions: tuple[str, ...] = ("still_checks",)

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        return self.swap(doc, kernel, ("exp", "exp2"), LN2, LOG2E, "forward", "exp → exp2 with log2(e) folded")

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        return self.swap(doc, kernel, ("exp2", "exp"), LOG2E, LN2, "inverse", "undo exp2: exp(x) as written")

    def swap(self, doc, kernel, names, cancels, factor, direction, title) -> list[Application]:
        """Each one-argument call `old(x)` as `new(x * factor)`, or as `new(y)` when x is `y * cancels` (the
        factor a previous rewrite folded in), so forward and inverse undo each other exactly."""
        old, new = names
        found = []
        for call in calls(kernel, old):
            if len(call.args) != 1:
                continue
            text = doc.source(call.args[0].span)
            inner = strip_factor(text, cancels)
            rewritten = f"{new}({inner})" if inner is not None else f"{new}({times(call.args[0], text, factor)})"
            found.append(self.app(direction, kernel, call.span, title, {}, [Edit(call.span, rewritten)]))
        return found


def is_broadcast_row(expr, definitions: dict[str, ast.Expr], depth: int = 0) -> bool:
    """A reduction, a broadcast `x[:, None]`, a scalar size, or a name defined as one of those."""
    match expr:
        case ast.Call(func=ast.Name(id="sum" | "max" | "min")):
            return True
        case ast.Subscript(indices=indices):
            return any(isinstance(i, ast.NoneLit) for i in indices)
        case ast.Name(id=name) if name in definitions and depth < 8:
            return is_broadcast_row(definitions[name], definitions, depth + 1)
        case ast.Name(id=name):
            return name not in definitions and name.isupper()  # a size symbol: one value for the whole kernel
    return False


def definitions(kernel: ast.Kernel) -> dict[str, ast.Expr]:
    found = {}
    for node in walk(kernel.body):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            found[node.targets[0].id] = node.value
    return found


@dataclass(frozen=True)
class Reciprocal(Transform):
    """`a / d` with d one value per row -> `inv = 1.0 / d` on the line above and `a * inv`."""

    name: str = "reciprocal"
    title: str = "One reciprocal per row"
    intent: str = "one division per row and a multiply per element instead of a division per element"
    anchor: str = "`a / d` where d is one value per row"
    preconditions: tuple[str, ...] = ("divisor_is_broadcast", "name_free", "still_checks")

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        name = str(params.get("name", "inv"))
        used = {n.id for n in walk(kernel.body) if isinstance(n, ast.Name)}
        defined = definitions(kernel)
        found = []
        for stmt in top_statements(kernel.body):
            for node in walk(stmt):
                if not (isinstance(node, ast.BinOp) and node.op == "/"):
                    continue
                if isinstance(node.left, ast.Float | ast.Int):
                    continue  # already a reciprocal
                divisor = doc.source(node.right.span)
                indent = " " * stmt.span.col
                edits = [
                    Edit(
                        Span(stmt.span.line, stmt.span.col, stmt.span.line, stmt.span.col),
                        f"{name} = 1.0 / {divisor}\n{indent}",
                    ),
                    Edit(node.span, parenthesized(doc.source(node.span), f"{doc.source(node.left.span)} * {name}")),
                ]
                checks = [
                    Check(
                        "divisor_is_broadcast",
                        is_broadcast_row(node.right, defined),
                        f"`{divisor}` is not one value per row",
                    ),
                    Check("name_free", name not in used, f"{name} is already used"),
                ]
                found.append(
                    self.app(
                        "forward",
                        kernel,
                        node.span,
                        f"One reciprocal per row ({divisor})",
                        {"name": name},
                        edits,
                        checks,
                    )
                )
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        body = top_statements(kernel.body)
        for i, stmt in enumerate(body[:-1]):
            match stmt:
                case ast.Assign(
                    targets=[ast.Name(id=name)], value=ast.BinOp(op="/", left=ast.Float(value=1.0), right=right)
                ):
                    pass
                case _:
                    continue
            after = body[i + 1]
            uses = [
                n
                for n in walk(after)
                if isinstance(n, ast.BinOp) and n.op == "*" and isinstance(n.right, ast.Name) and n.right.id == name
            ]
            total = sum(isinstance(n, ast.Name) and n.id == name for n in walk(kernel.body))
            if len(uses) != 1 or total != 2 or after.span.line != stmt.span.end_line + 1:
                continue
            use = uses[0]
            divided = f"{doc.source(use.left.span)} / {wrap(right, doc.source(right.span))}"
            edits = [
                Edit(Span(stmt.span.line, stmt.span.col, after.span.line, after.span.col), ""),
                Edit(use.span, parenthesized(doc.source(use.span), divided)),
            ]
            found.append(
                self.app("inverse", kernel, use.span, "undo the reciprocal: divide per element", {"name": name}, edits)
            )
        return found


def parenthesized(original: str, new: str) -> str:
    """A node's span includes the parentheses around it: a replacement keeps them."""
    if original.startswith("(") and original.endswith(")") and balanced(original[1:-1]):
        return f"({new})"
    return new


def wrap(expr, text: str) -> str:
    return f"({text})" if isinstance(expr, ast.BinOp) else text


def top_statements(body: list) -> list:
    """Statements of a block and of the blocks nested in it, each a whole statement."""
    found = []
    for stmt in body:
        if isinstance(stmt, ast.For | ast.If):
            found.extend(top_statements(stmt.body))
            found.extend(top_statements(getattr(stmt, "orelse", [])))
        elif isinstance(stmt, ast.Assign | ast.AugAssign | ast.ExprStmt):
            found.append(stmt)
    return found


@dataclass(frozen=True)
class Rsqrt(Transform):
    """`1.0 / sqrt(x)` -> `rsqrt(x)`: one MUFU.RSQ instead of a square root and a division."""

    name: str = "rsqrt"
    title: str = "rsqrt instead of 1 / sqrt"
    intent: str = "one reciprocal square root (MUFU.RSQ) instead of a square root and a division"
    anchor: str = "`1.0 / sqrt(x)`"
    preconditions: tuple[str, ...] = ("still_checks",)

    def sites(self, doc, kernel, facts, params) -> list[Application]:
        found = []
        for node in walk(kernel.body):
            match node:
                case ast.BinOp(
                    op="/",
                    left=ast.Float(value=1.0) | ast.Int(value=1),
                    right=ast.Call(func=ast.Name(id="sqrt"), args=[arg]),
                ):
                    new = f"rsqrt({doc.source(arg.span)})"  # a call needs none of the parentheses around the division
                    found.append(self.app("forward", kernel, node.span, "1 / sqrt → rsqrt", {}, [Edit(node.span, new)]))
        return found

    def inverse_sites(self, doc, kernel, facts) -> list[Application]:
        found = []
        for call in calls(kernel, "rsqrt"):
            if len(call.args) == 1:
                new = f"(1.0 / sqrt({doc.source(call.args[0].span)}))"
                found.append(self.app("inverse", kernel, call.span, "undo rsqrt: 1 / sqrt", {}, [Edit(call.span, new)]))
        return found
