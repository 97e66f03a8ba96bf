"""The provider registry offers one action per change: a built-in step and the library card that makes the
same edit are one entry, the library's (it carries evidence and is followed by a gate run)."""

from __future__ import annotations

from argus.dsl.spans import Span
from argus.skills.provider import Edit, SkillAction, without_repeats

STAGES = Edit(Span(4, 30, 4, 31), "4")


def test_the_library_action_takes_the_place_of_the_built_in_one_with_the_same_edits():
    built_in = SkillAction("pipelining.num_stages", "Software pipelining: num_stages 3 → 4", edits=(STAGES,))
    other = SkillAction("retune.BK", "Retune BK = 64 → 128", failed_precondition="288 KiB of shared memory")
    library = SkillAction("pipelining.num_stages.dot", "Skill: Software pipelining", edits=(STAGES,), gate_after=True)
    assert without_repeats([built_in, other, library]) == [library, other]


def test_different_edits_and_disabled_actions_are_all_kept():
    first = SkillAction("a", "A", edits=(STAGES,))
    second = SkillAction("b", "B", edits=(Edit(Span(4, 30, 4, 31), "5"),), gate_after=True)
    disabled = [SkillAction("c", "C", failed_precondition="x"), SkillAction("d", "D", failed_precondition="y")]
    assert without_repeats([first, second, *disabled]) == [first, second, *disabled]


def test_of_two_plain_actions_with_the_same_edits_the_first_stays():
    first, again = SkillAction("a", "A", edits=(STAGES,)), SkillAction("b", "B", edits=(STAGES,))
    assert without_repeats([first, again]) == [first]
