"""The op table: every built-in and IR op kind declared in argus.dsl.ops has its entry in every layer (a type
rule, a verifier rule, a lowering into the kernel body, a concrete evaluation, a Python form for launch values)
or an explicit reason why not, and no layer's table
names an op that is declared nowhere. It lives beside the concrete evaluator (tests/verify/verify_concrete.py),
which is test code; the other layers' tables are the server's own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import verify_concrete

from argus.codegen import body, host, plan
from argus.dsl import ops
from argus.dsl.calls import TYPE_RULES
from argus.dsl.check import check_source
from argus.dsl.ir import walk_ops
from argus.verify import claims, padding, scans
from argus.verify.evaluate import Evaluator  # noqa: F401  (importing it registers every rule)
from argus.verify.rules import RULES, UNSUPPORTED

ROOT = Path(__file__).resolve().parents[2]


def kind_tables() -> dict[str, list[tuple[str, dict]]]:
    """Per layer, its tables keyed by IR op kind: the ones that handle a kind, then the ones that say why not."""
    return {
        "verifier": [("RULES", RULES), ("UNSUPPORTED", UNSUPPORTED)],
        "lowering": [("LOWERINGS", body.LOWERINGS), ("STATEMENTS", body.STATEMENTS), ("NOT_LOWERED", body.NOT_LOWERED)],
        "concrete": [("CONCRETE", verify_concrete.CONCRETE), ("UNSUPPORTED", verify_concrete.UNSUPPORTED)],
        "launch": [("LAUNCH", host.LAUNCH), ("NOT_AT_LAUNCH", host.NOT_AT_LAUNCH)],
    }


def fn_tables() -> dict[str, dict[str, dict]]:
    """Per layer, its tables keyed by built-in name for the IR kinds that name their built-in in `fn`."""
    return {
        "verifier": {"math": padding.MATH, "reduce": padding.IDENTITY, "hint": claims.HINT_GOALS, "scan": scans.SCANS},
        "lowering": {"math": body.MATH, "reduce": body.REDUCTIONS, "hint": body.HINTS, "scan": body.SCANS},
        "concrete": {
            "math": verify_concrete.FLOAT_MATH,
            "reduce": verify_concrete.REDUCE,
            "hint": verify_concrete.HINTS,
            "scan": verify_concrete.SCANS,
        },
        "launch": {"math": host.LAUNCH_MATH},  # no tile, so no reduction or hint, is a launch value
    }


def missing(builtins: dict[str, ops.Builtin], ir_ops: dict[str, ops.IrOp]) -> list[str]:
    """What the declarations lack in the layers, and what the layers name that is not declared."""
    problems = []
    declared = {**builtins, **ops.METHODS}
    for name in declared:
        if name not in TYPE_RULES:
            problems.append(f"{name}: no type rule (argus.dsl.calls.TYPE_RULES)")
    problems += [f"TYPE_RULES names undeclared {name}" for name in sorted(set(TYPE_RULES) - set(declared))]
    for name, builtin in declared.items():
        if builtin.ir not in ir_ops:
            problems.append(f"{name}: lowers to the undeclared IR kind {builtin.ir}")
    for layer, tables in kind_tables().items():
        for kind in ir_ops:
            holders = [table_name for table_name, table in tables if kind in table]
            if not holders:
                problems.append(f"{kind}: no {layer} entry (nor a reason in {tables[-1][0]})")
            elif len(holders) > 1:
                problems.append(f"{kind}: in several {layer} tables: {holders}")
        for table_name, table in tables:
            problems += [f"{layer} {table_name} names undeclared IR kind {k}" for k in sorted(set(table) - set(ir_ops))]
    for layer, by_kind in fn_tables().items():
        for kind, table in by_kind.items():
            expected = {name for name, b in declared.items() if b.ir == kind}
            problems += [f"{name}: no {layer} entry for {kind} fn {name}" for name in sorted(expected - set(table))]
            problems += [
                f"{layer} table for {kind} names undeclared built-in {name}"
                for name in sorted(set(table) - set(declared))
            ]
    return problems


def test_every_declared_op_has_an_entry_in_every_layer():
    assert missing(ops.BUILTINS, ops.IR_OPS) == []


def test_a_declared_op_without_entries_is_reported():
    builtins = {**ops.BUILTINS, "exp10": ops.Builtin("exp10", "math", "exp10(x)", "10 to the x.", "transcendental")}
    ir_ops = {**ops.IR_OPS, "sort": ops.IrOp("sort", "(x) [axis]", "A sort along an axis.")}
    problems = missing(builtins, ir_ops)
    assert "exp10: no type rule (argus.dsl.calls.TYPE_RULES)" in problems
    assert "sort: no verifier entry (nor a reason in UNSUPPORTED)" in problems
    assert "sort: no lowering entry (nor a reason in NOT_LOWERED)" in problems
    assert "sort: no concrete entry (nor a reason in UNSUPPORTED)" in problems
    assert "sort: no launch entry (nor a reason in NOT_AT_LAUNCH)" in problems
    for layer in ("verifier", "lowering", "concrete", "launch"):
        assert f"exp10: no {layer} entry for math fn exp10" in problems


def test_a_layer_entry_for_an_undeclared_op_is_reported():
    trimmed = {k: v for k, v in ops.BUILTINS.items() if k != "trans"}
    ir_ops = {k: v for k, v in ops.IR_OPS.items() if k != "trans"}
    problems = missing(trimmed, ir_ops)
    assert "TYPE_RULES names undeclared trans" in problems
    assert "verifier RULES names undeclared IR kind trans" in problems
    assert "lowering LOWERINGS names undeclared IR kind trans" in problems


def test_the_code_generators_kind_sets_agree_with_its_tables():
    # plan.py decides what is live and what may be written inline from these sets: an op lowered to an
    # expression is PURE, one lowered to a statement a side effect or control flow
    assert set(body.LOWERINGS) == plan.PURE
    assert plan.SIDE_EFFECTS | {"for", "if"} == set(body.STATEMENTS)
    assert plan.PROOF_ONLY | set(plan.DATA_FACTS) | {"tag"} == set(body.NOT_LOWERED)


def test_the_derived_views_follow_the_declarations():
    assert {name for name, b in ops.BUILTINS.items() if b.ir == "math"} == ops.FLOAT_MATH | ops.ROUNDING | {
        "abs",
        "maximum",
        "minimum",
        "sign",
    }
    assert body.TRANSCENDENTAL == ops.FLOAT_MATH
    assert body.WIDENED == ops.FLOAT_MATH | ops.ROUNDING
    assert all(dataclasses.is_dataclass(b) and b.type_rule is TYPE_RULES[name] for name, b in ops.BUILTINS.items())


@pytest.mark.parametrize("folder", ["examples", "tests/codegen/kernels", "tests/verify"])
def test_the_analyzer_emits_only_declared_op_kinds(folder):
    for path in sorted((ROOT / folder).rglob("*.argus")):
        check = check_source(path.read_text())
        for kernel in check.analysis.kernels.values():
            for block in (kernel.launch, kernel.body):
                kinds = {op.kind for op in walk_ops(block)}
                assert kinds <= set(ops.IR_OPS), (path.name, kinds - set(ops.IR_OPS))
