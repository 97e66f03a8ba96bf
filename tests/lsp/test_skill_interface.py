"""The skill provider interface as the language server consumes it: providers in registration order, a broken
provider skipped, applicable and non-applicable actions kept apart."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from lsp_support import EXAMPLES

from argus.analysis.tuning_skills import PipeliningProvider, RetuneProvider, apply_edits
from argus.dsl.check import check_source
from argus.dsl.spans import Span
from argus.skills.provider import ProviderRegistry, SkillAction, SkillProvider, SkillRequest

NEXT_K = (EXAMPLES / "buggy" / "matmul_next_k.argus").read_text()


def request_at(text: str, needle: str) -> SkillRequest:
    line = next(i for i, t in enumerate(text.split("\n")) if needle in t)
    return SkillRequest("file:///k.argus", text, check_source(text), Span(line, 0, line, 0))


@dataclass(frozen=True)
class Broken:
    name: str = "broken"

    def actions(self, request: SkillRequest) -> list[SkillAction]:
        raise RuntimeError("a bug in a skill")


def test_a_broken_provider_is_skipped_and_the_others_still_answer():
    registry = ProviderRegistry()
    registry.register(Broken())
    registry.register(PipeliningProvider())
    titles = [a.title for a in registry.actions(request_at(NEXT_K, "acc = dot"))]
    assert titles == ["Software pipelining: num_stages 3 → 4"]


def test_two_providers_cannot_share_a_name():
    registry = ProviderRegistry()
    registry.register(PipeliningProvider())
    with pytest.raises(ValueError, match="already registered"):
        registry.register(PipeliningProvider())


def test_the_builtin_providers_satisfy_the_protocol():
    assert isinstance(PipeliningProvider(), SkillProvider) and isinstance(RetuneProvider(), SkillProvider)


def test_an_applicable_action_has_edits_and_a_non_applicable_one_only_its_reason():
    actions = {a.title: a for a in RetuneProvider().actions(request_at(NEXT_K, "b = load"))}
    smaller = actions["Retune BK = 64 → 32"]
    assert smaller.applicable and smaller.edits and smaller.failed_precondition is None
    assert "BK = 32" in apply_edits(NEXT_K, smaller.edits)
    # a tune value that cannot fit is an error in the source (AR410): one stage deeper than the tune lists is not
    deeper = NEXT_K.replace("num_stages = 3", "num_stages = 4")
    (larger,) = PipeliningProvider().actions(request_at(deeper, "b = load"))
    assert not larger.applicable and larger.edits == () and "240 KiB" in larger.failed_precondition


def test_pipelining_inserts_num_stages_when_the_policy_does_not_say():
    text = NEXT_K.replace("policy num_warps = 8, num_stages = 3", "policy num_warps = 8")
    (action,) = PipeliningProvider().actions(request_at(text, "acc = dot"))
    assert action.title == "Software pipelining: num_stages 3 → 4"  # Triton's default is 3
    edited = apply_edits(text, action.edits)
    assert "policy num_warps = 8, num_stages = 4" in edited and not check_source(edited).diagnostics
