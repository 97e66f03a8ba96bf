"""The type rules of the built-ins: for each built-in (argus.dsl.ops.BUILTINS and METHODS), the function that checks
a call's arguments, types its result and emits its IR op, registered with `@type_rule("name")` in TYPE_RULES and
called as rule(analyzer, call, name) by argus.dsl.kernel_analysis.KernelAnalyzer.call.

One module per theme: `arguments` (what the rules share: binding arguments, compile-time constants, dtypes,
shapes), `creation` (program ids, arange, zeros, full), `elementwise` (math, where, cdiv, conversions),
`reductions`, `memory` (tensor access, load, store, atomic_add), `shape_ops` (reshape, broadcast_to, trans),
`dot`, `hints` (compiler hints and the data facts of `requires`), `tags`, and `math_functions` (rounding,
sign and powers: the elementwise math that is not float-only); `scans` (cumsum, cumprod, cummax, cummin) and
`atomics` (atomic_max, atomic_min, atomic_xchg, atomic_cas). Importing this package registers every rule.
"""

from __future__ import annotations

# Importing the rule modules registers their rules in TYPE_RULES.
from argus.dsl.calls import (  # noqa: F401
    atomics,
    creation,
    dot,
    elementwise,
    hints,
    math_functions,
    memory,
    reductions,
    scans,
    shape_ops,
    tags,
)
from argus.dsl.calls.table import TYPE_RULES, TypeRule, type_rule

__all__ = ["TYPE_RULES", "TypeRule", "type_rule"]
