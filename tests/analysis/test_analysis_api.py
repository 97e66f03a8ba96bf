"""The Analysis API on the examples: every answer is plain data in Argus positions (0-based lines, code-point
columns), computed from one immutable snapshot of one version."""

from __future__ import annotations

import dataclasses

import pytest
from analysis_support import analyze, position_of


def test_a_snapshot_keeps_the_version_and_text_it_was_made_for():
    analysis = analyze("matmul.argus", version=7)
    assert analysis.version == 7
    assert analysis.uri.endswith("examples/matmul.argus")
    assert analysis.lines[4].startswith("kernel matmul(")
    assert not analysis.check.has_errors


def test_a_snapshot_cannot_be_changed():
    analysis = analyze("softmax.argus")
    with pytest.raises(dataclasses.FrozenInstanceError):
        analysis.text = ""  # type: ignore[misc]


def test_hover_on_a_value_gives_its_type_and_resolved_shape():
    analysis = analyze("matmul.argus")
    line, col = position_of(analysis, "acc = zeros")
    text = analysis.hover(line, col)
    assert text is not None
    assert "acc: f32[BM, BN]" in text
    assert "shape `[BM, BN]` = `[128, 256]`" in text


def test_hover_on_a_tile_constant_gives_its_value_and_tune_list():
    analysis = analyze("matmul.argus")
    line, col = position_of(analysis, "BN = 256")
    assert analysis.hover(line, col).startswith("```argus\ntile BN = 256\n```")
    assert "tune: 128, 256" in analysis.hover(line, col)


def test_hover_on_a_builtin_gives_its_signature():
    analysis = analyze("softmax.argus")
    line, col = position_of(analysis, "exp(z)")
    assert analysis.hover(line, col).startswith("```argus\nexp(")


def test_hover_on_a_comment_gives_nothing():
    analysis = analyze("softmax.argus")
    assert analysis.hover(0, 0) is None


def test_completion_in_a_kernel_offers_its_parameters_sizes_constants_and_builtins():
    analysis = analyze("matmul.argus")
    line, _ = position_of(analysis, "acc = dot")
    items = {c.label: c for c in analysis.completions(line, 8)}
    assert items["A"].kind == "variable" and items["A"].detail.startswith("f16[M, K]")
    assert items["K"].kind == "constant" and items["K"].doc == "problem size"
    assert items["BK"].detail == "= 64"
    assert items["rk"].kind == "variable"  # assigned above the cursor
    assert items["dot"].kind == "function" and items["dot"].call
    assert "c" not in items  # assigned below it


def test_completion_after_a_dot_offers_methods_only():
    analysis = analyze("softmax.argus")
    line, col = position_of(analysis, ".to(f32)")
    kinds = {c.kind for c in analysis.completions(line, col + 1)}
    assert kinds == {"method"}


def test_signature_help_names_the_argument_the_cursor_is_in():
    analysis = analyze("softmax.argus")
    line, col = position_of(analysis, "other=-inf")
    found = analysis.signature(line, col + len("other="))
    assert found is not None and found.label.startswith("load(")
    assert found.parameters[found.active].startswith("other")


def test_the_outline_lists_kernels_with_their_parameters_constants_and_blocks():
    analysis = analyze("matmul.argus")
    top = [(item.name, item.kind) for item in analysis.outline()]
    assert top == [("matmul", "kernel"), ("reference matmul", "block"), ("sizes matmul", "sizes")]
    kernel = analysis.outline()[0]
    children = [(c.name, c.kind, c.detail) for c in kernel.children]
    assert children[:4] == [
        ("A", "parameter", "f16"),
        ("B", "parameter", "f16"),
        ("bias", "parameter", "f16"),
        ("C", "parameter", "out f16"),
    ]
    assert ("BN", "tile constant", None) in children and ("num_stages", "policy setting", None) in children
    assert kernel.selection.line == 4 and analysis.lines[4][kernel.selection.col :].startswith("matmul")


def test_definition_of_a_use_is_its_assignment():
    analysis = analyze("softmax.argus")
    line, col = position_of(analysis, "mask=mask")
    span = analysis.definition(line, col + len("mask="))
    assert span is not None
    assert analysis.lines[span.line].strip().startswith("mask = cols < N")


def test_definition_of_a_reference_block_is_its_kernel_name():
    analysis = analyze("softmax.argus")
    line, col = position_of(analysis, "reference softmax")
    span = analysis.definition(line, col + len("reference "))
    assert (span.line, analysis.lines[span.line][span.col : span.end_col]) == (4, "softmax")
