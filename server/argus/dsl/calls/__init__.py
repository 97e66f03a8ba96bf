"""Typing of builtin calls: the table of type rules, one function per built-in (or family of built-ins), each in
the module of its theme; and, for now, the mixin of the kernel analyzer that dispatches calls to them."""

from __future__ import annotations

import difflib

from argus.dsl import ast
from argus.dsl.calls import creation, dot, elementwise, hints, memory, reductions, shape_ops, tags  # noqa: F401 (they register)
from argus.dsl.calls.table import TYPE_RULES, TypeRule, type_rule
from argus.dsl.ops import BUILTINS, METHODS
from argus.dsl.scope import V

__all__ = ["TYPE_RULES", "CallsMixin", "TypeRule", "type_rule"]


class CallsMixin:
    # ---- dispatch -------------------------------------------------------------------------------
    def call(self, e: ast.Call, statement: bool = False) -> V:
        if isinstance(e.func, ast.Attribute):
            return self.method(e)
        if not isinstance(e.func, ast.Name):
            return self.error("AR103", e.func.span, "only builtins and methods can be called")
        name = e.func.id
        if name not in BUILTINS:
            binding = self.scope.lookup(name)
            if binding is not None:
                return self.error("AR103", e.func.span, f"`{name}` is a {binding.kind}, not a function")
            close = difflib.get_close_matches(name, sorted(BUILTINS), n=1)
            hint = f"; did you mean `{close[0]}`?" if close else ""
            return self.error("AR103", e.func.span, f"unknown function `{name}`{hint}", name=name)
        self.symbols.append(self.builtin_symbol(e.func))
        return TYPE_RULES[name](self, e, name)

    def builtin_symbol(self, name: ast.Name):
        from argus.dsl.kernel_analysis import SymbolUse

        return SymbolUse(name.span, name.id, "builtin", BUILTINS[name.id].signature, None)

    def method(self, e: ast.Call) -> V:
        func = e.func
        if func.attr not in METHODS:
            return self.error("AR103", func.attr_span, f"unknown method `.{func.attr}`; tiles have `.to(dtype)`")
        return TYPE_RULES[func.attr](self, e, func.attr)
