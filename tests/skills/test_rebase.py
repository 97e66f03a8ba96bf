"""Edits made for one version move onto a later one only through lines the user left alone."""

from __future__ import annotations

from argus.dsl.spans import Span
from argus.skills.provider import Edit
from argus.skills.rebase import follow_line, rebase_edits, rebase_line, untouched_lines
from argus.skills.text import apply_edits

KERNEL = """kernel k(A: f16[M, K], B: f16[K, N]):
    tile BM = 64
    a = load(A[rm, rk], mask=ok, other=0)
    b = load(B[rk, rn], mask=ok, other=0)
    acc = dot(a, b, acc)
"""
FIX = Edit(Span(3, 13, 3, 15), "rk, rn")  # on line 3: `B[rk, rn]`'s indices (the text is only a probe)


def test_an_edit_follows_its_line_when_lines_are_inserted_above():
    after = "# a comment\n# another\n" + KERNEL
    (moved,) = rebase_edits(KERNEL, after, [FIX])
    assert moved.span == Span(5, 13, 5, 15)
    assert apply_edits(after, [moved]).split("\n")[5] == apply_edits(KERNEL, [FIX]).split("\n")[3]


def test_an_edit_whose_line_changed_is_refused():
    after = KERNEL.replace("b = load(B[rk, rn]", "b = load(B[rk + 1, rn]")
    assert rebase_edits(KERNEL, after, [FIX]) is None


def test_an_edit_whose_line_was_deleted_is_refused():
    after = KERNEL.replace("    b = load(B[rk, rn], mask=ok, other=0)\n", "")
    assert rebase_edits(KERNEL, after, [FIX]) is None


def test_the_edit_of_the_issue_is_not_applied_to_the_line_now_at_its_old_number():
    # the quick fix was for line 3 (`b = load(B...`); a line deleted above puts `a = load(A...` nowhere near it
    after = KERNEL.replace("    tile BM = 64\n", "")
    (moved,) = rebase_edits(KERNEL, after, [FIX])
    assert moved.span.line == 2
    assert after.split("\n")[2].startswith("    b = load(B")


def test_a_multi_line_edit_needs_all_its_lines_in_order():
    edit = Edit(Span(2, 0, 4, 0), "")  # delete the two loads
    assert rebase_edits(KERNEL, "\n" + KERNEL, [edit]) == (Edit(Span(3, 0, 5, 0), ""),)
    split = KERNEL.replace("other=0)\n    b =", "other=0)\n    # between\n    b =")
    assert rebase_edits(KERNEL, split, [edit]) is None


def test_an_insertion_at_the_start_of_a_line_needs_that_line():
    edit = Edit(Span(4, 0, 4, 0), "    acc = acc * 2\n")
    assert rebase_edits(KERNEL, KERNEL.replace("acc = dot", "acc = mma"), [edit]) is None


def test_repeated_blank_lines_are_matched_not_treated_as_noise():
    text = "x\n\n\n\ny\n\n\n\nz\n"
    assert untouched_lines(text, "w\n" + text)[8] == 9


def test_form_feeds_and_line_separators_do_not_break_lines():
    text = "# \f and \u2028\nkernel k():\n"
    assert rebase_line(text, "\n" + text, 1) == 2


def test_an_unchanged_text_keeps_every_edit():
    assert rebase_edits(KERNEL, KERNEL, [FIX]) == (FIX,)


def test_a_target_line_follows_lines_inserted_above_and_an_in_place_edit():
    after = "# one\n# two\n" + KERNEL.replace("tile BM = 64", "tile BM = 128")
    assert follow_line(KERNEL, after, 1) == 3  # edited in place, between lines that are still there
    assert follow_line(KERNEL, after, 3) == 5


def test_a_target_line_that_is_gone_is_not_guessed():
    after = KERNEL.replace("    tile BM = 64\n", "    tile BM = 64\n    # a\n    # b\n")
    after = after.replace("    a = load", "    c = x")
    assert follow_line(KERNEL, KERNEL.replace("    tile BM = 64\n", ""), 1) is None
    assert follow_line(KERNEL, after, 2) is None  # replaced while lines were added around it
