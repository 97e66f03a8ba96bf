"""The verifier's rule for each IR op kind (argus.dsl.ops.IR_OPS), registered by the `Evaluator` and its mixins.

`@rule("trans")` on an evaluator method makes it the symbolic evaluation of `trans` ops: called as
rule(evaluator, op, context), it sets the op's results and emits the op's own obligations, and may return a
new `Context`. `Evaluator.op` looks the op's kind up here; a kind the verifier deliberately does not evaluate
is listed in UNSUPPORTED with the reason (none today), which becomes the verdict's "unknown" reason.
"""

from __future__ import annotations

from collections.abc import Callable

RULES: dict[str, Callable] = {}
UNSUPPORTED: dict[str, str] = {}


def rule(*kinds: str):
    """Register the decorated evaluator method as the rule of the IR op kinds `kinds`."""

    def register(method: Callable) -> Callable:
        for kind in kinds:
            assert kind not in RULES, f"two verifier rules for {kind}"
            RULES[kind] = method
        return method

    return register
