"""A reference's `tolerance` clause parses into ast.Tolerance with exact spans; what it means is tested in
tests/dsl/test_accuracy.py and tests/gate/test_tolerance_rule.py."""

from __future__ import annotations

from argus.dsl import ast
from argus.dsl.parser import parse
from argus.dsl.spans import Span

KERNEL = """kernel k(x: f32[N], y: out f32[N], z: out f32[N]):
    grid (1,)
    pass

"""


def reference_of(header: str) -> tuple[ast.PythonBlock, list]:
    result = parse(KERNEL + header + "\n    return x, x\n")
    [block] = [item for item in result.module.items if isinstance(item, ast.PythonBlock)]
    return block, result.diagnostics


def test_one_tolerance_for_every_output():
    block, problems = reference_of("reference k(x) tolerance 2e-3:")
    assert problems == []
    assert block.params == [ast.Name("x", Span(4, 12, 4, 13))]
    assert block.tolerance == ast.Tolerance(ast.Float(2e-3, Span(4, 25, 4, 29)), [], Span(4, 15, 4, 29))


def test_a_tolerance_per_output():
    block, problems = reference_of("reference k(x) tolerance y = 1e-3, z = 0.05:")
    assert problems == []
    assert block.tolerance.value is None
    assert [(b.name, b.value.value) for b in block.tolerance.bindings] == [("y", 1e-3), ("z", 0.05)]
    assert block.tolerance.bindings[1].name_span == Span(4, 35, 4, 36)
    assert block.tolerance.span == Span(4, 15, 4, 43)


def test_no_clause_leaves_none_and_the_word_stays_a_name_elsewhere():
    block, problems = reference_of("reference k(x):")
    assert problems == [] and block.tolerance is None
    result = parse("kernel k(tolerance: f32[N], y: out f32[N]):\n    tolerance = 1\n    grid (1,)\n")
    assert [d.code for d in result.diagnostics] == []


def test_a_clause_without_a_value_is_a_syntax_error_at_the_header():
    result = parse(KERNEL + "reference k(x) tolerance:\n    return x, x\n")
    assert [d.code for d in result.diagnostics] == ["AR001"]
    assert result.diagnostics[0].range.start.line == 4
