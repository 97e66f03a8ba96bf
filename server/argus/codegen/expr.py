"""Python source for expressions, parenthesized by Python's precedence so the output reads as written."""

from __future__ import annotations

from dataclasses import dataclass

from argus.dsl.operators import BINARY_PRECEDENCE

ATOM = 15
POSTFIX = 14
UNARY = 11
# Python's binary precedence (shared with the parser); `not` sits just below comparisons, as in Python.
PRECEDENCE = {**BINARY_PRECEDENCE, "not": 3}


@dataclass(frozen=True, slots=True)
class Expr:
    text: str
    prec: int = ATOM

    def at_least(self, prec: int) -> str:
        return self.text if self.prec >= prec else f"({self.text})"

    def __str__(self) -> str:
        return self.text


def atom(text: str) -> Expr:
    return Expr(text, ATOM)


def call(function: str, *args: Expr | str, **keywords: Expr | str) -> Expr:
    parts = [str(a) for a in args] + [f"{k}={v}" for k, v in keywords.items()]
    return Expr(f"{function}({', '.join(parts)})", POSTFIX)


def method(receiver: Expr, name: str, *args: Expr | str) -> Expr:
    return Expr(f"{receiver.at_least(POSTFIX)}.{name}({', '.join(str(a) for a in args)})", POSTFIX)


def subscript(value: Expr, index: str) -> Expr:
    return Expr(f"{value.at_least(POSTFIX)}[{index}]", POSTFIX)


def binary(left: Expr, op: str, right: Expr) -> Expr:
    prec = PRECEDENCE[op]
    if op == "**":  # right-associative
        return Expr(f"{left.at_least(prec + 1)} ** {right.at_least(prec)}", prec)
    return Expr(f"{left.at_least(prec if prec != 4 else prec + 1)} {op} {right.at_least(prec + 1)}", prec)


def unary(op: str, operand: Expr) -> Expr:
    if op == "not":
        return Expr(f"not {operand.at_least(PRECEDENCE['not'])}", PRECEDENCE["not"])
    return Expr(f"{op}{operand.at_least(UNARY)}", UNARY)


def literal(value: int | float | bool) -> Expr:
    """A Python literal; negative numbers bind like a unary minus."""
    if isinstance(value, bool):
        return atom(repr(value))
    if isinstance(value, float):
        if value != value:
            return atom('float("nan")')
        if value in (float("inf"), float("-inf")):
            return atom(f'float("{value}")')
    text = repr(value)
    return Expr(text, UNARY if text.startswith("-") else ATOM)


def tuple_of(items: list[str]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
