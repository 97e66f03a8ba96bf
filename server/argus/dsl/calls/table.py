"""The table of type rules: for each built-in (argus.dsl.ops.BUILTINS and METHODS), the function that checks a
call's arguments, types its result and emits its IR op."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeAlias

from argus.dsl import ast
from argus.dsl.scope import V

if TYPE_CHECKING:
    from argus.dsl.kernel_analysis import KernelAnalyzer

# A type rule is called as rule(analyzer, call, name): the analyzer of the kernel (its scope, IR block and
# diagnostics), the call, and the name of the built-in called (one rule may serve several built-ins).
TypeRule: TypeAlias = Callable[["KernelAnalyzer", ast.Call, str], V]

TYPE_RULES: dict[str, TypeRule] = {}


def type_rule(*names: str) -> Callable[[TypeRule], TypeRule]:
    """Register the decorated function as the type rule of the built-ins `names`."""

    def register(rule: TypeRule) -> TypeRule:
        for name in names:
            assert name not in TYPE_RULES, f"two type rules for {name}"
            TYPE_RULES[name] = rule
        return rule

    return register
