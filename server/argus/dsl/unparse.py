"""Expressions back to source text, for messages and hovers."""

from __future__ import annotations

from argus.dsl import ast
from argus.dsl.operators import BINARY_PRECEDENCE, PREFIX_BINDING


def unparse(expr: ast.Expr | ast.FullSlice, parent: int = 0) -> str:
    match expr:
        case ast.Name(id=name):
            return name
        case ast.Int(value=value) | ast.Float(value=value):
            return repr(value)
        case ast.Bool(value=value):
            return "True" if value else "False"
        case ast.NoneLit():
            return "None"
        case ast.Str(value=value):
            return f'"{value}"'
        case ast.FullSlice():
            return ":"
        case (
            ast.BinOp(op=op, left=left, right=right)
            | ast.Compare(op=op, left=left, right=right)
            | ast.BoolOp(op=op, left=left, right=right)
        ):
            level = BINARY_PRECEDENCE[op]
            right_level = level if op == "**" else level + 1
            left_level = level + 1 if op == "**" else level
            text = f"{unparse(left, left_level)} {op} {unparse(right, right_level)}"
            return f"({text})" if level < parent else text
        case ast.UnaryOp(op=op, operand=operand):
            level = PREFIX_BINDING[op]
            text = f"{op} {unparse(operand, level)}" if op == "not" else f"{op}{unparse(operand, level)}"
            return f"({text})" if level < parent else text
        case ast.Call(func=func, args=args, keywords=keywords):
            parts = [unparse(a) for a in args] + [f"{k.name}={unparse(k.value)}" for k in keywords]
            return f"{unparse(func, 99)}({', '.join(parts)})"
        case ast.Attribute(value=value, attr=attr):
            return f"{unparse(value, 99)}.{attr}"
        case ast.Subscript(value=value, indices=indices):
            return f"{unparse(value, 99)}[{', '.join(unparse(i) for i in indices)}]"
        case ast.Tuple(elts=elts):
            inner = ", ".join(unparse(e) for e in elts)
            return f"({inner},)" if len(elts) == 1 else f"({inner})"
        case ast.List(elts=elts):
            return "[" + ", ".join(unparse(e) for e in elts) + "]"
    return "?"


def without_parens(text: str) -> str:
    """`(BN * BM)` as `BN * BM` where the parentheses enclose the whole text."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and index < len(text) - 1:
            return text
    return text[1:-1]
