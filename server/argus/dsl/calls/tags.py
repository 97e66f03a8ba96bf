"""Type rules of tags: tag(x, name=value, ...) attaches them to a value, assert_tag states a relation over them (or a
condition)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from argus.dsl import ast, ir
from argus.dsl.calls.arguments import signature, value_arg
from argus.dsl.calls.table import type_rule
from argus.dsl.scope import ERROR, V
from argus.dsl.types import ErrorT, NoneT, ScalarT

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer


def tag_values(an: KernelAnalyzer, e: ast.Call) -> tuple[V, list[str], list[ir.Value]] | None:
    if len(e.args) != 1 or not e.keywords:
        an.error("AR207", e.span, f"{signature(e.func.id)}")
        return None
    x = value_arg(an, e.args[0])
    names, values = [], []
    for keyword in e.keywords:
        v = value_arg(an, keyword.value)
        if isinstance(v.type, ErrorT):
            return None
        if not isinstance(v.type, ScalarT) or not v.type.dtype.is_integer:
            an.error("AR204", keyword.value.span, f"a tag value is an integer scalar, not {v.type}")
            return None
        names.append(keyword.name)
        values.append(v.value)
    if isinstance(x.type, ErrorT):
        return None
    return x, names, values


@type_rule("tag")
def call_tag(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    parts = tag_values(an, e)
    if parts is None:
        return ERROR
    x, names, values = parts
    result = an.emit("tag", [x.value, *values], x.type, e.span, names=names)
    tagged = V(x.type, result, span=e.span)
    if isinstance(e.args[0], ast.Name):
        binding = an.scope.lookup(e.args[0].id)
        if binding is not None and binding.kind == "variable":
            an.bind(e.args[0], tagged)
    return tagged


@type_rule("assert_tag")
def call_assert_tag(an: KernelAnalyzer, e: ast.Call, name: str) -> V:
    if not e.keywords and len(e.args) == 1:
        an.assertion("assert", e.args[0], e.span)
        return V(NoneT(), span=e.span)
    an.in_assertion = True
    try:
        parts = tag_values(an, e)
    finally:
        an.in_assertion = False
    if parts is None:
        return ERROR
    x, names, values = parts
    an.emit("assert_tag", [x.value, *values], None, e.span, names=names)
    return V(NoneT(), span=e.span)
