"""The verifier's rule for each IR op kind (argus.dsl.ops.IR_OPS): a function registered with `@rule(kind)`.

`@rule("trans")` on a module-level function makes it the symbolic evaluation of `trans` ops: called as
rule(evaluator, op, context), it sets the op's results and emits the op's own obligations through the
evaluator it is given, and may return a new `Context`. The rules live by theme (elementwise.py, shapes.py,
dot.py, memory.py, claims.py, control_flow.py) and register when evaluate.py imports them. `Evaluator.op`
looks the op's kind up here; a kind the verifier deliberately does not evaluate is listed in UNSUPPORTED with
the reason (none today), which becomes the verdict's "unknown" reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from argus.dsl import ir
    from argus.verify.evaluate import Evaluator
    from argus.verify.model import Context

Rule = Callable[["Evaluator", "ir.Op", "Context"], "Context | None"]
R = TypeVar("R", bound=Rule)

RULES: dict[str, Rule] = {}
UNSUPPORTED: dict[str, str] = {}


def rule(*kinds: str) -> Callable[[R], R]:
    """Register the decorated function as the rule of the IR op kinds `kinds`."""

    def register(function: R) -> R:
        for kind in kinds:
            assert kind not in RULES, f"two verifier rules for {kind}"
            RULES[kind] = function
        return function

    return register
