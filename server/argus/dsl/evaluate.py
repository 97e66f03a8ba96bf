"""Evaluation of constant expressions over a dictionary of known names (tile constants, problem sizes)."""

from __future__ import annotations

import operator

from argus.dsl import ast

Number = int | float | bool


def c_div(a: Number, b: Number) -> Number:
    """Argus `//`: between integers it truncates toward zero, as Triton (and C) divide in the kernel, where
    Python floors; (3 - 4) // 2 is 0, not -1. Floats floor, as in both."""
    if isinstance(a, int) and isinstance(b, int):
        quotient = abs(a) // abs(b)
        return quotient if (a >= 0) == (b >= 0) else -quotient
    return a // b


def c_mod(a: Number, b: Number) -> Number:
    """Argus `%`: the remainder that goes with c_div, with the sign of the dividend between integers."""
    if isinstance(a, int) and isinstance(b, int):
        return a - b * c_div(a, b)
    return a % b


BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": c_div,
    "%": c_mod,
    "**": operator.pow,
    "&": operator.and_,
    "|": operator.or_,
    "^": operator.xor,
    "<<": operator.lshift,
    ">>": operator.rshift,
}
COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
CONSTANT_NAMES: dict[str, Number] = {"inf": float("inf"), "nan": float("nan")}


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def binary(op: str, a: Number, b: Number) -> Number | None:
    """Fold one binary operation; None where it has no value (division by zero, a huge power)."""
    if op in ("//", "%", "/") and b == 0:
        return None
    if op == "**" and (abs(b) > 64 or abs(a) > 2**16):
        return None
    if op in ("<<", ">>") and not (isinstance(a, int) and isinstance(b, int) and 0 <= b < 64):
        return None
    if op in ("&", "|", "^") and (isinstance(a, float) or isinstance(b, float)):
        return None
    try:
        return BINARY[op](a, b)
    except (ArithmeticError, TypeError, ValueError):
        return None


def unary(op: str, value: Number) -> Number | None:
    """Fold one prefix operation; None where it has no value (`~` of a float)."""
    if op == "-":
        return -value
    if op == "+":
        return value
    if op == "not" or isinstance(value, bool):
        return not value
    return ~value if isinstance(value, int) else None


def evaluate(expr: ast.Expr, env: dict[str, Number]) -> Number | None:
    """The value of a constant expression, or None when it depends on something unknown."""
    match expr:
        case ast.Int(value=value) | ast.Float(value=value) | ast.Bool(value=value):
            return value
        case ast.Name(id=name):
            if name in env:
                value = env[name]
                return None if isinstance(value, str) else value  # a string tile constant is not a number
            return CONSTANT_NAMES.get(name)
        case ast.UnaryOp(op=op, operand=operand):
            value = evaluate(operand, env)
            return None if value is None else unary(op, value)
        case ast.BinOp(op=op, left=left, right=right):
            a, b = evaluate(left, env), evaluate(right, env)
            return None if a is None or b is None else binary(op, a, b)
        case ast.Compare(op=op, left=left, right=right):
            a, b = evaluate(left, env), evaluate(right, env)
            return None if a is None or b is None else COMPARE[op](a, b)
        case ast.BoolOp(op=op, left=left, right=right):
            a, b = evaluate(left, env), evaluate(right, env)
            if a is None or b is None:
                return None
            return (a and b) if op == "and" else (a or b)
        case ast.Call(func=ast.Name(id="cdiv"), args=[left, right], keywords=[]):
            a, b = evaluate(left, env), evaluate(right, env)
            if isinstance(a, int) and isinstance(b, int) and b != 0:
                return cdiv(a, b)
            return None
        case ast.Call(func=ast.Name(id=("min" | "max") as fn), args=[left, right], keywords=[]):
            a, b = evaluate(left, env), evaluate(right, env)
            if a is None or b is None:
                return None
            return min(a, b) if fn == "min" else max(a, b)
    return None
