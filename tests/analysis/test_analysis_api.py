"""The Analysis API on the examples: every answer is plain data in Argus positions (0-based lines, code-point
columns), computed from one immutable snapshot of one version."""

from __future__ import annotations

import dataclasses

import pytest
from analysis_support import EXAMPLES, analyze, position_of

from argus.analysis.host import AnalysisHost
from argus.analysis.skill_actions import default_providers
from argus.dsl.spans import Span
from argus.skills.provider import ProviderRegistry


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


def test_a_model_is_in_the_outline_and_its_launches_and_blocks_lead_to_their_definitions():
    analysis = analyze("long_softmax.argus")
    top = [(item.name, item.kind) for item in analysis.outline()]
    assert top[:3] == [("softmax_partials", "kernel"), ("softmax_apply", "kernel"), ("long_softmax", "model")]
    model = analysis.outline()[2]
    assert [(c.name, c.detail) for c in model.children] == [("x", "f32"), ("y", "out f32")]
    line, col = position_of(analysis, "    softmax_apply(x, partials, y)")
    span = analysis.definition(line, col + 6)
    assert analysis.lines[span.line].startswith("kernel softmax_apply(")
    hover = analysis.hover(line, col + 6)
    assert hover.startswith("```argus\nsoftmax_apply: (x: f32[M, N], part: f32[M, S, 2], y: out f32[M, N])")
    assert "kernel, launched by this model" in hover
    line, col = position_of(analysis, "sizes long_softmax")
    span = analysis.definition(line, col + len("sizes "))
    assert analysis.lines[span.line].startswith("model long_softmax(")


BUDGET = (1000, 5_000_000)  # timeout_ms, rlimit: the server's defaults


def test_verdicts_of_a_correct_kernel_are_silent_and_asked_once():
    analysis = analyze("softmax.argus")
    first = analysis.verdicts("declared", *BUDGET)
    assert [d.code for d in first.diagnostics] == []
    assert analysis.verdicts("declared", *BUDGET) is first


def test_verdicts_share_the_hosts_cache_across_versions():
    path = EXAMPLES / "softmax.argus"
    host = AnalysisHost()
    host.analyze(path.as_uri(), 1, path.read_text()).verdicts("declared", *BUDGET)
    entries = len(host.verify_cache.entries)
    host.analyze(path.as_uri(), 2, path.read_text() + "\n").verdicts("declared", *BUDGET)
    assert entries > 0 and len(host.verify_cache.entries) == entries  # the same kernel: answered from the cache


def test_a_verifier_diagnostic_has_a_fix_the_verifier_agrees_with():
    analysis = analyze("buggy/matmul_next_k.argus")
    [diagnostic] = analysis.verdicts("all", *BUDGET).diagnostics
    assert diagnostic.code == "AR310"
    [fix] = analysis.fixes(diagnostic)
    assert fix.title == "Load `b` at `a`'s K index: `rk + BK` → `rk`"
    assert fix.edits[0].span.line == diagnostic.range.start.line - 1  # b's load, the line above the dot
    assert analysis.fix_verdict(fix, *BUDGET) is None
    assert analysis.fix_verifies(fix, *BUDGET)
    assert analysis.fix_verdict(fix, *BUDGET) is True


def default_registry() -> ProviderRegistry:
    registry = ProviderRegistry()
    for provider in default_providers():
        registry.register(provider)
    return registry


def test_skill_actions_on_a_tile_line_offer_deeper_pipelining_and_a_retune_with_their_edits():
    analysis = analyze("matmul.argus")
    line, col = position_of(analysis, "tile BM")
    actions = {a.skill: a for a in analysis.skill_actions(Span(line, col, line, col), default_registry())}
    pipelining = actions["pipelining.num_stages"]
    assert pipelining.title == "Software pipelining: num_stages 3 → 4" and pipelining.applicable
    [edit] = pipelining.edits
    assert analysis.lines[edit.span.line][edit.span.col : edit.span.end_col] == "3" and edit.new_text == "4"
    assert actions["retune.BN"].edits[0].new_text == "128"


def test_a_skill_that_does_not_fit_is_disabled_with_the_failed_precondition():
    analysis = analyze("matmul.argus")
    line, col = position_of(analysis, "tile BM")
    actions = {a.skill: a for a in analysis.skill_actions(Span(line, col, line, col), default_registry())}
    bigger = actions["tile_size.BK.dot"]
    assert not bigger.applicable and bigger.edits == ()
    assert bigger.failed_precondition.startswith("fits_shared_memory: needs 288 KiB")


def test_skill_facts_name_the_kernels_constants_policy_and_tune_lists():
    facts = analyze("matmul.argus").skill_facts("matmul")
    assert facts.constants == {"BM": 128, "BN": 256, "BK": 64}
    assert facts.policy == {"num_warps": 8, "num_stages": 3}
    assert facts.tune == {"BN": [128, 256]} and facts.dot_in_loop
    assert analyze("matmul.argus").skill_facts("nope") is None


def test_inlay_hints_write_each_tile_assignments_type_after_its_target():
    analysis = analyze("softmax.argus")
    line, _ = position_of(analysis, "z = v - max")
    hints = analysis.inlay_hints(Span(line, 0, line, len(analysis.lines[line])))
    assert [(h.line, h.label, h.kind) for h in hints] == [(line, ": f32[BN]", "type")]
