"""argus skills match | apply | list | show, and the library in the editor's light bulb."""

from __future__ import annotations

import json

import pytest
from kernels import NAIVE_GEMM, NAIVE_SOFTMAX

from argus.cli.main import main
from argus.dsl.check import check_source
from argus.dsl.spans import Span
from argus.skills.library import save_cards
from argus.skills.library_provider import LibraryProvider
from argus.skills.provider import SkillProvider, SkillRequest


@pytest.fixture
def library(softmax_cards, tmp_path):
    folder = tmp_path / "library"
    save_cards(softmax_cards, folder)
    return folder


@pytest.fixture
def naive(tmp_path):
    path = tmp_path / "softmax.argus"
    path.write_text(NAIVE_SOFTMAX, encoding="utf-8")
    return path


def line_of(text: str, snippet: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if snippet in line)


def test_list_json_shows_every_card(library, capsys):
    assert main(["skills", "--library", str(library), "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert {c["id"] for c in listed} == {p.stem for p in library.glob("*.yaml")}


def test_list_json_of_the_committed_library_shows_scopes_conditions_and_links(capsys):
    assert main(["skills", "list", "--json"]) == 0
    cards = {c["id"]: c for c in json.loads(capsys.readouterr().out)}
    assert all({"scope", "conditions", "provides", "requires", "conflicts"} <= set(c) for c in cards.values())
    tile = cards["tile_size.BM.dot"]
    assert {"f16", "f32 tf32x3"} <= set(tile["scope"]["operands"])  # the fp32 lineages profiled on 2026-12-01
    assert [c["fact"] for c in tile["conditions"]] == ["num_warps", "num_stages"]  # not operands: a confound
    (warps,) = [c for c in tile["conditions"] if c["fact"] == "num_warps"]
    assert warps["helps"] == [8] and warps["hurts"] == [4]
    assert {"skill": "num_warps.dot", "fact": "num_warps", "value": 8} in [
        {k: r[k] for k in ("skill", "fact", "value")} for r in tile["requires"]
    ]
    assert {"fact": "num_warps", "before": 4, "after": 8} in [
        {k: p[k] for k in ("fact", "before", "after")} for p in cards["num_warps.dot"]["provides"]
    ]


def test_transforms_lists_every_transform_with_its_preconditions(capsys):
    from argus.skills.transforms import TRANSFORMS

    assert main(["skills", "transforms", "--json"]) == 0
    listed = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert list(listed) == list(TRANSFORMS)
    assert [p["name"] for p in listed["split_k"]["preconditions"]] == list(TRANSFORMS["split_k"].preconditions)
    assert main(["skills", "transforms"]) == 0
    assert "needs: loop_has_dot, reduction_loop, f32_output" in capsys.readouterr().out


def test_show_prints_the_card(library, capsys):
    assert main(["skills", "--library", str(library), "show", "exp2.row"]) == 0
    assert "transform: exp2" in capsys.readouterr().out


def test_match_lists_the_applicable_skills_with_their_expected_effect(library, naive, capsys):
    line = line_of(NAIVE_SOFTMAX, "num = exp(")
    assert main(["skills", "--library", str(library), "match", f"{naive}:{line}", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    exp2 = next(s for s in found["skills"] if s["skill"] == "exp2.row")
    assert exp2["applicable"] and exp2["expected_effect"] == "effect not measured yet (CPU lineages only)"


def test_apply_rewrites_the_file_and_the_result_checks(library, naive, capsys):
    line = line_of(NAIVE_SOFTMAX, "num = exp(")
    assert main(["skills", "--library", str(library), "apply", "exp2.row", f"{naive}:{line}"]) == 0
    text = naive.read_text(encoding="utf-8")
    assert "num = exp2((v - max(v, axis=0)) * 1.4426950408889634)   # the row's max first" in text
    assert not [d for d in check_source(text).diagnostics if d.severity.value == "error"]


def test_apply_with_diff_prints_the_change_and_writes_nothing(library, naive, capsys):
    line = line_of(NAIVE_SOFTMAX, "num = exp(")
    assert main(["skills", "--library", str(library), "apply", "exp2.row", f"{naive}:{line}", "--diff"]) == 0
    assert "+    num = exp2(" in capsys.readouterr().out
    assert naive.read_text(encoding="utf-8") == NAIVE_SOFTMAX


def test_apply_where_a_precondition_fails_is_refused_with_its_name_and_leaves_the_file(library, naive, capsys):
    taken = NAIVE_SOFTMAX.replace("    cols = arange(BN)\n", "    cols = arange(BN)\n    inv = 2\n")
    naive.write_text(taken, encoding="utf-8")
    line = line_of(taken, "store(")
    assert main(["skills", "--library", str(library), "apply", "reciprocal.row", f"{naive}:{line}"]) == 1
    assert "refused: reciprocal.row: name_free: inv is already used" in capsys.readouterr().err
    assert naive.read_text(encoding="utf-8") == taken


def test_apply_to_a_file_that_changed_since_the_match_matches_again(library, naive, capsys):
    line = line_of(NAIVE_SOFTMAX, "num = exp(")
    main(["skills", "--library", str(library), "match", f"{naive}:{line}", "--json"])
    seen = json.loads(capsys.readouterr().out)["hash"]
    naive.write_text("# a comment added since\n" + NAIVE_SOFTMAX, encoding="utf-8")
    assert main(["skills", "--library", str(library), "apply", "exp2.row", f"{naive}:{line + 1}", "--since", seen]) == 0
    err = capsys.readouterr().err
    assert "changed since the match" in err
    assert "# a comment added since\n" in naive.read_text(encoding="utf-8")


def test_the_library_provider_offers_matching_skills_in_the_editor(softmax_cards):
    provider = LibraryProvider(cards=softmax_cards)
    assert isinstance(provider, SkillProvider)
    line = line_of(NAIVE_SOFTMAX, "num = exp(") - 1
    request = SkillRequest("file:///s.argus", NAIVE_SOFTMAX, check_source(NAIVE_SOFTMAX), Span(line, 0, line, 0))
    actions = provider.actions(request)
    exp2 = next(a for a in actions if a.skill == "exp2.row")
    assert exp2.applicable and exp2.title.startswith("Skill: ") and exp2.gate_after


def test_the_library_provider_offers_nothing_on_a_kernel_of_another_kind(softmax_cards):
    provider = LibraryProvider(cards=softmax_cards)  # row cards only: a GEMM loop is another kind of kernel
    line = line_of(NAIVE_GEMM, "for k0") - 1
    request = SkillRequest("file:///g.argus", NAIVE_GEMM, check_source(NAIVE_GEMM), Span(line, 0, line, 0))
    assert provider.actions(request) == []


def test_a_measured_effect_is_not_claimed_past_the_setting_it_was_measured_at():
    from argus.skills.library import load_cards
    from argus.skills.matcher import expected_effect

    card = next(c for c in load_cards() if c.id == "num_warps.dot")
    measured = card.model_copy(update={"parameters": {"setting": "num_warps", "expert_value": 8}})
    assert "median" in expected_effect(measured, {"setting": "num_warps", "from": 4, "to": 8})
    beyond = expected_effect(measured, {"setting": "num_warps", "from": 8, "to": 16})
    assert beyond == "effect not measured here: measured up to num_warps = 8, this goes to 16"


def test_a_spill_bound_effect_is_claimed_only_where_the_kernel_spills():
    from argus.agent.sites import predicted_effect
    from argus.skills.cards import SPILL_MARGIN
    from argus.skills.library import load_cards
    from argus.skills.matcher import expected_effect

    # num_warps.dot as it was before the exact-fp32 lineage: its measurements where 4 warps spilled
    card = next(c for c in load_cards() if c.id == "num_warps.dot")
    spilled = [e for e in card.evidence if e.spill_bytes and e.spill_bytes >= SPILL_MARGIN]
    card = card.model_copy(update={"evidence": spilled, "effect_needs_spills": True})
    params = {"setting": "num_warps", "from": 4, "to": 8}
    assert expected_effect(card, params).endswith("where the kernel spills registers")
    assert "median" in expected_effect(card, params, spill_bytes=2048)
    quiet = expected_effect(card, params, spill_bytes=0)
    assert quiet.startswith("effect not measured here: measured where the kernel without it spilled registers (")
    assert quiet.endswith("this one spills 0")
    assert predicted_effect(card, params, 0) == 1.0 < predicted_effect(card, params, 2048)
