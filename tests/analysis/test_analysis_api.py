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
